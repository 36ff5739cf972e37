"""Every piece of evidence a check collects reaches every report: the terminal, JUnit, JSON, Markdown, HTML
and ``run_conformance``. Many checks give only ``actual`` (the breaches, the pending tasks, what came back);
it used to be dropped unless ``expected`` came with it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from plugin_runs import assert_no_crash, output, run

from helix_conformance.checks.registry import Failure
from helix_conformance.cli import main as cli
from helix_conformance.gate import ItemVerdict
from helix_conformance.reporting.format import format_failure, verdict_text
from helix_conformance.testing import run_conformance

# On http_500 it answers with text instead of the error (ERR-01, MUST: `actual` shows what came back)
# and leaves a named task pending (HARN-04, SHOULD: its evidence is the list of pending tasks).
EVIDENCE_ADAPTER = """
import asyncio

from helix_conformance.contract import AdapterSpec, TextStepResult
from reference_adapters.openai_chat import OpenAIChatAdapter


class Evidence(OpenAIChatAdapter):
    async def generate_step(self, input):
        await super().generate_step(input)
        asyncio.get_running_loop().create_task(asyncio.sleep(3600), name="evidence-task-7f3a")
        return TextStepResult(content="evidence-content-5e1c", should_stop=True, stop_reason="end_turn")


spec = AdapterSpec(
    name="evidence",
    factory=lambda ctx: Evidence(api_key=ctx.api_key, base_url=ctx.base_url),
    wire_profile="openai-chat",
    model="gpt-4o-mini",
)
"""
CONTENT, TASK = "evidence-content-5e1c", "evidence-task-7f3a"
ERR_01 = "test_conformance[openai-chat::http_500::ERR-01]"
HARN_04 = "test_conformance[openai-chat::http_500::HARN-04]"


def _only_actual() -> Failure:
    return Failure(
        "TOOL-03", "tool_schemas", "openai-chat", "the tools break the schema", actual=["$ref in x"]
    )


def test_a_failure_with_only_actual_keeps_it_in_its_data_and_its_text() -> None:
    data = _only_actual().as_dict()
    assert data["actual"] == "['$ref in x']"
    assert "expected" not in data
    text = format_failure(_only_actual(), "MUST", "openai")
    assert "  actual:   ['$ref in x']" in text
    assert "expected:" not in text


def test_a_should_or_baselined_failure_keeps_its_evidence_under_the_gates_reason() -> None:
    failure = Failure(
        "HARN-04",
        "text_basic",
        "openai-chat",
        "tasks pending",
        actual=["leak"],
        details="trace",
        replay="--cuts 3",
    )
    text = verdict_text(ItemVerdict("xfail", "SHOULD HARN-04 not met: tasks pending", failure), "SHOULD", "a")
    lines = text.splitlines()
    assert lines[0] == "SHOULD HARN-04 not met: tasks pending"
    assert lines[1].startswith("HARN-04 (SHOULD, ")
    for piece in (
        "  actual:   ['leak']",
        "  details:\n    trace",
        "helix-conformance replay --adapter=a text_basic --cuts 3",
    ):
        assert piece in text


def test_actual_alone_reaches_the_terminal_junit_json_markdown_and_html(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(evidence_adapter=EVIDENCE_ADAPTER)
    result = run(
        pytester,
        "--adapter=evidence_adapter",
        "-k",
        "http_500 and (ERR-01 or HARN-04)",
        "-rfx",
        "--helix-report=out/r.json,out/r.md,out/r.html",
        "--junitxml=out/junit.xml",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    outcomes = result.parseoutcomes()
    assert (outcomes.get("failed"), outcomes.get("xfailed")) == (1, 1)
    terminal = result.stdout.str()
    assert f"actual:   type='text', content='{CONTENT}'" in terminal  # the failure section
    assert f"actual:   [\"task '{TASK}'" in terminal  # the xfail reason (-rx)

    out = pytester.path / "out"
    messages = {
        r["id"].split("::", 1)[1]: r["message"] for r in json.loads((out / "r.json").read_text())["results"]
    }
    assert f"actual:   type='text', content='{CONTENT}'" in messages[ERR_01]
    assert f"actual:   [\"task '{TASK}'" in messages[HARN_04]
    assert messages[HARN_04].startswith("SHOULD HARN-04 not met: ")
    assert f"actual:   [\"task '{TASK}'" in (out / "r.md").read_text(encoding="utf-8")
    assert f"actual:   [&quot;task &#x27;{TASK}" in (out / "r.html").read_text(encoding="utf-8")
    for page in ("r.md", "r.html"):
        assert CONTENT in (out / page).read_text(encoding="utf-8"), page

    cases = {case.get("name"): case for case in ET.parse(out / "junit.xml").getroot().iter("testcase")}
    failure = cases[ERR_01].find("failure")
    assert failure is not None
    assert CONTENT in (failure.text or "")
    skipped = cases[HARN_04].find("skipped")
    assert skipped is not None
    assert f"actual:   [\"task '{TASK}'" in skipped.get("message", "")

    # Rendering the saved JSON again gives the same documents, evidence included.
    for page in ("r.md", "r.html"):
        assert cli(["report", str(out / "r.json"), "-o", str(out / f"again-{page}")]) == 0
        assert (out / f"again-{page}").read_text(encoding="utf-8") == (out / page).read_text(encoding="utf-8")


def test_run_conformance_keeps_whole_messages_details_and_the_replay_command() -> None:
    from broken_adapters.naive import ADAPTERS

    spec = next(a.spec for a in ADAPTERS if a.name == "splits_sse_on_chunks")
    report = run_conformance(spec, scenarios=["text_basic"], clauses=["STR-10", "ERR-04"], examples=2)
    assert report["passed"] is False
    messages = {r["clause"]: r["message"] for r in report["results"]}
    str_10, err_04 = messages["STR-10"], messages["ERR-04"]
    assert str_10.startswith("STR-10 (MUST, ")
    assert "\n  expected: " in str_10
    assert "\n  actual:   " in str_10
    assert f"\n  replay:    helix-conformance replay --adapter={spec.name} text_basic --cuts " in str_10
    assert "\n  details:\n    fault: " in err_04
    assert "\n  hint: " in err_04
    assert f'\n  reproduce: pytest --adapter={spec.name} -k "openai-chat::text_basic::ERR-04"' in err_04


def test_a_report_keeps_a_multi_line_message_indented_under_its_clause() -> None:
    failure = Failure("RES-06", "tool_call", "openai-chat", "first line\nsecond line", actual=1)
    text = format_failure(failure, "MUST", "openai")
    assert "\n  first line\n  second line\n  actual:   1\n" in text


def test_saved_reports_render_unchanged_from_the_file(tmp_path: Path) -> None:
    """The JSON keeps the whole text, so the renderers need nothing else: same documents from the file."""
    from broken_adapters.naive import ADAPTERS

    from helix_conformance.reporting.writers import renderer

    spec = next(a.spec for a in ADAPTERS if a.name == "splits_sse_on_chunks")
    report = run_conformance(spec, scenarios=["text_basic"], clauses=["STR-10"], examples=2)
    path = tmp_path / "r.json"
    path.write_text(renderer("json")(report), encoding="utf-8")
    for fmt in ("md", "html"):
        assert cli(["report", str(path), "--format", fmt, "-o", str(tmp_path / f"r.{fmt}")]) == 0
        assert (tmp_path / f"r.{fmt}").read_text(encoding="utf-8") == renderer(fmt)(report)
        assert "--cuts every-byte:" in renderer(fmt)(report)
