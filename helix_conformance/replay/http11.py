"""The few pieces of HTTP/1.1 the replay host needs: read one request, write a chunked response, reset.

Deliberately small: the host talks to one adapter's HTTP clients on loopback, without blocking. Requests are bounded (head
64 KiB, body 64 MiB); anything else is a connection the server drops.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from dataclasses import dataclass

MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade"}
)
"""Recorded response headers the server does not repeat: it frames bodies itself (chunked)."""
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           408: "Request Timeout", 413: "Payload Too Large", 422: "Unprocessable Entity",
           429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable", 504: "Gateway Timeout", 529: "Overloaded"}  # fmt: skip


class BadRequest(Exception):
    """The bytes on the connection are not an HTTP/1.1 request the server can read."""


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    """The request target as sent: path and query (``/v1/chat/completions``)."""
    headers: dict[str, str]
    """Lower-cased names; repeated headers joined with ``, ``."""
    body: bytes


def read_request(buffer: bytearray) -> Request | None:
    """The first complete request in ``buffer``, removed from it; None while it is incomplete (the host reads
    without blocking and calls again with more bytes). BadRequest for bytes that are not a request."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        if len(buffer) > MAX_HEAD:
            raise BadRequest("request head too large")
        return None
    head = bytes(buffer[:end]).decode("latin-1")
    request_line, *header_lines = head.split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(f"not an HTTP/1.1 request line: {request_line[:100]!r}")
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(f"malformed header line {line[:100]!r}")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    found = _body(buffer, end + 4, headers)
    if found is None:
        return None
    body, consumed = found
    del buffer[:consumed]
    return Request(parts[0].upper(), parts[1], headers, body)


def expects_continue(buffer: bytearray) -> bool:
    """The head in ``buffer`` is complete and asks for ``100 Continue`` before its body is sent."""
    end = buffer.find(b"\r\n\r\n")
    return end >= 0 and b"\r\nexpect: 100-continue" in bytes(buffer[:end]).lower()


def _body(buffer: bytearray, start: int, headers: dict[str, str]) -> tuple[bytes, int] | None:
    """(body, bytes consumed from the start of ``buffer``), or None while the body is incomplete."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        at = start
        while True:
            line_end = buffer.find(b"\r\n", at)
            if line_end < 0:
                if len(buffer) - at > 1024:
                    raise BadRequest("chunk size line too long")
                return None
            try:
                size = int(bytes(buffer[at:line_end]).split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise BadRequest("malformed chunk size") from None
            at = line_end + 2
            if size == 0:
                trailers_end = buffer.find(b"\r\n\r\n", at - 2)
                if trailers_end < 0:
                    return None
                return bytes(body), trailers_end + 4
            if len(body) + size > MAX_BODY:
                raise BadRequest("request body too large")
            if len(buffer) < at + size + 2:
                return None
            body += buffer[at : at + size]
            at += size + 2
    try:
        length = int(headers.get("content-length", "0") or "0")
    except ValueError:
        raise BadRequest("malformed content-length") from None
    if length > MAX_BODY or length < 0:
        raise BadRequest("request body too large")
    if len(buffer) < start + length:
        return None
    return bytes(buffer[start : start + length]), start + length


def response_head(status: int, headers: dict[str, str]) -> bytes:
    """Status line and headers of a chunked response; the recorded framing headers are dropped."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in HOP_BY_HOP]
    lines.append("transfer-encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body (an empty ``data`` would end the body, so it is never sent as a chunk)."""
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


LAST_CHUNK = b"0\r\n\r\n"


def reset(sock: socket.socket) -> None:
    """Close with a TCP RST (SO_LINGER 0): the client reads ECONNRESET, as from a dropped connection."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
