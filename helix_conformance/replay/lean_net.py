"""A lean network layer under httpcore for the connections an httpx client makes to the replay host.

httpx's default network backend goes through anyio: a task group and a task per connection attempt (happy
eyeballs, for one loopback address), a cancel scope and a checkpoint per read and per write. Every run of an
httpx adapter opens a connection to its host (a client per run), so that layer was about a millisecond of the
adapter's process per run, more than the HTTP it carries (py-spy on text_basic runs). While a run replays,
httpcore's ``AutoBackend.connect_tcp`` is patched (replay/transport.py ``intercept``): a connection to the run's
host on an asyncio loop gets a plain non-blocking socket driven by the loop's ``sock_*`` calls; anything else
(another address, trio) goes the usual way. Only the byte layer changes: httpcore still frames and parses
HTTP/1.1 (h11), keeps the adapter's pool and limits, and the timeouts the adapter set are still timers on the
run's loop (the virtual clock jumps to them as to anyio's). What the adapter sees of a failure is what
httpcore's anyio layer maps it to: ``ConnectError``/``ConnectTimeout``, ``ReadError``/``ReadTimeout``,
``WriteError``/``WriteTimeout``, and an empty read at the end of the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import socket
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")

CORES = ("httpcore", "httpcore2")
"""The httpcore packages under httpx and httpx2."""


async def _within(awaitable: Awaitable[T], timeout: float | None) -> T:
    if timeout is None:
        return await awaitable
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout):
            return await awaitable
    try:  # pragma: no cover  (3.10)
        return await asyncio.wait_for(awaitable, timeout)
    except asyncio.TimeoutError as exc:  # its own class before 3.11: the callers catch the builtin one
        raise TimeoutError from exc


@functools.cache
def _stream_class(core: ModuleType) -> type:
    """The ``AsyncNetworkStream`` of ``core`` (httpcore or httpcore2) over a non-blocking socket."""
    base: Any = core._backends.base.AsyncNetworkStream
    errors: Any = core._exceptions
    readable: Callable[[Any], bool] = core._utils.is_socket_readable

    class LeanStream(base):  # type: ignore[misc]
        def __init__(self, sock: socket.socket) -> None:
            self._sock = sock
            self._loop = asyncio.get_running_loop()

        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            # Bytes already here are read at once, as ``sock_recv`` would first do, without a timeout's timer
            # set and cancelled around them (most reads of a replayed stream: the chunk is in the socket).
            try:
                return self._sock.recv(max_bytes)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as exc:
                raise errors.ReadError(exc) from exc
            try:
                return await _within(self._loop.sock_recv(self._sock, max_bytes), timeout)
            except TimeoutError as exc:
                raise errors.ReadTimeout(exc) from exc
            except OSError as exc:
                raise errors.ReadError(exc) from exc

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            if not buffer:
                return
            try:  # as ``sock_sendall`` first does: what the socket takes now goes without a timer
                sent = self._sock.send(buffer)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as exc:
                raise errors.WriteError(exc) from exc
            if sent == len(buffer):
                return
            try:
                await _within(self._loop.sock_sendall(self._sock, memoryview(buffer)[sent:]), timeout)
            except TimeoutError as exc:
                raise errors.WriteTimeout(exc) from exc
            except OSError as exc:
                raise errors.WriteError(exc) from exc

        async def aclose(self) -> None:
            with contextlib.suppress(OSError):
                self._sock.close()

        async def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> Any:
            raise errors.ConnectError("the replay host speaks plain HTTP")

        def get_extra_info(self, info: str) -> Any:
            if info == "socket":
                return self._sock
            if info == "is_readable":
                return readable(self._sock)
            with contextlib.suppress(OSError):
                if info == "client_addr":
                    return self._sock.getsockname()
                if info == "server_addr":
                    return self._sock.getpeername()
            return None

    return LeanStream


async def _connect(
    core: ModuleType,
    stream_class: type,
    host: str,
    port: int,
    timeout: float | None,
    local_address: str | None,
    socket_options: Iterable[Any] | None,
) -> Any:
    errors: Any = core._exceptions
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as asyncio's transports do
        for option in socket_options or ():
            sock.setsockopt(*option)
        if local_address:
            sock.bind((local_address, 0))
        await _within(loop.sock_connect(sock, (host, port)), timeout)
    except TimeoutError as exc:
        sock.close()
        raise errors.ConnectTimeout(exc) from exc
    except OSError as exc:
        sock.close()
        raise errors.ConnectError(exc) from exc
    except BaseException:
        sock.close()
        raise
    return stream_class(sock)


async def connect_stream(
    core: ModuleType,
    host: str,
    port: int,
    timeout: float | None,
    local_address: str | None = None,
    socket_options: Iterable[Any] | None = None,
) -> Any:
    """A connection to ``host:port`` as ``core``'s (httpcore or httpcore2) ``AsyncNetworkStream``, on the lean
    layer (replay/lean_http.py reads and writes the host's HTTP through it), bound and with socket options
    as the adapter's pool asked (Anthropic's SDK sets TCP keep-alive on every connection)."""
    return await _connect(core, _stream_class(core), host, port, timeout, local_address, socket_options)


@contextlib.contextmanager
def lean_connections(to_host: Callable[[str, int], bool]) -> Iterator[None]:
    """While the block runs, httpcore connections for which ``to_host(host, port)`` is true, made on an
    asyncio loop, use the lean layer."""
    saved: list[tuple[type, Any]] = []
    for name in CORES:
        try:
            core = importlib.import_module(name)
            auto: Any = importlib.import_module(f"{name}._backends.auto").AutoBackend
        except (ImportError, AttributeError):
            continue
        original = auto.__dict__.get("connect_tcp")
        if original is None:
            continue
        stream_class = _stream_class(core)

        def make(core: ModuleType = core, original: Any = original, stream_class: type = stream_class) -> Any:
            async def connect_tcp(
                self: Any,
                host: str,
                port: int,
                timeout: float | None = None,
                local_address: str | None = None,
                socket_options: Iterable[Any] | None = None,
            ) -> Any:
                if to_host(host, port) and on_asyncio():
                    return await _connect(
                        core, stream_class, host, port, timeout, local_address, socket_options
                    )
                return await original(
                    self,
                    host,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )

            return connect_tcp

        saved.append((auto, original))
        auto.connect_tcp = make()
    try:
        yield
    finally:
        for auto, original in reversed(saved):
            auto.connect_tcp = original


def on_asyncio() -> bool:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    return isinstance(loop, asyncio.BaseEventLoop)
