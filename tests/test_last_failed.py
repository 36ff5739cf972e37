"""An author's inner loop: pytest's ``--lf``/``--ff`` (the cache plugin) work on the suite's stable ids, and a
run narrowed to what failed last time says it is not the gate, in the summary and in the report."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow  # two pytest sessions each, for --lf/--ff: an integration that rarely changes

BROKEN = "--adapter=my_adapter:wrong_stop"
"""Maps a token-limit stop to end_turn: STOP-01 and STOP-02 fail on stop_max_tokens."""
SELECT = ("-k", "stop_max_tokens or text_basic")
FAILED = {
    "helix-conformance::test_conformance[openai-chat::stop_max_tokens::STOP-01]",
    "helix-conformance::test_conformance[openai-chat::stop_max_tokens::STOP-02]",
}
NARROWED = "narrowed by --lf to what failed last time: not a gate"


def _run(adapters: pytest.Pytester, *args: str) -> pytest.RunResult:
    """With the cache plugin on (the other end-to-end runs turn it off)."""
    return adapters.runpytest_subprocess("--assert=plain", "-rf", *args, timeout=600)


def _failed(result: pytest.RunResult) -> set[str]:
    return {line.split()[1] for line in result.outlines if line.startswith("FAILED ")}


def _verdict(result: pytest.RunResult) -> str:
    return next(line for line in result.outlines if line.startswith("VERDICT"))


def test_last_failed_reruns_exactly_what_failed_and_says_it_is_not_the_gate(
    adapters: pytest.Pytester,
) -> None:
    first = _run(adapters, BROKEN, *SELECT)
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    assert _failed(first) == FAILED
    ran_first = first.parseoutcomes()["passed"] + 2
    assert NARROWED not in first.stdout.str()

    again = _run(adapters, BROKEN, *SELECT, "--lf", "--helix-report=lf.json")
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    assert _failed(again) == FAILED
    assert again.parseoutcomes() == {"failed": 2, "deselected": again.parseoutcomes()["deselected"]}
    assert NARROWED in _verdict(again)
    assert "HARN-05: 2 checks executed (narrowed by --lf: not the gate)" in again.outlines
    report = json.loads((adapters.path / "lf.json").read_text(encoding="utf-8"))
    assert report["selection"]["last_failed"] is True
    assert {r["id"] for r in report["results"]} == FAILED

    first_failed = _run(adapters, BROKEN, *SELECT, "--ff")
    assert first_failed.ret == pytest.ExitCode.TESTS_FAILED
    assert sum(first_failed.parseoutcomes()[k] for k in ("passed", "failed")) == ran_first
    assert NARROWED not in first_failed.stdout.str(), "--ff reorders and runs everything: still the gate"
    assert _failed(first_failed) == FAILED


def test_last_failed_after_a_green_run_runs_everything_and_is_the_gate(adapters: pytest.Pytester) -> None:
    assert _run(adapters, "--adapter=my_adapter", *SELECT).ret == pytest.ExitCode.OK
    again = _run(adapters, "--adapter=my_adapter", *SELECT, "--lf")
    assert again.ret == pytest.ExitCode.OK
    assert again.parseoutcomes()["passed"] > 2
    assert NARROWED not in again.stdout.str()
    assert _verdict(again) == "VERDICT: PASS — every executed MUST clause holds"
