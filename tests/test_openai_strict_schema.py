"""TOOL-03 on OpenAI strict tools judges object *schemas* only: property names and data are not schemas.

Found by random_tool_schemas with a new Hypothesis seed: a tool whose property is named ``properties`` failed
every adapter, the reference ones included ("strict object does not require ['type']").
"""

from __future__ import annotations

from typing import Any

import pytest

from helix_conformance.profiles.openai_chat import _strict_schema_problems


def strict(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties),
        "additionalProperties": False,
        **extra,
    }


@pytest.mark.parametrize(
    "schema",
    [
        strict({"properties": {"type": "string"}}),
        strict({"type": {"type": "string"}, "required": {"type": "boolean"}}),
        strict({"x": {"type": "string", "default": {"properties": {"a": 1}}, "enum": [{"properties": {}}]}}),
        strict({"x": {"type": "array", "items": strict({"properties": {"type": "integer"}})}}),
    ],
    ids=["property-named-properties", "properties-named-like-keywords", "objects-as-data", "nested"],
)
def test_what_the_contract_allows_passes(schema: dict[str, Any]) -> None:
    assert _strict_schema_problems(schema, "parameters") == []


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (
            strict({"properties": {"type": "object", "properties": {"a": {"type": "string"}}}}),
            "parameters.properties.properties: strict object without additionalProperties: false",
        ),
        (
            strict(
                {
                    "x": {
                        "anyOf": [
                            {"type": "object", "properties": {"a": {"type": "string"}}},
                            {"type": "null"},
                        ]
                    }
                }
            ),
            "parameters.properties.x.anyOf[0]: strict object without additionalProperties: false",
        ),
        (
            strict(
                {"x": {"$ref": "#/$defs/A"}},
                **{
                    "$defs": {"A": {"type": "object", "properties": {"a": {}}, "additionalProperties": False}}
                },
            ),
            "parameters.$defs.A: strict object does not require ['a']",
        ),
    ],
    ids=["object-under-a-property-named-properties", "in-anyOf", "in-defs"],
)
def test_a_strict_object_that_breaks_the_rules_is_still_found(schema: dict[str, Any], problem: str) -> None:
    assert problem in _strict_schema_problems(schema, "parameters")
