"""Broken Anthropic Messages adapters, response side: the stream a Chat Completions port gets wrong.

Each is ``reference_adapters.anthropic`` with one handler of the hooked ``_MessagesStream`` changed (or the
status mapping): signed and redacted thinking, ``input_json_delta`` by block ``index``, error events inside a
200 stream, the stop-reason table, and ``message_stop`` as the only proof the stream is complete.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from helix_conformance.contract import (
    PROVIDER_ERROR,
    HelixError,
    LLMGenerateInput,
    ParsedToolCall,
    StepResult,
    StopReason,
    ThinkingContent,
)
from reference_adapters._sse import SSEEvent
from reference_adapters.anthropic import (
    _STOP_REASONS,
    AnthropicAdapter,
    _Block,
)

from ._anthropic_base import HookedAnthropicAdapter, HookedMessagesStream, broken_anthropic
from ._base import BrokenAdapter
from .anthropic_requests import Block, Body, _each_turn

# --- MSG-08: thinking round trip ----------------------------------------------------------------------------


class _NoSignatureStream(HookedMessagesStream):
    async def _block_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if isinstance(delta, dict) and delta.get("type") == "signature_delta":
            return  # Bug: "only text, thinking and JSON deltas carry content"; the signature is lost
        await super()._block_delta(payload)


class DropsThinkingSignature(HookedAnthropicAdapter):
    stream_class = _NoSignatureStream


class _NoRedactedStream(HookedMessagesStream):
    async def _block_start(self, payload: dict[str, Any]) -> None:
        block = payload.get("content_block")
        if isinstance(block, dict) and block.get("type") == "redacted_thinking":
            return  # Bug: "nothing to show", so nothing kept
        await super()._block_start(payload)


class IgnoresRedactedThinking(HookedAnthropicAdapter):
    stream_class = _NoRedactedStream

    def build_body(self, input: LLMGenerateInput) -> Body:
        def unredacted(blocks: list[Block]) -> None:
            blocks[:] = [b for b in blocks if b["type"] != "redacted_thinking"]  # Bug: not sent back either

        return _each_turn(super().build_body(input), "assistant", unredacted)


class DropsThinkingFromHistory(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def no_reasoning(blocks: list[Block]) -> None:
            # Bug: "old reasoning only costs tokens": the tool-use turn's signed thinking is not sent back.
            blocks[:] = [b for b in blocks if b["type"] not in ("thinking", "redacted_thinking")]

        return _each_turn(super().build_body(input), "assistant", no_reasoning)


# --- STOP: stop reasons ------------------------------------------------------------------------------------


class _OldStopTableStream(HookedMessagesStream):
    # Bug: the table of the 2023 docs: no refusal, pause_turn or model_context_window_exceeded.
    stop_reasons = {k: _STOP_REASONS[k] for k in ("end_turn", "tool_use", "max_tokens", "stop_sequence")}


class OldStopReasonTable(HookedAnthropicAdapter):
    stream_class = _OldStopTableStream


class _EndTurnByDefaultStream(HookedMessagesStream):
    stop_reasons = {k: v for k, v in _STOP_REASONS.items() if k != "refusal"}

    def stop_reason(self) -> StopReason:
        return self.stop_reasons.get(self._stop_reason or "", "end_turn")  # Bug: "it stopped, so it ended"


class RefusalAsEndTurn(HookedAnthropicAdapter):
    stream_class = _EndTurnByDefaultStream


class _EmptyIsErrorStream(HookedMessagesStream):
    def text_result(self, text: str, thinking: ThinkingContent | None, stop: StopReason) -> StepResult:
        if not text and thinking is None:  # Bug: "no content block: the API failed"
            raise HelixError("anthropic: the response has no content", code=PROVIDER_ERROR)
        return super().text_result(text, thinking, stop)


class EmptyResponseIsError(HookedAnthropicAdapter):
    stream_class = _EmptyIsErrorStream


# --- RES: tool calls -----------------------------------------------------------------------------------------


class _FirstJsonDeltaStream(HookedMessagesStream):
    async def _block_delta(self, payload: dict[str, Any]) -> None:
        delta, state = payload.get("delta"), self._block(payload)
        if isinstance(delta, dict) and delta.get("type") == "input_json_delta" and state is not None:
            if not state.call.arguments:  # Bug: "the input arrives in one delta": the first one ("") is it
                state.call.arguments.append(str(delta.get("partial_json", "")))
            return
        await super()._block_delta(payload)


class FirstJsonDeltaIsTheInput(HookedAnthropicAdapter):
    stream_class = _FirstJsonDeltaStream


class _StrictJsonStream(HookedMessagesStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        calls = []
        for state in self._calls:
            raw = "".join(state.call.arguments)
            try:
                arguments = json.loads(raw)  # Bug: a tool without arguments streams "", which is not JSON
            except ValueError as exc:
                raise HelixError(
                    f"anthropic: bad tool input {raw!r}", code=PROVIDER_ERROR, cause=exc
                ) from exc
            calls.append(ParsedToolCall(id=state.call.id, name=state.call.name, arguments=arguments))
        return calls


class StrictJsonArguments(HookedAnthropicAdapter):
    stream_class = _StrictJsonStream


class _OneCallStream(HookedMessagesStream):
    async def _block_start(self, payload: dict[str, Any]) -> None:
        block, index = payload.get("content_block"), payload.get("index")
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_use"
            and self._calls
            and isinstance(index, int)
        ):
            self._blocks[index] = self._calls[0]  # Bug: "the" tool call; a second block's index is ignored
            return
        await super()._block_start(payload)


class MergesParallelToolUse(HookedAnthropicAdapter):
    stream_class = _OneCallStream


# --- STR: streaming callbacks --------------------------------------------------------------------------------


class _SilentThinkingEndStream(HookedMessagesStream):
    async def _close(self, state: _Block) -> None:
        if state.stopped:
            return
        state.stopped = True
        if state.type == "thinking":
            self._signature = "".join(state.signature) or self._signature
            # Bug: no on_thinking("", True): "the text that follows shows the thinking is over"


class NoThinkingCompletion(HookedAnthropicAdapter):
    stream_class = _SilentThinkingEndStream


# --- ERR: errors ---------------------------------------------------------------------------------------------


class Overloaded529AsProviderError(AnthropicAdapter):
    async def _status_error(self, response: httpx.Response) -> HelixError:
        error = await super()._status_error(response)
        if response.status_code == 529:
            error.code = PROVIDER_ERROR  # Bug: "an unknown 5xx"; 529 is Anthropic's overloaded
        return error


class _UntypedStreamErrorStream(HookedMessagesStream):
    async def _event(self, event: SSEEvent) -> bool:
        if event.event == "error":  # Bug: the error's `type` is never read: every stream error is the same
            raise HelixError(f"anthropic: stream error: {event.data}", code=PROVIDER_ERROR, retryable=True)
        return await super()._event(event)


class UntypedStreamErrors(HookedAnthropicAdapter):
    stream_class = _UntypedStreamErrorStream


class _NoMessageStopStream(HookedMessagesStream):
    def on_incomplete(self) -> None:
        pass  # Bug: "message_stop is a formality": a stream that just ends is a finished message


class AcceptsMissingMessageStop(HookedAnthropicAdapter):
    stream_class = _NoMessageStopStream


ADAPTERS: list[BrokenAdapter] = [
    broken_anthropic(
        "anthropic_drops_thinking_signature",
        DropsThinkingSignature,
        "MSG-08",
        ["thinking_text", "thinking_tool_call", "thinking_finish_tool", "thinking_redacted"],
        "Ignores signature_delta events: the result's thinking has no signature to send back.",
    ),
    broken_anthropic(
        "anthropic_ignores_redacted_thinking",
        IgnoresRedactedThinking,
        "MSG-08",
        ["thinking_history"],
        "Drops redacted_thinking blocks: not kept on the result, not sent back in the history.",
    ),
    broken_anthropic(
        "anthropic_ignores_redacted_thinking_on_the_result",
        IgnoresRedactedThinking,
        "RES-08",
        ["thinking_redacted"],
        "Drops redacted_thinking blocks from the stream: the result's thinking has none to send back.",
    ),
    broken_anthropic(
        "anthropic_drops_thinking_from_history",
        DropsThinkingFromHistory,
        "MSG-08",
        ["thinking_history"],
        "Leaves the signed thinking of the history's tool-use turn out of the request.",
    ),
    broken_anthropic(
        "anthropic_old_stop_reason_table",
        OldStopReasonTable,
        "STOP-01",
        ["stop_pause_turn", "stop_context_window"],
        "Maps pause_turn and model_context_window_exceeded to unknown (pause_turn: SHOULD, still 'failed').",
    ),
    broken_anthropic(
        "anthropic_refusal_as_end_turn",
        RefusalAsEndTurn,
        "STOP-02",
        ["stop_refusal_no_content"],
        "Maps stop reasons missing from its table, refusal included, to end_turn.",
    ),
    broken_anthropic(
        "anthropic_empty_response_is_error",
        EmptyResponseIsError,
        "STOP-02",
        ["stop_refusal_no_content"],
        "Returns an error for a message with no content block (a refusal has none).",
    ),
    broken_anthropic(
        "anthropic_first_json_delta_is_the_input",
        FirstJsonDeltaIsTheInput,
        "RES-04",
        ["tool_call", "tool_call_typed_arguments"],
        'Takes the first input_json_delta (always "") as the complete input: every call gets {}.',
    ),
    broken_anthropic(
        "anthropic_strict_json_arguments",
        StrictJsonArguments,
        "RES-05",
        ["tool_call_no_arguments"],
        'json.loads() the streamed input as is: the "" of a tool without arguments becomes an error.',
    ),
    broken_anthropic(
        "anthropic_merges_parallel_tool_use",
        MergesParallelToolUse,
        "RES-06",
        ["tool_call_parallel"],
        "Keeps one tool call per message, ignoring the block index: parallel tool_use blocks are merged.",
    ),
    broken_anthropic(
        "anthropic_no_thinking_completion",
        NoThinkingCompletion,
        "STR-03",
        ["thinking_text", "thinking_tool_call", "thinking_redacted"],
        "Streams thinking deltas but never calls on_thinking(_, True) when a thinking block ends.",
    ),
    broken_anthropic(
        "anthropic_529_as_provider_error",
        Overloaded529AsProviderError,
        "ERR-01",
        ["http_529"],
        "Maps HTTP 529 (overloaded) to provider_error.",
    ),
    broken_anthropic(
        "anthropic_untyped_stream_errors",
        UntypedStreamErrors,
        "ERR-03",
        ["midstream_overloaded", "midstream_rate_limit"],
        "Codes every error event of a 200 stream provider_error, whatever its type.",
    ),
    broken_anthropic(
        "anthropic_accepts_missing_message_stop",
        AcceptsMissingMessageStop,
        "ERR-04",
        ["truncated_stream"],
        "Returns the text of a stream that ended without message_stop as a finished message.",
    ),
]
