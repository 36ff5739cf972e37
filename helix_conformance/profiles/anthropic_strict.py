"""What an Anthropic strict tool (``strict: true``, structured outputs) can express of a JSON Schema.

Strict tools take a subset of JSON Schema: types, ``enum``/``const``, ``anyOf``/``allOf``, objects with
``properties``, ``required`` and ``additionalProperties: false``, arrays with ``items`` and a ``minItems`` of 0 or
1, strings with a known ``format``; numeric and string bounds, ``pattern`` and the rest are not supported
(https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations). The official SDK's
``transform_schema`` (anthropic/lib/_parse/_transform.py) rewrites a schema to exactly that, moving every other
keyword into the description, so an adapter on the SDK sends it that way. TOOL-02 compares a strict tool on what
strict mode can say (TOOL-03 judges the rest), as it does for OpenAI's strict mode.
"""

from __future__ import annotations

from typing import Any

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
"""``SupportedStringFormats`` of the SDK's transform."""
_KEPT = frozenset(
    {"type", "enum", "const", "anyOf", "allOf", "description", "title", "$defs", "$ref", "required"}
)
_SUBSCHEMA_MAP = frozenset({"properties", "$defs"})


def without_strict_inexpressible(schema: Any) -> Any:
    """``schema`` as an Anthropic strict tool can express it: unsupported keywords dropped, ``oneOf`` read as
    ``anyOf``, objects closed (``additionalProperties: false``), as the SDK's transform leaves it."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAP and isinstance(value, dict):
            out[key] = {name: without_strict_inexpressible(sub) for name, sub in value.items()}
        elif key in ("anyOf", "allOf", "oneOf") and isinstance(value, list):
            out["anyOf" if key == "oneOf" else key] = [without_strict_inexpressible(v) for v in value]
        elif key == "items":
            out[key] = without_strict_inexpressible(value)
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
