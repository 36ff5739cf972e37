"""Broken adapters whose callbacks fire well after ``generate_step`` returned (STR-07): a timer, a task and a
thread that wake 30 ms later. The harness lets leftover work run up to 100 ms in the main run, so it sees them;
only STR-07 judges them (the deltas still concatenate to the content: STR-01 holds)."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from typing import Any

from helix_conformance.contract import LLMGenerateInput, StepResult, TextStepResult
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import BrokenAdapter, broken

LATE_S = 0.03


class FinalDeltaOnATimer(OpenAIChatAdapter):
    """Schedules a closing ``on_text_delta('')``-style flush with ``call_later`` "to batch UI updates"."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        callbacks = input.callbacks
        if isinstance(result, TextStepResult) and callbacks and callbacks.on_text_delta:
            on_text = callbacks.on_text_delta

            def flush() -> Any:
                outcome = on_text("\n")  # Bug: fires after the step returned
                if inspect.isawaitable(outcome):
                    self._flushing = asyncio.ensure_future(outcome)

            asyncio.get_running_loop().call_later(LATE_S, flush)  # Bug: outlives the step
        return result


class ReportsToolCallsLater(OpenAIChatAdapter):
    """Reports tool calls from a background task that first 'waits for the stream to settle'."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        callbacks = input.callbacks
        plain = input.model_copy(update={"callbacks": None}) if callbacks else input
        result = await super().generate_step(plain)
        calls = getattr(result, "tool_calls", None)
        if calls and callbacks and callbacks.on_tool_call:
            on_tool_call = callbacks.on_tool_call

            async def report() -> None:
                await asyncio.sleep(LATE_S)
                for call in calls:
                    outcome: Any = on_tool_call(call)  # Bug: after the return
                    if inspect.isawaitable(outcome):
                        await outcome

            self._reporter = asyncio.get_running_loop().create_task(report())
        return result


class LastDeltaFromAThread(OpenAIChatAdapter):
    """Hands the final UI refresh to a worker thread that calls ``on_text_delta`` once it is done."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        callbacks = input.callbacks
        if isinstance(result, TextStepResult) and callbacks and callbacks.on_text_delta:
            on_text = callbacks.on_text_delta

            def refresh() -> None:
                time.sleep(LATE_S)
                on_text("\n")  # Bug: from a thread, after the step returned

            threading.Thread(target=refresh, daemon=True).start()
        return result


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "final_delta_on_a_timer",
        FinalDeltaOnATimer,
        "STR-07",
        ["text_basic"],
        "Flushes a last text delta from a timer 30 ms after returning.",
    ),
    broken(
        "last_delta_from_a_thread",
        LastDeltaFromAThread,
        "STR-07",
        ["text_basic"],
        "Calls on_text_delta from a thread 30 ms after returning.",
    ),
    broken(
        "reports_tool_calls_later",
        ReportsToolCallsLater,
        "STR-07",
        ["tool_call", "tool_call_parallel"],
        "Reports tool calls from a task that wakes 30 ms after the step returned.",
    ),
]
