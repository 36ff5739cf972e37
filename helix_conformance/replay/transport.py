"""Interception: while a scenario runs, the HTTP transports of httpx and httpx2 answer from the replay.

We patch the transport classes ourselves (as vcrpy does) instead of using vcrpy's replay, because vcrpy hands
a streamed body over in one piece; here every response is re-streamed through a delivery plan, faults are
raised as the client library's own exceptions, and everything lands in the trace. Direct socket connections
to non-loopback hosts are refused meanwhile, so a client we do not intercept fails loudly (HARN-01).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import ipaddress
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..profiles.base import WireProfile
from .delivery import DeliveryPlan, cut_at_events, event_boundaries
from .interactions import ReplayInteraction
from .tls import shared_tls_contexts
from .trace import SentRequest, Trace

HTTP_LIBRARIES = ("httpx", "httpx2")
SLOW_AFTER_ABORT_S = 0.05
"""After the harness aborts, the rest of the response trickles in this slowly (AB-02 'promptly')."""
STALL_EXPIRED = "stall_expired"
"""The trace's fault mark when a stalled read ran into the client's read timeout (ReadTimeout raised)."""
STALL_FAST_FORWARD_S = 0.25
"""A stalled read ends in the client's ReadTimeout after at most this long, whatever read timeout the client
set: the adapter observes the same timeout, in the same order, without the harness waiting out a realistic
60 s or the official SDKs' 600 s (NT-04 asks that the adapter's own timeout ends the stall, not that it be
short). A client with no read timeout still waits for ever, and fails NT-04."""


def stall_wait_s(read_timeout: float | None) -> float:
    """How long the replay really waits on a stalled read before raising the client's ReadTimeout."""
    return 3600 * 24 if read_timeout is None else min(read_timeout, STALL_FAST_FORWARD_S)


class Replayer:
    """Serves one scenario's interactions, in order, to whatever HTTP client the adapter uses."""

    def __init__(
        self,
        interactions: list[ReplayInteraction],
        profile: WireProfile,
        trace: Trace,
        plan: DeliveryPlan,
        *,
        abort_after_events: int | None = None,
        on_abort: Callable[[], None] | None = None,
    ) -> None:
        self.interactions = interactions
        self.profile = profile
        self.trace = trace
        self.plan = plan
        self.used = [False] * len(interactions)
        self.abort_after_events = abort_after_events
        self.on_abort = on_abort
        self.stall_release = threading.Event()
        self.unintercepted: list[str] = []

    def match(self, method: str, path: str) -> int | None:
        for i, interaction in enumerate(self.interactions):
            if not self.used[i] and self.profile.matches(method, path, interaction.path):
                self.used[i] = True
                return i
            if not self.used[i] and not interaction.optional:
                return None  # requests must come in the recorded order
        return None

    def unused(self) -> list[int]:
        return [i for i, used in enumerate(self.used) if not used and not self.interactions[i].optional]

    # --- serving ------------------------------------------------------------------------------------

    def _record(self, lib: ModuleType, request: Any, body: bytes) -> tuple[int | None, str]:
        url = str(request.url)
        path = urlsplit(url).path
        index = self.match(request.method, path)
        headers = {str(k).lower(): str(v) for k, v in request.headers.items()}
        self.trace.add_request(
            SentRequest(request.method, url, path, headers, body, index, self.trace.now(), lib.__name__)
        )
        return index, path

    def _unmatched_error(self, lib: ModuleType, request: Any, path: str) -> Exception:
        expected = [
            f"{i.method} …{self.profile.endpoint_tail(i.path)}"
            for i, u in zip(self.interactions, self.used)
            if not u
        ]
        return lib.ConnectError(  # type: ignore[no-any-return]
            f"helix-conformance replay: no recorded interaction matches {request.method} {path} "
            f"(request #{len(self.trace.requests)}); still expected: {expected or 'nothing'}",
            request=request,
        )

    def _prepare(
        self, lib: ModuleType, request: Any, index: int | None, path: str
    ) -> tuple[Any, list[bytes]]:
        if index is None:
            raise self._unmatched_error(lib, request, path)
        interaction = self.interactions[index]
        fault = interaction.fault
        if fault and fault.kind == "connect_error":
            self.trace.add("fault", name="connect_error", interaction=index)
            raise lib.ConnectError("[Errno 111] Connection refused", request=request)
        if fault and fault.kind == "connect_timeout":
            self.trace.add("fault", name="connect_timeout", interaction=index)
            raise lib.ConnectTimeout("timed out", request=request)
        chunks = self.plan.chunks(interaction.body, self.profile.split_events)
        if fault:
            boundaries = event_boundaries(interaction.body, self.profile.split_events)
            limit = boundaries[fault.after_events - 1] if 0 < fault.after_events <= len(boundaries) else 0
            chunks = cut_at_events(chunks, limit)
        return interaction, chunks

    def _read_timeout(self, request: Any) -> float | None:
        timeout = (request.extensions or {}).get("timeout") or {}
        value = timeout.get("read")
        return float(value) if value is not None else None

    async def handle_async(self, lib: ModuleType, transport: Any, request: Any) -> Any:
        return self._respond(lib, request, await request.aread(), is_async=True)

    def handle_sync(self, lib: ModuleType, transport: Any, request: Any) -> Any:
        return self._respond(lib, request, request.read(), is_async=False)

    def _respond(self, lib: ModuleType, request: Any, body: bytes, *, is_async: bool) -> Any:
        """Trace the request, match it, and answer with a replay stream of the library's own type."""
        index, path = self._record(lib, request, body)
        interaction, chunks = self._prepare(lib, request, index, path)
        stream = _stream_class(lib, is_async=is_async)(self, lib, request, index, chunks, interaction)
        return lib.Response(
            interaction.status, headers=list(interaction.headers.items()), stream=stream, request=request
        )

    def _before_chunk(self, index: int, i: int) -> bool:
        """Fire the abort plan when its chunk is reached; True when delivery should now be slow."""
        after = self.abort_after_events
        if after is None or i < after:
            return False
        if i == after and self.on_abort is not None:
            self.trace.add("abort", interaction=index, chunk_index=i)
            self.on_abort()
        return True


class _StreamBase:
    """Shared state of the async and sync replay streams."""

    def __init__(
        self,
        replayer: Replayer,
        lib: ModuleType,
        request: Any,
        index: int,
        chunks: list[bytes],
        interaction: ReplayInteraction,
    ) -> None:
        self.replayer, self.lib, self.request, self.index = replayer, lib, request, index
        self.chunks, self.fault, self.closed = chunks, interaction.fault, False

    def _deliver(self, i: int) -> None:
        chunks = self.chunks  # the bytes go in the trace, for `helix-conformance replay`
        self.replayer.trace.add_chunk(chunks[i], self.index, i, self.fault is None and i == len(chunks) - 1)

    def _fault_error(self) -> Exception | None:
        kind = self.fault.kind if self.fault else None
        if kind == "reset":
            return self.lib.ReadError("[Errno 104] Connection reset by peer", request=self.request)  # type: ignore[no-any-return]
        if kind in ("read_timeout", "stall"):
            return self.lib.ReadTimeout("The read operation timed out", request=self.request)  # type: ignore[no-any-return]
        return None

    def _stall_expired(self) -> None:
        """The stalled read waited out the client's read timeout: the adapter was still reading (AB-02, NT-04
        tell a return at the event from one at the timeout by this mark)."""
        self.replayer.trace.add("fault", name=STALL_EXPIRED, interaction=self.index)

    def _mark_closed(self) -> None:
        if not self.closed:
            self.closed = True
            self.replayer.trace.add("response_closed", interaction=self.index)


class _AsyncReplayStream(_StreamBase):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        turn = self.replayer.plan.yield_between
        for i, chunk in enumerate(self.chunks):
            if turn:
                await asyncio.sleep(0)
            if self.replayer._before_chunk(self.index, i):
                await asyncio.sleep(SLOW_AFTER_ABORT_S)
            self._deliver(i)
            yield chunk
        if self.fault is not None:
            self.replayer.trace.add("fault", name=self.fault.kind, interaction=self.index)
            if self.fault.kind == "stall":
                self.replayer._before_chunk(self.index, len(self.chunks))
                await asyncio.sleep(stall_wait_s(self.replayer._read_timeout(self.request)))
                self._stall_expired()
            error = self._fault_error()
            if error is not None:
                raise error

    async def aclose(self) -> None:
        self._mark_closed()


class _SyncReplayStream(_StreamBase):
    def __iter__(self) -> Iterator[bytes]:
        for i, chunk in enumerate(self.chunks):
            if self.replayer._before_chunk(self.index, i):
                time.sleep(SLOW_AFTER_ABORT_S)
            self._deliver(i)
            yield chunk
        if self.fault is not None:
            self.replayer.trace.add("fault", name=self.fault.kind, interaction=self.index)
            if self.fault.kind == "stall":
                self.replayer._before_chunk(self.index, len(self.chunks))
                timeout = self.replayer._read_timeout(self.request)
                if not self.replayer.stall_release.wait(stall_wait_s(timeout)):
                    self._stall_expired()
            error = self._fault_error()
            if error is not None:
                raise error

    def close(self) -> None:
        self._mark_closed()


_STREAM_CLASSES: dict[tuple[str, bool], type] = {}


def _stream_class(lib: ModuleType, *, is_async: bool) -> Callable[..., Any]:
    """A stream class that is also the library's own ByteStream type (httpx checks isinstance)."""
    key = (lib.__name__, is_async)
    if key not in _STREAM_CLASSES:
        base = lib.AsyncByteStream if is_async else lib.SyncByteStream
        mixin = _AsyncReplayStream if is_async else _SyncReplayStream
        _STREAM_CLASSES[key] = type(f"Replay{'Async' if is_async else 'Sync'}Stream", (mixin, base), {})
    return _STREAM_CLASSES[key]


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
                f"helix-conformance: a network connection to {address} was attempted outside httpx/httpx2; "
                "the replay intercepts only those clients, and real network access is blocked during a scenario"
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
    """Route every httpx/httpx2 request to ``replayer`` for the duration of the block; other network
    connections are refused unless ``block_network`` is False (recording live)."""
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
