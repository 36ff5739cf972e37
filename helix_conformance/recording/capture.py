"""The recorder's pass-through: each request the adapter makes goes to the real provider, and the whole
exchange is kept so it can be scrubbed, scanned and written as a cassette.

It plugs into the same transport patch as the replay (``replay.transport.intercept``), with the network
open, so it records whatever client the adapter uses (httpx or httpx2, sync or async).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..replay.transport import original_method

DROPPED_RESPONSE_HEADERS = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection"}
)
"""The body is stored and served decoded, so headers about its encoding on the wire would lie."""


@dataclass(frozen=True)
class CapturedExchange:
    """One request the adapter sent and the provider's complete answer (or the transport error)."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: str | None = None


class LiveCapture:
    """A transport ``Server`` that forwards to the real network and keeps every exchange, in order."""

    def __init__(self) -> None:
        self.exchanges: list[CapturedExchange] = []
        self.unintercepted: list[str] = []
        self.stall_release = threading.Event()
        self._lock = threading.Lock()

    async def handle_async(self, lib: ModuleType, transport: Any, request: Any) -> Any:
        request_body = await request.aread()
        forward = original_method(lib.AsyncHTTPTransport, "handle_async_request")
        try:
            response = await forward(transport, request)
            body = await response.aread()
            await response.aclose()
        except Exception as exc:
            self._keep(_captured(request, request_body, error=f"{type(exc).__name__}: {exc}"))
            raise
        return self._answer(lib, request, request_body, response, body)

    def handle_sync(self, lib: ModuleType, transport: Any, request: Any) -> Any:
        request_body = request.read()
        forward = original_method(lib.HTTPTransport, "handle_request")
        try:
            response = forward(transport, request)
            body = response.read()
            response.close()
        except Exception as exc:
            self._keep(_captured(request, request_body, error=f"{type(exc).__name__}: {exc}"))
            raise
        return self._answer(lib, request, request_body, response, body)

    def _answer(self, lib: ModuleType, request: Any, request_body: bytes, response: Any, body: bytes) -> Any:
        headers = {
            str(k).lower(): str(v)
            for k, v in response.headers.items()
            if str(k).lower() not in DROPPED_RESPONSE_HEADERS
        }
        self._keep(_captured(request, request_body, status=response.status_code, headers=headers, body=body))
        return lib.Response(
            response.status_code, headers=list(headers.items()), content=body, request=request
        )

    def _keep(self, exchange: CapturedExchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)


def _captured(
    request: Any,
    request_body: bytes,
    *,
    status: int = 0,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    error: str | None = None,
) -> CapturedExchange:
    return CapturedExchange(
        method=str(request.method),
        url=str(request.url),
        request_headers={str(k).lower(): str(v) for k, v in request.headers.items()},
        request_body=request_body,
        status=status,
        response_headers=headers or {},
        body=body,
        error=error,
    )
