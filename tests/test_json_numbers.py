"""Values are compared as the wire means them (issue 29): JSON numbers are IEEE doubles on both sides, so a
number written back the way JavaScript writes it is the same number.

``JSON.stringify(4.938854309136491e16)`` is ``"49388543091364910"`` (ECMAScript's Number::toString writes an
integral double below 1e21 in full, from its shortest digits), which Python reads as the int 49388543091364910;
the double it stands for is 49388543091364912. A TypeScript adapter that sent a history's tool-call arguments
back that way failed MSG-03/MSG-05 on ``random_histories`` (``--helix-examples=20 --helix-seed=7``).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from broken_adapters._base import HookedAdapter, broken

from helix_conformance.checks.common import json_equal, json_text
from helix_conformance.contract import LLMGenerateInput
from helix_conformance.testing import run_conformance


def _as_javascript_writes(value: Any) -> Any:
    """``value`` with every integral double below 1e21 as the integer JavaScript's JSON.stringify writes."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(Decimal(repr(value)))
    if isinstance(value, dict):
        return {k: _as_javascript_writes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_javascript_writes(v) for v in value]
    return value


def test_javascript_shortest_form_is_the_same_double() -> None:
    written = json.dumps(_as_javascript_writes(4.938854309136491e16))
    assert written == "49388543091364910"
    read = json.loads(written)
    assert read != 4.938854309136491e16  # as Python numbers they differ: an exact int against a double
    assert json_equal(read, 4.938854309136491e16)
    assert json_equal({"n": [read, 1]}, {"n": [4.938854309136491e16, 1.0]})


def test_json_values_of_other_kinds_stay_apart() -> None:
    assert not json_equal(49388543091364910, 49388543091364920.0 + 64)  # another double
    assert not json_equal("5", 5)
    assert not json_equal(True, 1)
    assert not json_equal(None, 0)
    assert json_text(10**400) == str(10**400)  # beyond every double: compared as written


class WritesArgumentsLikeJavaScript(HookedAdapter):
    """The reference adapter, sending a history's tool-call arguments as JSON.stringify would write them."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for message in body.get("messages", []):
            for call in message.get("tool_calls") or ():
                arguments = json.loads(call["function"]["arguments"])
                call["function"]["arguments"] = json.dumps(_as_javascript_writes(arguments))
        return body


JAVASCRIPT_NUMBERS = broken(
    "writes_numbers_like_javascript",
    WritesArgumentsLikeJavaScript,
    "MSG-03",
    ["random_histories"],
    "Not broken: JavaScript's shortest form of a double.",
).spec


def test_history_arguments_written_by_javascript_pass_msg03_and_msg05() -> None:
    report = run_conformance(
        JAVASCRIPT_NUMBERS, clauses=["MSG-03", "MSG-05"], scenarios=["random_histories"], seed=7, examples=20
    )
    rows = {row["clause"]: row for row in report["results"]}
    for clause in ("MSG-03", "MSG-05"):
        assert rows[clause]["outcome"] == "passed", rows[clause]["message"]
