"""Incremental AWS event-stream decoder (``application/vnd.amazon.eventstream``), CRC-checked, stdlib only.

Bedrock's ConverseStream answers with binary messages: a 12-byte prelude (total length and headers length,
big-endian uint32 each, then a CRC32 of those 8 bytes), headers, a payload and a CRC32 of the whole message
before it. This decoder gives the same messages however the bytes are split into chunks (STR-10): a chunk may
end inside a prelude, a header or a CRC, and bytes are only read once a whole message has arrived.

Every check a reader must make is made, because a changed byte is otherwise silently read as data: the
prelude CRC before the lengths are trusted (a corrupted length would make the reader wait for bytes that
never come), the lengths, and the message CRC before the payload is used. A failed check raises
``EventStreamError``; so does ``close()`` when the body ended inside a message.
"""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass

__all__ = ["EventStreamDecoder", "EventStreamError", "EventStreamMessage"]

_PRELUDE = 12
_CRC = 4
_MAX_MESSAGE = 24 * 1024 * 1024  # botocore's limit on a payload; no ConverseStream event comes near it
_FIXED_SIZES = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


class EventStreamError(ValueError):
    """The bytes are not a valid event stream: a CRC, a length or a header failed its check."""


@dataclass(frozen=True)
class EventStreamMessage:
    """One message: its string headers (other header types are kept as bytes) and its payload."""

    headers: dict[str, object]
    payload: bytes

    def header(self, name: str) -> str:
        value = self.headers.get(name)
        return value if isinstance(value, str) else ""


def _crc(data: bytes) -> int:
    return binascii.crc32(data) & 0xFFFFFFFF


class EventStreamDecoder:
    """``feed`` each received chunk, ``close`` at end of body; both return the messages completed."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        self._buffer.extend(chunk)
        messages = []
        while len(self._buffer) >= _PRELUDE:
            total, headers_length, prelude_crc = struct.unpack(">III", self._buffer[:_PRELUDE])
            if _crc(bytes(self._buffer[:8])) != prelude_crc:
                raise EventStreamError("the prelude CRC does not match: the stream is corrupt")
            if not _PRELUDE + _CRC <= total <= _MAX_MESSAGE or headers_length > total - _PRELUDE - _CRC:
                raise EventStreamError(
                    f"impossible lengths in a prelude (total {total}, headers {headers_length})"
                )
            if len(self._buffer) < total:
                break  # the rest of this message is still on its way
            raw = bytes(self._buffer[:total])
            del self._buffer[:total]
            if _crc(raw[:-_CRC]) != struct.unpack(">I", raw[-_CRC:])[0]:
                raise EventStreamError("the message CRC does not match: the stream is corrupt")
            headers = _headers(raw[_PRELUDE : _PRELUDE + headers_length])
            messages.append(EventStreamMessage(headers, raw[_PRELUDE + headers_length : -_CRC]))
        return messages

    def close(self) -> list[EventStreamMessage]:
        if self._buffer:
            left = len(self._buffer)
            self._buffer.clear()
            raise EventStreamError(f"the body ended inside a message ({left} bytes of it arrived)")
        return []


def _headers(raw: bytes) -> dict[str, object]:
    headers: dict[str, object] = {}
    at = 0
    try:
        while at < len(raw):
            name_length = raw[at]
            name = raw[at + 1 : at + 1 + name_length].decode("utf-8")
            kind = raw[at + 1 + name_length]
            at += 2 + name_length
            if kind in (6, 7):  # bytes, string: a 2-byte length
                size = struct.unpack(">H", raw[at : at + 2])[0]
                value = raw[at + 2 : at + 2 + size]
                headers[name] = value.decode("utf-8") if kind == 7 else value
                at += 2 + size
            elif kind in _FIXED_SIZES:
                headers[name] = raw[at : at + _FIXED_SIZES[kind]] if kind > 1 else kind == 0
                at += _FIXED_SIZES[kind]
            else:
                raise EventStreamError(f"unknown header value type {kind}")
    except (IndexError, UnicodeDecodeError, struct.error) as exc:
        raise EventStreamError(f"the headers cannot be read ({exc})") from exc
    if at != len(raw):
        raise EventStreamError("the headers run past their length")
    return headers
