"""The CI gate as a release pipeline runs it: baseline of known failures, reports in every format, the badge,
JUnit properties, and the same verdict under pytest-xdist. Runs ``pytest --adapter=...`` in subprocesses."""

from __future__ import annotations

import json
import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from plugin_runs import assert_no_crash, lines_starting, output, run

from helix_conformance._files import umask, write_atomic
from helix_conformance.cli import main as cli
from helix_conformance.reporting.outcomes import ItemOutcome, OutcomeLog

BROKEN = "--adapter=my_adapter:wrong_stop"
"""Maps a token-limit stop to end_turn: STOP-01 and STOP-02 fail on stop_max_tokens."""
SELECT = ("-k", "stop_max_tokens or text_basic")
FAILING = {("stop_max_tokens", "STOP-01"), ("stop_max_tokens", "STOP-02")}


def _report(path: Path) -> dict[str, object]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _outcomes(report: dict[str, object]) -> dict[str, str]:
    return {r["id"]: r["outcome"] for r in report["results"]}  # type: ignore[attr-defined]


def _messages(report: dict[str, object]) -> dict[str, str]:
    return {r["id"]: r["message"] for r in report["results"]}  # type: ignore[attr-defined]


# --- the baseline -----------------------------------------------------------------------------------------


@pytest.mark.slow  # three pytest sessions: the baseline's life, rarely changed
def test_write_baseline_then_gate_with_it_then_it_goes_stale(adapters: pytest.Pytester) -> None:
    written = run(adapters, BROKEN, *SELECT, "--helix-write-baseline", "--helix-baseline=known.yaml")
    assert written.ret == pytest.ExitCode.OK, output(written)
    assert_no_crash(written)
    written.stdout.fnmatch_lines(["baseline written: known.yaml (2 known failures)*"])
    data = yaml.safe_load((adapters.path / "known.yaml").read_text(encoding="utf-8"))
    assert {(e["scenario"], e["clause"]) for e in data["entries"]} == FAILING
    assert all(e["reason"].startswith("known failure: ") for e in data["entries"])
    assert (data["adapter"], data["profile"]) == ("my_adapter:wrong_stop", "openai-chat")
    assert (
        (adapters.path / "known.yaml").read_text(encoding="utf-8").startswith("# helix-conformance baseline")
    )

    # A person replaces the generated reasons with real ones; the gate then passes and says what it tolerated.
    for entry in data["entries"]:
        entry["reason"] = "ticket HX-12: length maps to end_turn until the 2.0 release"
    (adapters.path / "known.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    gated = run(adapters, BROKEN, *SELECT, "--helix-baseline=known.yaml", "--helix-report=r.json")
    assert gated.ret == pytest.ExitCode.OK, output(gated)
    assert gated.parseoutcomes().get("xfailed") == 2
    gated.stdout.fnmatch_lines(
        ["known failures (baseline, not failing the gate): 2 check(s) in STOP-01, STOP-02"]
    )
    gated.stdout.fnmatch_lines(["VERDICT: PASS*"])
    report = _report(adapters.path / "r.json")
    baselined = [r for r in report["results"] if r["outcome"] == "baselined"]  # type: ignore[attr-defined]
    assert {(r["scenario"], r["clause"]) for r in baselined} == FAILING
    assert all(r["baseline_reason"].startswith("ticket HX-12") for r in baselined)
    assert report["baseline"] == {"path": "known.yaml", "entries": 2}

    # The adapter gets fixed: the entries are stale, and the gate fails until they are deleted.
    stale = run(adapters, "--adapter=my_adapter", *SELECT, "--helix-baseline=known.yaml")
    assert stale.ret == pytest.ExitCode.TESTS_FAILED, output(stale)
    assert stale.parseoutcomes().get("failed") == 2
    stale.stdout.fnmatch_lines(
        ["*stale baseline entry: STOP-01 now holds on scenario stop_max_tokens; delete*"]
    )
    assert lines_starting(
        stale, "2 stale baseline entries (the checks pass now; delete them from the baseline): "
    )
    # Stale entries are not broken clauses: said so everywhere, and the gate still fails (exit 1).
    stale.stdout.fnmatch_lines(
        [
            "VERDICT: FAIL — 2 stale baseline entries (the checks pass now: delete them from the baseline); "
            "every executed MUST clause holds"
        ]
    )
    assert "clause(s) broken" not in output(stale)
    assert "cause behind" not in output(stale)
    # It was written for my_adapter:wrong_stop: the same wire, so applied, and said.
    stale.stdout.fnmatch_lines(
        ["warning: baseline known.yaml was written for adapter 'my_adapter:wrong_stop', this run is *"]
    )

    # An adapter of another wire profile cannot use it: its entries are another adapter's known failures.
    other = run(adapters, "--adapter=anthropic", "-k", "text_basic", "--helix-baseline=known.yaml")
    assert other.ret == pytest.ExitCode.USAGE_ERROR, output(other)
    assert "(wire profile 'openai-chat'); this run's adapter 'anthropic' speaks 'anthropic-messages'" in (
        other.stderr.str()
    )


@pytest.mark.slow  # sessions with a baseline: the baseline's life, rarely changed
def test_a_known_failure_is_reported_by_its_reason_not_by_a_traceback(adapters: pytest.Pytester) -> None:
    """An xfail (a baseline entry, an unmet SHOULD) is reported by its reason. pytest's own repr of it formatted
    the harness's traceback, parsing the source of every frame: 0.2 s each, 5 of the Vercel Anthropic example's
    24 s with its 35 known failures."""
    written = run(adapters, BROKEN, *SELECT, "--helix-write-baseline", "--helix-baseline=known.yaml")
    assert written.ret == pytest.ExitCode.OK, output(written)
    adapters.makeconftest(
        """
        import json

        def pytest_runtest_logreport(report):
            if hasattr(report, "wasxfail"):
                with open("xfails.jsonl", "a", encoding="utf-8") as out:
                    out.write(json.dumps([report.wasxfail, str(report.longrepr)]) + "\\n")
        """
    )
    gated = run(adapters, BROKEN, *SELECT, "--helix-baseline=known.yaml")
    assert gated.parseoutcomes().get("xfailed") == 2, output(gated)
    seen = [json.loads(line) for line in (adapters.path / "xfails.jsonl").read_text().splitlines()]
    assert len(seen) == 2
    for reason, longrepr in seen:
        assert longrepr == reason
        assert "known failure" in reason
        assert "def runtest" not in longrepr


@pytest.mark.slow  # sessions with a baseline: the baseline's life, rarely changed
def test_the_default_baseline_is_suggested_relative_to_where_pytest_ran(adapters: pytest.Pytester) -> None:
    written = run(adapters, BROKEN, *SELECT, "--helix-write-baseline")
    assert written.ret == pytest.ExitCode.OK, output(written)
    written.stdout.fnmatch_lines(
        ["baseline written: helix-baseline.yaml (2 known failures)*--helix-baseline=helix-baseline.yaml"]
    )
    (line,) = lines_starting(written, "baseline written: ")
    assert "/" not in line, line


@pytest.mark.slow  # sessions with a baseline: the baseline's life, rarely changed
def test_rewriting_a_baseline_keeps_reasons_and_entries_not_run(adapters: pytest.Pytester) -> None:
    (adapters.path / "known.yaml").write_text(
        yaml.safe_dump(
            {
                "entries": [
                    {"clause": "STOP-01", "scenario": "stop_max_tokens", "reason": "ticket HX-12"},
                    {"clause": "RES-06", "scenario": "tool_call_parallel", "reason": "ticket HX-7"},
                ]
            }
        ),
        encoding="utf-8",
    )
    result = run(adapters, BROKEN, *SELECT, "--helix-baseline=known.yaml", "--helix-write-baseline")
    assert result.ret == pytest.ExitCode.OK, output(result)
    entries = yaml.safe_load((adapters.path / "known.yaml").read_text(encoding="utf-8"))["entries"]
    by_key = {(e["scenario"], e["clause"]): e["reason"] for e in entries}
    assert by_key[("stop_max_tokens", "STOP-01")] == "ticket HX-12"  # the person's reason survives
    assert by_key[("tool_call_parallel", "RES-06")] == "ticket HX-7"  # deselected here: not judged, kept
    assert by_key[("stop_max_tokens", "STOP-02")].startswith("known failure: ")  # newly accepted


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("entries: [{clause: STOP-01, scenario: stop_max_tokens}]", "'reason' is missing or empty"),
        (
            "entries: [{clause: STOP-99, scenario: stop_max_tokens, reason: x}]",
            "'STOP-99' is not a clause id",
        ),
        (
            "entries: [{clause: STOP-01, scenario: stop_max_tokenz, reason: x}]",
            "'stop_max_tokenz' is not a scenario",
        ),
        ("entries: [{clause: STOP-01, scenario: [unclosed", "is not valid YAML"),
    ],
    ids=["no-reason", "unknown-clause", "unknown-scenario", "not-yaml"],
)
def test_a_bad_baseline_is_a_usage_error_naming_the_entry(
    adapters: pytest.Pytester, content: str, message: str
) -> None:
    (adapters.path / "known.yaml").write_text(content, encoding="utf-8")
    result = run(adapters, BROKEN, *SELECT, "--helix-baseline=known.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "known.yaml" in result.stderr.str()
    assert "Traceback" not in output(result)


@pytest.mark.slow  # sessions with a baseline: the baseline's life, rarely changed
def test_an_entry_that_can_never_match_fails_the_gate(adapters: pytest.Pytester) -> None:
    """RES-06 is not judged on text_basic: such an entry would silently baseline nothing, forever."""
    (adapters.path / "known.yaml").write_text(
        "entries: [{clause: RES-06, scenario: text_basic, reason: copied from another adapter}]\n",
        encoding="utf-8",
    )
    result = run(adapters, "--adapter=my_adapter", "-k", "text_basic", "--helix-baseline=known.yaml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    result.stdout.fnmatch_lines(
        ["HARN-05: baseline known.yaml has 1 entry matching no check*text_basic::RES-06*"]
    )


# --- reports, badge, JUnit ----------------------------------------------------------------------------------


def test_reports_in_every_format_from_the_same_data(adapters: pytest.Pytester) -> None:
    result = run(
        adapters,
        BROKEN,
        *SELECT,
        "--helix-report=out/r.json,out/r.md,out/r.html",
        "--helix-badge=out/badge.json",
        "--junitxml=out/junit.xml",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = adapters.path / "out"
    report = _report(out / "r.json")
    assert report["verdict"] == "fail"
    assert report["clauses"]["STOP-01"]["status"] == "failed"  # type: ignore[index]

    markdown = (out / "r.md").read_text(encoding="utf-8")
    assert markdown.startswith("# helix-conformance report: wrong-stop")
    assert "**FAIL: adapter wrong-stop" in markdown
    assert "| STOP Stop reasons | 2 | 0 | 2 |" in markdown
    assert "#### STOP-01 on `stop_max_tokens` — fails the gate" in markdown
    # Causes first (STOP-01 and STOP-02 saw the same wrong value: one cause), the tables folded below.
    assert markdown.index("## 1 cause behind 2 failed checks") < markdown.index("<details>")
    assert "### 1. STOP-01 ×1, STOP-02 ×1 on 2 checks" in markdown
    assert (
        'Reproduce: `pytest --adapter=my_adapter:wrong_stop -k "openai-chat::stop_max_tokens::STOP-01"`'
        in markdown
    )

    html = (out / "r.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    for external in ("<script", "<link", "src=", "url(", "@import"):
        assert external not in html, f"the HTML report must open offline: found {external!r}"
    assert 'id="stop-01--stop_max_tokens"' in html  # the failing matrix cell links to its details
    assert '<td class="failed"' in html

    # CI artifacts other jobs read: the mode a plain open() gives (0644 under the usual umask), not 0600.
    for written in out.iterdir():
        assert stat.S_IMODE(written.stat().st_mode) == 0o666 & ~umask(), written.name

    badge = json.loads((out / "badge.json").read_text(encoding="utf-8"))
    assert badge["schemaVersion"] == 1
    assert badge["color"] == "red"
    assert badge["message"].startswith("failing")

    # Rendering later from the JSON gives the very same documents.
    assert cli(["report", str(out / "r.json"), "-o", str(out / "again.html")]) == 0
    assert cli(["report", str(out / "r.json"), "--format", "md", "-o", str(out / "again.txt")]) == 0
    assert (out / "again.html").read_text(encoding="utf-8") == html
    assert (out / "again.txt").read_text(encoding="utf-8") == markdown
    assert cli(["report", str(out / "r.json"), "--check", "-o", str(out / "x.md")]) == 1

    junit = ET.parse(out / "junit.xml").getroot()
    properties = {
        (case.get("name"), prop.get("name")): prop.get("value")
        for case in junit.iter("testcase")
        for prop in case.iter("property")
    }
    name = "test_conformance[openai-chat::stop_max_tokens::STOP-01]"
    assert properties[(name, "clause")] == "STOP-01"
    assert properties[(name, "scenario")] == "stop_max_tokens"
    assert properties[(name, "level")] == "MUST"


def test_a_passing_run_gets_a_green_badge(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=mock", "-k", "text_basic", "--helix-badge=badge.json")
    assert result.ret == pytest.ExitCode.OK, output(result)
    badge = json.loads((pytester.path / "badge.json").read_text(encoding="utf-8"))
    assert badge["color"] == "brightgreen"
    assert badge["message"].endswith("clauses")


def test_a_report_path_without_a_known_extension_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=mock", "--helix-report=report.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--helix-report=report.txt: cannot tell the format of 'report.txt'" in result.stderr.str()


# --- xdist -------------------------------------------------------------------------------------------------


@pytest.mark.slow  # a serial and an xdist session: an integration that rarely changes
def test_xdist_gives_one_merged_report_and_the_serial_verdict(adapters: pytest.Pytester) -> None:
    serial = run(adapters, BROKEN, *SELECT, "--helix-report=serial.json")
    parallel = run(adapters, BROKEN, *SELECT, "-p", "xdist", "-n", "2", "--helix-report=parallel.json")
    assert serial.ret == parallel.ret == pytest.ExitCode.TESTS_FAILED
    assert_no_crash(parallel)
    one, two = _report(adapters.path / "serial.json"), _report(adapters.path / "parallel.json")
    assert _outcomes(one) == _outcomes(two)
    assert (one["verdict"], one["exit_status"], one["clauses"]) == (
        two["verdict"],
        two["exit_status"],
        two["clauses"],
    )
    assert len(lines_starting(parallel, "VERDICT: FAIL")) == 1  # one summary, from the controller
    # Each message is the item's own text: no worker line ("[gw0] linux -- Python 3.x /path/python") first.
    assert _messages(one) == _messages(two)
    assert any(message.startswith("STOP-01 (MUST, ") for message in _messages(two).values())

    accepted = run(adapters, BROKEN, *SELECT, "-p", "xdist", "-n", "2", "--helix-write-baseline")
    assert accepted.ret == pytest.ExitCode.OK, output(accepted)
    entries = yaml.safe_load((adapters.path / "helix-baseline.yaml").read_text(encoding="utf-8"))["entries"]
    assert {(e["scenario"], e["clause"]) for e in entries} == FAILING


# --- proof the gate ran -------------------------------------------------------------------------------------


def test_an_adapter_without_cassettes_for_its_profile_cannot_pass(adapters: pytest.Pytester) -> None:
    adapters.makepyfile(
        no_cassettes="""
        import dataclasses
        from my_adapter import spec as base
        spec = dataclasses.replace(base, name="no-cassettes", cassette_dir="recordings")
        """
    )
    (adapters.path / "recordings").mkdir()
    result = run(adapters, "--adapter=no_cassettes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "HARN-05: adapter 'no-cassettes' has no cassettes for wire profile 'openai-chat'"
        in result.stderr.str()
    )
    assert "Traceback" not in output(result)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_files_are_written_with_the_mode_the_umask_gives(tmp_path: Path, mask: int, mode: int) -> None:
    before = os.umask(mask)
    try:
        write_atomic(tmp_path / "r.md", "# report\n")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "r.md").stat().st_mode) == mode


# --- stale baseline entries and SHOULD-level checks, as every output says them --------------------------------


def _outcome(scenario: str, clause: str, status: str, level: str = "MUST") -> ItemOutcome:
    return ItemOutcome(
        f"helix-conformance::test_conformance[openai-chat::{scenario}::{clause}]",
        clause,
        scenario,
        "openai-chat",
        level,
        status,  # type: ignore[arg-type]
        f"{clause} on {scenario}: {status}",
        0.0,
    )


def test_stale_entries_alone_are_not_broken_clauses_in_any_output(tmp_path: Path) -> None:
    from helix_conformance.adapters import resolve_adapter
    from helix_conformance.baseline import Baseline
    from helix_conformance.reporting.badge import render_badge
    from helix_conformance.reporting.html import render_html
    from helix_conformance.reporting.json_report import build_report
    from helix_conformance.reporting.markdown import render_markdown
    from helix_conformance.reporting.summary import render_summary

    log = OutcomeLog()
    for outcome in (
        _outcome("stop_max_tokens", "STOP-01", "stale"),
        _outcome("stop_max_tokens", "STOP-02", "stale"),
        _outcome("text_basic", "STOP-01", "passed"),
        _outcome("text_basic", "RES-01", "passed"),
    ):
        log.record(outcome)
    summary = "\n".join(render_summary(log, strict=False, adapter="mypkg"))
    assert (
        "VERDICT: FAIL — 2 stale baseline entries (the checks pass now: delete them from the baseline); every "
        "executed MUST clause holds"
    ) in summary
    assert "broken" not in summary
    assert "cause" not in summary
    baseline = Baseline(tmp_path / "known.yaml")
    data = build_report(log, resolve_adapter("openai"), {}, strict=False, exitstatus=1, baseline=baseline)
    badge = json.loads(render_badge(data))
    assert (badge["message"], badge["color"]) == ("3/3 clauses · 2 stale baseline entries", "red")
    markdown = render_markdown(data)
    assert "## 2 stale baseline entries" in markdown
    assert "Failing clauses" not in markdown
    assert "fails the gate" not in markdown.split("<details>")[0]
    html = render_html(data)
    assert '<header class="banner stale"' in html
    assert "Broken clause" not in html


def test_a_must_clause_judged_as_should_is_named_with_its_scenario() -> None:
    from helix_conformance.reporting.summary import render_summary

    log = OutcomeLog()
    log.record(_outcome("stop_refusal", "STOP-01", "should_failed", level="SHOULD"))
    log.record(_outcome("text_basic", "STOP-01", "passed"))
    log.record(_outcome("text_basic", "HARN-04", "should_failed", level="SHOULD"))
    (line,) = [
        line for line in render_summary(log, strict=False, adapter="m") if line.startswith("SHOULD not met")
    ]
    assert line == (
        "SHOULD not met (not failing the gate): STOP-01 on stop_refusal (a MUST clause, judged as SHOULD there), "
        "HARN-04"
    )
