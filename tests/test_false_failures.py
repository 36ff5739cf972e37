"""Adapters written elsewhere that do what the contract allows must pass (issue 16: zero false failures).

Each test runs a small correct adapter, a wrapper of a reference adapter doing one allowed thing the checks
used to reject, on the clauses that rejected it. The broken adapters that prove the same clauses still catch
the real mistake are registered in ``tests/broken_adapters`` (``minted_ids``, ``false_failures``).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable
from typing import Any

import pytest
from broken_adapters._gemini_base import HookedGeminiAdapter, HookedGeminiStream

from helix_conformance.checks.common import ToolCallIds, describe_result
from helix_conformance.contract import AdapterSpec, LLMAdapter, ParsedToolCall, ToolCallsStepResult
from helix_conformance.testing import run_conformance
from reference_adapters._http import ToolCallBuffer
from reference_adapters.gemini import spec as gemini_spec

TIMEOUT = 3.0
EXAMPLES = 3


def _spec(reference: AdapterSpec, name: str, adapter: type[Any]) -> AdapterSpec:
    def factory(context: Any) -> LLMAdapter:
        return adapter(api_key=context.api_key, base_url=context.base_url)  # type: ignore[no-any-return]

    return dataclasses.replace(reference, name=name, factory=factory)


def _outcomes(
    spec: AdapterSpec, clauses: Iterable[str], scenarios: Iterable[str]
) -> dict[tuple[str, str], Any]:
    report = run_conformance(
        spec, clauses=list(clauses), scenarios=list(scenarios), timeout=TIMEOUT, examples=EXAMPLES
    )
    return {(row["clause"], row["scenario"]): row for row in report["results"]}


def _not_passed(outcomes: dict[tuple[str, str], Any]) -> list[str]:
    return [
        f"{c} on {s}: {row['outcome']} — {row['message']}"
        for (c, s), row in outcomes.items()
        if row["outcome"] != "passed"
    ]


# --- 1. tool-call ids the adapter mints (the provider sent none) -----------------------------------------


class _Uuid4Stream(HookedGeminiStream):
    def call_buffers(self) -> list[ToolCallBuffer]:
        # Gemini sends no ids: a fresh uuid4 for each, as Vercel's Google provider, LiteLLM and LangChain do.
        return [ToolCallBuffer(c.id or f"call_{uuid.uuid4().hex}", c.name, c.arguments) for c in self._calls]


class Uuid4ToolCallIds(HookedGeminiAdapter):
    stream_class = _Uuid4Stream


@pytest.mark.parametrize("clause", ["STR-09", "STR-10", "RES-12", "RES-03", "STR-05"])
def test_random_minted_ids_pass_the_cross_run_clauses(clause: str) -> None:
    spec = _spec(gemini_spec, "gemini_uuid4_ids", Uuid4ToolCallIds)
    outcomes = _outcomes(spec, [clause], ["tool_call", "tool_call_parallel"])
    assert set(outcomes) == {(clause, "tool_call"), (clause, "tool_call_parallel")}, outcomes
    assert not _not_passed(outcomes), "\n".join(_not_passed(outcomes))


def _calls(*ids: str) -> ToolCallsStepResult:
    calls = [ParsedToolCall(id=i, name="get_weather", arguments={"city": "Paris"}) for i in ids]
    return ToolCallsStepResult(tool_calls=calls, sub_agent_calls=[])


def test_runs_compare_minted_ids_by_position_and_provider_ids_as_sent() -> None:
    def same(a: ToolCallsStepResult, b: ToolCallsStepResult, provider: frozenset[str]) -> bool:
        return describe_result(a, ToolCallIds(provider)) == describe_result(b, ToolCallIds(provider))

    assert same(_calls("call_1", "call_2"), _calls("x-9", "y-8"), frozenset())  # fresh ids per run
    assert not same(_calls("call_1", "call_2"), _calls("x-9", "x-9"), frozenset())  # a duplicate appears
    assert not same(_calls("call_1", "call_2"), _calls("x-9", ""), frozenset())  # an id goes empty
    provider = frozenset({"call_a", "call_b"})
    assert same(_calls("call_a", "call_b"), _calls("call_a", "call_b"), provider)
    assert not same(
        _calls("call_a", "call_b"), _calls("call_a", "call_b2"), provider
    )  # the provider's id lost
    assert describe_result(_calls("a")) != describe_result(
        _calls("b")
    )  # without ``ids``: compared as returned
