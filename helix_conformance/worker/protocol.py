"""The messages between pytest and the adapter worker (docs/worker-protocol.md), version 1.

Parent to worker: frames of one JSON header line, followed by ``payload_bytes`` raw bytes when it says so.
Worker to parent: one JSON object per line. Both travel on dedicated pipes, never on stdout/stderr, which
belong to the adapter's prints. What the worker sends is untrusted: it is read as JSON only, bounded in size.
"""

from __future__ import annotations

import json
import os
import queue
import select
import threading
import time
import zlib
from collections.abc import Callable
from typing import Any

import pydantic_core

from ..replay.idle_threads import waits_for_others

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""A worker line longer than this is a broken worker, not a result (the snapshot caps itself far below)."""
READ_CHUNK = 64 * 1024
"""What one read of a channel asks for. A read allocates this much before it shrinks to what came: 1 MiB cost
about 40 us a read (a brk or mmap round trip each time), 64 KiB about 5; a long line takes more reads."""
EXIT_CHANNEL_LOST = 86
"""The worker's exit status when its answer channel was closed or broken inside it (by the adapter)."""


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


def encode_frame(message: dict[str, Any], payload: bytes, seq: int) -> bytes:
    """Parent to worker: the header line (``seq``, the frame's number on this channel from 1; ``crc``, the
    payload's CRC-32; ``payload_bytes``), then the payload. A frame taken off the channel, or one written
    into it by someone else, breaks the sequence or the checksum (``RequestReader``)."""
    header_line = encode_line(
        {**message, "seq": seq, "crc": zlib.crc32(payload), "payload_bytes": len(payload)}
    )
    return header_line + payload


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


class ChannelTampered(Exception):
    """Something other than the parent read from or wrote to the worker's request channel."""


MAX_HEADER_BYTES = 1 << 20
"""A frame header is a short JSON line; bytes beyond this without a newline are not one."""


class RequestReader:
    """Worker side: the parent's frames, read by a thread of its own from before the adapter is imported for as
    long as the worker lives, so the adapter (which shares the process and could read the channel too) can
    only take bytes off it by winning a race against a read already waiting. Each frame is checked: its
    number must be the next one, its payload complete and its checksum right; a frame taken or injected breaks
    one of them, and ``on_tamper`` says so at once (the reader stops: the channel can no longer be trusted).
    ``on_frame`` acknowledges each frame as it arrives, so the parent can tell a run that never arrived."""

    def __init__(
        self,
        fd: int,
        on_frame: Callable[[dict[str, Any]], None],
        on_tamper: Callable[[str], None],
    ) -> None:
        self.fd = fd
        self.on_frame, self.on_tamper = on_frame, on_tamper
        self.frames: queue.Queue[tuple[dict[str, Any], bytes] | BaseException] = queue.Queue()
        self.expected = 1
        self.thread = threading.Thread(target=self._read, name="helix-worker-requests", daemon=True)

    def start(self) -> RequestReader:
        self.thread.start()
        return self

    def next(self, block: bool = True) -> tuple[dict[str, Any], bytes] | None:
        """The next frame; None when none waits and ``block`` is false. ChannelClosed at the channel's end,
        ChannelTampered once it was tampered with."""
        try:
            item = self.frames.get(block)
        except queue.Empty:
            return None
        if isinstance(item, BaseException):
            self.frames.put(item)  # it stays the answer
            raise item
        return item

    def _read(self) -> None:
        buffer = bytearray()
        while True:
            try:
                chunk = os.read(self.fd, READ_CHUNK)
            except OSError as exc:
                self._tampered(
                    f"the request channel could not be read ({exc.strerror}): it was closed in the worker"
                )
                return
            if not chunk:
                if buffer:
                    self._tampered(f"the request channel ended inside a frame ({len(buffer)} bytes)")
                else:
                    self.frames.put(ChannelClosed("the parent closed the request channel"))
                return
            buffer += chunk
            try:
                self._split(buffer)
            except ChannelTampered as exc:
                self._tampered(str(exc))
                return

    def _split(self, buffer: bytearray) -> None:
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                if len(buffer) > MAX_HEADER_BYTES:
                    raise ChannelTampered(f"{len(buffer)} bytes without a frame header")
                return
            try:
                message = json.loads(bytes(buffer[:end]))
                size, seq, crc = int(message["payload_bytes"]), int(message["seq"]), int(message["crc"])
            except (ValueError, KeyError, TypeError):
                raise ChannelTampered(
                    f"frame {self.expected} does not start with a header: {bytes(buffer[:60])!r}"
                ) from None
            if seq != self.expected:
                raise ChannelTampered(f"frame {seq} arrived where frame {self.expected} was due")
            if len(buffer) < end + 1 + size:
                return
            payload = bytes(buffer[end + 1 : end + 1 + size])
            del buffer[: end + 1 + size]
            if zlib.crc32(payload) != crc:
                raise ChannelTampered(f"frame {seq}'s payload is not the one sent (checksum)")
            self.expected += 1
            self.frames.put((message, payload))
            self.on_frame(message)

    def _tampered(self, what: str) -> None:
        self.frames.put(ChannelTampered(what))
        self.on_tamper(what)


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


waits_for_others(
    RequestReader._read.__code__
)  # blocked on the parent's pipe, it never wakes the adapter's loop
