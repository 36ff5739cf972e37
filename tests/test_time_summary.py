"""The summary's time lines (reporting/summary.time_lines), as a user sees them: the adapter's timers that
virtual time skipped, and the real waiting it could not skip, where a wait on the harness's limit alone (a job
at work) is not counted."""

from __future__ import annotations

import pytest
from plugin_runs import adapter_module, output, run

pytestmark = pytest.mark.slow  # real waiting beside busy threads, measured in pytest runs of their own

ADAPTERS = '''
import asyncio
import dataclasses
import time

from reference_adapters.openai_chat import OpenAIChatAdapter
from reference_adapters.openai_chat import spec as reference


def _compute(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class Patient(OpenAIChatAdapter):
    """Waits 8 s on a timer before every step: skipped."""

    async def generate_step(self, input):
        await asyncio.sleep(8)
        return await super().generate_step(input)


class TimerBesideWork(OpenAIChatAdapter):
    """A 1.5 s timer while a thread computes: the timer cannot be skipped, so it is waited really."""

    async def generate_step(self, input):
        loop = asyncio.get_running_loop()
        await asyncio.gather(loop.run_in_executor(None, _compute, 1.6), asyncio.sleep(1.5))
        return await super().generate_step(input)


class WorkOnly(OpenAIChatAdapter):
    """Waits for a thread's 1.5 s of work with no timer of its own: nothing virtual time could skip."""

    async def generate_step(self, input):
        await asyncio.get_running_loop().run_in_executor(None, _compute, 1.5)
        return await super().generate_step(input)


def _spec(name, cls):
    return dataclasses.replace(reference, name=name, factory=lambda ctx: cls(api_key=ctx.api_key, base_url=ctx.base_url))


patient = _spec("patient", Patient)
timer_beside_work = _spec("timer-beside-work", TimerBesideWork)
work_only = _spec("work-only", WorkOnly)
'''

ONE_ITEM = ("-k", "text_basic and HARN-01", "--helix-workers=1")


@pytest.fixture
def adapters(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    return adapter_module(pytester, monkeypatch, "time_adapters", ADAPTERS)


def test_skipped_timers_are_summed_in_the_summary(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=time_adapters:patient", *ONE_ITEM)
    text = output(result)
    assert result.ret == 0, text
    assert "virtual time: 8.0 s of the adapter's timers" in text
    assert "real waiting" not in text


def test_a_timer_beside_a_busy_thread_is_real_waiting(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=time_adapters:timer_beside_work", *ONE_ITEM)
    text = output(result)
    assert result.ret == 0, text
    assert "real waiting: 1." in text


def test_waiting_for_a_thread_alone_is_not_real_waiting(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=time_adapters:work_only", *ONE_ITEM)
    text = output(result)
    assert result.ret == 0, text
    assert "real waiting" not in text
