"""TOOL-02's shortcuts say what the long way says: a schema valid by its shape alone is valid under the 2020-12
metaschema, and a comparison remembered gives the result (or the NotComparable) of comparing again."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from helix_conformance.checks import schema_equivalence
from helix_conformance.checks.generated import ZOD_SCHEMA_URI, schemas
from helix_conformance.checks.schema_equivalence import (
    NotComparable,
    _schema_problem,
    differences,
    plain_key,
    schema_problem,
    surely_valid,
)
from helix_conformance.scenarios.fixtures import GET_WEATHER, SEARCH_DOCS


def metaschema_accepts(schema: Any) -> bool:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return False
    return True


@settings(max_examples=200, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(schemas)
def test_a_schema_valid_by_its_shape_is_valid_under_the_metaschema(schema: dict[str, Any]) -> None:
    rooted = {**schema, "$schema": ZOD_SCHEMA_URI}
    for candidate in (schema, rooted):
        assert surely_valid(candidate), candidate  # the random tool schemas take the short way
        assert metaschema_accepts(candidate)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "strin"},
        {"type": []},
        {"type": ["string", "string"]},
        {"required": ["a", "a"]},
        {"required": "a"},
        {"items": [{"type": "string"}]},
        {"minimum": True},
        {"minimum": "1"},
        {"enum": "x"},
        {"properties": {"a": 1}},
        {"anyOf": []},
        {"allOf": [{"type": 3}]},
        {"description": 5},
        {"$schema": 5},
        {"additionalProperties": "no"},
        {"type": "object", "properties": {"p": {"type": "string", "pattern": "("}}},
        {"$ref": "#/$defs/Missing"},
        {"format": 7},
    ],
)
def test_what_the_shape_cannot_vouch_for_takes_the_long_way(schema: dict[str, Any]) -> None:
    assert not surely_valid(schema)
    problem = _schema_problem(schema)
    if not metaschema_accepts(schema):
        assert problem is not None
        assert "not a valid JSON Schema" in problem or "cannot be run" in problem
    for _ in range(2):
        assert schema_problem(schema) == problem  # remembered: the same text


def test_a_schema_valid_by_its_shape_still_has_its_refs_checked() -> None:
    schema = {"type": "object", "default": {"$ref": "#/nowhere"}}  # the walk for $ref reads defaults too
    assert surely_valid(schema)
    problem = schema_problem(schema)
    assert problem is not None
    assert "points to nothing" in problem


def test_pydantic_schemas_with_refs_are_checked_in_full() -> None:
    for tool in (GET_WEATHER, SEARCH_DOCS):
        schema = tool.json_schema()
        assert schema_problem(schema) is None
        assert metaschema_accepts(schema)


def test_a_remembered_comparison_is_the_comparison() -> None:
    given_schema = GET_WEATHER.json_schema()
    sent = {"type": "object", "properties": {"city": {"type": "integer"}}, "required": ["city"]}
    first = differences(given_schema, sent, complete_only=False)
    first.append("a caller's own edit")  # a copy each time: the remembered list stays as computed
    again = differences(given_schema, sent, complete_only=False)
    assert again
    assert again == first[:-1]
    broken = {"type": "object", "properties": {"city": {"type": "strin"}}}
    for _ in range(2):
        with pytest.raises(NotComparable) as raised:
            differences(given_schema, broken, complete_only=False)
        assert raised.value.side == "sent"
        assert "not a valid JSON Schema" in str(raised.value)


def test_values_that_differ_as_json_never_share_a_memo() -> None:
    assert plain_key({"minimum": 1}) != plain_key({"minimum": 1.0}) != plain_key({"minimum": True})
    assert plain_key({"a": 1, "b": 2}) != plain_key({"b": 2, "a": 1})  # key order: the first error reported
    assert plain_key({"enum": ("a",)}) is None  # a tuple is no JSON array to jsonschema: never remembered

    class Text(str):
        pass

    assert plain_key({"type": Text("string")}) is None
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["items"] = {}
        node = node["items"]
    assert plain_key(deep) is None


def test_the_memo_is_bounded() -> None:
    memo = schema_equivalence._Memo(2)
    for n in range(5):
        memo.put((str(n),), (n,))
    assert list(memo.found) == [("3",), ("4",)]
