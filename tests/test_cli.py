"""``helix-conformance list|explain|replay`` as an adapter author uses them, and ``run_conformance``."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import pytest

from helix_conformance.clauses import CLAUSES
from helix_conformance.cli import main
from helix_conformance.scenarios import scenarios_for
from helix_conformance.testing import run_conformance
from reference_adapters.openai_chat import spec as openai_spec

RECORDED = (
    Path(__file__).resolve().parents[1] / "cassettes" / "recorded" / "groq" / "groq-tool-call.chunks.yaml"
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_adapters_profiles_scenarios_clauses(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", "adapters")
    assert code == 0
    assert "openai           built-in     openai-chat" in out
    assert "reference_adapters.anthropic:spec" in out
    code, out, _ = _run(capsys, "list", "profiles")
    row = next(line.split() for line in out.splitlines() if line.startswith("openai-chat "))
    assert row[:2] == ["openai-chat", str(len(scenarios_for("openai-chat")))]
    code, out, _ = _run(capsys, "list", "scenarios", "--profile", "gemini")
    assert f"{len(scenarios_for('gemini'))} scenarios." in out
    assert "stop_prompt_blocked  [gemini]" in out
    code, out, _ = _run(capsys, "list", "clauses", "--area", "str")
    assert out.count("\nSTR-") + out.startswith("STR-") == sum(c.area == "STR" for c in CLAUSES.values())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("list", "scenarios", "--profile", "bedrock"), "unknown wire profile 'bedrock'"),
        (("list", "clauses", "--area", "XYZ"), "unknown area 'XYZ'"),
        (("explain", "RES-6"), "did you mean RES-06"),
        (("replay", "--adapter", "nope", "text_basic"), "--adapter=nope: unknown adapter"),
        (("replay", "--adapter", "openai", "no_such_scenario"), "unknown scenario 'no_such_scenario'"),
        (
            ("replay", "--adapter", "openai", "stop_prompt_blocked"),
            "does not exist for wire profile 'openai-chat'",
        ),
        (("replay", "--adapter", "openai"), "give either a scenario id or --cassette PATH"),
        (("replay", "--adapter", "openai", "--cassette", "missing.yaml"), "missing.yaml"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_explain_says_why_what_goes_wrong_and_where_it_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "explain", "res-06")
    assert code == 0
    assert out.startswith("RES-06 — Results — MUST (fails the gate), source: seed")
    assert "Why it exists:" in out
    assert "What adapters usually get wrong:" in out
    assert re.search(r"^  openai-chat: .*\btool_call_parallel\b", out, re.MULTILINE), out
    assert "pytest --adapter=NAME -k RES-06" in out
    code, out, _ = _run(capsys, "explain", "STOP-03")
    assert "no check in this version" in out


def test_replay_prints_the_trace_the_result_and_the_clauses(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "replay", "--adapter", "openai", "text_basic")
    assert code == 0
    mode, scenario = out.splitlines()[:2]
    assert mode.startswith(
        "adapter openai: isolated: the adapter runs in a worker process of its own (python "
    )
    assert scenario.startswith("scenario text_basic [openai-chat] through adapter 'openai'")
    assert "request          POST /v1/chat/completions" in out
    assert "callback         on_text_delta(" in out
    assert "result: TextStepResult {" in out
    assert "clauses: " in out
    assert " ✗ " not in out


@pytest.mark.parametrize(
    ("adapter", "secret_header"), [("openai", "authorization"), ("anthropic", "x-api-key")]
)
def test_replay_shows_each_request_with_headers_and_body_and_each_chunks_bytes(
    capsys: pytest.CaptureFixture[str], adapter: str, secret_header: str
) -> None:
    from helix_conformance.replay.runner import REPLAY_API_KEY

    code, out, _ = _run(capsys, "replay", "--adapter", adapter, "text_basic", "--no-judge")
    assert code == 0
    assert f"\n          {secret_header}: <scrubbed>\n" in out  # the recorder's scrub list, not a copy
    assert REPLAY_API_KEY not in out
    assert "          content-type: application/json\n" in out
    assert "        body (" in out
    assert '"content": "Say hello."' in out or '"text": "Say hello."' in out
    assert re.search(r"chunk            interaction 0 chunk 0: b'(data|event): ", out)
    assert re.search(r"chunk \d+ \(last\): b'", out)


def test_replay_of_a_broken_adapter_names_the_clause_and_exits_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "flat_adapter.py").write_text(
        "import dataclasses\n"
        "from helix_conformance.contract import TextStepResult\n"
        "from reference_adapters.openai_chat import OpenAIChatAdapter, spec as base\n"
        "class Flat(OpenAIChatAdapter):\n"
        "    async def generate_step(self, input):\n"
        "        result = await super().generate_step(input)\n"
        "        if isinstance(result, TextStepResult):\n"
        "            result = result.model_copy(update={'stop_reason': 'end_turn'})\n"
        "        return result\n"
        "spec = dataclasses.replace(base, name='flat', factory=lambda ctx: Flat(api_key=ctx.api_key, base_url=ctx.base_url))\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = _run(capsys, "replay", "--adapter", "flat_adapter", "stop_max_tokens")
    assert code == 1
    assert "✗ STOP-01 (MUST, failed)" in out
    assert 'pytest --adapter=flat_adapter -k "openai-chat::stop_max_tokens::STOP-01"' in out


def test_replay_of_a_cassette_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "replay", "--adapter", "openai", "--cassette", str(RECORDED))
    assert code == 0, out
    assert out.splitlines()[1].startswith("interaction 0: HTTP 200")
    assert '"type": "tool_calls"' in out


def test_run_conformance_returns_the_plugins_report() -> None:
    report = run_conformance(openai_spec, scenarios=["text_basic", "stop_max_tokens"], examples=2)
    assert report["schema_version"] == 3
    assert report["passed"] is True
    assert report["verdict"] == "pass"
    assert report["clauses"]["STOP-01"]["status"] == "passed"
    row = next(r for r in report["results"] if (r["scenario"], r["clause"]) == ("stop_max_tokens", "STOP-01"))
    assert row["reproduce"] == 'pytest --adapter=openai -k "openai-chat::stop_max_tokens::STOP-01"'
    # The gate's session rules hold here too: declared capabilities unexercised by a partial run are fine,
    # but a run that checked nothing fails.
    nothing = run_conformance(openai_spec, scenarios=[])
    assert nothing["passed"] is False
    assert nothing["gate_errors"][0].startswith("HARN-05: no conformance clause was executed")


def test_run_conformance_refuses_a_spec_without_cassettes(tmp_path: Path) -> None:
    spec = dataclasses.replace(openai_spec, cassette_dir=tmp_path)
    with pytest.raises(ValueError, match="HARN-05: adapter 'openai' has no cassettes for wire profile"):
        run_conformance(spec)


def test_a_property_failure_prints_a_replay_command_that_reproduces_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from helix_conformance.checks.context import HarnessSettings
    from helix_conformance.reporting.format import format_failure
    from helix_conformance.suite import SuiteRunner, plan_suite

    (tmp_path / "sse_splitter.py").write_text(
        "from broken_adapters.naive import ADAPTERS\n"
        "spec = next(a.spec for a in ADAPTERS if a.name == 'splits_sse_on_chunks')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from sse_splitter import spec  # type: ignore[import-not-found]

    planned = [p for p in plan_suite(spec) if p.test_id == "openai-chat::text_basic::STR-10"]
    outcome = SuiteRunner(spec, HarnessSettings()).run(planned[0])
    assert outcome.failure is not None
    assert outcome.failure.replay.startswith("--cuts ")
    text = format_failure(outcome.failure, "MUST", "sse_splitter")
    line = next(line for line in text.splitlines() if line.strip().startswith("replay:"))
    command = line.split("helix-conformance ", 1)[1].split()
    code, out, _ = _run(capsys, *command)
    assert code == 1
    assert "DIFFERENT from the default delivery (STR-10 fails)" in out
    code, out, _ = _run(capsys, "replay", "--adapter", "openai", "text_basic", *command[3:])
    assert code == 0, "the reference adapter gives the same result under the same cuts"


def test_replay_plans_are_validated(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in (
        ["--cuts", "1,x"],
        ["--flip", "3:4"],
        ["--truncate-at", "9", "--flip", "3:300"],
        ["--cuts", "1", "--truncate-at", "2"],
    ):
        code, _, err = _run(capsys, "replay", "--adapter", "openai", "text_basic", *bad)
        assert code == 2, bad
        assert "Traceback" not in err


def test_an_nt_02_failure_prints_a_replay_command_that_reproduces_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from broken_adapters import BROKEN_ADAPTERS

    from helix_conformance.checks.context import HarnessSettings
    from helix_conformance.cli import replay
    from helix_conformance.suite import SuiteRunner, plan_suite

    broken = next(b for b in BROKEN_ADAPTERS if b.caught_by == "NT-02")
    scenario = broken.scenarios[0]
    planned = [p for p in plan_suite(broken.spec) if p.test_id.endswith(f"::{scenario}::NT-02")]
    failure = SuiteRunner(broken.spec, HarnessSettings()).run(planned[0]).failure
    assert failure is not None
    assert failure.replay.startswith("--truncate-at ")
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    args = parser.parse_args(["--adapter", "openai", scenario, *failure.replay.split()])
    code = replay._replay_scenario(
        broken.spec, "broken", scenario, 10.0, judge=False, plan=replay._plan(args)
    )
    assert code == 1
    assert "no valid StepResult (NT-02 fails)" in capsys.readouterr().out
