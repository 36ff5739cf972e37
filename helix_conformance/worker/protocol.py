"""The messages between pytest and the adapter worker (docs/worker-protocol.md), version 1.

Parent to worker: frames of one JSON header line, followed by ``payload_bytes`` raw bytes when it says so.
Worker to parent: one JSON object per line. Both travel on dedicated pipes, never on stdout/stderr, which
belong to the adapter's prints. What the worker sends is untrusted: it is read as JSON only, bounded in size.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any, BinaryIO

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""A worker line longer than this is a broken worker, not a result (the snapshot caps itself far below)."""
READ_CHUNK = 1 << 20


class ProtocolError(Exception):
    """The other side sent something that is not a message of this protocol."""


class ChannelClosed(Exception):
    """The other side closed its end (the worker ended)."""


class ChannelTimeout(Exception):
    """No complete message arrived before the deadline."""


def header(message_type: str, **fields: Any) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "type": message_type, **fields}


def encode_line(message: dict[str, Any]) -> bytes:
    """One message as one line: JSON escapes every newline inside strings, so a line is a message."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def send_frame(fd: int, message: dict[str, Any], payload: bytes = b"") -> None:
    """Parent to worker: the header line (with ``payload_bytes``), then the payload."""
    write_all(fd, encode_line({**message, "payload_bytes": len(payload)}) + payload)


def read_frame(stream: BinaryIO) -> tuple[dict[str, Any], bytes]:
    """Worker side: the next frame from the parent (trusted), or ChannelClosed at end of file."""
    line = stream.readline()
    if not line:
        raise ChannelClosed("the parent closed the request channel")
    message = json.loads(line)
    size = int(message.get("payload_bytes", 0))
    payload = stream.read(size) if size else b""
    if len(payload) != size:
        raise ChannelClosed("the request channel closed inside a frame")
    return message, payload


class LineReader:
    """Parent side: reads the worker's lines with a deadline and a size bound, never trusting them."""

    def __init__(self, fd: int, version: int = PROTOCOL_VERSION) -> None:
        self.fd = fd
        self.version = version
        self.buffer = bytearray()

    def read(self, deadline: float | None) -> dict[str, Any]:
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return parse_line(line, self.version)
            if len(self.buffer) > MAX_MESSAGE_BYTES:
                raise ProtocolError(f"a message longer than {MAX_MESSAGE_BYTES} bytes")
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise ChannelTimeout("no answer before the deadline")
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.fd, READ_CHUNK)
            if not chunk:
                raise ChannelClosed("the worker closed its channel")
            self.buffer += chunk


def parse_line(line: bytes, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """A worker line as a message dict; anything else (bad JSON, too deep, wrong version) is a ProtocolError."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"not JSON: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(message, dict) or message.get("v") != version:
        raise ProtocolError(f"not a version {version} message: {line[:200]!r}")
    if not isinstance(message.get("type"), str):
        raise ProtocolError(f"a message without a type: {line[:200]!r}")
    return message
