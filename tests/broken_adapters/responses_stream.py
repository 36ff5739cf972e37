"""Broken Responses API adapters, response side: the typed events read the Chat Completions way.

Each is ``reference_adapters.openai_responses`` with one decision of its stream reader changed: calls named
by their item id (``fc_…``) instead of ``call_id``, or keyed by name so parallel calls merge, the ``.done``
arguments appended to the deltas, ``response.incomplete`` read as a natural end, reasoning summaries glued
to the text, the ``encrypted_content`` of ``output_item.added`` kept (incomplete), in-stream error codes
ignored, and ``response.failed`` raised instead of returned.
"""

from __future__ import annotations

from typing import Any

from helix_conformance.contract import (
    PROVIDER_ERROR,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    StepResult,
)
from reference_adapters._http import SafeCallbacks, ToolCallBuffer
from reference_adapters._sse import SSEEvent

from ._base import BrokenAdapter
from ._responses_base import HookedResponsesAdapter, HookedResponsesStream, broken_responses


def _adapter(stream: type[HookedResponsesStream]) -> type[HookedResponsesAdapter]:
    """The reference adapter reading its stream with ``stream``."""

    class Adapter(HookedResponsesAdapter):
        def _parser(self, emit: SafeCallbacks) -> HookedResponsesStream:
            return stream(emit, self._reasoning_ids)

    Adapter.__name__ = stream.__name__ + "Adapter"
    return Adapter


class CallsByItemId(HookedResponsesStream):
    async def _item(self, item: dict[str, Any], *, done: bool) -> None:
        await super()._item(item, done=done)
        buffer = self._calls.get(str(item.get("id")))
        if buffer is not None:
            buffer.id = str(item.get("id"))  # Bug: the output item's id (fc_…) taken for the call's id


class CallsByName(HookedResponsesStream):
    async def _item(self, item: dict[str, Any], *, done: bool) -> None:
        if item.get("type") == "function_call":  # Bug: one buffer per tool name, so parallel calls merge
            item = {**item, "id": item.get("name")}
        await super()._item(item, done=done)

    async def _content(self, kind: Any, payload: dict[str, Any]) -> None:
        if kind.startswith("response.function_call_arguments"):
            call = next(iter(self._calls.values()), ToolCallBuffer())
            payload = {**payload, "item_id": call.name}
        await super()._content(kind, payload)


class DoneAppendedToDeltas(HookedResponsesStream):
    async def _content(self, kind: Any, payload: dict[str, Any]) -> None:
        if kind == "response.function_call_arguments.done":  # Bug: .done read as one more fragment
            buffer = self._calls.get(str(payload.get("item_id")))
            if buffer is not None:
                buffer.arguments.append(str(payload.get("arguments")))
            return
        await super()._content(kind, payload)

    async def _item(self, item: dict[str, Any], *, done: bool) -> None:
        if done and item.get("type") == "function_call":
            return  # and the whole call at output_item.done never consulted
        await super()._item(item, done=done)


class IncompleteIsEndTurn(HookedResponsesStream):
    async def _event(self, event: SSEEvent) -> bool:
        if '"response.incomplete"' in event.data:  # Bug: any terminal event is a natural end
            self._status = "completed"
            return True
        return await super()._event(event)


class SummaryGluedToText(HookedResponsesStream):
    async def _reasoning(self, piece: Any) -> None:
        await self._visible(piece, refusal=False)  # Bug: summary deltas are "more output text"


class EncryptedFromAdded(HookedResponsesStream):
    async def _item(self, item: dict[str, Any], *, done: bool) -> None:
        if item.get("type") == "reasoning" and not done:  # Bug: the reasoning kept as first seen
            self._signature = self._signature or item.get("encrypted_content")
            return
        signature = self._signature
        await super()._item(item, done=done)
        if item.get("type") == "reasoning":
            self._signature = signature


class ErrorCodesIgnored(HookedResponsesStream):
    async def _event(self, event: SSEEvent) -> bool:
        try:
            return await super()._event(event)
        except HelixError as error:  # Bug: every in-stream failure is "a provider error"
            raise HelixError(str(error), code=PROVIDER_ERROR, cause=error.cause) from error


class RaisesOnFailed(HookedResponsesAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ErrorStepResult) and "stream error" in str(result.error):
            raise result.error  # Bug: response.failed treated as exceptional, not as a result
        return result


ADAPTERS: list[BrokenAdapter] = [
    broken_responses(
        "responses_calls_by_item_id",
        _adapter(CallsByItemId),
        "RES-03",
        ["tool_call", "text_and_tool_call"],
        "Returns the function_call item id (fc_…) as the tool call's id instead of its call_id.",
    ),
    broken_responses(
        "responses_calls_keyed_by_name",
        _adapter(CallsByName),
        "RES-06",
        ["tool_call_parallel"],
        "Keys streamed calls by tool name, so two parallel calls of one tool merge into one.",
    ),
    broken_responses(
        "responses_done_appended_to_deltas",
        _adapter(DoneAppendedToDeltas),
        "RES-04",
        ["tool_call", "tool_call_typed_arguments"],
        "Appends function_call_arguments.done to the deltas it already has: the arguments twice, not JSON.",
    ),
    broken_responses(
        "responses_incomplete_is_end_turn",
        _adapter(IncompleteIsEndTurn),
        "STOP-02",
        ["stop_max_tokens", "stop_content_filter"],
        "Reads response.incomplete as a natural end: a truncated or filtered step reports end_turn.",
    ),
    broken_responses(
        "responses_summary_glued_to_text",
        _adapter(SummaryGluedToText),
        "RES-08",
        ["thinking_text", "thinking_tool_call"],
        "Streams reasoning summary deltas as output text: no thinking on the result.",
    ),
    broken_responses(
        "responses_encrypted_from_added",
        _adapter(EncryptedFromAdded),
        "MSG-08",
        ["thinking_text", "thinking_tool_call"],
        "Keeps the encrypted_content of output_item.added, which is incomplete, not the one of .done.",
    ),
    broken_responses(
        "responses_error_codes_ignored",
        _adapter(ErrorCodesIgnored),
        "ERR-03",
        ["midstream_rate_limit", "midstream_overloaded"],
        "Maps every error event and response.failed to provider_error, whatever its code.",
    ),
    broken_responses(
        "responses_raises_on_failed",
        RaisesOnFailed,
        "NT-01",
        ["midstream_error", "midstream_rate_limit"],
        "Raises the error of response.failed out of generate_step instead of returning it.",
    ),
]
