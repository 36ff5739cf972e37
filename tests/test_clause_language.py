"""Failures speak the adapter's language: the clause catalogue's TypeScript wording names nothing of Python, a
``node:``/``cmd:`` adapter's failures read it (clause, hint, message) with evidence untouched, and ``explain
--language ts`` prints it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from plugin_runs import HELIX_ENV

from helix_conformance.adapters import language_of
from helix_conformance.checks.registry import Failure
from helix_conformance.clauses import CLAUSES, get_clause
from helix_conformance.clauses_typescript import TYPESCRIPT
from helix_conformance.cli import main
from helix_conformance.language import Said, parse_language, spoken, typescript_names
from helix_conformance.reporting.format import format_failure

PYTHON_ONLY = re.compile(
    r"should_stop|stop_reason|on_text_delta|on_thinking|on_tool_call|on_error|generate_step|sub_agent_calls|"
    r"max_retries|provider_options|max_output_tokens|stop_sequences|abort_signal|is_complete|json\.loads|"
    r"JSONDecodeError|except\b|asyncio|CancelledError|BaseException|create_task|coroutine|status_code|"
    r"\.body\[|\bdict\b|\bNone\b|\bTrue\b|\bFalse\b|aread|\.read\(\)|httpx|AdapterSpec|retryable=|"
    r"\braise[sd]?\b|sys\.exit|os\._exit|model_json_schema|extra_body|APIStatusError|`str`|str\(dict\)"
)
"""Names and idioms of Python, which a TypeScript author's text must not use (wire names such as OpenAI's
``tool_call_id`` or ``max_completion_tokens`` are the provider's, the same in both languages)."""


@pytest.mark.parametrize("clause_id", list(CLAUSES))
def test_the_typescript_wording_of_every_clause_names_nothing_of_python(clause_id: str) -> None:
    clause = get_clause(clause_id, "typescript")
    for field in ("text", "why", "common_mistakes"):
        text = getattr(clause, field)
        assert text.strip(), (clause_id, field)
        found = PYTHON_ONLY.findall(text)
        assert not found, f"{clause_id}.{field} names Python in TypeScript: {found}\n{text}"


def test_typescript_wording_only_overrides_known_fields_of_known_clauses() -> None:
    assert set(TYPESCRIPT) <= set(CLAUSES)
    for clause_id, wording in TYPESCRIPT.items():
        assert wording, clause_id
        assert set(wording) <= {"text", "why", "common_mistakes"}, clause_id
        for field, text in wording.items():
            assert text != getattr(CLAUSES[clause_id], field), f"{clause_id}.{field} repeats the Python text"
            assert "\n" not in text, clause_id
    assert get_clause("RES-06") is CLAUSES["RES-06"]
    assert get_clause("ERR-03", "typescript").level == CLAUSES["ERR-03"].level


def test_the_js_sdks_idioms_are_the_ones_the_issue_names() -> None:
    err_03 = get_clause("ERR-03", "typescript").common_mistakes
    assert "`err.error`" in err_03  # openai-node keeps the body there
    assert "`status` is undefined" in err_03  # @anthropic-ai/sdk's stream error
    assert "json.loads" in CLAUSES["RES-05"].common_mistakes
    assert "JSON.parse" in get_clause("RES-05", "typescript").common_mistakes
    assert "onTextDelta" in get_clause("STR-02", "typescript").text


def test_the_language_of_an_adapter_is_its_name_s() -> None:
    assert language_of("node:adapter.ts") == "typescript"
    assert language_of("cmd:go run ./driver") == "typescript"
    assert language_of("openai") == "python"
    assert language_of("mypkg.adapter:spec") == "python"
    assert parse_language("TS") == "typescript"
    with pytest.raises(ValueError, match="use one of python, py, typescript, ts"):
        parse_language("rust")


def test_harness_sentences_get_the_seed_s_typescript_names() -> None:
    assert typescript_names("an ErrorStepResult must have should_stop=True and stop_reason='error'") == (
        "an ErrorStepResult must have shouldStop: true and stopReason: 'error'"
    )
    assert typescript_names("exactly one on_thinking(_, True) after the partial calls") == (
        "exactly one onThinking(_, true) after the partial calls"
    )
    assert typescript_names("callbacks were invoked after generate_step returned") == (
        "callbacks were invoked after generateStep returned"
    )
    assert (
        typescript_names("a 'tool_calls' result with parallel_tool_calls")
        == (
            "a 'tool_calls' result with parallel_tool_calls"  # the result type and the capability keep their names
        )
    )
    said = Said("python words", "typescript words")
    assert (spoken(said, "python"), spoken(said, "typescript")) == ("python words", "typescript words")
    assert spoken("on_error was called", "python") == "on_error was called"


def test_a_failure_shows_the_clause_in_the_language_of_the_adapter_it_reproduces() -> None:
    failure = Failure("STR-02", "text_basic", "openai-chat", "buffered", actual="on_text_delta('x')")
    as_ts = format_failure(failure, "MUST", "node:adapter.ts")
    assert "the first `onTextDelta` happens" in as_ts
    assert "actual:   on_text_delta('x')" in as_ts  # evidence is shown as it was
    assert "the first `on_text_delta` happens" in format_failure(failure, "MUST", "openai")


def test_explain_speaks_typescript_with_language_ts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "res-02", "--language", "ts"]) == 0
    out = capsys.readouterr().out
    assert "`shouldStop: true`" in out
    assert "should_stop" not in out
    assert "Run it: pytest --adapter=node:adapter.ts -k RES-02" in out
    assert main(["explain", "RES-02"]) == 0
    assert "`should_stop=True`" in capsys.readouterr().out
    assert main(["explain", "RES-02", "--language", "cobol"]) == 2
    assert "--language: unknown language 'cobol'" in capsys.readouterr().err


def test_a_driver_adapter_s_failure_speaks_typescript_end_to_end(tmp_path: Path) -> None:
    """Through the Python fake driver (no Node needed): a buffering adapter's STR-02 failure, as pytest prints it,
    has the TypeScript clause and hint, and its message uses the seed's names."""
    import os
    import subprocess

    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k not in HELIX_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    fake = Path(__file__).with_name("fake_driver.py")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--assert=plain", "-q",
         f"--adapter=cmd:{sys.executable} {fake} --adapter openai#buffers", "-k", "text_basic and STR-02"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "the first onTextDelta came only after all the text had arrived" in done.stdout
    assert "`await response.text()`" in done.stdout  # the hint, TypeScript's
    assert "response.aread()" not in done.stdout
