"""TOOL-02 on Anthropic strict tools: compared on what strict mode can express, as the official SDK sends it.

Found on the zoo: an adapter that sends a tool with ``strict: true`` through the ``anthropic`` SDK's
``transform_schema`` (the keywords strict mode does not support moved into the description) failed TOOL-02 for
the bounds it moved, as OpenAI's strict tools did before (issue 29). The same schema sent without ``strict``
must keep every keyword.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from helix_conformance.checks.requests import sent_schema_differences
from helix_conformance.checks.schema_equivalence import NotComparable
from helix_conformance.profiles import get_profile
from helix_conformance.scenarios import scenarios_for

PROFILE = get_profile("anthropic-messages")
SCHEMAS = [
    tool.json_schema()
    for scenario in scenarios_for("anthropic-messages")
    if scenario.id in ("tool_schemas", "tool_schema_keywords", "tool_schemas_in_the_wild")
    for tool in scenario.tools
]


def _anthropic() -> Any:
    """The SDK, imported when a test needs it: its types take seconds to import, and every collection would pay."""
    return pytest.importorskip("anthropic")


def _transformed(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The SDK's strict form of ``schema``; None where the SDK refuses it (a subschema without a type)."""
    try:
        return dict(_anthropic().transform_schema(schema))
    except ValueError:
        return None


def _sent(schema: dict[str, Any], *, strict: bool) -> Any:
    tool: dict[str, Any] = {"name": "f", "description": "d", "input_schema": schema}
    if strict:
        tool["strict"] = True
    body = {"model": "claude-haiku-4-5", "max_tokens": 64, "stream": True, "tools": [tool]}
    body["messages"] = [{"role": "user", "content": "Hi"}]
    (decoded,) = PROFILE.decode_request(json.dumps(body).encode()).tools or []
    return decoded


def _tool02(given: dict[str, Any], decoded: Any) -> list[str]:
    return sent_schema_differences(PROFILE, given, decoded)


def test_the_catalogue_has_schemas_with_bounds_strict_mode_cannot_express() -> None:
    assert any(_transformed(s) not in (None, s) for s in SCHEMAS)


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_a_strict_tool_sent_as_the_sdk_transforms_it_passes(index: int) -> None:
    given = SCHEMAS[index]
    transformed = _transformed(given)
    if transformed is None:
        pytest.skip(
            "the SDK refuses this schema for strict mode (a subschema without a type): nothing to send"
        )
    if "definitions" in given:  # the transform keeps $defs only: the $ref it sends dangles, a real defect
        with pytest.raises(NotComparable, match="points to nothing"):
            _tool02(given, _sent(transformed, strict=True))
        return
    assert _tool02(given, _sent(transformed, strict=True)) == []


def test_the_same_transform_without_strict_fails_tool02() -> None:
    dropped = [(s, t) for s in SCHEMAS if (t := _transformed(s)) not in (None, s) and "definitions" not in s]
    failing = [s for s, t in dropped if _tool02(s, _sent(t, strict=False))]
    assert failing, (
        "a schema whose bounds went to the description must fail TOOL-02 when the tool is not strict"
    )


def test_a_strict_tool_that_drops_what_strict_mode_expresses_still_fails_tool02() -> None:
    given = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["c", "f"]},
            "n": {"type": "integer", "minimum": 1},
        },
        "required": ["unit"],
    }
    sent = _anthropic().transform_schema(given)
    del sent["properties"]["unit"]["enum"]  # an enum strict mode supports, dropped
    assert _tool02(given, _sent(sent, strict=True))


ORDER = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^ord_[0-9]+$"},
        "n": {"type": "integer", "minimum": 1},
    },
    "required": ["order_id"],
}
"""A strict tool's schema with a ``pattern`` (the API supports simple ones; the SDK's transform drops them)."""


def test_a_strict_tool_that_keeps_a_pattern_the_api_supports_passes() -> None:
    sent = _anthropic().transform_schema(ORDER)
    sent["properties"]["order_id"]["pattern"] = "^ord_[0-9]+$"
    assert _tool02(ORDER, _sent(sent, strict=True)) == []
    assert _tool02(ORDER, _sent(_anthropic().transform_schema(ORDER), strict=True)) == []


def test_a_strict_tool_that_sends_another_pattern_fails_tool02() -> None:
    sent = _anthropic().transform_schema(ORDER)
    sent["properties"]["order_id"]["pattern"] = "^[0-9]+$"
    assert _tool02(ORDER, _sent(sent, strict=True))
    moved = _anthropic().transform_schema({**ORDER, "properties": {"order_id": {"type": "string"}}})
    moved["properties"]["order_id"]["pattern"] = "^ord_[0-9]+$"  # a pattern the input schema does not have
    assert _tool02({**ORDER, "properties": {"order_id": {"type": "string"}}}, _sent(moved, strict=True))
