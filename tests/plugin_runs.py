"""Running the plugin the way users run it: ``pytest --adapter=...`` in a subprocess inside a pytester dir.

Shared by the end-to-end test modules. Every run uses ``--assert=plain``: with PYTHONDONTWRITEBYTECODE set (as
in CI sandboxes) every pytest process otherwise recompiles, with assertion rewriting, every module of every
pytest11 distribution: 2.5-4 s per run. The conformance items do not use ``assert``.
"""

from __future__ import annotations

import pytest

from helix_conformance.settings import OPTIONS as SETTINGS

SUBPROCESS_TIMEOUT = 600
"""A full suite of an example adapter on a loaded 2-core CI machine took up to 165 s: a limit that close is a
flaky failure, not a finding (a hang is caught by --helix-timeout inside the run)."""
HELIX_ENV = ("ADAPTER", *(option.env for option in SETTINGS))
"""Environment variables the plugin reads; cleared so the developer's shell cannot leak into runs."""
OPTIONS = tuple(f"--{option.name}" for option in SETTINGS)

# A third-party adapter package, as a user would write one: one conforming spec and several broken on purpose.
ADAPTERS = '''
import asyncio

from helix_conformance.contract import AdapterSpec, ErrorStepResult, TextStepResult
from reference_adapters.openai_chat import OpenAIChatAdapter

CAPABILITIES = frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"})


def _spec(name, cls):
    return AdapterSpec(
        name=name,
        factory=lambda ctx: cls(api_key=ctx.api_key, base_url=ctx.base_url),
        wire_profile="openai-chat",
        model="gpt-4o-mini",
        capabilities=CAPABILITIES,
    )


class WrongStopReason(OpenAIChatAdapter):
    """Reports a truncated answer (finish_reason `length`) as end_turn: breaks the MUST clause STOP-01."""

    async def generate_step(self, input):
        result = await super().generate_step(input)
        if isinstance(result, TextStepResult) and result.stop_reason == "max_tokens":
            result = result.model_copy(update={"stop_reason": "end_turn"})
        return result


class SloppyButSafe(OpenAIChatAdapter):
    """Breaks SHOULD clauses only: leaves a task pending (HARN-04), calls a quota 429 retryable (ERR-08)."""

    async def generate_step(self, input):
        result = await super().generate_step(input)
        asyncio.get_running_loop().create_task(asyncio.sleep(3600))
        if isinstance(result, ErrorStepResult) and getattr(result.error, "status_code", None) == 429:
            result.error.retryable = True
        return result


class Hostile(OpenAIChatAdapter):
    async def generate_step(self, input):
        raise RuntimeError("hostile adapter: boom")


class Hangs:
    def __init__(self, **kwargs):
        pass

    async def generate_step(self, input):
        await asyncio.Event().wait()


def _factory_raises(ctx):
    raise RuntimeError("no API key configured")


spec = _spec("thirdparty", OpenAIChatAdapter)
wrong_stop = _spec("wrong-stop", WrongStopReason)
sloppy = _spec("sloppy", SloppyButSafe)
hostile = _spec("hostile", Hostile)
hangs = _spec("hangs", Hangs)
factory_raises = AdapterSpec(
    name="factory-raises",
    factory=_factory_raises,
    wire_profile="openai-chat",
    model="gpt-4o-mini",
    capabilities=CAPABILITIES,
)
not_a_spec = {"name": "thirdparty"}


def spec_function_raising():
    raise RuntimeError("cannot build the spec: the SDK is missing")
'''


def clear_helix_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in HELIX_ENV:
        monkeypatch.delenv(name, raising=False)


def adapter_module(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str, source: str
) -> pytest.Pytester:
    """``source`` as the module ``name``, importable by the runs' pytest and by its adapter workers."""
    pytester.makepyfile(**{name: source})
    monkeypatch.setenv("PYTHONPATH", str(pytester.path), prepend=":")
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--assert=plain", *args, timeout=SUBPROCESS_TIMEOUT
    )


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + "\n" + result.stderr.str()


def lines_starting(result: pytest.RunResult, prefix: str) -> list[str]:
    return [line for line in result.outlines if line.startswith(prefix)]


def assert_no_crash(result: pytest.RunResult) -> None:
    text = output(result)
    assert "INTERNALERROR" not in text
    assert "Traceback (most recent call last)" not in text
    outcomes = result.parseoutcomes()
    assert "error" not in outcomes, outcomes
    assert "errors" not in outcomes, outcomes
