"""``--helix-quick``: the edit loop's check (helix_conformance/quick.py). It judges every clause at least once on
a tenth of the runs, still catches a broken adapter on its clause, and never reads as the gate: not in its
summary, its reports, its JUnit XML, its badge, nor to ``helix-conformance report --check``."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from plugin_runs import adapter_module, output, run

from helix_conformance.checks.draws import representative
from helix_conformance.cli import main
from helix_conformance.quick import QUICK_NOTE, QUICK_PROPERTY, quick_plan
from helix_conformance.suite import plan_suite, profile_for
from reference_adapters.anthropic import spec as anthropic_spec
from reference_adapters.openai_chat import spec as openai_spec

RUNS = re.compile(r"skipped over (\d+) runs")


# --- the selection, on the plan alone --------------------------------------------------------------------


@pytest.mark.parametrize("spec", [openai_spec, anthropic_spec], ids=lambda s: s.name)
def test_every_clause_is_judged_at_least_once_and_the_choice_is_deterministic(spec: object) -> None:
    full = plan_suite(spec)  # type: ignore[arg-type]
    profile = profile_for(spec)  # type: ignore[arg-type]
    quick = quick_plan(full, profile)
    assert quick == quick_plan(plan_suite(spec), profile)  # type: ignore[arg-type]
    assert {p.clause for p in quick} == {p.clause for p in full}
    runnable = {p.clause for p in full if p.skip_reason is None}
    assert runnable <= {p.clause for p in quick if p.skip_reason is None}
    assert [p.test_id for p in quick] == [p.test_id for p in full if p in quick]  # the plan's order
    assert len(quick) < len(full) / 2
    beyond_main = [p for p in quick if p.check.ahead is not None]
    assert len(beyond_main) == len({p.clause for p in beyond_main})  # one scenario each
    shapes = {p.scenario.id for p in full if representative(p.scenario, profile) and not p.scenario.generated}
    assert shapes <= {p.scenario.id for p in quick}  # every delivery shape is still run


# --- the plugin ---------------------------------------------------------------------------------------------


@pytest.mark.slow  # a quick session and a full one side by side
def test_quick_runs_fewer_runs_than_scenarios_and_says_it_is_not_a_gate(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    report, junit, badge = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "badge.json"
    result = run(
        pytester,
        "--adapter=openai",
        "--helix-quick",
        f"--helix-report={report}",
        f"--junitxml={junit}",
        f"--helix-badge={badge}",
    )
    assert result.ret == pytest.ExitCode.OK, output(result)
    text = output(result)
    scope = re.search(rf"{QUICK_NOTE}: (\d+) of (\d+) checks, on (\d+) of (\d+) scenarios", text)
    assert scope, text
    checks, all_checks, _, scenarios = map(int, scope.groups())
    assert checks < all_checks / 2
    runs = RUNS.search(text)
    assert runs, text
    # A full run makes at least one run per scenario (1164 runs on openai-chat at this writing): a quick one
    # has fewer runs than the full plan has scenarios.
    assert int(runs[1]) < scenarios
    last = result.outlines[-2]  # then pytest's own "N passed in" line
    assert last.startswith(f"{QUICK_NOTE}: every executed MUST clause holds"), last
    assert "VERDICT" not in text
    assert "the gate ran" not in text

    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["selection"]["quick"] is True
    assert data["settings"]["helix_quick"] == {"value": True, "source": "cli"}
    cases = ET.parse(junit).getroot().iter("testcase")
    assert all(
        any(p.get("name") == QUICK_PROPERTY and p.get("value") == QUICK_NOTE for p in case.iter("property"))
        for case in cases
    )
    shown = json.loads(badge.read_text(encoding="utf-8"))
    assert shown["message"].startswith("quick check, not a gate")
    assert shown["color"] == "lightgrey"


def test_report_check_refuses_a_quick_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = _quick_report(tmp_path)
    assert main(["report", str(report), "--check", "-o", str(tmp_path / "out.md")]) == 1
    assert "written by a run with --helix-quick" in capsys.readouterr().err
    assert (tmp_path / "out.md").read_text(encoding="utf-8").count(QUICK_NOTE) >= 1
    report.write_text(report.read_text(encoding="utf-8").replace('"quick": true', '"quick": false'))
    assert main(["report", str(report), "--check", "-o", str(tmp_path / "out.md")]) == 0


def _quick_report(tmp_path: Path) -> Path:
    """A passing report as a quick run writes it (a small run_conformance report, its selection marked)."""
    from helix_conformance.testing import run_conformance

    data = run_conformance(openai_spec, scenarios=("text_basic",), timeout=5.0, examples=1)
    data["selection"]["quick"] = True
    path = tmp_path / "quick.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_quick_refuses_to_write_a_baseline(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=openai", "--helix-quick", "--helix-write-baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "a quick check judges part of the suite" in output(result)


BROKEN = """
from broken_adapters import BROKEN_ADAPTERS

_BY_NAME = {broken.name: broken.spec for broken in BROKEN_ADAPTERS}
decoder_per_chunk = _BY_NAME["decoder_per_chunk"]
partial_text_on_dropped_stream = _BY_NAME["partial_text_on_dropped_stream"]
length_mapped_to_end_turn = _BY_NAME["length_mapped_to_end_turn"]
"""


@pytest.mark.slow  # a quick session per broken adapter; the full gate catches them in the fast tier
@pytest.mark.parametrize(
    ("adapter", "clause"),
    [
        ("decoder_per_chunk", "STR-10"),  # a UTF-8 decoder per chunk: multi-byte text split between chunks
        ("partial_text_on_dropped_stream", "ERR-04"),  # a dropped stream's partial text returned as a result
        ("length_mapped_to_end_turn", "STOP-01"),  # a truncated answer reported as end_turn
    ],
)
def test_a_broken_adapter_is_still_caught_on_its_clause(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, adapter: str, clause: str
) -> None:
    adapter_module(pytester, monkeypatch, "quick_broken", BROKEN)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent), prepend=":")
    result = run(pytester, f"--adapter=quick_broken:{adapter}", "--helix-quick")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    failed = [line for line in result.outlines if line.startswith("FAILED ")]
    assert any(f"::{clause}]" in line for line in failed), failed
    verdict = [line for line in result.outlines if line.startswith(f"{QUICK_NOTE}: FAIL")]
    assert verdict, result.outlines[-3:]
    assert clause in verdict[0]


def test_help_says_quick_is_not_a_gate(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    text = " ".join(output(result).split())
    assert "--helix-quick" in text
    assert "not a gate" in text.split("--helix-quick", 1)[1][:400]
    assert "HELIX_QUICK" in text
