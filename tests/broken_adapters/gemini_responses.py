"""Broken Gemini adapters, response side: the stream a Chat Completions port gets wrong.

Each is ``reference_adapters.gemini`` with one decision of the hooked ``_GeminiStream`` changed, or its SSE
decoder or error mapping: ``\\r\\n\\r\\n`` framing, ``thought: true`` parts and the ``thoughtSignature`` that may
ride on any part, function calls without ids (the adapter's own must be unique and stable), several calls in
one chunk, STOP as the finishReason of a tool-calling turn, a blocked prompt with no candidates, the long
finishReason table, errors written as raw JSON into a 200 stream and RetryInfo in an error body.
"""

from __future__ import annotations

from typing import Any, cast

import httpx

from helix_conformance.contract import (
    PROVIDER_ERROR,
    HelixError,
    ParsedToolCall,
    StepResult,
    StopReason,
    ThinkingContent,
)
from reference_adapters._sse import SSEDecoder, SSEEvent

from ._base import BrokenAdapter
from ._gemini_base import Decoder, HookedGeminiAdapter, HookedGeminiStream, broken_gemini

# --- STR: framing and callbacks ------------------------------------------------------------------------------


class _BlankLineDecoder:
    """Hands the SSE parser only what precedes a ``\\n\\n``: the framing of the OpenAI and Anthropic streams."""

    def __init__(self) -> None:
        self._inner = SSEDecoder(keep_stray_lines=True)
        self._pending = b""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        # Bug: events end at "\n\n"; Gemini ends them with "\r\n\r\n", so nothing is parsed before the end.
        head, blank, self._pending = (self._pending + chunk).rpartition(b"\n\n")
        return self._inner.feed(head + blank) if blank else []

    def close(self) -> list[SSEEvent]:
        rest, self._pending = self._pending, b""
        return self._inner.feed(rest) + self._inner.close()


class SplitsOnLfLfOnly(HookedGeminiAdapter):
    def make_decoder(self) -> Decoder:
        return _BlankLineDecoder()


class _EmptyDeltaStream(HookedGeminiStream):
    async def _part(self, part: dict[str, Any]) -> None:
        if part.get("text") == "" and not part.get("thought"):
            await self._emit.text("")  # Bug: every text part is a delta, the final chunk's "" included
        await super()._part(part)


class EmitsEmptyTextDelta(HookedGeminiAdapter):
    stream_class = _EmptyDeltaStream


class _ThoughtDeltaStream(HookedGeminiStream):
    async def _part(self, part: dict[str, Any]) -> None:
        text = part.get("text")
        if part.get("thought") is True and isinstance(text, str) and text:
            await self._emit.text(text)  # Bug: on_text_delta for every text part, thoughts included
        await super()._part(part)


class StreamsThoughtsAsText(HookedGeminiAdapter):
    stream_class = _ThoughtDeltaStream


class _SilentThinkingEndStream(HookedGeminiStream):
    async def _end_thinking(self) -> None:
        self._in_thinking = False  # Bug: no on_thinking("", True): "the text that follows shows it is over"


class NoThinkingCompletion(HookedGeminiAdapter):
    stream_class = _SilentThinkingEndStream


# --- RES / MSG-08: thinking ----------------------------------------------------------------------------------


class _ThoughtBlindStream(HookedGeminiStream):
    async def _part(self, part: dict[str, Any]) -> None:
        # Bug: `thought` is not read: reasoning is answer text, and no thinking is returned.
        await super()._part({k: v for k, v in part.items() if k != "thought"})


class ThoughtsAsText(HookedGeminiAdapter):
    stream_class = _ThoughtBlindStream


class _SignatureOnThoughtsStream(HookedGeminiStream):
    async def _part(self, part: dict[str, Any]) -> None:
        if part.get("thought") is not True:
            # Bug: the signature is looked for on thought parts only; Gemini puts it on the part after them.
            part = {k: v for k, v in part.items() if k != "thoughtSignature"}
        await super()._part(part)


class SignatureOnlyOnThoughts(HookedGeminiAdapter):
    stream_class = _SignatureOnThoughtsStream


# --- RES: tool calls -----------------------------------------------------------------------------------------


class _NameIsIdStream(HookedGeminiStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: "Gemini links calls by name", so the name is the id: two calls of one tool share it.
        return [call.model_copy(update={"id": call.name}) for call in super().parse_calls()]


class ToolNameAsCallId(HookedGeminiAdapter):
    stream_class = _NameIsIdStream


class _FirstPartStream(HookedGeminiStream):
    async def _candidate(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        if isinstance(content, dict) and isinstance(content.get("parts"), list):
            # Bug: `candidates[0].content.parts[0]`, as in the quickstart: a chunk has "the" part.
            candidate = {**candidate, "content": {**content, "parts": content["parts"][:1]}}
        await super()._candidate(candidate)


class FirstPartOnly(HookedGeminiAdapter):
    stream_class = _FirstPartStream


class _CallsNeedToolFinishStream(HookedGeminiStream):
    def has_tool_calls(self) -> bool:
        # Bug: "tool calls come with a tool finish reason" (OpenAI's tool_calls); Gemini says STOP.
        return bool(self._calls) and self._finish_reason != "STOP"


class StopWithCallsIsText(HookedGeminiAdapter):
    stream_class = _CallsNeedToolFinishStream


# --- STOP: finish reasons ------------------------------------------------------------------------------------

_SHORT_TABLE: dict[str, StopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
}


class _EndTurnByDefaultStream(HookedGeminiStream):
    stop_reasons = _SHORT_TABLE

    def stop_reason(self) -> StopReason:
        return self.stop_reasons.get(self._finish_reason or "", "end_turn")  # Bug: "it stopped, so it ended"


class EndTurnByDefault(HookedGeminiAdapter):
    stream_class = _EndTurnByDefaultStream


class _PassThroughStream(HookedGeminiStream):
    stop_reasons = _SHORT_TABLE

    def stop_reason(self) -> StopReason:
        reason = self._finish_reason or ""
        # Bug: an unknown reason is passed through lower-cased ("recitation"): no canonical stop reason.
        return self.stop_reasons.get(reason, cast(StopReason, reason.lower()))


class PassesFinishReasonThrough(HookedGeminiAdapter):
    stream_class = _PassThroughStream


class _FilterIsErrorStream(HookedGeminiStream):
    def text_result(self, text: str, thinking: ThinkingContent | None, stop: StopReason) -> StepResult:
        if stop == "content_filter":  # Bug: "blocked by a safety filter" is a failed request
            raise HelixError(f"gemini: response blocked ({self._finish_reason})", code=PROVIDER_ERROR)
        return super().text_result(text, thinking, stop)


class FilterIsError(HookedGeminiAdapter):
    stream_class = _FilterIsErrorStream


class _NoPromptFeedbackStream(HookedGeminiStream):
    async def _event(self, event: SSEEvent) -> bool:
        if '"promptFeedback"' in event.data and '"candidates"' not in event.data:
            return False  # Bug: a chunk without candidates carries nothing to read
        return await super()._event(event)


class IgnoresPromptFeedback(HookedGeminiAdapter):
    stream_class = _NoPromptFeedbackStream


# --- ERR / CFG-05: errors ------------------------------------------------------------------------------------


class IgnoresRawJsonErrors(HookedGeminiAdapter):
    def make_decoder(self) -> Decoder:
        return SSEDecoder()  # Bug: lines that are not SSE fields are skipped, the raw JSON error with them


class _NoFinishNeededStream(HookedGeminiStream):
    def on_incomplete(self) -> None:
        pass  # Bug: "the stream ended, so the answer is complete"


class AcceptsMissingFinishReason(HookedGeminiAdapter):
    stream_class = _NoFinishNeededStream


class IgnoresRetryInfo(HookedGeminiAdapter):
    async def _status_error(self, response: httpx.Response) -> tuple[HelixError, httpx.Headers]:
        error, _ = await super()._status_error(response)
        return error, response.headers  # Bug: only retry-after headers count; Gemini sends RetryInfo


class QuotaIsNotRetryable(HookedGeminiAdapter):
    async def _status_error(self, response: httpx.Response) -> tuple[HelixError, httpx.Headers]:
        error, hints = await super()._status_error(response)
        if response.status_code == 429 and "quota" in str(error):
            error.retryable = False  # Bug: OpenAI's insufficient_quota rule; Gemini's 429 always says quota
        return error, hints


class _UntypedStreamErrorStream(HookedGeminiStream):
    def _raw_line(self, line: str) -> bool:
        try:
            return super()._raw_line(line)
        except HelixError as error:  # Bug: the error's status is never read: every stream error is alike
            raise HelixError(f"gemini: stream error: {error}", code=PROVIDER_ERROR, retryable=True) from None


class UntypedStreamErrors(HookedGeminiAdapter):
    stream_class = _UntypedStreamErrorStream


ADAPTERS: list[BrokenAdapter] = [
    broken_gemini(
        "gemini_splits_on_lf_lf_only",
        SplitsOnLfLfOnly,
        "STR-02",
        ["text_basic", "tool_result_roundtrip"],
        'Waits for "\\n\\n" to end an event: on Gemini\'s "\\r\\n\\r\\n" framing it parses only at the end.',
    ),
    broken_gemini(
        "gemini_emits_empty_text_delta",
        EmitsEmptyTextDelta,
        "STR-01",
        ["text_basic", "stop_sequence"],
        'Calls on_text_delta("") for the empty text part of the final chunk.',
    ),
    broken_gemini(
        "gemini_streams_thoughts_as_text",
        StreamsThoughtsAsText,
        "STR-01",
        ["thinking_text"],
        "Calls on_text_delta for thought parts too (the result keeps them apart).",
    ),
    broken_gemini(
        "gemini_no_thinking_completion",
        NoThinkingCompletion,
        "STR-03",
        ["thinking_text", "thinking_tool_call"],
        "Streams thought parts but never calls on_thinking(_, True) when the thinking ends.",
    ),
    broken_gemini(
        "gemini_thoughts_as_text",
        ThoughtsAsText,
        "RES-08",
        ["thinking_text", "thinking_tool_call"],
        "Ignores thought: true: reasoning is returned as answer text, with no thinking.",
    ),
    broken_gemini(
        "gemini_signature_only_on_thoughts",
        SignatureOnlyOnThoughts,
        "MSG-08",
        ["thinking_text", "thinking_tool_call", "thinking_finish_tool"],
        "Reads thoughtSignature on thought parts only; Gemini puts it on the text or call after them.",
    ),
    broken_gemini(
        "gemini_tool_name_as_call_id",
        ToolNameAsCallId,
        "RES-03",
        ["tool_call_parallel"],
        "Uses the tool name as the call id: two calls of one tool share it.",
    ),
    broken_gemini(
        "gemini_first_part_only",
        FirstPartOnly,
        "RES-06",
        ["tool_call_parallel"],
        "Reads only parts[0] of each chunk: the second of two calls sent together is lost.",
    ),
    broken_gemini(
        "gemini_stop_with_calls_is_text",
        StopWithCallsIsText,
        "RES-09",
        ["tool_call", "tool_call_parallel"],
        "Returns function calls only with a non-STOP finish reason: a tool-calling turn becomes text.",
    ),
    broken_gemini(
        "gemini_end_turn_by_default",
        EndTurnByDefault,
        "STOP-01",
        ["stop_prompt_blocked", "stop_recitation", "stop_malformed_function_call"],
        "Knows STOP, MAX_TOKENS and SAFETY; anything else (RECITATION, a blocked prompt...) is end_turn.",
    ),
    broken_gemini(
        "gemini_passes_finish_reason_through",
        PassesFinishReasonThrough,
        "STOP-01",
        ["stop_recitation", "stop_malformed_function_call"],
        "Passes finish reasons missing from its table through, lower-cased.",
    ),
    broken_gemini(
        "gemini_filter_is_error",
        FilterIsError,
        "STOP-02",
        ["stop_content_filter", "stop_recitation", "stop_prompt_blocked"],
        "Returns an error for a response stopped by a filter (SAFETY, RECITATION, a blocked prompt).",
    ),
    broken_gemini(
        "gemini_ignores_prompt_feedback",
        IgnoresPromptFeedback,
        "STOP-02",
        ["stop_prompt_blocked"],
        "Skips chunks without candidates: a blocked prompt ends with no finishReason, an error.",
    ),
    broken_gemini(
        "gemini_ignores_raw_json_errors",
        IgnoresRawJsonErrors,
        "ERR-03",
        ["midstream_overloaded", "midstream_rate_limit"],
        "Skips lines that are not SSE fields: an error written as raw JSON is lost with them.",
    ),
    broken_gemini(
        "gemini_untyped_stream_errors",
        UntypedStreamErrors,
        "ERR-03",
        ["midstream_overloaded", "midstream_rate_limit"],
        "Codes every error written into a 200 stream provider_error, whatever its status.",
    ),
    broken_gemini(
        "gemini_accepts_missing_finish_reason",
        AcceptsMissingFinishReason,
        "ERR-04",
        ["truncated_stream"],
        "Returns the text of a stream that ended without a finishReason as a finished answer.",
    ),
    broken_gemini(
        "gemini_ignores_retry_info",
        IgnoresRetryInfo,
        "CFG-05",
        ["retry_429_then_success"],
        "Retries a 429 at once: the RetryInfo delay in the error body is ignored (SHOULD).",
    ),
    broken_gemini(
        "gemini_quota_is_not_retryable",
        QuotaIsNotRetryable,
        "ERR-02",
        ["http_429"],
        "Makes a 429 that mentions quota non-retryable (OpenAI's insufficient_quota); Gemini's always does.",
    ),
]
