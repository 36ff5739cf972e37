"""Broken adapters that only slow callbacks catch (STR-08): with the default callbacks, which complete at
once, both look conforming; a consumer that takes 20 ms per callback (a UI, a socket) shows the bug."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable
from typing import Any

from helix_conformance.contract import LLMGenerateInput, LLMStreamCallbacks, StepResult
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import BrokenAdapter, broken

CALLBACKS = ("on_text_delta", "on_thinking", "on_tool_call", "on_error")


def _wrapped(
    input: LLMGenerateInput, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]
) -> LLMGenerateInput:
    callbacks = input.callbacks
    if callbacks is None:
        return input
    replaced = {name: wrap(cb) for name in CALLBACKS if (cb := getattr(callbacks, name)) is not None}
    return input.model_copy(update={"callbacks": LLMStreamCallbacks(**replaced)})


class GivesUpOnSlowCallbacks(OpenAIChatAdapter):
    """Bounds each callback to 5 ms "so a slow consumer cannot stall the stream": slow ones are cancelled."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        def wrap(callback: Callable[..., Any]) -> Callable[..., Any]:
            async def bounded(*args: Any) -> None:
                outcome = callback(*args)
                if inspect.isawaitable(outcome):
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(outcome, 0.005)  # Bug: the consumer's work is cut off

            return bounded

        return await super().generate_step(_wrapped(input, wrap))


class OverlapsSlowCallbacks(OpenAIChatAdapter):
    """Starts each callback as a task and waits for it only briefly, so slow callbacks overlap the next."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        def wrap(callback: Callable[..., Any]) -> Callable[..., Any]:
            async def overlapping(*args: Any) -> None:
                outcome = callback(*args)
                if inspect.isawaitable(outcome):
                    task = asyncio.ensure_future(outcome)
                    await asyncio.wait({task}, timeout=0.005)  # Bug: "don't block on the consumer"
                    self._pending = task

            return overlapping

        return await super().generate_step(_wrapped(input, wrap))


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "gives_up_on_slow_callbacks",
        GivesUpOnSlowCallbacks,
        "STR-08",
        ["text_basic", "tool_call_parallel"],
        "Cancels any callback that takes more than 5 ms.",
    ),
    broken(
        "overlaps_slow_callbacks",
        OverlapsSlowCallbacks,
        "STR-08",
        ["text_basic", "tool_call_parallel"],
        "Runs callbacks as tasks and moves on after 5 ms, so slow ones overlap.",
    ),
]
