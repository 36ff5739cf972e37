"""Broken adapters that return the wrong StepResult: RES, FIN and STOP clauses.

Each is the reference adapter with one realistic mistake in how the finished stream becomes a result.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from helix_conformance.contract import (
    PROVIDER_ERROR,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    ParsedToolCall,
    StepResult,
    StopReason,
    StructuredOutputStepResult,
    TextStepResult,
    ThinkingContent,
    ToolCallsStepResult,
)
from reference_adapters._http import ToolCallBuffer
from reference_adapters._sse import SSEEvent
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken

# --- RES: tool calls, arguments, text and thinking --------------------------------------------------------


class _SingleCallStream(HookedChatStream):
    def _slot(self, index: Any, call_id: str, position: int) -> ToolCallBuffer:
        # Bug: written for "the" tool call: every delta lands in one buffer, whatever its `index`.
        return self._calls[0] if self._calls else self._add_call()


class MergesParallelToolCalls(HookedAdapter):
    stream_class = _SingleCallStream


class _OwnIdsStream(HookedChatStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: mints its own ids instead of keeping the provider's (tool results then link to nothing).
        return [c.model_copy(update={"id": f"call_{uuid.uuid4().hex[:24]}"}) for c in super().parse_calls()]


class GeneratesOwnToolCallIds(HookedAdapter):
    stream_class = _OwnIdsStream


class _StringArgumentsStream(HookedChatStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: hands the arguments over as the raw JSON string (forced past pydantic with model_construct).
        return [
            ParsedToolCall.model_construct(id=b.id, name=b.name, arguments="".join(b.arguments))
            for b in self._calls
        ]


class ArgumentsLeftAsJsonString(HookedAdapter):
    stream_class = _StringArgumentsStream


class _StringlyTypedStream(HookedChatStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: "normalises" arguments for a string-only tool runtime: 5 -> "5", false -> "false".
        return [
            c.model_copy(
                update={
                    "arguments": {
                        k: v if isinstance(v, str) else json.dumps(v) for k, v in c.arguments.items()
                    }
                }
            )
            for c in super().parse_calls()
        ]


class StringifiesArgumentValues(HookedAdapter):
    stream_class = _StringlyTypedStream


class _StrictJsonStream(HookedChatStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: json.loads() on the raw argument string, which is "" for a tool without arguments.
        for buffer in self._calls:
            raw = "".join(buffer.arguments)
            try:
                json.loads(raw)
            except ValueError as exc:
                raise HelixError(f"openai: bad arguments for {buffer.name}", code=PROVIDER_ERROR) from exc
        return super().parse_calls()


class EmptyArgumentsAreAnError(HookedAdapter):
    stream_class = _StrictJsonStream


class ToolCallsShouldStop(OpenAIChatAdapter):
    """Bug: every step "should stop" — the agent loop never executes the tools."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ToolCallsStepResult):
            return result.model_copy(update={"should_stop": True})
        return result


class DropsTextBesideToolCalls(OpenAIChatAdapter):
    """Bug: a tool-calls step "has no text" — the preamble the user already saw streaming is discarded."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ToolCallsStepResult):
            return result.model_copy(update={"content": None})
        return result


class DropsThinking(OpenAIChatAdapter):
    """Bug: the result is rebuilt from `content` and tool calls only; `reasoning_content` never makes it."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, (TextStepResult, ToolCallsStepResult, StructuredOutputStepResult)):
            return result.model_copy(update={"thinking": None})
        return result


class _TrustsFinishReasonStream(HookedChatStream):
    def has_tool_calls(self) -> bool:
        # Bug: switches on finish_reason; "stop" means text, even when the deltas carried tool calls.
        return bool(self._calls) and self._finish_reason != "stop"


class TrustsFinishReasonStop(HookedAdapter):
    stream_class = _TrustsFinishReasonStream


class _FirstChoiceStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        data = event.data.strip()
        if data.startswith("{"):
            payload = json.loads(data)
            if "error" not in payload and not payload.get("usage"):
                # Bug: every chunk but the usage one is assumed to carry a choice; Azure's first chunk
                # (and moderation chunks) have `choices: []`, so this raises IndexError.
                await self._choice(payload["choices"][0])
                return False
        return await super()._event(event)


class RejectsUnknownChunks(HookedAdapter):
    stream_class = _FirstChoiceStream


# --- FIN: the framework's finish tool ---------------------------------------------------------------------


class _FinishIsOrdinaryStream(HookedChatStream):
    def is_finish(self, call: ParsedToolCall) -> bool:
        return False  # Bug: __finish__ is "just another tool" (the later-Helix profile, silently mixed in)


class FinishAsOrdinaryToolCall(HookedAdapter):
    stream_class = _FinishIsOrdinaryStream


class _FirstCallDecidesStream(HookedChatStream):
    def finish_call(self, calls: list[ParsedToolCall]) -> ParsedToolCall | None:
        # Bug: only looks at the first call; __finish__ after a sibling call is executed as a plain tool.
        return calls[0] if calls and self.is_finish(calls[0]) else None


class FinishOnlyWhenFirst(HookedAdapter):
    stream_class = _FirstCallDecidesStream


class _LenientFinishStream(HookedChatStream):
    async def result(self) -> StepResult:
        try:
            return await super().result()
        except HelixError:
            # Bug: "be lenient": unparseable __finish__ arguments become the structured output as raw text.
            raw = next(("".join(b.arguments) for b in self._calls if b.name == "__finish__"), None)
            if raw is None:
                raise
            return StructuredOutputStepResult(output=raw)


class FinishInvalidJsonAsRawOutput(HookedAdapter):
    stream_class = _LenientFinishStream


class _SubstringFinishStream(HookedChatStream):
    def is_finish(self, call: ParsedToolCall) -> bool:
        return "finish" in call.name  # Bug: substring match, so the user's own `finish` tool ends the agent


class FinishMatchedBySubstring(HookedAdapter):
    stream_class = _SubstringFinishStream


# --- STOP: finish reasons -----------------------------------------------------------------------------------


class _LengthIsEndTurnStream(HookedChatStream):
    stop_reasons = {**HookedChatStream.stop_reasons, "length": "end_turn"}  # Bug: "the model stopped"


class LengthMappedToEndTurn(HookedAdapter):
    stream_class = _LengthIsEndTurnStream


class _LeakyStopStream(HookedChatStream):
    def text_result(self, text: str, thinking: ThinkingContent | None) -> StepResult:
        # Bug: passes the provider's finish_reason through when it is not in the table (model_construct
        # skips the validation that would have refused it).
        reason = self._finish_reason or "unknown"
        stop: StopReason | str = self.stop_reasons.get(reason, reason)
        return TextStepResult.model_construct(
            type="text", content=text, thinking=thinking, should_stop=True, stop_reason=stop
        )


class ProviderFinishReasonLeaks(HookedAdapter):
    stream_class = _LeakyStopStream


class _FilterIsErrorStream(HookedChatStream):
    def text_result(self, text: str, thinking: ThinkingContent | None) -> StepResult:
        # Bug: a filtered answer "failed": an ErrorStepResult, so the framework cannot tell the user why.
        if self._finish_reason == "content_filter":
            return ErrorStepResult(error=HelixError("openai: content filtered", code=PROVIDER_ERROR))
        return super().text_result(text, thinking)


class ContentFilterAsError(HookedAdapter):
    stream_class = _FilterIsErrorStream


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "merges_parallel_tool_calls",
        MergesParallelToolCalls,
        "RES-06",
        ["tool_call_parallel"],
        "Ignores the delta `index`: the deltas of two parallel calls are concatenated into one call.",
    ),
    broken(
        "generates_own_tool_call_ids",
        GeneratesOwnToolCallIds,
        "RES-03",
        ["tool_call", "tool_call_parallel"],
        "Replaces the provider's tool-call ids with freshly generated ones.",
    ),
    broken(
        "arguments_left_as_json_string",
        ArgumentsLeftAsJsonString,
        "RES-04",
        ["tool_call", "tool_call_typed_arguments"],
        "Returns tool-call arguments as the raw JSON string (built with model_construct).",
    ),
    broken(
        "stringifies_argument_values",
        StringifiesArgumentValues,
        "RES-04",
        ["tool_call_typed_arguments"],
        "Converts argument values to strings: numbers, booleans and null lose their JSON types.",
    ),
    broken(
        "empty_arguments_are_an_error",
        EmptyArgumentsAreAnError,
        "RES-05",
        ["tool_call_no_arguments"],
        'json.loads() on the raw argument string: a tool without arguments ("") becomes an error.',
    ),
    broken(
        "tool_calls_should_stop",
        ToolCallsShouldStop,
        "RES-02",
        ["tool_call", "text_and_tool_call"],
        "Sets should_stop=True on tool-calls results, so the agent would never run the tools.",
    ),
    broken(
        "drops_text_beside_tool_calls",
        DropsTextBesideToolCalls,
        "RES-07",
        ["text_and_tool_call"],
        "Discards the text that accompanies tool calls (content=None on tool-calls results).",
    ),
    broken(
        "drops_thinking",
        DropsThinking,
        "RES-08",
        ["thinking_text", "thinking_tool_call", "thinking_finish_tool"],
        "Never returns the reasoning in `thinking` (it is streamed, then lost).",
    ),
    broken(
        "trusts_finish_reason_stop",
        TrustsFinishReasonStop,
        "RES-09",
        ["tool_call_finish_stop"],
        'Trusts finish_reason: "stop" with tool calls gives a text result and the calls are lost.',
    ),
    broken(
        "rejects_unknown_chunks",
        RejectsUnknownChunks,
        "RES-12",
        ["text_quirks"],
        "Indexes choices[0] of every chunk: an Azure-style first chunk with `choices: []` breaks the step.",
    ),
    broken(
        "finish_as_ordinary_tool_call",
        FinishAsOrdinaryToolCall,
        "FIN-01",
        ["finish_tool", "thinking_finish_tool"],
        "Returns a __finish__ call as an ordinary tool call instead of a structured output.",
    ),
    broken(
        "finish_only_when_first",
        FinishOnlyWhenFirst,
        "FIN-02",
        ["finish_tool_with_sibling"],
        "Recognises __finish__ only when it is the first call of the step.",
    ),
    broken(
        "finish_invalid_json_as_raw_output",
        FinishInvalidJsonAsRawOutput,
        "FIN-03",
        ["finish_tool_invalid_json"],
        "Unparseable __finish__ arguments become a structured output holding the raw string.",
    ),
    broken(
        "finish_matched_by_substring",
        FinishMatchedBySubstring,
        "FIN-05",
        ["finish_tool_lookalike"],
        'Recognises the finish tool by substring, so a user tool named "finish" ends the agent.',
    ),
    broken(
        "length_mapped_to_end_turn",
        LengthMappedToEndTurn,
        "STOP-01",
        ["stop_max_tokens"],
        'Maps finish_reason "length" to end_turn: truncated answers look complete.',
    ),
    broken(
        "provider_finish_reason_leaks",
        ProviderFinishReasonLeaks,
        "STOP-01",
        ["stop_unknown"],
        "Passes an unknown provider finish_reason through as stop_reason instead of 'unknown'.",
    ),
    broken(
        "content_filter_as_error",
        ContentFilterAsError,
        "STOP-02",
        ["stop_content_filter"],
        "Returns a content-filtered answer as an ErrorStepResult instead of text with content_filter.",
    ),
]
