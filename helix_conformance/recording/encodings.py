"""What an encoded string in a cassette holds, for the secret scan: base64 of media or compressed bytes (not a
secret, however random it looks), base64 of text (scanned for keys like any text), or neither.

Providers put images, audio and files inline as base64 (Gemini ``inline_data``, Anthropic ``source.data``,
OpenAI ``b64_json`` / ``input_audio`` / image-generation ``result``), and some recordings keep compressed
bodies as base64. Their bytes start with a format's magic number, which random key material does not.
"""

from __future__ import annotations

import base64
import binascii
import re

MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"RIFF", "RIFF media (WAV audio, WebP image)"),
    (b"ID3", "MP3 audio"),
    (b"\xff\xfb", "MP3 audio"),
    (b"\xff\xf3", "MP3 audio"),
    (b"\xff\xf2", "MP3 audio"),
    (b"\xff\xf1", "AAC audio"),
    (b"\xff\xf9", "AAC audio"),
    (b"OggS", "Ogg media"),
    (b"fLaC", "FLAC audio"),
    (b"\x1a\x45\xdf\xa3", "WebM/Matroska media"),
    (b"%PDF-", "PDF document"),
    (b"\x1f\x8b", "gzip data"),
    (b"\x28\xb5\x2f\xfd", "zstd data"),
    (b"BZh", "bzip2 data"),
    (b"\xfd7zXZ\x00", "xz data"),
    (b"PK\x03\x04", "zip archive"),
    (b"II*\x00", "TIFF image"),
    (b"MM\x00*", "TIFF image"),
    (b"\x00\x00\x01\x00", "ICO image"),
)
"""Leading bytes of the media and container formats a provider or recorder puts inline."""
_FTYP_BRANDS = (b"ftyp",)
"""ISO media (MP4, M4A, MOV, HEIC, AVIF) say ``ftyp`` at offset 4."""
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+={0,2}")
MAX_DECODED = 64 * 1024
"""Base64 longer than this (in characters) is only checked for a magic number, not decoded whole."""


def base64_bytes(token: str, *, limit: int | None = None) -> bytes | None:
    """The bytes ``token`` decodes to as standard or URL-safe base64 (padding optional), or None when it is
    not base64. ``limit`` decodes only that many leading characters (a multiple of 4), enough for a magic."""
    if not _BASE64.fullmatch(token):
        return None
    core = token.rstrip("=")
    if limit is not None:
        core = core[: limit - limit % 4]
    if len(core) % 4 == 1:
        return None
    padded = core + "=" * (-len(core) % 4)
    try:
        if "-" in core or "_" in core:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def media_kind(raw: bytes) -> str | None:
    """The media or container format ``raw`` starts with, or None."""
    for magic, kind in MAGIC:
        if raw.startswith(magic):
            return kind
    if raw[4:8] in _FTYP_BRANDS:
        return "ISO media (MP4, M4A, HEIC)"
    return None


def base64_media(token: str) -> str | None:
    """The format of the media ``token`` is base64 of, or None (not base64, or not media)."""
    head = base64_bytes(token, limit=32)
    return media_kind(head) if head else None


def base64_text(token: str) -> str | None:
    """The text ``token`` is base64 of, or None: mostly printable ASCII (a few stray bytes around are fine), as
    a base64-encoded key, or JSON holding one, reads."""
    if len(token) > MAX_DECODED:
        return None
    raw = base64_bytes(token)
    if not raw:
        return None
    printable = sum(32 <= byte < 127 or byte in (9, 10, 13) for byte in raw)
    return raw.decode("utf-8", errors="replace") if printable >= 0.8 * len(raw) else None
