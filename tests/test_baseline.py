"""The gate's rules as plain functions: the baseline file, and what each outcome does to the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix_conformance.baseline import BaselineEntry, BaselineError, load_baseline, write_baseline
from helix_conformance.checks.registry import Failure, load_all_checks
from helix_conformance.gate import Gate, entries_to_write
from helix_conformance.scenarios import SCENARIOS, get_scenario
from helix_conformance.suite import CheckOutcome, PlannedCheck

IDS = [s.id for s in SCENARIOS]


def _planned(clause: str, scenario: str = "stop_max_tokens", profile: str = "openai-chat") -> PlannedCheck:
    return PlannedCheck(profile, get_scenario(scenario), load_all_checks()[clause], None)


def _failed(planned: PlannedCheck) -> CheckOutcome:
    failure = Failure(planned.clause, planned.scenario.id, planned.profile, "wrong stop reason")
    return CheckOutcome("failed", failure)


def _baseline(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "known.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_loading_validates_every_entry(tmp_path: Path) -> None:
    path = _baseline(
        tmp_path,
        "version: 1\nentries:\n"
        "- {clause: STOP-01, scenario: stop_max_tokens, reason: HX-12}\n"
        "- {clause: STOP-01, scenario: stop_max_tokens, profile: gemini, reason: HX-13}\n",
    )
    baseline = load_baseline(path, IDS)
    assert baseline.find("openai-chat", "stop_max_tokens", "STOP-01") == baseline.entries[0]
    assert baseline.find("openai-chat", "stop_max_tokens", "STOP-02") is None
    assert baseline.entries[1].profile == "gemini"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- just a list", "expected a mapping with a list under 'entries'"),
        ("version: 7\nentries: []", "version 7 is not supported"),
        ("entries: []\nextra: 1", "unknown key(s) extra"),
        (
            "entries: [{clause: STOP-01, scenario: stop_max_tokens, reason: '  '}]",
            "'reason' is missing or empty",
        ),
        (
            "entries: [{clause: STOP-01, scenario: stop_max_tokens, reason: a, why: b}]",
            "entry 1: unknown key(s) why",
        ),
        (
            "entries: [{clause: STOP-01, scenario: stop_max_tokens, reason: a},"
            " {clause: STOP-01, scenario: stop_max_tokens, reason: b}]",
            "entry 2: *::stop_max_tokens::STOP-01 is listed twice",
        ),
        ("entries: [three]", "entry 1: expected a mapping"),
    ],
)
def test_loading_refuses_what_would_silently_baseline_nothing(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(BaselineError) as info:
        load_baseline(_baseline(tmp_path, text), IDS)
    assert message in str(info.value)
    assert "known.yaml" in str(info.value)


def test_a_missing_file_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="does not exist \\(create it with --helix-write-baseline\\)"):
        load_baseline(tmp_path / "nope.yaml", IDS)


def test_an_empty_file_is_an_empty_baseline(tmp_path: Path) -> None:
    assert load_baseline(_baseline(tmp_path, ""), IDS).entries == ()


def test_written_baselines_load_back(tmp_path: Path) -> None:
    entries = [
        BaselineEntry("STOP-02", "stop_max_tokens", "HX-12: it's known", "openai-chat"),
        BaselineEntry("RES-06", "tool_call_parallel", "HX-7"),
    ]
    path = tmp_path / "sub" / "known.yaml"
    assert write_baseline(path, entries, "mypkg", "openai-chat") == 2
    loaded = load_baseline(path, IDS)
    assert [e.clause for e in loaded.entries] == ["RES-06", "STOP-02"]  # sorted, so the file diffs well
    assert set(loaded.entries) == set(entries)
    assert (loaded.adapter, loaded.profile) == ("mypkg", "openai-chat")
    # Used for another adapter: refused across wire profiles, said (and applied) on the same wire.
    assert loaded.mismatch("mypkg", "openai-chat") == (None, None)
    error, warning = loaded.mismatch("other", "anthropic-messages")
    assert warning is None
    assert error is not None
    assert f"baseline {path} was written for adapter 'mypkg' (wire profile 'openai-chat')" in error
    error, warning = loaded.mismatch("mypkg.conformance:spec", "openai-chat")
    assert error is None
    assert warning is not None
    assert "this run is --adapter=mypkg.conformance:spec" in warning
    # A hand-written baseline names no adapter: nothing to compare.
    assert load_baseline(_baseline(tmp_path, "entries: []"), IDS).mismatch("x", "gemini") == (None, None)


# --- the verdict of one check ---------------------------------------------------------------------------------


def test_must_failures_fail_and_should_failures_only_under_strict() -> None:
    must, should = _planned("STOP-01"), _planned("HARN-04", "text_basic")
    assert Gate().judge(must, _failed(must)).action == "fail"
    assert Gate().judge(should, _failed(should)).action == "xfail"
    assert Gate(strict=True).judge(should, _failed(should)).action == "fail"
    assert Gate().judge(must, CheckOutcome("passed")).action == "pass"
    assert Gate().judge(must, CheckOutcome("skipped", reason="why")).action == "skip"


def test_baselined_failures_pass_the_gate_and_fixed_ones_go_stale(tmp_path: Path) -> None:
    path = _baseline(tmp_path, "entries: [{clause: STOP-01, scenario: stop_max_tokens, reason: HX-12}]")
    gate = Gate(baseline=load_baseline(path, IDS))
    planned = _planned("STOP-01")
    known = gate.judge(planned, _failed(planned))
    assert (known.action, known.status, known.baseline_reason) == ("xfail", "baselined", "HX-12")
    fixed = gate.judge(planned, CheckOutcome("passed"))
    assert (fixed.action, fixed.status) == ("fail", "stale")
    assert fixed.failure is not None
    assert "stale baseline entry" in fixed.failure.message
    assert str(path) in fixed.failure.message
    other = _planned("STOP-02")
    assert gate.judge(other, _failed(other)).action == "fail"  # only the listed clause is tolerated


def test_write_mode_accepts_gate_failures_only() -> None:
    gate = Gate(write_baseline=True)
    must, should = _planned("STOP-01"), _planned("HARN-04", "text_basic")
    accepted = gate.judge(must, _failed(must))
    assert (accepted.action, accepted.status) == ("xfail", "baselined")
    assert accepted.baseline_reason == "known failure: wrong stop reason"
    assert gate.judge(should, _failed(should)).status is None  # a SHOULD miss does not fail this gate


def test_entries_for_checks_the_profile_never_runs_are_reported(tmp_path: Path) -> None:
    path = _baseline(
        tmp_path,
        "entries:\n"
        "- {clause: RES-06, scenario: text_basic, reason: a}\n"
        "- {clause: STOP-01, scenario: stop_max_tokens, reason: b}\n"
        "- {clause: RES-06, scenario: text_basic, profile: gemini, reason: c}\n",
    )
    gate = Gate(baseline=load_baseline(path, IDS))
    gate.check_entries_exist([_planned("STOP-01")], "openai-chat")
    assert [e.reason for e in gate.unmatched] == ["a"]  # the gemini-only entry is not this run's business
    assert "*::text_basic::RES-06" in gate.unmatched_errors()[0]


def test_rewriting_drops_stale_and_unmatched_entries_and_keeps_unrun_ones(tmp_path: Path) -> None:
    path = _baseline(
        tmp_path,
        "entries:\n"
        "- {clause: STOP-01, scenario: stop_max_tokens, reason: fixed since}\n"
        "- {clause: RES-06, scenario: tool_call_parallel, reason: not run today}\n"
        "- {clause: STOP-02, scenario: stop_max_tokens, reason: still failing}\n",
    )
    gate = Gate(baseline=load_baseline(path, IDS), write_baseline=True)
    outcomes = [
        ("openai-chat", "stop_max_tokens", "STOP-01", "passed", ""),
        ("openai-chat", "stop_max_tokens", "STOP-02", "baselined", "still failing"),
        ("openai-chat", "text_basic", "STR-01", "baselined", "known failure: new"),
    ]
    ran = {(p, s, c) for p, s, c, _, _ in outcomes}
    written = {(e.scenario, e.clause): e.reason for e in entries_to_write(gate, outcomes, ran)}
    assert written == {
        ("tool_call_parallel", "RES-06"): "not run today",
        ("stop_max_tokens", "STOP-02"): "still failing",
        ("text_basic", "STR-01"): "known failure: new",
    }
