"""Response bodies stored as they crossed the wire: decoded by their ``content-encoding`` before anyone reads them.

A recorder may keep a compressed body (raw vcrpy does). The replay serves bodies without their encoding (the
header is dropped), so a cassette whose body is gzip must be decoded on load, and one whose header says gzip
over a plain body is a cassette problem, never the adapter's. gzip and deflate come with Python; brotli when
its module (``brotli`` or ``brotlicffi``) is installed, else the error says to install it.
"""

from __future__ import annotations

import gzip
import importlib
import zlib
from typing import Any

GZIP_MAGIC = b"\x1f\x8b"


class ContentEncodingError(ValueError):
    """The body cannot be decoded as its content-encoding says; the message says why, in one line."""


def _brotli() -> Any | None:
    for name in ("brotli", "brotlicffi"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _gunzip(raw: bytes) -> bytes:
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise ContentEncodingError(f"is not gzip data ({exc})") from None


def _inflate(raw: bytes) -> bytes:
    for window in (zlib.MAX_WBITS, -zlib.MAX_WBITS):  # zlib-wrapped, as the RFC says; raw, as servers send
        try:
            return zlib.decompress(raw, window)
        except zlib.error:
            continue
    raise ContentEncodingError("is not deflate data")


def _unbrotli(raw: bytes) -> bytes:
    module = _brotli()
    assert module is not None  # decode_content asked first
    try:
        return bytes(module.decompress(raw))
    except Exception as exc:  # each brotli binding has its own error class
        raise ContentEncodingError(f"is not brotli data ({exc})") from None


_DECODERS = {"gzip": _gunzip, "x-gzip": _gunzip, "deflate": _inflate, "br": _unbrotli}


def decode_content(raw: bytes, encoding: str) -> bytes:
    """``raw`` decoded by ``encoding`` (a content-encoding header: ``gzip``, ``deflate``, ``br``, several
    comma-separated, applied in order, so undone in reverse); gzip data without a header is gunzipped too.
    ``ContentEncodingError`` when the body is not what the header says, or the encoding is unknown."""
    codings = [
        c.strip().lower() for c in encoding.split(",") if c.strip() and c.strip().lower() != "identity"
    ]
    if not codings:
        if not raw.startswith(GZIP_MAGIC):
            return raw
        try:
            return _gunzip(raw)
        except ContentEncodingError as exc:
            raise ContentEncodingError(f"body starts as gzip data but {exc}") from None
    for coding in codings:
        if coding not in _DECODERS:
            raise ContentEncodingError(
                f"has content-encoding {coding!r}, which is not read here (gzip, deflate and br are)"
            )
        if coding == "br" and _brotli() is None:
            raise ContentEncodingError(
                "has content-encoding br (brotli), which needs the brotli package to be read: `pip install brotli`"
            )
    for coding in reversed(codings):
        try:
            raw = _DECODERS[coding](raw)
        except ContentEncodingError as exc:
            raise ContentEncodingError(f"says content-encoding: {encoding} but its body {exc}") from None
    return raw
