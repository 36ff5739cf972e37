"""The few pieces of HTTP/1.1 the replay server needs: read one request, write a chunked response, reset.

Deliberately small: the server talks to one adapter's HTTP client on loopback. Requests are bounded (head
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


class Connection:
    """A buffered reader over one accepted socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()

    def _fill(self) -> bool:
        data = self.sock.recv(65536)
        if not data:
            return False
        self.buffer += data
        return True

    def _line(self, limit: int) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if len(self.buffer) > limit or not self._fill():
                raise BadRequest("the connection ended inside a line")
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 2]
        return line

    def _exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not self._fill():
                raise BadRequest("the connection ended inside the body")
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def read_request(self) -> Request | None:
        """The next request, or None when the client closed an idle connection."""
        if not self.buffer and not self._fill():
            return None
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            if len(self.buffer) > MAX_HEAD:
                raise BadRequest("request head too large")
            if not self._fill():
                if self.buffer.strip():
                    raise BadRequest("the connection ended inside the head")
                return None
        head = bytes(self.buffer[:end]).decode("latin-1")
        del self.buffer[: end + 4]
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
        if headers.get("expect", "").lower() == "100-continue":
            self.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        return Request(parts[0].upper(), parts[1], headers, self._body(headers))

    def _body(self, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = bytearray()
            while True:
                size = int(self._line(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self._line(MAX_HEAD):  # trailers, up to the empty line
                        pass
                    return bytes(body)
                if len(body) + size > MAX_BODY:
                    raise BadRequest("request body too large")
                body += self._exactly(size)
                self._line(2)
        length = int(headers.get("content-length", "0") or "0")
        if length > MAX_BODY:
            raise BadRequest("request body too large")
        return self._exactly(length)


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
