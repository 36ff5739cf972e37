"""Broken Anthropic and Gemini adapters from real traffic (issue 18): each breaks on a shape the API documents
or a live recording shows (the scenarios are in ``scenarios/wire_shapes.py`` and ``text_quirks``).

Every one is the hooked reference adapter with one tolerance taken away: an unknown delta type that raises, a
tool input read from deltas only, server tool blocks taken for client calls, an empty tool result wrapped in
an empty text block or left out, Gemini arguments read from ``args`` only, a whole call per functionCall
part, an error as a ``data:`` event read as an empty chunk, and a finishReason table without BLOCKLIST and
MODEL_ARMOR.
"""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.contract import (
    PROVIDER_ERROR,
    HelixError,
    LLMGenerateInput,
    ParsedToolCall,
)
from reference_adapters._http import ToolCallBuffer, parse_tool_calls
from reference_adapters._sse import SSEEvent
from reference_adapters.anthropic import PROVIDER as ANTHROPIC
from reference_adapters.gemini import _STOP_REASONS as GEMINI_STOP_REASONS

from ._anthropic_base import HookedAnthropicAdapter, HookedMessagesStream, broken_anthropic
from ._base import BrokenAdapter
from ._gemini_base import HookedGeminiAdapter, HookedGeminiStream, broken_gemini

# --- Anthropic Messages: the stream ---------------------------------------------------------------------

_KNOWN_DELTAS = ("text_delta", "thinking_delta", "signature_delta", "input_json_delta")


class _StrictDeltaStream(HookedMessagesStream):
    async def _block_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        kind = delta.get("type") if isinstance(delta, dict) else None
        if kind not in _KNOWN_DELTAS:  # Bug: an exhaustive match on the delta types of today
            raise HelixError(f"anthropic: unexpected delta type {kind!r}", code=PROVIDER_ERROR)
        await super()._block_delta(payload)


class RaisesOnUnknownDeltaTypes(HookedAnthropicAdapter):
    stream_class = _StrictDeltaStream


class _DeltasOnlyStream(HookedMessagesStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: the arguments are the input_json_delta fragments; the block's own `input` is never read.
        return parse_tool_calls([state.call for state in self._calls], ANTHROPIC)


class IgnoresInputOnBlockStart(HookedAnthropicAdapter):
    stream_class = _DeltasOnlyStream


class _ServerToolsAsCallsStream(HookedMessagesStream):
    async def _block_start(self, payload: dict[str, Any]) -> None:
        block = payload.get("content_block")
        if isinstance(block, dict) and block.get("type") in ("server_tool_use", "mcp_tool_use"):
            # Bug: every block with an id, a name and an input is a tool call for the client to run.
            payload = {**payload, "content_block": {**block, "type": "tool_use"}}
        await super()._block_start(payload)


class TreatsServerToolsAsCalls(HookedAnthropicAdapter):
    stream_class = _ServerToolsAsCallsStream


# --- Anthropic Messages: the request --------------------------------------------------------------------


def _tool_results(body: dict[str, Any]) -> list[tuple[list[Any], int, dict[str, Any]]]:
    """(the content list, position, block) of every tool_result block of the request."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        for position, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append((content, position, block))
    return found


class WrapsToolResultsInTextBlocks(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for _, _, block in _tool_results(body):
            # Bug: the result always as a text block, an empty result included: an empty text block.
            block["content"] = [{"type": "text", "text": block.get("content", "")}]
        return body


class DropsEmptyToolResults(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for content, position, block in reversed(_tool_results(body)):
            if not block.get("content"):  # Bug: "nothing to send": the tool_use is left without its result
                del content[position]
        body["messages"] = [m for m in body["messages"] if m.get("content")]
        return body


# --- Gemini ---------------------------------------------------------------------------------------------


class _ArgsRequiredStream(HookedGeminiStream):
    async def _part(self, part: dict[str, Any]) -> None:
        call = part.get("functionCall")
        if isinstance(call, dict) and "args" not in call:
            raise KeyError("args")  # Bug: `call["args"]`; Gemini leaves it out for a call without arguments
        await super()._part(part)


class RequiresFunctionCallArgs(HookedGeminiAdapter):
    stream_class = _ArgsRequiredStream


class _WholeCallsStream(HookedGeminiStream):
    def _function_call(self, call: dict[str, Any]) -> None:
        # Bug: every functionCall part is a whole call (its `args`); Vertex's streamed pieces become calls.
        args = call.get("args")
        arguments = [args if isinstance(args, str) else json.dumps(args)] if args is not None else []
        self._calls.append(ToolCallBuffer(str(call.get("id") or ""), str(call.get("name") or ""), arguments))


class ReadsWholeCallsOnly(HookedGeminiAdapter):
    stream_class = _WholeCallsStream


class _ErrorEventsSkippedStream(HookedGeminiStream):
    async def _event(self, event: SSEEvent) -> bool:
        if not event.stray and '"error"' in event.data[:12]:
            return False  # Bug: errors are looked for in raw JSON lines only; as a data: event it is a no-op
        return await super()._event(event)


class SkipsErrorDataEvents(HookedGeminiAdapter):
    stream_class = _ErrorEventsSkippedStream


class _OldFinishTableStream(HookedGeminiStream):
    # Bug: the finishReason table of an older API version: no BLOCKLIST, PROHIBITED_CONTENT, SPII, MODEL_ARMOR.
    stop_reasons = {
        k: v for k, v in GEMINI_STOP_REASONS.items() if k in ("STOP", "MAX_TOKENS", "SAFETY", "RECITATION")
    }


class LacksNewerFinishReasons(HookedGeminiAdapter):
    stream_class = _OldFinishTableStream


ADAPTERS: list[BrokenAdapter] = [
    broken_anthropic(
        "anthropic_raises_on_unknown_delta_types",
        RaisesOnUnknownDeltaTypes,
        "RES-12",
        ["text_quirks"],
        "Matches content_block_delta types exhaustively: a delta type added later fails the step.",
    ),
    broken_anthropic(
        "anthropic_ignores_input_on_block_start",
        IgnoresInputOnBlockStart,
        "RES-04",
        ["tool_input_at_block_start"],
        "Reads tool input from input_json_delta only: an input sent whole on content_block_start becomes {}.",
    ),
    broken_anthropic(
        "anthropic_treats_server_tools_as_calls",
        TreatsServerToolsAsCalls,
        "RES-12",
        ["server_tool_blocks"],
        "Takes server_tool_use and mcp_tool_use blocks for tool calls: the client is asked to run web_search.",
    ),
    broken_anthropic(
        "anthropic_wraps_tool_results_in_text_blocks",
        WrapsToolResultsInTextBlocks,
        "MSG-06",
        ["tool_result_empty"],
        "Sends every tool result as a text block: an empty result is an empty text block, which the API rejects.",
    ),
    broken_anthropic(
        "anthropic_drops_empty_tool_results",
        DropsEmptyToolResults,
        "MSG-04",
        ["tool_result_empty"],
        "Leaves an empty tool result out: the tool_use is sent without its tool_result.",
    ),
    broken_gemini(
        "gemini_requires_function_call_args",
        RequiresFunctionCallArgs,
        "RES-05",
        ["tool_call_no_arguments"],
        'Reads `functionCall["args"]`: a call without arguments (no `args` at all) fails the step.',
    ),
    broken_gemini(
        "gemini_reads_whole_calls_only",
        ReadsWholeCallsOnly,
        "RES-06",
        ["tool_call_streamed_arguments"],
        "Reads each functionCall part as a whole call: Vertex's streamed argument pieces become nameless calls.",
    ),
    broken_gemini(
        "gemini_skips_error_data_events",
        SkipsErrorDataEvents,
        "ERR-03",
        ["midstream_error_data_event"],
        "Looks for mid-stream errors in raw JSON lines only: an error sent as a data: event is read as nothing.",
    ),
    broken_gemini(
        "gemini_lacks_newer_finish_reasons",
        LacksNewerFinishReasons,
        "STOP-01",
        ["stop_blocklist", "stop_model_armor"],
        "Maps an older finishReason table: BLOCKLIST and MODEL_ARMOR come out unknown, not content_filter.",
    ),
]
