"""Broken OpenAI Chat adapters from real traffic (issue 18): each breaks on a stream shape a server really sends.

Every one is the reference adapter with one tolerance taken away, the way field adapters were written: they
work against OpenAI itself and fail on interleaved parallel calls, index-less deltas, missing or repeated ids,
a call sent twice, Mistral's typed parts, ``reasoning_details``, a ``[DONE]`` with no finish_reason, Azure's
annotation chunks, Perplexity's ``chat.completion.done``, OpenRouter's null finish_reason on the usage chunk,
Snowflake's empty refusal, or SSE framing the standard allows (the scenarios are in ``scenarios/compat.py``).
"""

from __future__ import annotations

import codecs
from typing import Any

from helix_conformance.contract import ParsedToolCall, StepResult, StopReason
from reference_adapters._http import ToolCallBuffer, parse_tool_calls
from reference_adapters._sse import SSEDecoder, SSEEvent
from reference_adapters.openai_chat import PROVIDER

from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken

# --- RES-06, RES-03, RES-04: assembling tool calls ----------------------------------------------------------


class _LatestCallStream(HookedChatStream):
    def _slot(self, index: Any, call_id: str, position: int) -> ToolCallBuffer:
        # Bug: a delta with an id opens a call, one without continues the latest: `index` is never read.
        known = next((b for b in self._calls if call_id and b.id == call_id), None)
        if known is not None:
            return known
        return self._add_call() if call_id or not self._calls else self._calls[-1]


class ContinuesTheLatestCall(HookedAdapter):
    stream_class = _LatestCallStream


class _CallPerIdStream(HookedChatStream):
    def _slot(self, index: Any, call_id: str, position: int) -> ToolCallBuffer:
        if isinstance(index, int) or not call_id:
            return super()._slot(index, call_id, position)
        return self._add_call()  # Bug: without `index`, every delta that carries an id is a new call


class OpensACallPerId(HookedAdapter):
    stream_class = _CallPerIdStream


class _ProviderIdsStream(HookedChatStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        calls = parse_tool_calls(self._calls, PROVIDER)
        # Bug: the ids exactly as the server sent them: "" or the same id twice go through.
        return [c.model_copy(update={"id": b.id}) for c, b in zip(calls, self._calls)]


class TrustsProviderIds(HookedAdapter):
    stream_class = _ProviderIdsStream


class _AppendsEverythingStream(HookedChatStream):
    def _tool_delta(self, entry: dict[str, Any], position: int) -> None:
        before = sum(len(b.arguments) for b in self._calls)
        super()._tool_delta(entry, position)
        function = entry.get("function")
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(arguments, str) and sum(len(b.arguments) for b in self._calls) == before:
            # Bug: every fragment is appended, the call sent again whole included: `{...}{...}`.
            self._slot(entry.get("index"), entry.get("id") or "", position).arguments.append(arguments)


class AppendsEveryFragment(HookedAdapter):
    stream_class = _AppendsEverythingStream


# --- RES-08: reasoning in other fields ----------------------------------------------------------------------


class _StringContentStream(HookedChatStream):
    async def _typed_part(self, part: Any) -> None:
        return None  # Bug: `content` is read as a string only; Mistral's list of typed parts is skipped


class ReadsOnlyStringContent(HookedAdapter):
    stream_class = _StringContentStream


class _NoDetailsStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict) and "reasoning_details" in delta:  # Bug: reasoning_details never read
            choice = {**choice, "delta": {k: v for k, v in delta.items() if k != "reasoning_details"}}
        await super()._choice(choice)


class IgnoresReasoningDetails(HookedAdapter):
    stream_class = _NoDetailsStream


# --- STOP-01, RES-09: what ends a stream, and its finish reason ----------------------------------------------


class _NeedsFinishReasonStream(HookedChatStream):
    async def result(self) -> StepResult:
        if self._finish_reason is None:
            self.on_incomplete()  # Bug: [DONE] without a finish_reason taken for a dropped stream
        return await super().result()


class NeedsAFinishReason(HookedAdapter):
    stream_class = _NeedsFinishReasonStream


class _DefaultsToEndTurnStream(HookedChatStream):
    def text_stop_reason(self) -> StopReason:
        if self._finish_reason is None and not self._refused:
            return "end_turn"  # Bug: no finish_reason read as a natural end
        return super().text_stop_reason()


class NoFinishReasonIsEndTurn(HookedAdapter):
    stream_class = _DefaultsToEndTurnStream


class _ChunkObjectsOnlyStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        if '"object":"chat.completion.done"' in event.data.replace(" ", ""):
            return False  # Bug: only `chat.completion.chunk` objects are read; Perplexity's last one is not
        return await super()._event(event)


class ReadsOnlyChunkObjects(HookedAdapter):
    stream_class = _ChunkObjectsOnlyStream


class _LastFinishWinsStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        await super()._choice(choice)
        self._finish_reason = choice.get("finish_reason")  # Bug: every chunk's finish_reason, null included


class LastFinishReasonWins(HookedAdapter):
    stream_class = _LastFinishWinsStream


class _AnyRefusalStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict) and delta.get("refusal") is not None:
            self._refused = True  # Bug: `refusal is not None` instead of a non-empty refusal
        await super()._choice(choice)


class AnyRefusalFieldRefuses(HookedAdapter):
    stream_class = _AnyRefusalStream


# --- RES-12: chunks without a delta, SSE framing --------------------------------------------------------------


class _DeltaRequiredStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice["delta"]  # Bug: every choice is assumed to carry a delta (Azure's annotations do not)
        await super()._choice({**choice, "delta": delta})


class RequiresADelta(HookedAdapter):
    stream_class = _DeltaRequiredStream


class _LfOnlyDecoder(SSEDecoder):
    """A hand-rolled line splitter: ``split("\\n")`` with a trailing ``\\r`` stripped."""

    def __init__(self) -> None:
        super().__init__()
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._rest = ""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        *lines, self._rest = (self._rest + self._text.decode(chunk)).split("\n")  # Bug: a lone CR is no break
        return self._process_lines([line.removesuffix("\r") for line in lines])

    def close(self) -> list[SSEEvent]:
        events = self._process_lines([self._rest]) if self._rest else []
        return events + super().close()


class SplitsLinesOnLfOnly(HookedAdapter):
    def make_decoder(self) -> SSEDecoder:
        return _LfOnlyDecoder()


class _UnnamedEventsStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        if event.event is not None:
            return False  # Bug: a named event (even `event: message`) is taken for something else than data
        return await super()._event(event)


class ReadsOnlyUnnamedEvents(HookedAdapter):
    stream_class = _UnnamedEventsStream


class _DataSpaceDecoder(SSEDecoder):
    """The field parsing of many hand-written clients: ``line.startswith("data: ")``, then ``line[6:]``."""

    def _process_lines(self, lines: list[str]) -> list[SSEEvent]:
        # Bug: `data:{...}` (no space, which the standard allows) is not taken for a data line
        kept = [line for line in lines if line.startswith("data: ") or not line.startswith("data:")]
        return super()._process_lines(kept)


class NeedsASpaceAfterData(HookedAdapter):
    def make_decoder(self) -> SSEDecoder:
        return _DataSpaceDecoder()


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "continues_the_latest_call",
        ContinuesTheLatestCall,
        "RES-06",
        ["compat_interleaved_tool_calls"],
        "Ignores `index`: an id-less fragment continues the latest call, so interleaved calls get each "
        "other's arguments.",
    ),
    broken(
        "opens_a_call_per_id",
        OpensACallPerId,
        "RES-06",
        ["compat_tool_deltas_by_id"],
        "Without `index`, opens a new call for every delta carrying an id: each fragment becomes a call.",
    ),
    broken(
        "trusts_provider_ids",
        TrustsProviderIds,
        "RES-03",
        ["compat_tool_calls_without_ids", "compat_duplicate_tool_ids"],
        'Returns the ids exactly as sent: "" (Gemini\'s compatible endpoint) or one id twice (GLM, DeepSeek).',
    ),
    broken(
        "appends_every_fragment",
        AppendsEveryFragment,
        "RES-04",
        ["compat_repeated_whole_call"],
        "Appends every argument fragment, the call sent again whole included: `{...}{...}` is no JSON.",
    ),
    broken(
        "reads_only_string_content",
        ReadsOnlyStringContent,
        "RES-08",
        ["compat_typed_content_parts"],
        "Reads `delta.content` as a string only: Mistral's typed thinking parts are lost.",
    ),
    broken(
        "ignores_reasoning_details",
        IgnoresReasoningDetails,
        "RES-08",
        ["compat_reasoning_details"],
        "Reads `reasoning_content` and `reasoning` only: reasoning sent in `reasoning_details` alone is lost.",
    ),
    broken(
        "needs_a_finish_reason",
        NeedsAFinishReason,
        "STOP-01",
        ["compat_done_without_finish_reason"],
        "Takes a stream that ends with [DONE] but no finish_reason for a dropped one: an error, not the text.",
    ),
    broken(
        "needs_a_finish_reason_for_tool_calls",
        NeedsAFinishReason,
        "RES-09",
        ["compat_tool_calls_done_without_finish_reason"],
        "The same, on a tool call: the call is lost to an error although [DONE] ended the stream.",
    ),
    broken(
        "no_finish_reason_is_end_turn",
        NoFinishReasonIsEndTurn,
        "STOP-01",
        ["compat_done_without_finish_reason"],
        "Reports a text step whose stream gave no finish_reason as end_turn, not unknown.",
    ),
    broken(
        "reads_only_chunk_objects",
        ReadsOnlyChunkObjects,
        "STOP-01",
        ["compat_completion_done_object"],
        'Skips chunks whose object is not "chat.completion.chunk": Perplexity\'s finish_reason is never read.',
    ),
    broken(
        "last_finish_reason_wins",
        LastFinishReasonWins,
        "STOP-01",
        ["compat_usage_resets_finish"],
        "Takes each chunk's finish_reason: OpenRouter's usage chunk resets it to null.",
    ),
    broken(
        "any_refusal_field_refuses",
        AnyRefusalFieldRefuses,
        "STOP-01",
        ["compat_empty_refusal"],
        'Treats any `refusal` field as a refusal: Snowflake\'s `"refusal": ""` turns every answer into one.',
    ),
    broken(
        "requires_a_delta",
        RequiresADelta,
        "RES-12",
        ["compat_annotation_after_finish"],
        "Reads `choice['delta']` unconditionally: Azure's annotation chunk (no delta) fails the step.",
    ),
    broken(
        "splits_lines_on_lf_only",
        SplitsLinesOnLfOnly,
        "RES-12",
        ["compat_sse_framing"],
        "Splits SSE lines on LF only: a stream whose lines end with a lone CR is one unreadable line.",
    ),
    broken(
        "reads_only_unnamed_events",
        ReadsOnlyUnnamedEvents,
        "RES-12",
        ["compat_sse_framing"],
        "Skips every event that has an `event:` name, `event: message` (the default type) included.",
    ),
    broken(
        "needs_a_space_after_data",
        NeedsASpaceAfterData,
        "RES-12",
        ["compat_sse_framing"],
        "Reads only `data: ` lines: a server that writes `data:{...}` (Spring's SSE writer, LongCat) streams "
        "nothing it reads.",
    ),
]
