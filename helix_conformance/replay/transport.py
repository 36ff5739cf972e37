"""The transport seam: while a run replays, every httpx/httpx2 request goes to the run's replay host.

An adapter should send its requests to ``AdapterContext.base_url`` (the host's URL, replay/host.py); one on
any HTTP client (aiohttp, requests, a Node driver's fetch) does so and needs nothing here. One that builds its
own URL on httpx or httpx2 — the official SDKs' transport, an SDK left on its default base URL — is redirected
by patching ``AsyncHTTPTransport.handle_async_request`` and ``HTTPTransport.handle_request`` of both libraries:
the request goes, as it is, to the host, with the run's prefix before its path. The seam only redirects; what
is delivered, with which faults and when, is the host's alone (one delivery path for every client).

Recording plugs a pass-through into the same seam (recording/capture.py) with the network open.
"""

from __future__ import annotations

import contextlib
import importlib
import ipaddress
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, Protocol

from .host_state import REDIRECTED_FROM, RUN_PREFIX
from .lean_http import LeanPool, usable
from .lean_net import lean_connections
from .tls import shared_tls_contexts

HTTP_LIBRARIES = ("httpx", "httpx2")


class Redirect:
    """The seam's ``Server`` in replay: sends each request to the run's host (``127.0.0.1:http_port``, the
    run's path prefix), through the adapter's own transport, so its timeouts and connection pool apply."""

    def __init__(self, http_port: int, token: str) -> None:
        self.http_port = http_port
        self.prefix = f"{RUN_PREFIX}{token}"
        self.unintercepted: list[str] = []
        self.stall_release = threading.Event()

    def _to_host(self, lib: ModuleType, request: Any) -> Any:
        url = request.url
        if url.host == "127.0.0.1" and url.port == self.http_port:
            return request  # the adapter used the base URL: it goes to the host already
        raw = url.raw_path.decode("ascii")
        headers = request.headers.copy()
        headers[REDIRECTED_FROM] = str(url)  # the trace shows the URL the adapter asked for (HARN-01)
        return lib.Request(
            request.method,
            f"http://127.0.0.1:{self.http_port}{self.prefix}{raw}",
            headers=headers,
            stream=request.stream,
            extensions=request.extensions,
        )

    async def handle_async(self, lib: ModuleType, transport: Any, request: Any) -> Any:
        forward = original_method(lib.AsyncHTTPTransport, "handle_async_request")
        request = self._to_host(lib, request)
        lean = _lean_transport(lib, transport, request)
        return await forward(lean or transport, request)

    def handle_sync(self, lib: ModuleType, transport: Any, request: Any) -> Any:
        forward = original_method(lib.HTTPTransport, "handle_request")
        return forward(transport, self._to_host(lib, request))


class _LeanTransport:
    """What httpx's ``AsyncHTTPTransport.handle_async_request`` reads of its transport (``_pool``), with the
    lean pool in it (replay/lean_http.py): httpx builds the request and maps the errors as it always does."""

    def __init__(self, pool: LeanPool) -> None:
        self._pool = pool


def _lean_transport(lib: ModuleType, transport: Any, request: Any) -> _LeanTransport | None:
    """The lean path for an httpx ``request`` to the host on the adapter's ``transport``, when it can take it."""
    core = _CORE_OF.get(lib.__name__)
    if core is None or request.url.scheme != "http":
        return None
    module = sys.modules.get(core)
    pool = getattr(transport, "_pool", None)
    if module is None or pool is None or not usable(pool, request, module):
        return None
    return _LeanTransport(LeanPool(module, pool))


_CORE_OF = {"httpx": "httpcore", "httpx2": "httpcore2"}
"""The httpcore package under each httpx library."""


# --- patching ---------------------------------------------------------------------------------------


class Server(Protocol):
    """What answers the intercepted requests: the replayer, or the recorder's pass-through (recording/)."""

    unintercepted: list[str]
    stall_release: threading.Event

    async def handle_async(self, lib: ModuleType, transport: Any, request: Any) -> Any: ...

    def handle_sync(self, lib: ModuleType, transport: Any, request: Any) -> Any: ...


_ACTIVE: Server | None = None
_PATCH_LOCK = threading.Lock()
_ORIGINALS: dict[tuple[type, str], Any] = {}
"""The unpatched transport methods while a block runs, for a server that forwards to the real network."""


def original_method(cls: type, attr: str) -> Any:
    """The transport method ``intercept`` replaced (``HTTPTransport.handle_request`` …), to call it through."""
    return _ORIGINALS.get((cls, attr), cls.__dict__[attr])


def available_libraries() -> list[ModuleType]:
    libs = []
    for name in HTTP_LIBRARIES:
        with contextlib.suppress(ImportError):
            libs.append(importlib.import_module(name))
    return libs


def _refuse_outside_connections(original: Callable[..., Any]) -> Callable[..., Any]:
    def connect(sock: socket.socket, address: Any, *args: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(str(host)):
            if _ACTIVE is not None:
                _ACTIVE.unintercepted.append(f"socket connect to {address!r}")
            raise ConnectionRefusedError(
                f"helix-conformance: a network connection to {address} was attempted during a scenario; the "
                "replay serves the adapter at AdapterContext.base_url (127.0.0.1), and real network access is blocked"
            )
        return original(sock, address, *args)

    return connect


def _is_loopback(host: str) -> bool:
    """A loopback IP literal or ``localhost``; ``127.example.com`` is a name like any other."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@contextlib.contextmanager
def intercept(replayer: Server, *, block_network: bool = True) -> Iterator[None]:
    """Route every httpx/httpx2 request to ``replayer`` for the duration of the block; connections to anything
    but loopback are refused unless ``block_network`` is False (recording live)."""
    global _ACTIVE
    with _PATCH_LOCK:
        saved: list[tuple[Any, str, Any]] = []
        for lib in available_libraries():

            def make_async(lib: ModuleType = lib) -> Callable[..., Any]:
                async def handle_async_request(transport: Any, request: Any) -> Any:
                    return await _current().handle_async(lib, transport, request)

                return handle_async_request

            def make_sync(lib: ModuleType = lib) -> Callable[..., Any]:
                def handle_request(transport: Any, request: Any) -> Any:
                    return _current().handle_sync(lib, transport, request)

                return handle_request

            for cls, attr, make in (
                (lib.AsyncHTTPTransport, "handle_async_request", make_async),
                (lib.HTTPTransport, "handle_request", make_sync),
            ):
                saved.append((cls, attr, cls.__dict__[attr]))
                _ORIGINALS[(cls, attr)] = cls.__dict__[attr]
                setattr(cls, attr, make())
        tls = contextlib.ExitStack()
        if block_network:
            tls.enter_context(shared_tls_contexts())  # no handshake happens in replay (replay/tls.py)
        if isinstance(replayer, Redirect):  # httpcore's connections to the host skip anyio (lean_net.py)
            port = replayer.http_port
            tls.enter_context(lean_connections(lambda host, p: p == port and _is_loopback(host)))
        if block_network:
            saved.append((socket.socket, "connect", socket.socket.connect))
            socket.socket.connect = _refuse_outside_connections(socket.socket.connect)  # type: ignore[method-assign]
        _ACTIVE = replayer
    try:
        yield
    finally:
        with _PATCH_LOCK:
            for cls, attr, original in reversed(saved):
                setattr(cls, attr, original)
            tls.close()
            _ORIGINALS.clear()
            _ACTIVE = None
            replayer.stall_release.set()


def _current() -> Server:
    if _ACTIVE is None:  # a thread the adapter left running after its scenario ended
        raise RuntimeError("helix-conformance: HTTP request after the scenario ended")
    return _ACTIVE
