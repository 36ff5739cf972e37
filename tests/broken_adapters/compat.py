"""Broken adapters that trip on OpenAI-compatible servers' quirks (``scenarios/compat.py``, ``text_quirks``).

Each one works against OpenAI itself and breaks on a stream shape a compatible server really sends (Mistral,
Groq, OpenRouter, Azure, Claude behind a proxy; see ../shared/recordings): it is the reference adapter with
one of its tolerances taken away.
"""

from __future__ import annotations

from typing import Any

from reference_adapters._http import ToolCallBuffer
from reference_adapters._sse import SSEDecoder, SSEEvent

from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken

# --- tool-call deltas -----------------------------------------------------------------------------------


class _IndexDefaultsToZeroStream(HookedChatStream):
    def _slot(self, index: Any, call_id: str, position: int) -> ToolCallBuffer:
        # Bug: `delta["index"]` is assumed; without one (Mistral) every call lands in slot 0.
        return super()._slot(index if isinstance(index, int) else 0, call_id, position)


class RequiresToolCallIndex(HookedAdapter):
    stream_class = _IndexDefaultsToZeroStream


class _ListPositionStream(HookedChatStream):
    def _slot(self, index: Any, call_id: str, position: int) -> ToolCallBuffer:
        # Bug: `index` taken as a list position: a new call only when index == len(calls), else calls[index].
        if index == len(self._calls):
            return self._add_call()
        buffer: ToolCallBuffer = self._calls[index]  # IndexError when the first index is 1
        return buffer


class IndexIsAListPosition(HookedAdapter):
    stream_class = _ListPositionStream


class _NameOverwrittenStream(HookedChatStream):
    def _tool_delta(self, entry: dict[str, Any], position: int) -> None:
        super()._tool_delta(entry, position)
        function = entry.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str):  # Bug: every delta's name is taken, the repeated "" included
            self._slot(entry.get("index"), "", position).name = name


class OverwritesNameWithLaterDeltas(HookedAdapter):
    stream_class = _NameOverwrittenStream


# --- reasoning, comments, foreign chunks, late errors ------------------------------------------------------


class _ReasoningContentOnlyStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict) and "reasoning" in delta:  # Bug: only DeepSeek's `reasoning_content`
            choice = {**choice, "delta": {k: v for k, v in delta.items() if k != "reasoning"}}
        await super()._choice(choice)


class ReadsOnlyReasoningContent(HookedAdapter):
    stream_class = _ReasoningContentOnlyStream


class _CommentsAsDataDecoder(SSEDecoder):
    def _process_lines(self, lines: list[str]) -> list[SSEEvent]:
        # Bug: a hand-rolled parser that strips any "xxx:" prefix and treats the rest as data.
        return super()._process_lines(
            [f"data:{line[1:]}" if line.startswith(":") else line for line in lines]
        )


class TreatsCommentLinesAsData(HookedAdapter):
    def make_decoder(self) -> SSEDecoder:
        return _CommentsAsDataDecoder()


class _StrictObjectStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        data = event.data.strip()
        if data.startswith("{") and '"object":"chat.completion.chunk"' not in data.replace(" ", ""):
            raise ValueError(f"not a chat.completion.chunk: {data[:60]}")  # Bug: rejects Azure's first chunk
        return await super()._event(event)


class RejectsChunksOfOtherObjects(HookedAdapter):
    stream_class = _StrictObjectStream


class _StopsAtFinishStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        await super()._choice(choice)
        if self._finish_reason is not None:
            self._done = True  # Bug: a finish_reason taken as the end of the stream; what follows is unread

    async def _event(self, event: SSEEvent) -> bool:
        return self._done or await super()._event(event)


class StopsReadingAtFinishReason(HookedAdapter):
    stream_class = _StopsAtFinishStream


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "requires_tool_call_index",
        RequiresToolCallIndex,
        "RES-06",
        ["compat_tool_calls_without_index"],
        "Keys tool-call deltas by `index`, defaulting to 0: Mistral's index-less calls merge into one.",
    ),
    broken(
        "index_is_a_list_position",
        IndexIsAListPosition,
        "RES-06",
        ["compat_tool_index_from_one"],
        "Uses the delta `index` as a list position: a first call with index 1 raises IndexError.",
    ),
    broken(
        "overwrites_name_with_later_deltas",
        OverwritesNameWithLaterDeltas,
        "RES-06",
        ["compat_repeated_empty_name"],
        'Takes the name of every delta: a later delta\'s repeated `"name": ""` erases it.',
    ),
    broken(
        "reads_only_reasoning_content",
        ReadsOnlyReasoningContent,
        "RES-08",
        ["compat_reasoning_field"],
        "Reads DeepSeek's `reasoning_content` only: Groq/OpenRouter/Ollama `reasoning` is lost.",
    ),
    broken(
        "treats_comment_lines_as_data",
        TreatsCommentLinesAsData,
        "RES-12",
        ["text_quirks"],
        "Parses `: OPENROUTER PROCESSING` comment lines as data: the step fails on invalid JSON.",
    ),
    broken(
        "rejects_chunks_of_other_objects",
        RejectsChunksOfOtherObjects,
        "RES-12",
        ["text_quirks"],
        'Rejects any chunk whose object is not "chat.completion.chunk": Azure\'s first chunk fails the step.',
    ),
    broken(
        "stops_reading_at_finish_reason",
        StopsReadingAtFinishReason,
        "ERR-03",
        ["compat_error_after_finish"],
        "Ends the stream at the first finish_reason: OpenRouter's error chunk after it is never read.",
    ),
]
