"""TOOL-02 support: are two JSON Schemas equivalent on generated valid and invalid instances?

A comparison is a pure function of the two schemas, and validating a schema against the 2020-12 metaschema
costs milliseconds (its ``$dynamicRef`` walk): most scenarios send the same few tools, so each comparison is
made once per process (``_COMPARISONS``) and each schema checked once (``_PROBLEMS``).
"""

from __future__ import annotations

import copy
import functools
import re
from random import Random
from typing import Any

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing.exceptions import Unresolvable

from .properties import without_local_constants
from .regex_example import simplest_match

_WRONG_TYPE: dict[str, Any] = {
    "string": 12345,
    "integer": "not-an-integer",
    "number": "not-a-number",
    "boolean": "not-a-boolean",
    "object": "not-an-object",
    "array": "not-an-array",
}


def _resolve(schema: Any, root: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 32:
        ref = str(schema["$ref"])
        if not ref.startswith("#/"):
            return {}
        node: Any = root
        for key in ref[2:].split("/"):
            node = node.get(key, {}) if isinstance(node, dict) else {}
        schema, seen = node, seen + 1
    return schema if isinstance(schema, dict) else {}


def _non_null(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """The first alternative of anyOf/oneOf that is not null (pydantic writes Optional[X] as anyOf)."""
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [_resolve(o, root) for o in schema[key]]
            for option in options:
                if option.get("type") != "null":
                    return dict(option)
    return schema


def _all_of(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the properties and required names of its ``allOf`` parts beside its own: an instance
    must satisfy every part, so instances are built from all of them."""
    parts = schema.get("allOf")
    if not isinstance(parts, list):
        return schema
    properties, required = dict(schema.get("properties", {})), list(schema.get("required", []))
    for raw in parts:
        part = _all_of(_resolve(raw, root), root)
        properties.update(part.get("properties", {}))
        required.extend(name for name in part.get("required", []) if name not in required)
    return {**schema, "properties": properties, "required": required}


def _type_of(schema: dict[str, Any]) -> str | None:
    t = schema.get("type")
    if isinstance(t, list):
        return next((x for x in t if x != "null"), None)
    if t is None and "properties" in schema:
        return "object"
    return t


FULL_DEPTH = 12
"""How deep a full instance fills optional properties (a recursive ``$ref`` would never end). Strict tools are
compared on full instances only, so this must reach past any nesting a real schema has: arrays of arrays of
objects count a level each."""


def example(schema: Any, root: dict[str, Any], *, full: bool, depth: int = 0) -> Any:
    """A valid instance: required properties only, or every property when ``full``."""
    schema = _all_of(_non_null(_resolve(schema, root), root), root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][-1]
    kind = _type_of(schema)
    if kind == "object":
        required = set(schema.get("required", []))
        props = schema.get("properties", {})
        return {
            name: example(sub, root, full=full, depth=depth + 1)
            for name, sub in props.items()
            if name in required or (full and depth < FULL_DEPTH)
        }
    if kind == "array":
        return [example(schema.get("items", {}), root, full=full, depth=depth + 1)] if full else []
    if kind == "string":
        if "pattern" in schema:
            return _simplest_match(str(schema["pattern"]))
        return "x" * max(int(schema.get("minLength", 1)), 1)
    if kind == "integer":
        return int(schema.get("minimum", 3))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return True
    return None


NO_MATCH = "x"
"""The instance of a pattern nothing matches: invalid under both schemas compared, so it shows no difference."""


@functools.lru_cache(maxsize=256)
def _simplest_match(pattern: str) -> str:
    """The simplest string matching ``pattern``, the same every run: walked out of the pattern where it can
    be (regex_example.py), else found by Hypothesis with no example database (it would write ``.hypothesis/``
    into the user's folder) and no constants from the modules loaded."""
    walked = simplest_match(pattern)
    if walked is not None:
        return walked
    try:
        with without_local_constants():
            found: str = find(
                st.from_regex(pattern, fullmatch=True),
                lambda _: True,
                settings=settings(database=None, deadline=None, suppress_health_check=list(HealthCheck)),
                random=Random(0),
            )
            return found
    except Exception:  # nothing matches (an impossible lookahead), or a pattern Hypothesis cannot read
        return NO_MATCH


_PATTERN_PROBES = ("", "!", "zz zz", "0", "ORD_", "-1", "\u00e9\u00e9")


def _keyword_violations(schema: dict[str, Any], root: dict[str, Any]) -> list[Any]:
    """One value per constraint keyword that breaks it: pattern, lengths, bounds, item counts."""
    bad: list[Any] = []
    if isinstance(schema.get("pattern"), str):
        probe = next((p for p in _PATTERN_PROBES if not re.search(schema["pattern"], p)), None)
        if probe is not None:
            bad.append(probe)
    if isinstance(schema.get("minLength"), int) and schema["minLength"] > 0:
        bad.append("x" * (schema["minLength"] - 1))
    if isinstance(schema.get("maxLength"), int):
        bad.append("x" * (schema["maxLength"] + 1))
    for key, delta in (("minimum", -1), ("maximum", 1), ("exclusiveMinimum", 0), ("exclusiveMaximum", 0)):
        if isinstance(schema.get(key), (int, float)) and not isinstance(schema.get(key), bool):
            bad.append(schema[key] + delta)
    item = example(schema.get("items", {}), root, full=True) if schema.get("type") == "array" else None
    if isinstance(schema.get("minItems"), int) and schema["minItems"] > 0:
        bad.append([item] * (schema["minItems"] - 1))
    if isinstance(schema.get("maxItems"), int):
        bad.append([item] * (schema["maxItems"] + 1))
    return bad


def _mutations(schema: Any, root: dict[str, Any], base: dict[str, Any], *, keep_complete: bool) -> list[Any]:
    """Instances that break one rule each: a missing required property, a wrong type, a value off the enum."""
    schema = _all_of(_non_null(_resolve(schema, root), root), root)
    out: list[Any] = []
    required = set(schema.get("required", []))
    for name, sub in schema.get("properties", {}).items():
        sub_schema = _non_null(_resolve(sub, root), root)
        if name in required and name in base:
            out.append({k: v for k, v in base.items() if k != name})
        kind = _type_of(sub_schema)
        if kind in _WRONG_TYPE:
            out.append({**base, name: _WRONG_TYPE[kind]})
        if "enum" in sub_schema:
            out.append({**base, name: "__not_in_the_enum__"})
        out.extend({**base, name: bad} for bad in _keyword_violations(sub_schema, root))
        if kind == "object" and isinstance(base.get(name), dict):
            for nested in _mutations(sub_schema, root, base[name], keep_complete=keep_complete):
                out.append({**base, name: nested})
        if kind == "array":
            out.extend({**base, name: [bad]} for bad in _item_violations(sub_schema, root, keep_complete))
        if _nullable(_resolve(sub, root), root):
            out.append({**base, name: None})  # valid: a sent schema that lost the null alternative rejects it
        elif kind in _WRONG_TYPE and (name in required or not keep_complete):
            # invalid: a sent schema that made it nullable (Gemini's `nullable: true`) accepts it. Strict tools
            # are probed on required properties only: OpenAI's own advice for an optional one is a null union.
            out.append({**base, name: None})
    if not keep_complete and schema.get("additionalProperties") is False:
        out.append({**base, "__helix_extra__": 1})
    return out


def _item_violations(schema: dict[str, Any], root: dict[str, Any], keep_complete: bool) -> list[Any]:
    """Array items that break one rule of the items schema (found missing by random tool schemas)."""
    items = _non_null(_resolve(schema.get("items", {}), root), root)
    kind = _type_of(items)
    bad: list[Any] = [_WRONG_TYPE[kind]] if kind in _WRONG_TYPE else []
    if "enum" in items:
        bad.append("__not_in_the_enum__")
    bad.extend(_keyword_violations(items, root))
    if kind == "object":
        good = example(items, root, full=True)
        if isinstance(good, dict):
            bad.extend(_mutations(items, root, good, keep_complete=keep_complete))
    return bad


def _nullable(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    options = [_resolve(o, root) for key in ("anyOf", "oneOf") for o in schema.get(key, [])]
    types = schema.get("type")
    return any(o.get("type") == "null" for o in options) or (isinstance(types, list) and "null" in types)


def instances(schema: dict[str, Any], *, complete_only: bool) -> list[Any]:
    """Generated instances to compare two schemas on; ``complete_only`` for OpenAI strict tools."""
    full = example(schema, schema, full=True)
    valid = [full] if complete_only else [example(schema, schema, full=False), full]
    out = list(valid)
    for base in valid:
        if isinstance(base, dict):
            out.extend(_mutations(schema, schema, copy.deepcopy(base), keep_complete=complete_only))
    return out


def opened(schema: Any) -> Any:
    """``schema`` with every ``additionalProperties: false`` dropped: what a dialect that cannot close an
    object (Gemini's ``parameters``) can express of it."""
    if isinstance(schema, dict):
        return {k: opened(v) for k, v in schema.items() if not (k == "additionalProperties" and v is False)}
    if isinstance(schema, list):
        return [opened(v) for v in schema]
    return schema


class NotComparable(Exception):
    """A schema TOOL-02 cannot compare on instances: ``side`` is ``"given"`` (the tool's own schema) or
    ``"sent"`` (what the adapter sent); the message says what is wrong with it, for the clause's report."""

    def __init__(self, side: str, message: str) -> None:
        super().__init__(message)
        self.side = side


_SCHEMA_FAULTS = (SchemaError, Unresolvable, re.error, RecursionError, TypeError, ValueError, KeyError)
"""What validating with, or building instances from, a broken schema raises (jsonschema, ``re``, our walk)."""


_PLAIN = (dict, list, str, int, float, bool, type(None))


def plain_key(value: Any) -> str | None:
    """A text that tells JSON-like values apart exactly (``repr``: key order, ``1`` / ``1.0`` / ``True``,
    tuples and lists), or None when ``value`` holds anything else (a subclass, an object): not memoized."""

    def plain(node: Any) -> bool:
        if type(node) is dict:
            return all(type(k) is str and plain(v) for k, v in node.items())
        if type(node) is list:
            return all(plain(v) for v in node)
        return type(node) in _PLAIN

    try:
        return repr(value) if plain(value) else None
    except RecursionError:  # nested past the interpreter's limit (or a cycle): compared every time
        return None


class _Memo:
    """Results of a pure function of JSON-like schemas, by ``plain_key``; bounded (oldest dropped first)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.found: dict[tuple[Any, ...], Any] = {}

    def get(self, key: tuple[Any, ...] | None) -> Any:
        return self.found.get(key) if key is not None else None

    def put(self, key: tuple[Any, ...] | None, value: Any) -> None:
        if key is None:
            return
        if len(self.found) >= self.size:
            del self.found[next(iter(self.found))]
        self.found[key] = value


_PROBLEMS = _Memo(1024)
_COMPARISONS = _Memo(1024)


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be compared (not a valid JSON Schema, a ``pattern`` Python's ``re`` cannot run, a
    ``$ref`` that points nowhere), or None. Checked once per distinct schema."""
    text = plain_key(schema)
    key = (text,) if text is not None else None
    known = _PROBLEMS.get(key)
    if known is not None:
        return known[0]  # type: ignore[no-any-return]
    problem = _schema_problem(schema)
    _PROBLEMS.put(key, (problem,))
    return problem


_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_TEXT_KEYWORDS = frozenset({"description", "title", "$comment"})
_NUMBER_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf"})
_SCHEMA_MAPS = frozenset({"properties", "$defs"})
_SCHEMAS = frozenset({"items", "additionalProperties", "not"})
_DIALECTS = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
    }
)
"""``$schema`` values known to be well-formed URIs (zod-to-json-schema writes draft-07's), whatever format
checkers are installed."""


def surely_valid(schema: Any, depth: int = 0) -> bool:
    """Whether ``schema`` is a valid 2020-12 JSON Schema by its shape alone: only keywords whose metaschema rule
    is a JSON type (a type name, a list of subschemas, unique required names, a number, a text). False means
    "ask the metaschema", never "invalid": ``pattern``, ``format``, ``$ref`` and the rest go the long way."""
    if isinstance(schema, bool):
        return True
    if type(schema) is not dict or depth > FULL_DEPTH * 4:
        return False
    for key, value in schema.items():
        if key == "type":
            names = value if type(value) is list else [value]
            if not names or len(set(map(repr, names))) != len(names):
                return False
            if not all(type(name) is str and name in _SIMPLE_TYPES for name in names):
                return False
        elif key in _SCHEMA_MAPS:
            if type(value) is not dict or not all(
                type(k) is str and surely_valid(v, depth + 1) for k, v in value.items()
            ):
                return False
        elif key in _SCHEMA_LISTS:
            if type(value) is not list or not value or not all(surely_valid(v, depth + 1) for v in value):
                return False
        elif key in _SCHEMAS:
            if not surely_valid(value, depth + 1):
                return False
        elif key == "required":
            if (
                type(value) is not list
                or not all(type(n) is str for n in value)
                or len(set(value)) != len(value)
            ):
                return False
        elif key == "$schema":
            if value not in _DIALECTS:
                return False
        elif key == "enum":
            if type(value) is not list:
                return False
        elif key in _TEXT_KEYWORDS:
            if type(value) is not str:
                return False
        elif key in _NUMBER_KEYWORDS:
            if type(value) not in (int, float):
                return False
        elif key not in ("default", "const", "examples") or (key == "examples" and type(value) is not list):
            return False
    return True


def _schema_problem(schema: Any) -> str | None:
    try:
        if not surely_valid(schema):
            Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the root"
        if exc.validator == "format" and exc.validator_value == "regex":
            return (
                f"its pattern {exc.instance!r} (at {where}) cannot be run by Python's re: {_regex_error(exc)}"
            )
        return f"it is not a valid JSON Schema: {exc.message} (at {where})"
    for ref in _refs(schema):
        if _points_nowhere(ref, schema):
            return f"its $ref {ref!r} points to nothing in the schema (a $defs entry dropped or renamed?)"
    return None


def _regex_error(exc: SchemaError) -> str:
    try:
        re.compile(str(exc.instance))
    except re.error as error:
        return str(error)
    return exc.message


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["$ref"]] if isinstance(schema.get("$ref"), str) else []
        return own + [
            ref for key, value in schema.items() if key not in ("const", "enum") for ref in _refs(value)
        ]
    if isinstance(schema, list):
        return [ref for value in schema for ref in _refs(value)]
    return []


def _points_nowhere(ref: str, root: dict[str, Any]) -> bool:
    """A local ``$ref`` (``#/...``, JSON Pointer escapes and percent-encoding undone) that resolves to nothing;
    other references (an ``$id``, a URL) are left to the validator."""
    if ref == "#":
        return False
    if not ref.startswith("#/"):
        return False
    from urllib.parse import unquote

    node: Any = root
    for raw in ref[2:].split("/"):
        key = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return True
    return False


def differences(
    original: dict[str, Any], sent: dict[str, Any], *, complete_only: bool, closed_objects: bool = True
) -> list[str]:
    """Instances on which the two schemas disagree, described for a failure message; with
    ``closed_objects=False`` extra properties are left aside (the sent dialect cannot forbid them).
    ``NotComparable`` when either schema cannot be compared (checked before, and met while comparing).
    Compared once per distinct pair and flags (``_COMPARISONS``)."""
    texts = (plain_key(original), plain_key(sent))
    key = None if None in texts else (*texts, complete_only, closed_objects)
    known = _COMPARISONS.get(key)
    if known is None:
        try:
            known = ("diffs", _differences(original, sent, complete_only, closed_objects))
        except NotComparable as exc:
            known = ("not comparable", exc.side, str(exc))
        _COMPARISONS.put(key, known)
    if known[0] == "not comparable":
        raise NotComparable(known[1], known[2])
    return list(known[1])


def _differences(
    original: dict[str, Any], sent: dict[str, Any], complete_only: bool, closed_objects: bool
) -> list[str]:
    for side, schema in (("given", original), ("sent", sent)):
        problem = schema_problem(schema)
        if problem is not None:
            raise NotComparable(side, problem)
    if not closed_objects:
        original = opened(original)
    want_validator = Draft202012Validator(original)
    got_validator = Draft202012Validator(sent)
    try:
        candidates = instances(original, complete_only=complete_only)
    except _SCHEMA_FAULTS as exc:
        raise NotComparable(
            "given", f"no instances could be built from it: {type(exc).__name__}: {exc}"
        ) from exc
    diffs = []
    for instance in candidates:
        want, got = _valid(want_validator, instance, "given"), _valid(got_validator, instance, "sent")
        if want != got:
            diffs.append(
                f"{instance!r:.120}: {'valid' if want else 'invalid'} under the tool's schema, "
                f"{'valid' if got else 'invalid'} under the schema sent"
            )
    return diffs


def _valid(validator: Draft202012Validator, instance: Any, side: str) -> bool:
    try:
        return bool(validator.is_valid(instance))
    except _SCHEMA_FAULTS as exc:
        raise NotComparable(
            side, f"validating {instance!r:.80} against it failed: {type(exc).__name__}: {exc}"
        ) from exc
