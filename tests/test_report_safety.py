"""Reports are safe to publish: adapter text cannot leak a provider key, drive the reader's terminal, or break
out of its place in the Markdown (PR comments, ``$GITHUB_STEP_SUMMARY``) and HTML reports; the header masks a
password in a URL."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from plugin_runs import assert_no_crash, output, run

from helix_conformance.adapters import ResolvedAdapter
from helix_conformance.reporting import safety
from helix_conformance.reporting.html import render_html
from helix_conformance.reporting.json_report import build_report
from helix_conformance.reporting.markdown import render_markdown
from helix_conformance.reporting.outcomes import ItemOutcome, OutcomeLog
from helix_conformance.reporting.safety import neutralise, redact, shown_setting
from reference_adapters.openai_chat import spec as openai_spec

OPENAI_KEY = "sk-proj-report-leak-0123456789abcdef"
OWN_KEY = "acme-secret-value-987654321"
HOSTILE = "\x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x9b31m ``` </pre><img src=x onerror=alert(1)> [link](https://evil.example)"
"""Clears the screen, forges a hyperlink, a C1 CSI, closes a fence, closes the <pre>, injects HTML and a link."""

# Reads the keys when imported (before any replay could hide them) and echoes them, with hostile text, in the
# message of its errors (with the wrong code: ERR-01 shows it), as its text (not what it streamed: STR-01) and
# as the name of a task it leaves pending (HARN-04, SHOULD: the name is in the failure's own message).
ECHO_ADAPTER = f"""
import asyncio
import os

from helix_conformance.contract import AdapterSpec, ErrorStepResult, HelixError, TextStepResult
from reference_adapters.openai_chat import OpenAIChatAdapter

KEYS = " ".join(os.environ.get(name, "") for name in ("OPENAI_API_KEY", "ACME_KEY"))
HOSTILE = {HOSTILE!r}


class Echo(OpenAIChatAdapter):
    async def generate_step(self, input):
        result = await super().generate_step(input)
        text = f"keys {{KEYS}} {{HOSTILE}}"
        asyncio.get_running_loop().create_task(asyncio.sleep(3600), name=text)
        if isinstance(result, ErrorStepResult):
            return ErrorStepResult(error=HelixError(text, code="provider_overloaded", retryable=True))
        if isinstance(result, TextStepResult):
            return result.model_copy(update={{"content": text}})
        return result


spec = AdapterSpec(
    name="echo [x](https://evil.example) <b>bold</b> `tick` #",
    factory=lambda ctx: Echo(api_key=ctx.api_key, base_url=ctx.base_url),
    wire_profile="openai-chat",
    model="gpt-4o-mini",
    api_key_env="ACME_KEY",
)
"""


# --- the one function adapter text goes through --------------------------------------------------------------


def test_control_characters_are_shown_as_escapes_but_newline_and_tab_are_kept() -> None:
    assert (
        neutralise("a\x1b[2Jb\tc\nd\re\x07\x7f\x9b\u202e") == "a\\x1b[2Jb\tc\nd\\x0de\\x07\\x7f\\x9b\\u202e"
    )
    assert neutralise(neutralise("\x1b")) == "\\x1b"  # applying it twice changes nothing more


def test_key_values_are_redacted_as_is_and_percent_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc/def+ghi=123")
    monkeypatch.setenv("GEMINI_API_KEY", "short")  # too short to be a key worth cutting out of every text
    monkeypatch.setenv("ACME_KEY_FOR_TEST", "acme-0123456789")
    safety.protect_env("ACME_KEY_FOR_TEST")
    text = redact("a sk-abc/def+ghi=123 b sk-abc%2Fdef%2Bghi%3D123 c acme-0123456789 short")
    assert text == (
        "a <redacted OPENAI_API_KEY> b <redacted OPENAI_API_KEY> c <redacted ACME_KEY_FOR_TEST> short"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("https://user:hunter2pass@proxy.example:8443/v1", "https://user:***@proxy.example:8443/v1"),
        ("https://ghp_token1234@proxy.example/v1", "https://***@proxy.example/v1"),
        ("https://proxy.example/v1?key=AIzaSecret&x=1", "https://proxy.example/v1?key=scrubbed&x=1"),
        ("http://localhost:8080/v1", "http://localhost:8080/v1"),
        (10.0, 10.0),
        (None, None),
    ],
)
def test_a_setting_is_shown_without_credentials(value: object, shown: object) -> None:
    assert shown_setting(value) == shown


# --- Markdown and HTML from a report whose adapter text is hostile ------------------------------------------


def _hostile_report() -> dict[str, object]:
    log = OutcomeLog()
    message = f"RES-06 failed\n  actual:   {HOSTILE}\n  ```` four ticks\n~~~\n"
    log.record(
        ItemOutcome("id::RES-06", "RES-06", "tool_call", "openai-chat", "MUST", "failed", message, 0.1)
    )
    log.gate_errors.append("recording failed: text_basic: [click](https://evil.example) <b>x</b>")
    spec = dataclasses.replace(openai_spec, name="evil [x](https://evil.example) <img src=y> `t` | #")
    resolved = ResolvedAdapter(spec, "evil`adapter", "mod:spec `x`", "python")
    return build_report(log, resolved, {}, strict=False, exitstatus=1)


def _unescaped(text: str, chars: str) -> list[str]:
    return re.findall(rf"(?<!\\)[{re.escape(chars)}]", text)


def test_markdown_keeps_adapter_text_inside_its_fence_and_escapes_names() -> None:
    markdown = render_markdown(_hostile_report())
    assert "\x1b" not in markdown
    assert "\x9b" not in markdown
    lines = markdown.splitlines()
    heading = lines[0]
    assert heading.startswith("# helix-conformance report: evil ")
    assert not _unescaped(heading.split(": ", 1)[1], "[]<>`|#")
    # The failure's fence is longer than any backtick run inside, so no line of the message can close it.
    start = next(i for i, line in enumerate(lines) if line.startswith("#### RES-06")) + 2
    fence = lines[start].removesuffix("text")
    assert set(fence) == {"`"}
    assert len(fence) > 4
    end = lines.index(fence, start + 1)
    inside = lines[start + 1 : end]
    assert not any(line.lstrip().startswith(fence) for line in inside)
    assert "\\x1b]8;;https://evil.example\\x07click" in "\n".join(inside)
    assert lines[end + 2].startswith("Reproduce: ``")  # the adapter name holds a backtick: a longer span
    gate = next(line for line in lines if line.startswith("> **Gate error:**"))
    assert not _unescaped(gate.removeprefix("> **Gate error:**"), "[]<>")
    assert "- target: ``mod:spec `x```" in markdown or "- target: `` mod:spec `x` ``" in markdown


def test_html_escapes_adapter_text_everywhere() -> None:
    html = render_html(_hostile_report())
    assert "\x1b" not in html
    assert "\x9b" not in html
    assert "<img" not in html
    assert "</pre><img" not in html
    assert "&lt;/pre&gt;&lt;img src=x" in html
    assert html.count("<pre>") == html.count("</pre>") == 1


# --- end to end: an adapter echoing the keys, escape sequences and Markdown ----------------------------------


@pytest.mark.parametrize("strict", [False, True], ids=["SHOULD-xfails", "strict"])
def test_no_report_and_no_terminal_shows_a_key_an_escape_or_a_password(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, strict: bool
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ACME_KEY", OWN_KEY)
    pytester.makepyfile(echo_adapter=ECHO_ADAPTER)
    result = run(
        pytester,
        "--adapter=echo_adapter",
        "-k",
        "(text_basic and (STR-01 or HARN-04)) or (http_500 and ERR-01)",
        "-rA",
        *(["--helix-strict"] if strict else []),
        "--helix-record-base-url=https://user:hunter2pass@proxy.example/v1",
        "--helix-report=out/r.json,out/r.md,out/r.html",
        "--junitxml=out/junit.xml",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    terminal = output(result)
    files = {path.name: path.read_text(encoding="utf-8") for path in (pytester.path / "out").iterdir()}
    assert set(files) == {"r.json", "r.md", "r.html", "junit.xml"}
    for where, text in {"terminal": terminal, **files}.items():
        for secret in (OPENAI_KEY, OWN_KEY, "hunter2pass", "\x1b", "\x9b"):
            assert secret not in text, f"{secret!r} in {where}"
    # The adapter's text did reach them, redacted and escaped.
    for where, text in {"terminal": terminal, "r.json": files["r.json"], "r.md": files["r.md"]}.items():
        assert "<redacted OPENAI_API_KEY> <redacted ACME_KEY>" in text, where
        assert "\\x1b[2J" in text.replace("\\\\", "\\"), where
    messages = {r["clause"]: r["message"] for r in json.loads(files["r.json"])["results"]}
    assert "task 'keys <redacted OPENAI_API_KEY> <redacted ACME_KEY> \\x1b[2J" in messages["HARN-04"]
    assert "helix-record-base-url='https://user:***@proxy.example/v1' (cli)" in terminal
    report = json.loads(files["r.json"])
    assert report["settings"]["helix_record_base_url"]["value"] == "https://user:***@proxy.example/v1"
    assert files["r.md"].startswith("# helix-conformance report: echo \\[x\\](https://evil.example) \\<b\\>")
    assert "<img" not in files["r.html"]


def test_the_replay_command_redacts_keys_and_escapes_control_characters(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from helix_conformance.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ACME_KEY", OWN_KEY)
    Path(pytester.path / "echo_adapter_replay.py").write_text(ECHO_ADAPTER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(pytester.path))
    code = main(["replay", "--adapter", "echo_adapter_replay", "text_basic"])
    out = capsys.readouterr().out
    assert code == 1
    for secret in (OPENAI_KEY, OWN_KEY, "\x1b", "\x9b"):
        assert secret not in out
    assert "<redacted OPENAI_API_KEY> <redacted ACME_KEY>" in out
