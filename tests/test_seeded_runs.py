"""An adapter's random draws are the scenario's, not the session's (replay/seeds.py): the same verdict every session.

botocore's retry jitter made the bedrock-boto3 example pass CFG-05 in one session and miss it in the next. Each
run now seeds ``random`` (and the Node driver ``Math.random``) from the scenario, and every worker hashes
strings with the same seed in every session.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from plugin_runs import adapter_module, run
from virtual_time_cases import _session

from helix_conformance.contract import AdapterSpec, LLMGenerateInput, StepResult, TextStepResult
from helix_conformance.replay.seeds import run_seed
from reference_adapters.openai_chat import spec as reference


class _Draws:
    """Answers with the random numbers it drew: what a jittered retry would have waited."""

    def __init__(self, ctx: Any) -> None:
        pass

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        draws = [random.random() for _ in range(3)]
        return TextStepResult(content=repr(draws), should_stop=True, stop_reason="end_turn")


def _drawn(scenario: str) -> str:
    spec = AdapterSpec(name="draws", factory=_Draws, wire_profile="openai-chat", model=reference.model)
    run = _session(spec, scenario).run()
    assert run.result is not None, run.setup_error or run.raised
    return str(run.result.content)


def test_a_run_draws_the_same_numbers_whatever_the_process_drew_before() -> None:
    first = _drawn("text_basic")
    random.random()  # the process's own state moves on between the runs (other runs, pytest's plugins)
    assert _drawn("text_basic") == first


def test_each_scenario_draws_its_own_numbers_and_the_callers_state_is_put_back() -> None:
    random.seed(7)
    expected = random.random()
    random.seed(7)
    assert _drawn("text_basic") != _drawn("tool_call")
    assert random.random() == expected  # an in-process run shares pytest's process: its draws are its own


def test_the_seed_is_stable_across_processes_and_languages() -> None:
    """The Node driver gets the number in the run message: a digest of the id, never ``hash()``."""
    assert run_seed("text_basic") == 1147454752
    assert run_seed("text_basic") != run_seed("tool_call")
    assert all(0 <= run_seed(s) < 2**32 for s in ("", "x", "retry_429_then_success"))


COIN = """
import random

from helix_conformance.contract import AdapterSpec
from reference_adapters.openai_chat import OpenAIChatAdapter


class Coin(OpenAIChatAdapter):
    \"\"\"Fails where a coin says so: the jitter of a retry that comes too early in some sessions only.\"\"\"

    async def generate_step(self, input):
        if (random.random() < 0.5) != bool(hash(input.messages[-1].model_dump_json()) % 2):
            raise RuntimeError("the coin said so")
        return await super().generate_step(input)


spec = AdapterSpec(
    name="coin",
    factory=lambda ctx: Coin(api_key=ctx.api_key, base_url=ctx.base_url),
    wire_profile="openai-chat",
    model="gpt-4o-mini",
)
"""


def _failed(pytester: pytest.Pytester, report: str) -> set[tuple[str, str]]:
    result = run(pytester, "--adapter=coin_adapter:spec", "-k", "NT-01", f"--helix-report={report}")
    data = json.loads(Path(pytester.path, report).read_text())
    assert result.ret == 1, result.stdout.str()[-2000:]
    return {(r["clause"], r["scenario"]) for r in data["results"] if r["outcome"] == "failed"}


@pytest.mark.slow
def test_an_adapter_that_draws_at_random_gets_the_same_verdict_in_two_sessions(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two pytest sessions, their own workers each: the same scenarios fail (a coin per scenario, on ``random``
    and on string hashing; left to chance, two sessions of dozens of scenarios would not agree)."""
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    adapter_module(pytester, monkeypatch, "coin_adapter", COIN)
    first, second = _failed(pytester, "first.json"), _failed(pytester, "second.json")
    assert len(first) > 5, first
    assert first == second
