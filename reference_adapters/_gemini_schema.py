"""Tool schemas for Gemini: a JSON Schema (e.g. pydantic's) as an equivalent schema in Gemini's OpenAPI subset.

Part of the Gemini reference adapter (``reference_adapters.gemini``), kept apart because it is the longest
single concern: inlining ``$ref``, keeping only the keywords Gemini accepts, and refusing what it cannot
express rather than sending a weaker schema (TOOL-02, TOOL-03, TOOL-05).
"""

from __future__ import annotations

import copy
import math
from typing import Any
from urllib.parse import unquote

__all__ = ["UnsupportedSchema", "gemini_schema"]


class UnsupportedSchema(ValueError):
    """A JSON Schema construct Gemini's OpenAPI subset cannot express without changing its meaning."""


_COPIED = frozenset(
    {
        "description", "nullable", "enum", "required", "minItems", "maxItems", "minimum", "maximum",
        "minLength", "maxLength", "pattern", "title", "default", "propertyOrdering", "minProperties",
        "maxProperties", "example",
    }
)  # fmt: skip
"""Keywords Gemini accepts and that mean the same as in JSON Schema: copied as they are."""
_REJECTED = frozenset(
    {
        "not", "if", "then", "else", "patternProperties", "dependentRequired", "dependentSchemas",
        "dependencies", "multipleOf", "contains", "minContains", "maxContains", "prefixItems", "propertyNames",
        "unevaluatedItems", "unevaluatedProperties", "additionalItems",
    }
)  # fmt: skip
"""Validation keywords Gemini has no equivalent for: the tool is refused rather than sent weakened."""
_FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"}, "integer": {"int32", "int64"}}
"""The formats Gemini accepts per type; any other ``format`` is an annotation and is dropped."""
_MAX_DEPTH = 64


def gemini_schema(schema: Any) -> dict[str, Any]:
    """A JSON Schema (e.g. pydantic's) as Gemini's ``parameters``: an equivalent OpenAPI-subset schema.

    TOOL-03: every ``$ref`` is inlined from ``$defs``/``definitions`` (which are dropped), and only keywords
    Gemini accepts are kept, types lower-case. TOOL-02: the meaning is kept: ``[X, null]`` alternatives
    become ``nullable``, ``const`` a one-value ``enum``, integer exclusive bounds inclusive ones. Pure
    annotations Gemini does not know (``$schema``, ``examples``, ``discriminator``…) are dropped. Two
    deliberate approximations, as every Gemini client makes them: ``oneOf`` is sent as ``anyOf``, and
    ``additionalProperties`` is dropped (Gemini cannot close or type an object's extra properties; the model
    generates the declared ones). Raises ``UnsupportedSchema`` for what cannot be expressed (recursive
    ``$ref``, ``not``, ``multipleOf``, tuple ``items``…). Builds new dicts: the tool's schema is untouched.
    """
    if not isinstance(schema, dict):
        raise UnsupportedSchema("the input schema is not a JSON object")
    out = _Translator(schema).translate(schema, (), 0)
    if "type" not in out and "anyOf" not in out:
        out["type"] = "object"  # function arguments are always an object (Gemini wants a type here)
    return out


class _Translator:
    def __init__(self, root: dict[str, Any]) -> None:
        self._root = root

    def translate(self, schema: Any, refs: tuple[str, ...], depth: int) -> dict[str, Any]:
        if depth > _MAX_DEPTH:
            raise UnsupportedSchema("the schema is nested too deeply")
        if schema is True:
            return {}  # any value
        if not isinstance(schema, dict):
            raise UnsupportedSchema(f"{schema!r} is not a schema Gemini can express")
        if "$ref" in schema:  # inlined; keywords beside the $ref (description, default) apply too
            ref = str(schema["$ref"])
            if ref in refs:
                raise UnsupportedSchema(f"recursive $ref {ref!r} cannot be inlined")
            target = self.translate(self._resolve(ref), (*refs, ref), depth + 1)
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            return _merge(target, self.translate(siblings, refs, depth + 1)) if siblings else target
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _COPIED:
                out[key] = copy.deepcopy(value)
            elif key in _REJECTED:
                raise UnsupportedSchema(f"{key!r} has no equivalent in Gemini's schema subset")
            elif key == "uniqueItems" and value:
                raise UnsupportedSchema("'uniqueItems' has no equivalent in Gemini's schema subset")
            elif key == "properties" and isinstance(value, dict):
                if value:  # Gemini rejects an empty `properties`; absent means the same
                    out[key] = {name: self.translate(sub, refs, depth + 1) for name, sub in value.items()}
            elif key == "items":
                if isinstance(value, list):
                    raise UnsupportedSchema("tuple 'items' has no equivalent in Gemini's schema subset")
                out[key] = self.translate(value, refs, depth + 1)
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                out["anyOf"] = [self.translate(sub, refs, depth + 1) for sub in value]
            elif key == "const":
                out.setdefault("enum", [copy.deepcopy(value)])
        if "allOf" in schema:
            for sub in schema["allOf"] if isinstance(schema["allOf"], list) else [schema["allOf"]]:
                out = _merge(out, self.translate(sub, refs, depth + 1))
        _exclusive_bounds(schema, out)
        _type(schema.get("type"), out)
        _format(out, schema.get("format"))
        enum = out.get("enum")
        if "type" not in out and isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
            out["type"] = "string"  # Gemini enums are typed strings; the values say as much
        return _nullable(out)

    def _resolve(self, ref: str) -> Any:
        """A local JSON pointer (``#/$defs/Name``), as pydantic and most generators write them."""
        if not ref.startswith("#"):
            raise UnsupportedSchema(f"$ref {ref!r} is not local to the schema")
        node: Any = self._root
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in unquote(ref[1:]).split("/") if t]
        for token in tokens:
            if isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            elif isinstance(node, dict) and token in node:
                node = node[token]
            else:
                raise UnsupportedSchema(f"$ref {ref!r} does not resolve")
        return node


def _exclusive_bounds(schema: dict[str, Any], out: dict[str, Any]) -> None:
    """Exclusive bounds are exact as inclusive ones on integers only; elsewhere they cannot be sent."""
    for key, inclusive, step in (("exclusiveMinimum", "minimum", 1), ("exclusiveMaximum", "maximum", -1)):
        bound = schema.get(key)
        if bound is None or bound is False:
            continue
        if schema.get("type") != "integer" or isinstance(bound, bool) or not isinstance(bound, (int, float)):
            raise UnsupportedSchema(f"{key!r} is only expressible on integers in Gemini's schema subset")
        edge = (math.floor(bound) + 1) if step > 0 else (math.ceil(bound) - 1)
        current = out.get(inclusive)
        out[inclusive] = edge if current is None else (max if step > 0 else min)(current, edge)


def _type(value: Any, out: dict[str, Any]) -> None:
    """Lower-case type names; ``["X", "null"]`` -> ``X`` + ``nullable``; several types -> ``anyOf``."""
    if value is None:
        return
    types = [value] if isinstance(value, str) else value
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise UnsupportedSchema(f"type {value!r} is not a type name or a list of them")
    names = [t.lower() for t in types]
    concrete = [t for t in names if t != "null"]
    if "null" in names and concrete:
        out["nullable"] = True
    if len(concrete) == 1 or not concrete:
        out["type"] = concrete[0] if concrete else "null"
    else:  # each alternative carries the keywords that apply to its type (the others are ignored)
        rest = {k: v for k, v in out.items() if k not in ("nullable", "anyOf")}
        branches = [
            {k: copy.deepcopy(v) for k, v in rest.items() if _applies_to(k, t)} | {"type": t}
            for t in concrete
        ]
        out.clear()
        out["anyOf"] = branches
        if "null" in names:
            out["nullable"] = True


_TYPE_KEYWORDS = {
    "number": {"minimum", "maximum"},
    "integer": {"minimum", "maximum"},
    "string": {"minLength", "maxLength", "pattern"},
    "array": {"items", "minItems", "maxItems"},
    "object": {"properties", "required", "minProperties", "maxProperties", "propertyOrdering"},
}


def _applies_to(keyword: str, type_name: str) -> bool:
    """False for a keyword that constrains only other types than ``type_name`` (``minimum`` on a string)."""
    owners = [t for t, keywords in _TYPE_KEYWORDS.items() if keyword in keywords]
    return not owners or type_name in owners


def _format(out: dict[str, Any], value: Any) -> None:
    if isinstance(value, str) and value in _FORMATS.get(str(out.get("type")), set()):
        out["format"] = value


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [X, {type: null}]`` (pydantic's ``X | None``) -> ``X`` with ``nullable: true``."""
    options = out.get("anyOf")
    if not isinstance(options, list):
        return out
    concrete = [o for o in options if o != {"type": "null"}]
    if len(concrete) == len(options) or not concrete:
        return out
    rest = {k: v for k, v in out.items() if k != "anyOf"}
    if len(concrete) == 1 and not set(rest) & set(concrete[0]) - {"title", "description", "default"}:
        return {**concrete[0], **rest, "nullable": True}  # the outer annotations win
    return {**rest, "anyOf": concrete, "nullable": True}


def _merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Both schemas at once (``allOf``, or ``$ref`` siblings): keys must agree, except annotations."""
    out = dict(first)
    for key, value in second.items():
        if key not in out or out[key] == value or key in ("title", "description", "default", "example"):
            out[key] = value
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "properties" and not set(out[key]) & set(value):
            out[key] = {**out[key], **value}
        else:
            raise UnsupportedSchema(f"conflicting {key!r} in combined schemas cannot be merged")
    return out
