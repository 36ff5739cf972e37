"""Which scenarios can be recorded live, what a live answer must show, and how a recorded cassette is judged.

A live model does not say the authored words, so a scenario replayed from a ``recorded`` cassette takes its
expected text, reasoning and tool-call arguments from the recording itself (read back by the profile's
``summarise_response``); its shape — result type, tool names, stop reason — was verified against the
scenario when it was recorded, so the clauses still judge the adapter, not the model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..contract import ParsedToolCall
from ..profiles.base import WireProfile
from ..profiles.summary import ResponseSummary, SummaryToolCall
from ..replay.cassette import Cassette
from ..scenarios.model import Expected, Scenario


def _wire_type(expected: Expected) -> str:
    return "tool_calls" if expected.type == "structured_output" else expected.type


def verify_live(scenario: Scenario, profile: WireProfile, summaries: Sequence[ResponseSummary]) -> list[str]:
    """What a live answer lacks to stand for the scenario; an empty list means it may be written."""
    wanted = len(scenario.recorded_exchanges)
    if len(summaries) != wanted:
        return [f"the adapter made {len(summaries)} request(s); the scenario records {wanted}"]
    problems: list[str] = []
    expect = scenario.expect
    last = summaries[-1]
    for i, summary in enumerate(summaries):
        if summary.status != 200 or summary.error_type:
            problems.append(
                f"response {i}: the provider answered HTTP {summary.status}"
                + (f" with error {summary.error_type}" if summary.error_type else "")
            )
        problems.extend(f"response {i}: {problem}" for problem in summary.problems)
    if problems:
        return problems
    if last.result_type != _wire_type(expect):
        problems.append(f"the live answer is {last.result_type}, the scenario needs {_wire_type(expect)}")
    want_stop = expect.stop_for(profile.name)
    allowed = {want_stop}
    if profile.by_regression:  # an unknown provider may report it the way any known one does
        allowed |= {reason for _, reason in expect.stop_by_profile}
    if want_stop is not None and last.stop_reason not in allowed:
        problems.append(f"the live stop reason is {last.stop_reason}, the scenario needs {want_stop}")
    if expect.tool_calls:
        got = Counter(c.name for c in last.tool_calls)
        need = Counter(c.name for c in expect.tool_calls)
        if got != need:
            problems.append(f"the live tool calls are {dict(got)}, the scenario needs {dict(need)}")
    if expect.thinking is not None and not last.thinking:
        problems.append("the scenario needs reasoning and the live answer has none (is thinking enabled?)")
    if expect.content and not last.text:
        problems.append("the scenario needs text and the live answer has none")
    if scenario.live_token and scenario.live_token not in last.text:
        problems.append(
            f"the live answer does not repeat {scenario.live_token!r}, which only the tool result holds: the "
            "model did not read the tool result the adapter sent"
        )
    return problems


def recorded_form(scenario: Scenario, summaries: Sequence[ResponseSummary]) -> Scenario:
    """The scenario as judged against a live recording: what the provider really said is the expectation."""
    if not summaries:
        return scenario
    last = summaries[-1]
    expect = scenario.expect
    changes: dict[str, Any] = {}
    if expect.content is not None:
        changes["content"] = last.text
    if expect.thinking is not None:
        changes["thinking"] = last.thinking
    if expect.type == "tool_calls":
        changes["tool_calls"] = tuple(
            ParsedToolCall(id=c.id or "", name=c.name, arguments=c.arguments) for c in last.tool_calls
        )
    if expect.type == "structured_output" and last.tool_calls:
        changes["output"] = last.tool_calls[-1].arguments
    return replace(scenario, expect=replace(expect, **changes))


def observed_result(result: Any) -> dict[str, Any]:
    """The StepResult the adapter returned while recording, as plain data kept in the provenance: the
    expected result of a ``custom`` profile's replay (regression), and evidence for every other profile."""
    try:
        data = result.model_dump(mode="json") if hasattr(result, "model_dump") else {}
    except Exception:  # an error result holds an exception, which has no JSON form
        data = {"type": getattr(result, "type", type(result).__name__), "stop_reason": "error"}
    thinking = data.get("thinking") or {}
    return {
        "type": data.get("type", type(result).__name__),
        "content": data.get("content"),
        "thinking": thinking.get("content") if isinstance(thinking, dict) else None,
        "tool_calls": [
            {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")}
            for c in data.get("tool_calls") or []
        ],
        "output": data.get("output"),
        "stop_reason": data.get("stop_reason"),
    }


def summary_of_observed(observed: dict[str, Any]) -> ResponseSummary:
    """What a profile that cannot read responses knows of one: the result the adapter returned live."""
    kind = observed.get("type")
    calls = tuple(
        SummaryToolCall(c.get("id"), str(c.get("name")), c.get("arguments"), True)
        for c in observed.get("tool_calls") or []
    )
    if kind == "structured_output":
        calls = (SummaryToolCall(None, "finish", observed.get("output"), True),)
    result_type = "error" if kind == "error" else "tool_calls" if calls else "text"
    stop: Any = observed.get("stop_reason") or ("tool_use" if calls else None)
    return ResponseSummary(
        status=200,
        result_type=result_type,  # type: ignore[arg-type]
        text=observed.get("content") or "",
        thinking=observed.get("thinking") or "",
        tool_calls=calls,
        stop_reason=stop,
    )


def summaries_of(cassette: Cassette, profile: WireProfile) -> list[ResponseSummary]:
    """Each recorded response read back: by the profile, or from the observed result where it cannot read."""
    if profile.by_regression:
        observed = cassette.provenance.get("observed")
        if not isinstance(observed, dict):
            return []
        return [summary_of_observed(observed)] * len(cassette.interactions)
    return [profile.summarise_response(i.status, i.headers, i.body) for i in cassette.interactions]
