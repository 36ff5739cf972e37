"""Broken adapters only the fault corpus catches: bugs that show in a tool, thinking or finish-less stream.

The hand-written fault scenarios break ``text_basic`` only (reset, truncation, error events, invalid JSON), and
each adapter here passes them: its bug needs a fault inside another kind of stream, which only the corpus
(``helix_conformance/replay/faults.py``, generated from every success cassette) serves.
``tests/test_fault_corpus.py`` proves that the same clause passes on the hand-written scenarios.
"""

from __future__ import annotations

import json

from helix_conformance.contract import (
    PROVIDER_ERROR,
    PROVIDER_OVERLOADED,
    HelixError,
    ParsedToolCall,
)
from reference_adapters._http import parse_tool_calls
from reference_adapters._sse import SSEEvent
from reference_adapters.openai_chat import PROVIDER

from ._anthropic_base import HookedAnthropicAdapter, HookedMessagesStream, broken_anthropic
from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken
from ._gemini_base import HookedGeminiAdapter, HookedGeminiStream, broken_gemini

# --- ERR-04: a stream cut off inside tool calls or between blocks is returned as a success ----------------


class _CallsCompleteWhenJsonParses(HookedChatStream):
    def on_incomplete(self) -> None:
        arguments = ["".join(call.arguments) or "{}" for call in self._calls]
        if self._calls and all(_parses(a) for a in arguments):
            return  # Bug: "the arguments parse, so the call is complete": no finish_reason is needed
        super().on_incomplete()


class CallsCompleteWhenJsonParses(HookedAdapter):
    stream_class = _CallsCompleteWhenJsonParses


class _PartialToolArgumentsReturned(HookedChatStream):
    def on_incomplete(self) -> None:
        if not self._calls:  # text streams are still refused: the text_basic faults pass
            super().on_incomplete()

    def parse_calls(self) -> list[ParsedToolCall]:
        for call in self._calls:  # Bug: cut-off arguments are "repaired" and returned as a real call
            call.arguments = [_close_json("".join(call.arguments))]
        return parse_tool_calls(self._calls, PROVIDER)


class PartialToolArgumentsReturned(HookedAdapter):
    stream_class = _PartialToolArgumentsReturned


class _CompleteWhenBlocksClosed(HookedMessagesStream):
    def on_incomplete(self) -> None:
        if self._stop_reason is not None:
            return  # a lost message_stop after the message_delta: the contract allows the full result
        if self._blocks and all(block.stopped for block in self._blocks.values()):
            return  # Bug: every block closed, so "the message is complete", though no stop_reason came
        super().on_incomplete()


class CompleteWhenBlocksClosed(HookedAnthropicAdapter):
    stream_class = _CompleteWhenBlocksClosed


# --- RES-12: an unknown event breaks the parser, but only inside a tool_use block ---------------------------

_KNOWN_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    }
)


class _UnknownEventInToolBlockRaises(HookedMessagesStream):
    async def _event(self, event: SSEEvent) -> bool:
        kind = event.event or ""
        tool_open = any(b.type == "tool_use" and not b.stopped for b in self._blocks.values())
        if tool_open and kind not in _KNOWN_EVENTS:
            # Bug: while a tool_use block streams, events are looked up in a table of the known ones
            raise KeyError(f"no handler for {kind!r} inside a tool_use block")
        return await super()._event(event)


class UnknownEventInToolBlockRaises(HookedAnthropicAdapter):
    stream_class = _UnknownEventInToolBlockRaises


# --- ERR-05: a malformed event inside a tool stream is skipped, the call returned as if nothing happened ---


class _SkipsBadJsonInToolStreams(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        if self._calls and not _parses(event.data.strip()) and event.data.strip() != "[DONE]":
            return False  # Bug: "tool deltas sometimes arrive garbled": skipped instead of an error
        return await super()._event(event)


class SkipsBadJsonInToolStreams(HookedAdapter):
    stream_class = _SkipsBadJsonInToolStreams


# --- ERR-03: an overloaded error after reasoning started is reported as a plain provider error -------------


class _OverloadedAfterThinkingIsServerError(HookedGeminiStream):
    async def _event(self, event: SSEEvent) -> bool:
        try:
            return await super()._event(event)
        except HelixError as error:
            if error.code == PROVIDER_OVERLOADED and self._has_thinking:
                # Bug: "an error after reasoning started is the model's failure": the 503 UNAVAILABLE
                # (retry later, elsewhere) becomes a generic provider_error
                raise HelixError(str(error), code=PROVIDER_ERROR, cause=error) from error
            raise


class OverloadedAfterThinkingIsServerError(HookedGeminiAdapter):
    stream_class = _OverloadedAfterThinkingIsServerError


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _close_json(raw: str) -> str:
    """Close what a cut-off JSON object left open, or give up with ``{}``: the 'repair' the bug does."""
    for suffix in ("", '"', "}", '"}', "]}", '"]}', "}}", '"}}'):
        if _parses(raw + suffix):
            return raw + suffix
    return "{}"


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "tool_call_complete_when_json_parses",
        CallsCompleteWhenJsonParses,
        "ERR-04",
        ["tool_call", "tool_call_parallel", "text_and_tool_call"],
        "A tool stream that ends without finish_reason is accepted once the arguments parse as JSON.",
    ),
    broken(
        "partial_tool_arguments_returned",
        PartialToolArgumentsReturned,
        "ERR-04",
        ["tool_call", "tool_call_parallel", "thinking_tool_call"],
        "A truncated tool-call stream is returned as a tool call, its cut-off arguments closed into JSON.",
    ),
    broken_anthropic(
        "anthropic_complete_when_blocks_closed",
        CompleteWhenBlocksClosed,
        "ERR-04",
        ["text_basic", "tool_call", "thinking_text"],
        "A stream cut after the last content_block_stop (no message_delta, no message_stop) is a success.",
    ),
    broken_anthropic(
        "anthropic_unknown_event_in_tool_block_raises",
        UnknownEventInToolBlockRaises,
        "RES-12",
        ["tool_call", "tool_call_parallel"],
        "An unknown event type inside a tool_use block makes the parser fail (outside one it is ignored).",
    ),
    broken(
        "skips_bad_json_in_tool_streams",
        SkipsBadJsonInToolStreams,
        "ERR-05",
        ["tool_call", "tool_call_parallel"],
        "Once a tool call streams, events that are not JSON are skipped instead of failing the step.",
    ),
    broken_gemini(
        "gemini_overloaded_after_thinking_is_server_error",
        OverloadedAfterThinkingIsServerError,
        "ERR-03",
        ["thinking_text", "thinking_tool_call"],
        "An in-stream 503 UNAVAILABLE after thought parts is reported as provider_error, not overloaded.",
    ),
]
