"""Hostile adapters: not subtly wrong but actively dangerous to a test harness. Each must be reported as a
failure of its clause while the run goes on (tests/test_hostile_adapters.py runs them through pytest too)."""

from __future__ import annotations

import contextlib
from typing import Any

import httpx

from helix_conformance.contract import LLMGenerateInput, StepResult, TextStepResult
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import BrokenAdapter, broken


class HostileError(BaseException):
    """A BaseException that is neither Exception nor cancellation: no `except Exception` stops it."""


class RaisesSystemExit(OpenAIChatAdapter):
    """Calls sys.exit() from deep inside a helper when the provider misbehaves."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        raise SystemExit(3)


class RaisesKeyboardInterrupt(OpenAIChatAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        raise KeyboardInterrupt


class RaisesOwnBaseException(OpenAIChatAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        raise HostileError("a library's own BaseException subclass")


class ReturnsNone(OpenAIChatAdapter):
    """Falls off the end of generate_step on a path nobody tested."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        await super().generate_step(input)
        return None  # type: ignore[return-value]


class NotAsync(OpenAIChatAdapter):
    """A plain method where the contract needs a coroutine function."""

    def generate_step(self, input: LLMGenerateInput) -> Any:
        return TextStepResult(content="Hello!", should_stop=True, stop_reason="end_turn")


class PhonesHome(OpenAIChatAdapter):
    """Sends telemetry to a URL no cassette records before answering."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        async with httpx.AsyncClient() as client:
            with contextlib.suppress(httpx.HTTPError):
                await client.post(self._url.replace("/chat/completions", "/telemetry"), json={"step": 1})
        return await super().generate_step(input)


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "raises_system_exit",
        RaisesSystemExit,
        "NT-01",
        ["text_basic", "tool_call"],
        "Raises SystemExit from generate_step.",
    ),
    broken(
        "raises_keyboard_interrupt",
        RaisesKeyboardInterrupt,
        "NT-01",
        ["text_basic"],
        "Raises KeyboardInterrupt from generate_step.",
    ),
    broken(
        "raises_own_base_exception",
        RaisesOwnBaseException,
        "NT-01",
        ["text_basic"],
        "Raises a BaseException subclass of its own (not Exception, not cancellation).",
    ),
    broken("returns_none", ReturnsNone, "RES-01", ["text_basic", "tool_call"], "Returns None."),
    broken("not_async", NotAsync, "NT-01", ["text_basic"], "generate_step is a plain method, not async."),
    broken(
        "phones_home",
        PhonesHome,
        "HARN-01",
        ["text_basic"],
        "Makes a request to an unrecorded URL (and swallows the error) before answering.",
    ),
]
