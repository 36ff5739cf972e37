"""What an Anthropic strict tool (``strict: true``, structured outputs) can express of a JSON Schema.

Strict tools take a subset of JSON Schema: types, ``enum``/``const``, ``anyOf``/``allOf``, objects with
``properties``, ``required`` and ``additionalProperties: false``, arrays with ``items`` and a ``minItems`` of 0 or
1, strings with a known ``format`` and a simple ``pattern`` (no backreferences, lookarounds or word boundaries);
numeric and string length bounds and the rest are not supported
(https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations). The official
SDK's ``transform_schema`` (anthropic/lib/_parse/_transform.py) keeps less: it moves ``pattern`` too into the
description. Both are right, so a ``pattern`` counts where the adapter sent one and is left aside where it did not.
TOOL-02 compares a strict tool on what strict mode can say (TOOL-03 judges the rest), as for OpenAI's strict mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
"""``SupportedStringFormats`` of the SDK's transform."""
_KEPT = frozenset(
    {"type", "enum", "const", "anyOf", "allOf", "description", "title", "$defs", "$ref", "required"}
)
_SUBSCHEMA_MAP = frozenset({"properties", "$defs"})


def relaxed_for(sent: Any) -> Callable[[Any], Any]:
    """TOOL-02's reading of a strict tool's input schema beside ``sent``, the schema the adapter sent for it."""
    return lambda schema: without_strict_inexpressible(schema, sent)


def without_strict_inexpressible(schema: Any, sent: Any = None) -> Any:
    """``schema`` as an Anthropic strict tool can express it: unsupported keywords dropped, ``oneOf`` read as
    ``anyOf``, objects closed (``additionalProperties: false``), as the SDK's transform leaves it; a ``pattern``
    kept where ``sent`` (walked alongside) has one at the same place, as the API supports it."""
    if not isinstance(schema, dict):
        return schema
    beside: dict[str, Any] = sent if isinstance(sent, dict) else {}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAP and isinstance(value, dict):
            sent_map = _as(dict, beside.get(key))
            out[key] = {
                name: without_strict_inexpressible(sub, sent_map.get(name)) for name, sub in value.items()
            }
        elif key in ("anyOf", "allOf", "oneOf") and isinstance(value, list):
            kept = "anyOf" if key == "oneOf" else key
            sent_list = _as(list, beside.get(kept))
            out[kept] = [
                without_strict_inexpressible(v, sent_list[i] if i < len(sent_list) else None)
                for i, v in enumerate(value)
            ]
        elif key == "items":
            out[key] = without_strict_inexpressible(value, beside.get("items"))
        elif key == "pattern":
            if "pattern" in beside:
                out[key] = value
        elif key == "format":
            if value in STRICT_FORMATS:
                out[key] = value
        elif key == "minItems":
            if value in (0, 1):
                out[key] = value
        elif key in _KEPT:
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = False
    return out


def _as(kind: type[Any], value: Any) -> Any:
    """``value`` where it is a ``kind``, else an empty one: the sent schema may be any shape."""
    return value if isinstance(value, kind) else kind()
