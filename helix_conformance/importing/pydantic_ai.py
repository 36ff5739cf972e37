"""pydantic-ai cassettes: vcrpy YAML whose JSON bodies are stored as ``parsed_body`` mappings.

pydantic-ai's serializer (``tests/json_body_serializer.py``) replaces every ``application/json`` body by the
parsed value and drops many headers; its deserializer turns ``parsed_body`` back into ``json.dumps(...)``.
We do the same, so JSON bodies are equal in meaning but not byte-for-byte; SSE bodies are verbatim.
"""

from __future__ import annotations

from pathlib import Path

from .common import Imported, fail
from .vcrpy import convert_interactions, load_yaml

FORMAT = "pydantic-ai"
NOTE = (
    "JSON bodies were stored parsed (parsed_body) by pydantic-ai's serializer and re-serialised here with "
    "json.dumps: same JSON, not the original bytes; streamed (SSE) bodies are verbatim"
)


def looks_like(path: Path) -> bool:
    """Cheap sniff used by format detection: the serializer's signature key."""
    try:
        head = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "parsed_body:" in head


def convert(path: Path) -> Imported:
    data = load_yaml(path)
    interactions, parsed = convert_interactions(data, path)
    if not parsed and not any(
        isinstance(i, dict) and "string" in (i.get("response", {}).get("body") or {})
        for i in data["interactions"]
    ):
        raise fail(path, "has neither parsed_body nor body.string fields: not a pydantic-ai cassette")
    return Imported(FORMAT, interactions, [NOTE] if parsed else [])
