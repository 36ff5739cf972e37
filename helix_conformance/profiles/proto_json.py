"""The proto3 JSON mapping, as a reader of Google's APIs applies it: field names and ``bytes`` values.

Gemini's REST API parses requests as proto3 JSON (protobuf.dev, "ProtoJSON Format": "Parsers accept both the
lowerCamelCase name (or the one specified by the json_name option) and the original proto field name"), so
``system_instruction`` and ``systemInstruction`` are the same field: LiteLLM sends the first, and a live
recording (``../shared/recordings/google/test_tools_with_gemini_3_thought_signatures.yaml``) has the API answer
200 to ``function_call`` and ``function_response``. A ``bytes`` value is base64: "Either standard or URL-safe
base64 encoding with/without paddings are accepted" (same page), and google-genai sends URL-safe.
``camel_keys`` normalises the field names of a request or response so a reader handles one spelling; free-form
values (``google.protobuf.Struct``/``Value``: ``functionCall.args``, ``functionResponse.response``,
``parametersJsonSchema``...) and the keys of map fields (schema ``properties``, ``labels``) are user data and
keep their keys.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

__all__ = ["bytes_value", "camel", "camel_keys"]

_FREE_FORM = frozenset({"args", "parametersJsonSchema", "responseJsonSchema", "default", "example", "labels"})
"""Fields whose whole value is user data (Struct, Value, or a map of strings): nothing inside is renamed."""
_FREE_FORM_IN = {"functionResponse": frozenset({"response"})}
"""Fields that are free-form only inside one message: ``functionResponse.response`` (a Struct), whereas
``FunctionDeclaration.response`` is a Schema message."""
_MESSAGE_MAPS = frozenset({"properties", "defs", "$defs"})
"""Map fields whose keys are user names (property names) and whose values are messages (Schema)."""


def camel(name: str) -> str:
    """``max_output_tokens`` -> ``maxOutputTokens``; names already camel, or ``$ref``-like, are unchanged."""
    if "_" not in name.strip("_"):
        return name
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def camel_keys(value: Any, duplicates: list[str] | None = None, *, _parent: str = "", _at: str = "") -> Any:
    """``value`` with every proto field name in lowerCamelCase (a new object; ``value`` is not changed).

    A field sent under both spellings is reported in ``duplicates`` (a proto parser rejects the second one);
    the first one read wins.
    """
    if isinstance(value, list):
        return [
            camel_keys(item, duplicates, _parent=_parent, _at=f"{_at}[{i}]") for i, item in enumerate(value)
        ]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, sub in value.items():
        name = camel(key) if isinstance(key, str) else key
        where = f"{_at}.{name}" if _at else str(name)
        if name in out:
            if duplicates is not None:
                duplicates.append(f"{where} is sent twice (as {key!r} and in lowerCamelCase)")
            continue
        if name in _FREE_FORM or name in _FREE_FORM_IN.get(_parent, ()):
            out[name] = sub
        elif name in _MESSAGE_MAPS and isinstance(sub, dict):
            out[name] = {
                prop: camel_keys(schema, duplicates, _parent=name, _at=f"{where}.{prop}")
                for prop, schema in sub.items()
            }
        else:
            out[name] = camel_keys(sub, duplicates, _parent=str(name), _at=where)
    return out


def bytes_value(text: str) -> bytes | None:
    """A proto ``bytes`` field's JSON value decoded, standard or URL-safe base64 with or without padding;
    None when it is not base64 at all."""
    if not isinstance(text, str):
        return None
    padded = text.replace("-", "+").replace("_", "/")
    padded += "=" * (-len(padded) % 4)
    try:
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
