"""Import foreign recordings as harness cassettes (``recorded`` provenance): ``helix-conformance import``.

Three formats, one module each: ``pydantic_ai`` (vcrpy YAML with ``parsed_body``), ``vcrpy`` (raw vcrpy /
pytest-recording, gzip bodies) and ``vercel`` (``*.chunks.txt``, ``*.sse``, ``*.json`` fixtures).
``import_recording`` detects the format, converts, and renders the cassette text with its provenance.
"""

from __future__ import annotations

from pathlib import Path

from . import pydantic_ai, vcrpy, vercel
from .common import Imported, ImportFailure, Source, fail, render

FORMATS = ("pydantic-ai", "vcrpy", "vercel")

__all__ = ["FORMATS", "ImportFailure", "Imported", "Source", "detect_format", "import_recording"]


def detect_format(path: Path) -> str:
    """The format of ``path`` from its name and content, or an ImportFailure saying what it looks like."""
    if not path.is_file():
        raise fail(path, "no such file" if not path.exists() else "is not a file")
    name = path.name
    if name.endswith((".chunks.txt", ".sse", ".json")):
        return "vercel"
    if name.endswith((".yaml", ".yml")):
        return "pydantic-ai" if pydantic_ai.looks_like(path) else "vcrpy"
    raise fail(
        path,
        "unknown recording format (expected a vcrpy/pydantic-ai .yaml cassette or a Vercel "
        ".chunks.txt/.sse/.json fixture)",
    )


def convert(
    path: Path, *, fmt: str | None = None, profile: str | None = None, status: int | None = None
) -> Imported:
    """Convert one recording to interactions in the harness's shape (no provenance yet)."""
    fmt = fmt or detect_format(path)
    if fmt == "pydantic-ai":
        return pydantic_ai.convert(path)
    if fmt == "vcrpy":
        return vcrpy.convert(path)
    if fmt == "vercel":
        return vercel.convert(path, profile=profile, status=status)
    raise fail(path, f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def import_recording(
    path: Path,
    source: Source | None = None,
    *,
    fmt: str | None = None,
    profile: str | None = None,
    status: int | None = None,
) -> str:
    """The cassette text for one foreign recording, provenance ``recorded`` naming ``source``."""
    return render(convert(path, fmt=fmt, profile=profile, status=status), path, source or Source())
