"""A check that meets an exception of its own reports a clause message, never a traceback (issue 29).

TOOL-02 printed jsonschema's ``PointerToNowhere`` traceback for a dangling ``$ref`` in a sent tool schema. Each
kind of schema TOOL-02 cannot compare is data now: on the sent side a TOOL-02 failure that says what is wrong
with the schema, on the tool's own side a skip that says why. Any other exception a check raises (in the plan's
runner, or inside a generated-input exploration) becomes a failure of its clause that says the harness could
not judge the run, with where it happened.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from broken_adapters import BROKEN_ADAPTERS

from helix_conformance.checks.registry import REGISTRY, load_all_checks
from helix_conformance.checks.schema_equivalence import NotComparable, differences, schema_problem
from helix_conformance.testing import run_conformance
from reference_adapters.openai_chat import spec as openai_spec

GIVEN = {
    "type": "object",
    "properties": {"item": {"$ref": "#/$defs/Item"}, "name": {"type": "string", "pattern": "^a+$"}},
    "required": ["item"],
    "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
}
TRACEBACK_MARKS = ("Traceback", "PointerToNowhere", 'File "')


def _no_traceback(text: str) -> None:
    assert not [mark for mark in TRACEBACK_MARKS if mark in text], text


@pytest.mark.parametrize(
    ("sent", "said"),
    [
        ({k: v for k, v in GIVEN.items() if k != "$defs"}, "its $ref '#/$defs/Item' points to nothing"),
        (
            {**GIVEN, "properties": {**GIVEN["properties"], "name": {"type": "strnig"}}},
            "not a valid JSON Schema",
        ),
        (
            {
                **GIVEN,
                "properties": {**GIVEN["properties"], "name": {"type": "string", "pattern": r"^\p{L}+$"}},
            },
            "cannot be run by Python's re: bad escape",
        ),
    ],
    ids=["dangling_ref", "invalid_schema", "pattern_python_cannot_run"],
)
def test_a_sent_schema_that_cannot_be_compared_says_why(sent: dict[str, Any], said: str) -> None:
    with pytest.raises(NotComparable) as caught:
        differences(GIVEN, sent, complete_only=False)
    assert caught.value.side == "sent"
    assert said in str(caught.value)


def test_the_tools_own_schema_that_cannot_be_compared_is_the_given_side() -> None:
    given = {**GIVEN, "properties": {"item": {"$ref": "#/$defs/Missing"}}}
    with pytest.raises(NotComparable) as caught:
        differences(given, GIVEN, complete_only=False)
    assert caught.value.side == "given"
    assert schema_problem(GIVEN) is None


def test_a_ref_with_json_pointer_escapes_resolves() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/a~1b"}},
        "$defs": {"a/b": {"type": "string"}},
    }
    assert schema_problem(schema) is None
    assert differences(schema, schema, complete_only=False) == []


def test_dangling_refs_sent_fail_tool02_with_a_clause_message() -> None:
    spec = next(b for b in BROKEN_ADAPTERS if b.name == "drops_defs").spec
    report = run_conformance(spec, clauses=["TOOL-02"], scenarios=["tool_schemas"])
    (row,) = report["results"]
    assert row["outcome"] == "failed", row
    message = str(row["message"])
    assert "cannot stand for its input schema: its $ref '#/$defs/" in message
    assert "points to nothing" in message
    _no_traceback(message)


def _raising(clause: str, monkeypatch: pytest.MonkeyPatch, *, after: int = 0) -> None:
    """Make ``clause``'s check raise a KeyError of its own, from its call number ``after`` on."""
    load_all_checks()
    calls = []

    def boom(ctx: Any) -> None:
        calls.append(ctx.scenario.id)
        if len(calls) > after:
            raise KeyError("choices")

    monkeypatch.setitem(REGISTRY, clause, dataclasses.replace(REGISTRY[clause], func=boom))


def test_a_check_raising_is_a_failure_of_its_clause_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    _raising("RES-07", monkeypatch)
    report = run_conformance(openai_spec, clauses=["RES-07"], scenarios=["text_and_tool_call"])
    (row,) = report["results"]
    assert row["outcome"] == "failed", row
    message = str(row["message"])
    assert "the check of RES-07 could not judge this run: KeyError: 'choices'" in message
    assert "raised at " in message
    assert "says nothing either way about the adapter" in message
    _no_traceback(message)


def test_a_check_raising_on_a_generated_input_is_data_too(monkeypatch: pytest.MonkeyPatch) -> None:
    _raising("MSG-02", monkeypatch, after=1)  # the scenario as written passes; the generated inputs raise
    report = run_conformance(openai_spec, clauses=["MSG-02"], scenarios=["random_histories"], examples=2)
    (row,) = report["results"]
    assert row["outcome"] == "failed", row
    message = str(row["message"])
    assert "could not judge this run: KeyError: 'choices'" in message
    assert "on a generated input: the check of MSG-02 could not judge this run" in message
    assert "paste it into a test to reproduce" in message
    _no_traceback(message)
