"""A lean HTTP/1.1 exchange for the httpx requests the seam sends to the replay host (replay/transport.py).

The host answers every request with a chunked body, one HTTP chunk per piece of the delivery plan, and a run
delivers hundreds of pieces: under httpx, httpcore's h11 state machine parsed each piece as its own event, three
times the CPU of everything else the adapter's process does per piece (py-spy on the openai suite: 23 µs per
chunk). This module takes the place of httpcore's connection pool for those requests only: it writes the
request as h11 would (Host first, the body framed by its Content-Length or chunked) on a connection made by
lean_net.py, reads the head, and hands on each chunk's bytes as they arrive (a chunk split across two reads
is two pieces, as h11 hands it on). httpx's own transport code still builds the request and maps every error
(``AsyncHTTPTransport.handle_async_request`` runs with this pool as its ``_pool``), and every failure is the
httpcore exception h11's connection raises for it: ``ReadError``/``ReadTimeout`` (a reset, a stall),
``RemoteProtocolError`` (the connection ended before the response or inside the body), ``WriteError``...

Only plain requests on an asyncio loop to the host go this way (``usable``): a proxy, a socket path, a custom
network backend, HTTP/2 only, a HEAD request or a header h11 would refuse keep httpcore's path, the same host
and bytes (lean_net.py below it). The pool's local address and socket options apply to the lean connection
as httpcore applies them (Anthropic's SDK sets TCP keep-alive: its requests took httpcore's path, 50% more CPU
per suite than the OpenAI SDK's).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from .lean_net import connect_stream, on_asyncio

READ_SIZE = 64 * 1024
"""As httpcore's ``READ_NUM_BYTES``: what one read of the connection asks for."""
MAX_HEAD = 100 * 1024
"""As h11's ``max_incomplete_event_size`` under httpcore."""
UNSAFE_HEADER = re.compile(rb"[\x00\r\n]")
"""A header h11 would refuse (``LocalProtocolError``): such a request keeps httpcore's path, which says so."""
INCOMPLETE_BODY = "peer closed connection without sending complete message body: incomplete chunked read"
NO_RESPONSE = "Server disconnected without sending a response."


def usable(pool: Any, request: Any, core: ModuleType) -> bool:
    """Whether ``request`` (an httpx request to the host) on the adapter's ``pool`` can take the lean path."""
    return (
        type(pool) is core.AsyncConnectionPool
        and pool._uds is None
        and pool._http1
        and type(pool._network_backend).__name__ == "AutoBackend"
        and request.method not in ("HEAD", "CONNECT")
        and not any(UNSAFE_HEADER.search(name + value) for name, value in request.headers.raw)
        and on_asyncio()
    )


class LeanPool:
    """Stands in for the adapter's ``AsyncConnectionPool`` in ``AsyncHTTPTransport.handle_async_request``: one
    connection per request, closed with its response (the host serves each on its own). Each open exchange is
    also entered in the adapter's own pool (``_Exchange``), so closing the adapter's client closes it, as httpcore
    closes the connections of its pool: a response the adapter left unread ends when its client does."""

    def __init__(self, core: ModuleType, pool: Any) -> None:
        self._core = core
        self._pool = pool

    async def handle_async_request(self, request: Any) -> Any:
        core = self._core
        timeouts = request.extensions.get("timeout", {})
        url = request.url
        stream = await connect_stream(
            core,
            url.host.decode("ascii"),
            url.port,
            timeouts.get("connect"),
            self._pool._local_address,
            self._pool._socket_options,
        )
        exchange = _Exchange(stream, self._pool)
        try:
            with contextlib.suppress(core.WriteError):  # as httpcore: the response may still say why
                await _send(core, stream, request, timeouts.get("write"))
            reader = _Reader(core, stream, timeouts.get("read"))
            status, reason, headers = await reader.head()
        except BaseException:
            await exchange.aclose()
            raise
        return core.Response(
            status,
            headers=headers,
            content=_Body(reader, exchange, _chunked(headers)),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason, "network_stream": stream},
        )


class _Exchange:
    """One lean exchange as an entry of the adapter's ``AsyncConnectionPool`` (``_connections``): the pool closes
    it with the others on ``aclose``, and never picks it for a request of its own (not available, not idle)."""

    def __init__(self, stream: Any, pool: Any) -> None:
        self._stream = stream
        self._pool = pool
        self._closed = False
        pool._connections.append(self)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(ValueError):
                self._pool._connections.remove(self)
            await self._stream.aclose()

    def is_closed(self) -> bool:
        return self._closed

    def can_handle_request(self, origin: Any) -> bool:
        return False

    def is_available(self) -> bool:
        return False

    def is_idle(self) -> bool:
        return False

    def has_expired(self) -> bool:
        return False

    def info(self) -> str:
        return "helix-conformance lean exchange with the replay host"


async def _send(core: ModuleType, stream: Any, request: Any, timeout: float | None) -> None:
    """The request as h11 writes it: the request line, Host first, the other headers in order, the body."""
    headers = request.headers
    lines = [b"%s %s HTTP/1.1\r\n" % (request.method, request.url.target)]
    lines += [b"%s: %s\r\n" % (n, v) for n, v in headers if n.lower() == b"host"]
    lines += [b"%s: %s\r\n" % (n, v) for n, v in headers if n.lower() != b"host"]
    lines.append(b"\r\n")
    chunked = any(n.lower() == b"transfer-encoding" and b"chunked" in v.lower() for n, v in headers)
    declared = next((v for n, v in headers if n.lower() == b"content-length"), None)
    length = int(declared) if declared is not None and declared.strip().isdigit() else 0
    body = [piece async for piece in request.stream]
    if chunked:
        framed = [b"%x\r\n%s\r\n" % (len(p), p) for p in body if p]
        await stream.write(b"".join(lines + framed) + b"0\r\n\r\n", timeout=timeout)
        return
    data = b"".join(body)
    if len(data) != length:
        direction = "much" if len(data) > length else "little"
        raise core.LocalProtocolError(f"Too {direction} data for declared Content-Length")
    await stream.write(b"".join(lines) + data, timeout=timeout)


def _chunked(headers: list[tuple[bytes, bytes]]) -> int | None:
    """None for a chunked body, else its Content-Length (-1: until the connection closes)."""
    length = -1
    for name, value in headers:
        lower = name.lower()
        if lower == b"transfer-encoding" and b"chunked" in value.lower():
            return None
        if lower == b"content-length" and value.strip().isdigit():
            length = int(value)
    return length


class _Reader:
    """The connection's bytes as they arrive (``data[at:]`` not read yet), with the request's read timeout."""

    def __init__(self, core: ModuleType, stream: Any, timeout: float | None) -> None:
        self.core = core
        self.stream = stream
        self.timeout = timeout
        self.data = b""
        self.at = 0

    async def more(self) -> bool:
        """Read once more; False at the end of the stream."""
        data = await self.stream.read(READ_SIZE, timeout=self.timeout)
        if not data:
            return False
        self.data = self.data[self.at :] + data if self.at < len(self.data) else data
        self.at = 0
        return True

    async def line(self, error: str) -> bytes:
        """The next line (without its CRLF); ``error`` when the stream ends first."""
        while (end := self.data.find(b"\r\n", self.at)) < 0:
            if len(self.data) - self.at > MAX_HEAD:
                raise self.core.RemoteProtocolError("line too long")
            if not await self.more():
                raise self.core.RemoteProtocolError(error)
        line = self.data[self.at : end]
        self.at = end + 2
        return line

    async def head(self) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """The final response's status, reason and headers (informational responses are skipped, as h11's
        connection does under httpcore)."""
        while True:
            status_line = await self.line(NO_RESPONSE)
            parts = status_line.split(b" ", 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
                raise self.core.RemoteProtocolError("illegal status line")
            headers = []
            while line := await self.line(NO_RESPONSE):
                name, sep, value = line.partition(b":")
                if not sep:
                    raise self.core.RemoteProtocolError("illegal header line")
                headers.append((name.strip(), value.strip()))
            status = int(parts[1])
            if status >= 200:
                return status, parts[2] if len(parts) > 2 else b"", headers


class _Body:
    """The response body, each piece as it arrives; closes the connection when the response is closed."""

    def __init__(self, reader: _Reader, exchange: _Exchange, length: int | None) -> None:
        self.reader = reader
        self.exchange = exchange
        self.length = length
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            pieces = self._chunks() if self.length is None else self._plain(self.length)
            async for piece in pieces:
                yield piece
        except BaseException:
            await self.aclose()
            raise

    async def _plain(self, length: int) -> AsyncIterator[bytes]:
        """A body of ``length`` bytes (-1: up to the end of the stream)."""
        reader, left = self.reader, length
        while left:
            if reader.at >= len(reader.data) and not await reader.more():
                if length < 0:
                    return
                raise reader.core.RemoteProtocolError(
                    "peer closed connection without sending complete message body: "
                    f"received {length - left} bytes, expected {length}"
                )
            end = len(reader.data) if left < 0 else min(len(reader.data), reader.at + left)
            piece = reader.data[reader.at : end]
            reader.at = end
            left -= len(piece) if left > 0 else 0
            yield piece

    async def _chunks(self) -> AsyncIterator[bytes]:
        """A chunked body: each chunk's bytes as they arrive (a chunk cut by a read is two pieces)."""
        reader = self.reader
        while True:
            header = await reader.line(INCOMPLETE_BODY)
            try:
                size = int(header.split(b";", 1)[0], 16)
            except ValueError:
                raise reader.core.RemoteProtocolError("illegal chunk header") from None
            if size == 0:
                while await reader.line(INCOMPLETE_BODY):  # trailers, up to the blank line
                    pass
                return
            while size:
                data, at = reader.data, reader.at
                if at >= len(data):
                    if not await reader.more():
                        raise reader.core.RemoteProtocolError(INCOMPLETE_BODY)
                    data, at = reader.data, reader.at
                end = min(len(data), at + size)
                reader.at = end
                size -= end - at
                yield data[at:end]
            if await reader.line(INCOMPLETE_BODY):
                raise reader.core.RemoteProtocolError("chunk data not followed by CRLF")

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            await self.exchange.aclose()
