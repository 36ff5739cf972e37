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
from typing import Any

import pydantic_core

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


def encode_answer(message: dict[str, Any]) -> bytes:
    """``encode_line`` for the worker's answers, a run's trace among them: pydantic-core's serializer writes
    UTF-8 JSON about four times as fast; the standard one takes what it refuses (a lone surrogate)."""
    try:
        return pydantic_core.to_json(message) + b"\n"
    except (ValueError, TypeError):
        return encode_line(message)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def send_frame(fd: int, message: dict[str, Any], payload: bytes = b"") -> None:
    """Parent to worker: the header line (with ``payload_bytes``), then the payload."""
    write_all(fd, encode_line({**message, "payload_bytes": len(payload)}) + payload)


class LineReader:
    """Parent side: reads the worker's lines with a deadline and a size bound, never trusting them."""

    def __init__(self, fd: int, version: int = PROTOCOL_VERSION) -> None:
        self.fd = fd
        self.version = version
        self.buffer = bytearray()

    def read(self, deadline: float | None) -> dict[str, Any]:
        while True:
            message = self.pop()
            if message is not None:
                return message
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise ChannelTimeout("no answer before the deadline")
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                self.pump()

    def pop(self) -> dict[str, Any] | None:
        """The next complete message already read, or None; a line too long is a ProtocolError."""
        end = self.buffer.find(b"\n")
        if end < 0:
            if len(self.buffer) > MAX_MESSAGE_BYTES:
                raise ProtocolError(f"a message longer than {MAX_MESSAGE_BYTES} bytes")
            return None
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return parse_line(line, self.version)

    def pump(self) -> None:
        """Read what the channel holds (call when select says it is readable); ChannelClosed at its end."""
        chunk = os.read(self.fd, READ_CHUNK)
        if not chunk:
            raise ChannelClosed("the worker closed its channel")
        self.buffer += chunk


class FrameReader:
    """Worker side: the parent's frames, read as they arrive so a queued run can be skipped for an urgent
    one (``poll``), or waited for (``wait``)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def wait(self) -> None:
        """Block until more bytes arrive; ChannelClosed when the parent closed the channel."""
        chunk = os.read(self.fd, READ_CHUNK)
        if not chunk:
            raise ChannelClosed("the parent closed the request channel")
        self.buffer += chunk

    def poll(self) -> None:
        """Read whatever is there without blocking."""
        while select.select([self.fd], [], [], 0)[0]:
            self.wait()

    def frames(self) -> list[tuple[dict[str, Any], bytes]]:
        """The complete frames read so far, removed from the buffer."""
        found: list[tuple[dict[str, Any], bytes]] = []
        while True:
            end = self.buffer.find(b"\n")
            if end < 0:
                return found
            message = json.loads(bytes(self.buffer[:end]))
            size = int(message.get("payload_bytes", 0))
            if len(self.buffer) < end + 1 + size:
                return found
            payload = bytes(self.buffer[end + 1 : end + 1 + size])
            del self.buffer[: end + 1 + size]
            found.append((message, payload))


def _loads(line: bytes) -> Any:
    """JSON by pydantic-core (twice as fast on a run's answer); by the standard parser where pydantic-core
    refuses what it accepts (a lone surrogate escape, nesting past 200), so both read the same messages."""
    try:
        return pydantic_core.from_json(line)
    except ValueError:
        return json.loads(line)


def parse_line(line: bytes, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """A worker line as a message dict; anything else (bad JSON, too deep, wrong version) is a ProtocolError."""
    try:
        message = _loads(line)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"not JSON: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(message, dict) or message.get("v") != version:
        raise ProtocolError(f"not a version {version} message: {line[:200]!r}")
    if not isinstance(message.get("type"), str):
        raise ProtocolError(f"a message without a type: {line[:200]!r}")
    return message
