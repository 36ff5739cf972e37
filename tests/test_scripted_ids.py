"""The scripted profile hands the mock the tool-call ids a conforming adapter returns (RES-03)."""

from __future__ import annotations

import dataclasses

import pytest

from helix_conformance.contract import ToolCallsStepResult
from helix_conformance.profiles.scripted import scripted_result
from helix_conformance.scenarios import get_scenario
from helix_conformance.testing import MockLLMAdapter, mock_spec, run_conformance

UNUSABLE_IDS = ("compat_tool_calls_without_ids", "compat_duplicate_tool_ids", "tool_call_streamed_arguments")


@pytest.mark.parametrize("scenario_id", UNUSABLE_IDS)
def test_scripted_calls_get_non_empty_unique_ids(scenario_id: str) -> None:
    result = scripted_result(get_scenario(scenario_id))
    assert isinstance(result, ToolCallsStepResult)
    ids = [c.id for c in result.tool_calls]
    assert all(ids), ids
    assert len(set(ids)) == len(ids), ids


def test_scripted_calls_keep_the_providers_ids() -> None:
    scenario = get_scenario("compat_interleaved_tool_calls")
    result = scripted_result(scenario)
    assert isinstance(result, ToolCallsStepResult)
    assert [c.id for c in result.tool_calls] == [c.id for c in scenario.expect.tool_calls]


def test_a_double_returning_the_unusable_ids_fails_res_03() -> None:
    def raw(scenario_id: str) -> ToolCallsStepResult:
        return ToolCallsStepResult(tool_calls=list(get_scenario(scenario_id).expect.tool_calls))

    spec = dataclasses.replace(
        mock_spec(),
        name="mock-raw-ids",
        factory=lambda ctx: MockLLMAdapter(default=raw("compat_tool_calls_without_ids")),
    )
    report = run_conformance(spec, clauses=["RES-03"], scenarios=["compat_tool_calls_without_ids"])
    outcomes = {r["clause"]: r["outcome"] for r in report["results"]}
    assert outcomes == {"RES-03": "failed"}, outcomes
