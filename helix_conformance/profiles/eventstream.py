"""AWS event-stream framing (``application/vnd.amazon.eventstream``), byte-exact, for the profiles that use it.

Bedrock's ``ConverseStream`` answers with binary messages, not SSE. Each message is a 12-byte prelude (total
length, headers length, both big-endian uint32, then a CRC32 of those 8 bytes), the headers (name length,
name, value type, value), the payload and a CRC32 of everything before it. An event carries
``:event-type`` / ``:content-type`` / ``:message-type: event``; a modelled error carries
``:message-type: exception`` and ``:exception-type`` (the Smithy event-stream spec,
https://smithy.io/2.0/aws/amazon-eventstream.html; botocore's ``botocore/eventstream.py`` reads it so).

Reading here never raises: a body broken by the fault corpus is still split into pieces that cover every byte,
and ``problem`` says why a piece is not a valid message.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

PRELUDE_LENGTH = 12
"""Total length, headers length, prelude CRC: 4 bytes each."""
CRC_LENGTH = 4
MINIMUM_LENGTH = PRELUDE_LENGTH + CRC_LENGTH
MAX_MESSAGE_LENGTH = 16 * 1024 * 1024
"""botocore's ``_MAX_PAYLOAD_LENGTH`` (24 MiB) bounds the payload; no Bedrock event comes near 16 MiB, and a
larger length field is a corrupted prelude."""
STRING = 7
"""The header value type of a UTF-8 string (the only type Bedrock's events use)."""
_FIXED_SIZES = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
"""Header value types of fixed size (true, false, byte, short, int, long, timestamp, uuid); 6 (bytes) and 7
(string) carry a 2-byte length."""


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def encode(headers: Sequence[tuple[str, str]], payload: bytes) -> bytes:
    """One message with string headers, in the given order, both CRCs right."""
    head = b"".join(_header(name, value) for name, value in headers)
    total = PRELUDE_LENGTH + len(head) + len(payload) + CRC_LENGTH
    prelude = struct.pack(">II", total, len(head))
    start = prelude + struct.pack(">I", crc32(prelude)) + head + payload
    return start + struct.pack(">I", crc32(start))


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode("utf-8"), value.encode("utf-8")
    return (
        struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", STRING, len(raw_value)) + raw_value
    )


def with_payload(message: bytes, payload: bytes) -> bytes:
    """``message`` with its headers kept and ``payload`` in place of its own, lengths and both CRCs right:
    still a valid message (the fault corpus puts JSON that does not parse in one)."""
    headers_length = struct.unpack(">I", message[4:8])[0] if len(message) >= 8 else 0
    head = message[PRELUDE_LENGTH : PRELUDE_LENGTH + headers_length]
    total = PRELUDE_LENGTH + len(head) + len(payload) + CRC_LENGTH
    prelude = struct.pack(">II", total, len(head))
    start = prelude + struct.pack(">I", crc32(prelude)) + head + payload
    return start + struct.pack(">I", crc32(start))


_STRING_LETTER = re.compile(rb'":"[^"\\]*?([A-Za-z0-9])')
"""The first letter or digit inside a JSON string value: changing it keeps the JSON valid."""


def payload_flipped(message: bytes) -> bytes:
    """``message`` with one letter of a JSON string in its payload changed (so the payload still parses)
    and both CRCs left as they were: only the CRC check tells the message is corrupt."""
    headers_length = struct.unpack(">I", message[4:8])[0] if len(message) >= 8 else 0
    payload_start = PRELUDE_LENGTH + headers_length
    found = _STRING_LETTER.search(message, payload_start, max(payload_start, len(message) - CRC_LENGTH))
    at = found.start(1) if found else len(message) // 2
    flipped = bytearray(message)
    flipped[at] = ord("x") if flipped[at] != ord("x") else ord("y")
    return bytes(flipped)


def split_messages(body: bytes) -> list[bytes]:
    """The body cut after each message, by the total length of its prelude; every byte is kept. A prelude
    whose length cannot be right (shorter than a message, past the end) makes the rest one last piece."""
    pieces: list[bytes] = []
    start = 0
    while start < len(body):
        rest = len(body) - start
        total = struct.unpack(">I", body[start : start + 4])[0] if rest >= 4 else 0
        if rest < MINIMUM_LENGTH or not MINIMUM_LENGTH <= total <= rest:
            pieces.append(body[start:])
            break
        pieces.append(body[start : start + total])
        start += total
    return pieces


@dataclass(frozen=True)
class Message:
    """One decoded message: its headers (by name) and payload."""

    headers: dict[str, object]
    payload: bytes

    @property
    def message_type(self) -> str:
        value = self.headers.get(":message-type")
        return value if isinstance(value, str) else ""

    @property
    def event_type(self) -> str:
        """``:event-type`` of an event, ``:exception-type`` of an exception, ``:error-code`` of an error."""
        for name in (":event-type", ":exception-type", ":error-code"):
            value = self.headers.get(name)
            if isinstance(value, str):
                return value
        return ""


def problem(message: bytes) -> str | None:
    """Why ``message`` is not one valid event-stream message (lengths, CRCs, headers), or None."""
    if len(message) < MINIMUM_LENGTH:
        return f"{len(message)} bytes: shorter than the {MINIMUM_LENGTH} of an empty message"
    total, headers_length, prelude_crc = struct.unpack(">III", message[:PRELUDE_LENGTH])
    if crc32(message[:8]) != prelude_crc:
        return "the prelude CRC does not match"
    if total != len(message):
        return f"the prelude says {total} bytes, the message has {len(message)}"
    if headers_length > total - MINIMUM_LENGTH:
        return f"the headers length {headers_length} runs past the payload"
    if crc32(message[:-CRC_LENGTH]) != struct.unpack(">I", message[-CRC_LENGTH:])[0]:
        return "the message CRC does not match"
    if _headers(message[PRELUDE_LENGTH : PRELUDE_LENGTH + headers_length]) is None:
        return "the headers cannot be read"
    return None


def decode(message: bytes) -> Message | None:
    """The message, or None when ``problem`` finds it invalid."""
    if problem(message) is not None:
        return None
    headers_length = struct.unpack(">I", message[4:8])[0]
    headers = _headers(message[PRELUDE_LENGTH : PRELUDE_LENGTH + headers_length]) or {}
    return Message(headers, message[PRELUDE_LENGTH + headers_length : -CRC_LENGTH])


def _headers(raw: bytes) -> dict[str, object] | None:
    headers: dict[str, object] = {}
    at = 0
    try:
        while at < len(raw):
            name_length = raw[at]
            name = raw[at + 1 : at + 1 + name_length].decode("utf-8")
            at += 1 + name_length
            kind = raw[at]
            at += 1
            if kind in (6, 7):
                size = struct.unpack(">H", raw[at : at + 2])[0]
                value = raw[at + 2 : at + 2 + size]
                if len(value) != size:
                    return None
                headers[name] = value.decode("utf-8") if kind == STRING else value
                at += 2 + size
            elif kind in _FIXED_SIZES:
                size = _FIXED_SIZES[kind]
                if at + size > len(raw):
                    return None
                headers[name] = kind == 0 if kind in (0, 1) else raw[at : at + size]
                at += size
            else:
                return None
    except (IndexError, UnicodeDecodeError, struct.error):
        return None
    return headers


def cut_points(message: bytes) -> list[tuple[str, int]]:
    """Offsets inside one message where a cut breaks naive readers: inside the prelude (between its length
    fields), inside the headers, inside the payload and inside the message CRC."""
    if len(message) < MINIMUM_LENGTH:
        return [("inside the message", max(1, len(message) // 2))]
    headers_length = struct.unpack(">I", message[4:8])[0]
    payload_start = min(PRELUDE_LENGTH + headers_length, len(message) - CRC_LENGTH)
    points = [
        ("inside the prelude", 6),
        ("inside the headers", PRELUDE_LENGTH + max(1, headers_length // 2)),
        ("inside the payload", payload_start + max(1, (len(message) - CRC_LENGTH - payload_start) // 2)),
        ("inside the message CRC", len(message) - 2),
    ]
    return [(label, offset) for label, offset in points if 0 < offset < len(message)]
