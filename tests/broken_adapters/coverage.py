"""Broken adapters for the clauses the family modules leave uncaught, so that every registered check is
tripped by at least one adapter: RES-01, RES-10, RES-11, FIN-04, MSG-03, CFG-04, CFG-05, HARN-02, HARN-03."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from helix_conformance.contract import (
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    ParsedToolCall,
    StepResult,
    StructuredOutputStepResult,
    ToolCallsStepResult,
)
from reference_adapters._http import RetryableFailure
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken


class ReturnsPlainDict(OpenAIChatAdapter):
    """Returns the result serialised to a dict, as if the framework wanted JSON."""

    async def generate_step(self, input: LLMGenerateInput) -> Any:
        return (await super().generate_step(input)).model_dump()


class _CutOffCallsStream(HookedChatStream):
    async def result(self) -> StepResult:
        if self._finish_reason == "length" and self._calls:
            calls = [ParsedToolCall(id=b.id, name=b.name, arguments={}) for b in self._calls]
            return ToolCallsStepResult(tool_calls=calls, content="".join(self._text) or None)
        return await super().result()


class ExecutesCutOffCalls(HookedAdapter):
    """Returns tool calls cut off by the token limit, with whatever arguments could be salvaged."""

    stream_class = _CutOffCallsStream


class SubAgentCallsNone(OpenAIChatAdapter):
    """Leaves sub_agent_calls as None (built with model_construct, bypassing validation)."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ToolCallsStepResult):
            fields = {**dict(result), "sub_agent_calls": None}
            return ToolCallsStepResult.model_construct(**fields)
        return result


class DropsThinkingOnFinish(OpenAIChatAdapter):
    """Builds the structured-output result from the finish call alone, losing the step's reasoning."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, StructuredOutputStepResult):
            return StructuredOutputStepResult(output=result.output)
        return result


class ObjectArgumentsInHistory(HookedAdapter):
    """Sends history tool-call arguments as JSON objects, where the API wants a JSON string."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for message in body["messages"]:
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = {"decoded": call["function"]["arguments"]}
        return body


class ExhaustedRetriesStayRetryable(OpenAIChatAdapter):
    """Surfaces the last attempt's error unchanged after its own retries are used up."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if (
            isinstance(result, ErrorStepResult)
            and isinstance(result.error, HelixError)
            and input.config.max_retries
        ):
            result.error.retryable = result.error.code in ("provider_overloaded", "provider_rate_limited")
        return result


class IgnoresRetryAfter(HookedAdapter):
    """Backs off on its own schedule, ignoring the provider's retry-after headers."""

    def retry_or_fail(
        self, error: HelixError, headers: httpx.Headers | None = None
    ) -> RetryableFailure | StepResult:
        return super().retry_or_fail(error, None)


class GivesUpAfterOneAttempt(HookedAdapter):
    """Reads max_retries from its own constructor default (0) instead of the step's config."""

    def max_retries(self, input: LLMGenerateInput) -> int:
        return 0


class HangsForever(OpenAIChatAdapter):
    """Waits for a response that never comes, with no timeout of its own."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "returns_plain_dict",
        ReturnsPlainDict,
        "RES-01",
        ["text_basic", "tool_call"],
        "Returns result.model_dump() instead of the StepResult model.",
    ),
    broken(
        "executes_cut_off_calls",
        ExecutesCutOffCalls,
        "RES-10",
        ["tool_call_cut_off"],
        "Returns tool calls whose arguments were cut off by the token limit as executable calls.",
    ),
    broken(
        "sub_agent_calls_none",
        SubAgentCallsNone,
        "RES-11",
        ["tool_call"],
        "Leaves sub_agent_calls None instead of a list.",
    ),
    broken(
        "drops_thinking_on_finish",
        DropsThinkingOnFinish,
        "FIN-04",
        ["thinking_finish_tool"],
        "Loses the finishing step's thinking.",
    ),
    broken(
        "object_arguments_in_history",
        ObjectArgumentsInHistory,
        "MSG-03",
        ["tool_result_roundtrip", "tool_result_then_user"],
        "Sends history tool-call arguments as objects, not JSON strings: OpenAI answers 400 `expected a string, "
        "but got an object` (https://github.com/aaif-goose/goose-mobile/pull/20).",
    ),
    broken(
        "exhausted_retries_stay_retryable",
        ExhaustedRetriesStayRetryable,
        "CFG-04",
        ["retry_exhausted"],
        "After its own retries, still reports the error as retryable (the framework retries again).",
    ),
    broken(
        "ignores_retry_after",
        IgnoresRetryAfter,
        "CFG-05",
        ["retry_429_then_success"],
        "Retries before the delay the provider asked for in retry-after-ms.",
    ),
    broken(
        "gives_up_after_one_attempt",
        GivesUpAfterOneAttempt,
        "HARN-02",
        ["retry_429_then_success"],
        "Ignores config.max_retries: the recorded retry is never requested.",
    ),
    broken(
        "hangs_forever", HangsForever, "HARN-03", ["text_basic"], "Awaits forever with no timeout of its own."
    ),
]
