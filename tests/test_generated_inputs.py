"""Generated inputs (``random_histories``, ``random_tool_schemas``): they find bugs no written scenario
shows, the failure carries a shrunk input the user can paste, and the run is the same every time."""

from __future__ import annotations

import pytest
from broken_adapters import BROKEN_ADAPTERS, BrokenAdapter
from broken_adapters.generated import ADAPTERS as GENERATED_ONLY

from helix_conformance.checks.context import HarnessSettings
from helix_conformance.checks.registry import Failure
from helix_conformance.contract import (  # noqa: F401
    AssistantMessage,
    SystemMessage,
    ToolCallInfo,
    ToolMessage,
    UserMessage,
)
from helix_conformance.suite import SuiteRunner, plan_suite


def _failures(broken: BrokenAdapter, *, generated_only: bool = False) -> list[Failure]:
    """The failures of the clause that must catch ``broken``, as the checks report them (with details); on
    the generated scenarios alone with ``generated_only`` (what the failure's text is about: a tenth of the
    cost of every scenario)."""
    planned = [
        p
        for p in plan_suite(broken.spec)
        if p.clause == broken.caught_by and (p.scenario.generated or not generated_only)
    ]
    runner = SuiteRunner(broken.spec, HarnessSettings())
    runner.expect(planned)
    outcomes = [runner.run(p) for p in planned]
    return [o.failure for o in outcomes if o.outcome == "failed" and o.failure is not None]


@pytest.mark.slow
@pytest.mark.parametrize("broken", GENERATED_ONLY, ids=lambda b: b.name)
def test_only_the_generated_inputs_catch_it(broken: BrokenAdapter) -> None:
    assert broken in BROKEN_ADAPTERS
    failed = _failures(broken)
    assert failed, f"{broken.name} passed {broken.caught_by}"
    assert {f.scenario for f in failed} <= {"random_histories", "random_tool_schemas"}, failed


def test_the_failure_prints_a_shrunk_input_that_reproduces_it() -> None:
    broken = next(b for b in GENERATED_ONLY if b.name == "html_escapes_text")
    failure = _failures(broken, generated_only=True)[0]
    assert failure.message.startswith("on a generated input:")
    details = failure.details
    assert "paste it into a test" in details
    pasted = details.split("reproduce:\n", 1)[1]
    assert pasted.startswith("messages=[")
    messages = eval(pasted.removeprefix("messages="))
    assert any(c in m.content for m in messages for c in "&<>"), "shrunk to an input holding what breaks"
    assert len(messages) <= 3, "shrunk"


def _reported_input(broken: BrokenAdapter) -> list[object]:
    """The input the first failure on a generated scenario tells the user to paste."""
    details = _failures(broken, generated_only=True)[0].details
    return list(eval(details.split("reproduce:\n", 1)[1].removeprefix("messages=")))


def _size(messages: list[object]) -> tuple[int, int]:
    return len(messages), sum(len(str(getattr(m, "content", ""))) for m in messages)


def test_shrinking_stops_at_its_budget_and_still_reports_an_input_that_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each shrinking step is a run of the adapter (tens of milliseconds through a driver): past the budget the
    smallest failing input found so far is reported, never one the adapter did not fail on. With no budget that
    is the first failing input Hypothesis generated, larger than the one shrinking reaches (how large depends on
    Hypothesis's version: a single message on 6.100, several on today's)."""
    from helix_conformance.checks import generated

    broken = next(b for b in GENERATED_ONLY if b.name == "html_escapes_text")
    shrunk = _reported_input(broken)
    monkeypatch.setattr(generated, "SHRINK_RUNS", 0)
    assert "in at most 0 runs" in _failures(broken, generated_only=True)[0].details
    unshrunk = _reported_input(broken)
    assert any(c in str(getattr(m, "content", "")) for m in unshrunk for c in "&<>"), "one that failed"
    assert _size(unshrunk) > _size(shrunk), "not shrunk: the budget was spent before the first step"


def test_generated_inputs_are_the_same_every_run() -> None:
    broken = next(b for b in GENERATED_ONLY if b.name == "drops_nested_history_arguments")
    first, again = (_failures(broken, generated_only=True)[0] for _ in range(2))
    assert first.details == again.details
