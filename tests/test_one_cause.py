"""One bug, one cause (issue 29 §4): a crash in an adapter reads as one cause, on the clause that owns what
happened, with the exception and where it was raised; the clauses whose input it took away are not judged on
that run and say so. Pinned on the crashing adapters of ``tests/broken_adapters/crashes.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from broken_adapters.crashes import PARSES_DONE, RAISES_IN_STEP, TOOL_CALL_ASSEMBLY
from plugin_runs import adapter_module, output, run

from helix_conformance.testing import run_conformance

SCENARIOS = (
    "text_basic",
    "text_unicode",
    "tool_call",
    "tool_call_parallel",
    "finish_tool",
    "thinking_text",
    "retry_429_then_success",
    "tool_result_roundtrip",
    "http_401",
    "truncated_stream",
)
"""Text, tool calls, structured output, thinking, a retry before the success, a history with tool results,
and two error scenarios the crashes do not reach: enough for every way the causes could multiply."""


def _report(spec: Any) -> dict[str, Any]:
    return run_conformance(spec, scenarios=SCENARIOS, timeout=5.0, examples=2)


def _rows(report: dict[str, Any], clause: str) -> dict[str, dict[str, Any]]:
    return {r["scenario"]: r for r in report["results"] if r["clause"] == clause}


@pytest.fixture(scope="module")
def parses_done() -> dict[str, Any]:
    return _report(PARSES_DONE.spec)


def test_a_json_parse_crash_mid_stream_is_one_cause(parses_done: dict[str, Any]) -> None:
    causes = parses_done["causes"]
    assert len(causes) == 1, [(c["clause"], c["message"]) for c in causes]
    cause = causes[0]
    assert cause["message"] == (
        "generate_step returned an ErrorStepResult for a complete success response: HelixError: openai: "
        "unexpected JSONDecodeError: Expecting value: line 1 column 2 (char 1) (cause: "
        "json.decoder.JSONDecodeError)"
    )
    # Every success scenario, text or tool calls (RES-02) or structured output (FIN-01), the one after a retry
    # included; the error scenarios the crash never reaches are not in it.
    assert cause["clauses"] == {"RES-02": 7, "FIN-01": 1}
    assert set(cause["scenarios"]) == set(SCENARIOS) - {"http_401", "truncated_stream"}
    assert cause["expected"] == "a text result"
    assert "JSONDecodeError" in cause["actual"]
    assert "caught and returned as the ErrorStepResult" in cause["hint"]
    assert (
        cause["reproduce"]
        == 'pytest --adapter=broken-parses-done-sentinel -k "openai-chat::text_basic::RES-02"'
    )


def test_the_clauses_the_crash_took_the_input_of_are_not_judged(parses_done: dict[str, Any]) -> None:
    for clause in ("STR-01", "STR-03", "STOP-01", "RES-06", "CFG-03", "ERR-04"):
        for scenario, row in _rows(parses_done, clause).items():
            if scenario in ("http_401", "truncated_stream"):
                continue
            assert row["outcome"] == "skipped", (clause, scenario, row["message"])
            assert row["message"].startswith(
                "not judged on this run: generate_step returned an ErrorStepResult"
            )
            assert row["message"].endswith("(reported once, on RES-02)") or "on FIN-01" in row["message"]
    # What does not need the result is judged as usual: the request, on_error, the error's shape.
    for clause in ("MSG-10", "STR-06", "ERR-06", "RES-01"):
        assert {row["outcome"] for row in _rows(parses_done, clause).values()} == {"passed"}, clause


def test_the_failure_says_where_the_adapter_raised(parses_done: dict[str, Any]) -> None:
    message = _rows(parses_done, "RES-02")["text_basic"]["message"]
    assert "raised at (innermost last):" in message
    assert "tests/broken_adapters/crashes.py" in message
    assert "json.loads(data)" in message
    # The standard library frames below the adapter's call are left out: one, the call it made.
    assert message.count("/json/") == 1, message


def test_a_crash_in_tool_call_assembly_is_one_cause() -> None:
    causes = _report(TOOL_CALL_ASSEMBLY.spec)["causes"]
    assert [(c["clauses"], c["message"]) for c in causes] == [
        (
            {"RES-02": 2, "FIN-01": 1},
            "generate_step returned an ErrorStepResult for a complete success response: HelixError: openai: "
            "unexpected KeyError: 'name' (cause: builtins.KeyError)",
        )
    ]
    assert set(causes[0]["scenarios"]) == {"tool_call", "tool_call_parallel", "finish_tool"}


def test_a_raise_in_generate_step_is_one_cause_across_the_clauses_that_carry_it() -> None:
    report = run_conformance(
        RAISES_IN_STEP.spec, scenarios=("tool_result_roundtrip", "text_basic", "random_histories"), examples=2
    )
    causes = report["causes"]
    assert len(causes) == 1, causes
    # NT-01 owns a raise; the generated scenario judges only MSG-01..05, so its first clause carries it.
    assert causes[0]["clauses"] == {"NT-01": 1, "MSG-01": 1}
    assert causes[0]["message"] == (
        "generate_step raised TypeError: Object of type ToolMessage is not JSON serializable (failures must be "
        "returned as an ErrorStepResult)"
    )


def test_an_error_result_the_scenario_allows_is_still_judged_clause_by_clause() -> None:
    """Where the owner is only SHOULD (``retry_after_too_long``: surfacing the 429 is allowed too) or the
    scenario's responses are errors, an error result is no root cause: the verdict must not change."""
    report = run_conformance(PARSES_DONE.spec, scenarios=("retry_after_too_long", "http_429"), examples=2)
    assert report["causes"] == []
    assert all(
        r["outcome"] != "skipped" or "not judged on this run" not in r["message"] for r in report["results"]
    )


def test_the_terminal_summary_reads_as_one_cause(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter_module(
        pytester,
        monkeypatch,
        "crashing_adapter",
        "from broken_adapters.crashes import PARSES_DONE\nspec = PARSES_DONE.spec\n",
    )
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent), prepend=":")
    result = run(pytester, "--adapter=crashing_adapter", "-k", "text_basic or tool_call_typed")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    result.stdout.fnmatch_lines(
        [
            "1 cause behind 2 failed checks, most widespread first:",
            "  1. RES-02 on 2 checks (text_basic, tool_call_typed_arguments)",
            "     generate_step returned an ErrorStepResult for a complete success response: HelixError: openai: "
            "unexpected JSONDecodeError*",
            '     reproduce: pytest --adapter=crashing_adapter -k "openai-chat::text_basic::RES-02"',
        ]
    )
    assert "do not concatenate to the returned content" not in output(result)
