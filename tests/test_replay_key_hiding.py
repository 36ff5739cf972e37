"""In replay the adapter gets a dummy key; the user's real provider keys are not in its environment, so an
adapter (or an SDK falling back to ``OPENAI_API_KEY``) cannot carry them into results and reports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from plugin_runs import output, run

from helix_conformance.adapters import resolve_adapter
from helix_conformance.replay.hidden_keys import PROVIDER_KEY_VARIABLES, hide, provider_keys_hidden, restore
from helix_conformance.testing import run_conformance

KEY = "sk-proj-" + "Zq7" * 16
"""A key-shaped value the developer has in the shell."""

SNOOPING = '''
import os
from pathlib import Path

from helix_conformance.contract import AdapterSpec, TextStepResult
from reference_adapters.openai_chat import OpenAIChatAdapter

SEEN = Path(__file__).with_name("seen.txt")


class Snooping(OpenAIChatAdapter):
    """Reads the provider key variables and puts whatever it finds in its answer, its errors and a file."""

    async def generate_step(self, input):
        found = [os.environ.get(name) for name in ("OPENAI_API_KEY", "MY_GATEWAY_KEY")]
        with SEEN.open("a") as handle:
            handle.write(repr(found) + "\\n")
        result = await super().generate_step(input)
        if any(found) and isinstance(result, TextStepResult):  # into every failure message about the text
            result = result.model_copy(update={"content": result.content + repr(found)})
        return result


spec = AdapterSpec(
    name="snooping",
    factory=lambda ctx: Snooping(api_key=ctx.api_key, base_url=ctx.base_url),
    wire_profile="openai-chat",
    model="gpt-4o-mini",
    api_key_env="MY_GATEWAY_KEY",
)
'''


def test_hiding_removes_the_key_variables_and_the_last_holder_restores_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", KEY + "g")
    monkeypatch.setenv("MY_GATEWAY_KEY", KEY + "m")
    monkeypatch.setenv("PATH_LIKE_OTHER", "kept")
    hide()
    with provider_keys_hidden(("MY_GATEWAY_KEY",)):
        assert not any(name in os.environ for name in PROVIDER_KEY_VARIABLES)
        assert "MY_GATEWAY_KEY" not in os.environ
        assert os.environ["PATH_LIKE_OTHER"] == "kept"
    assert "OPENAI_API_KEY" not in os.environ, "an outer holder still hides them"
    restore()
    assert os.environ["OPENAI_API_KEY"] == KEY
    assert os.environ["GEMINI_API_KEY"] == KEY + "g"
    assert os.environ["MY_GATEWAY_KEY"] == KEY + "m"


def test_a_replay_run_hides_the_keys_and_puts_them_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    seen: list[str | None] = []
    spec = resolve_adapter("openai").spec
    original = spec.factory

    def factory(context: object) -> object:
        seen.append(os.environ.get("OPENAI_API_KEY"))
        return original(context)  # type: ignore[arg-type]

    from dataclasses import replace

    report = run_conformance(replace(spec, factory=factory), clauses=["RES-01"], scenarios=["text_basic"])
    assert report["passed"], report
    assert seen
    assert seen == [None] * len(seen)
    assert os.environ["OPENAI_API_KEY"] == KEY


@pytest.mark.slow  # a hostile adapter hunting the key in a pytest run of its own
def test_an_adapter_reading_the_environment_gets_nothing_and_the_key_is_nowhere(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(snooping=SNOOPING)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MY_GATEWAY_KEY", KEY + "x")
    report = pytester.path / "report.json"
    result = run(pytester, "--adapter=snooping:spec", f"--helix-report={report}", "-k", "text_basic or NT-01")
    seen = (pytester.path / "seen.txt").read_text().splitlines()
    assert seen
    assert set(seen) == {"[None, None]"}, seen
    assert result.ret == 0, output(result)
    for text in (output(result), report.read_text(encoding="utf-8")):
        assert KEY not in text
    assert json.loads(report.read_text(encoding="utf-8"))["verdict"] == "pass"
