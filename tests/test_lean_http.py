"""replay/lean_http.py against httpcore's own h11 connection: for the same server bytes, the same request on the
wire, the same body and the same httpx exception (a reset, a cut body, no response, a silent server)."""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any

import httpcore
import httpx
import pytest

from helix_conformance.replay.lean_http import LeanPool
from helix_conformance.replay.transport import _LeanTransport

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
CASES = {
    "whole": HEAD + b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    "trailers": HEAD + b"5\r\nhello\r\n0\r\nx-trailer: 1\r\n\r\n",
    "continue_then_length": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
    "cut_inside_chunk": HEAD + b"5\r\nhello\r\n9\r\n wor",
    "cut_between_chunks": HEAD + b"5\r\nhello\r\n",
    "no_response": b"",
    "half_head": b"HTTP/1.1 200 OK\r\ncontent-",
    "error_status": b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\ntransfer-encoding: chunked\r\n\r\n"
    b"2\r\n{}\r\n0\r\n\r\n",
}
ENDINGS = ("close", "reset", "hold")


async def _serve(reply: bytes, ending: str, got: list[bytes]) -> tuple[asyncio.Server, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in data.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            ),
            0,
        )
        got.append((data + await reader.readexactly(length)).replace(str(port).encode(), b"PORT"))
        writer.write(reply)
        await writer.drain()
        if ending == "hold":
            await asyncio.sleep(5)
        sock = writer.get_extra_info("socket")
        if ending == "reset":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, port


async def _send(transport: httpx.AsyncHTTPTransport, request: httpx.Request, lean: bool) -> httpx.Response:
    """``request`` through httpx's transport code, on httpcore's pool or on the lean one in its place."""
    if lean:
        return await httpx.AsyncHTTPTransport.handle_async_request(
            _LeanTransport(LeanPool(httpcore, transport._pool)),  # type: ignore[arg-type]
            request,
        )
    return await transport.handle_async_request(request)


async def _exchange(reply: bytes, ending: str, lean: bool) -> tuple[Any, bytes, list[bytes]]:
    """(status or the exception's class name, body read, the request bytes the server got)."""
    got: list[bytes] = []
    server, port = await _serve(reply, ending, got)
    transport = httpx.AsyncHTTPTransport()
    request = httpx.Request(
        "POST",
        f"http://127.0.0.1:{port}/v1/chat?x=1",
        headers={"authorization": "Bearer k", "X-Mixed-Case": "v"},
        json={"a": 1},
        extensions={"timeout": {"connect": 1.0, "read": 0.3, "write": 1.0, "pool": 1.0}},
    )
    body = b""
    try:
        response = await _send(transport, request, lean)
        outcome: Any = response.status_code
        try:
            async for piece in response.stream:  # type: ignore[union-attr]
                body += piece
        finally:
            await response.aclose()
    except httpx.HTTPError as exc:
        outcome = type(exc).__name__
    finally:
        await transport.aclose()
        server.close()
    return outcome, body, got


COMPLETE = ("whole", "trailers", "continue_then_length", "error_status")
"""Responses complete in themselves: a connection held open after them changes nothing (no ``hold`` case)."""


@pytest.mark.parametrize(
    ("case", "ending"),
    [(c, e) for c in sorted(CASES) for e in ENDINGS if not (e == "hold" and c in COMPLETE)],
)
def test_the_lean_exchange_is_httpcores(case: str, ending: str) -> None:
    expected = asyncio.run(_exchange(CASES[case], ending, lean=False))
    actual = asyncio.run(_exchange(CASES[case], ending, lean=True))
    assert actual == expected


async def _left_unread(lean: bool) -> bool:
    """Whether the server sees the connection end when the client is closed with its response left unread."""
    ended = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(HEAD + b"5\r\nhello\r\n")
        await writer.drain()
        if await reader.read(1) == b"":
            ended.set()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = httpx.AsyncHTTPTransport()
    request = httpx.Request("GET", f"http://127.0.0.1:{port}/", extensions={"timeout": {"read": 1.0}})
    response = await _send(transport, request, lean)
    await transport.aclose()  # the response is never read nor closed: the client's end closes it
    try:
        await asyncio.wait_for(ended.wait(), 2.0)
    except TimeoutError:
        return False
    finally:
        server.close()
        del response  # held until here: its being collected would close it too
    return True


def test_closing_the_client_closes_a_response_left_unread() -> None:
    assert asyncio.run(_left_unread(lean=False))
    assert asyncio.run(_left_unread(lean=True))


def test_the_pools_socket_options_and_local_address_go_with_the_lean_connection() -> None:
    """Anthropic's SDK sets TCP keep-alive on its pool: such a client takes the lean path too (it kept httpcore's,
    half as fast again per suite), with its options on the socket as httpcore sets them."""
    from helix_conformance.replay.lean_http import usable

    async def main() -> tuple[bool, int, str]:
        server, port = await _serve(CASES["whole"], "close", [])
        options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
        transport = httpx.AsyncHTTPTransport(socket_options=options, local_address="127.0.0.1")
        request = httpx.Request("POST", f"http://127.0.0.1:{port}/v1/chat", json={})
        try:
            takes = usable(transport._pool, request, httpcore)
            response = await _send(transport, request, lean=True)
            sock = response.extensions["network_stream"].get_extra_info("socket")
            keepalive = sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
            bound = sock.getsockname()[0]
            await response.aclose()
        finally:
            await transport.aclose()
            server.close()
        return takes, keepalive, bound

    assert asyncio.run(main()) == (True, 1, "127.0.0.1")
