"""Turns the SDK's raw stream events (``messages.create(stream=True)``) into callbacks and one StepResult.

Raw events rather than ``messages.stream()``'s accumulated snapshots: callbacks fire as each delta arrives
(STR-02), and a tool call's arguments are parsed once, when complete, so invalid JSON becomes an error result
(FIN-03) instead of an exception from a partial-JSON parser. The SDK builds events without validating them,
so fields are read defensively; unknown event, block and delta types are ignored (RES-12).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from helix_conformance.contract import (
    FINISH_TOOL_NAME,
    PROVIDER_ERROR,
    HelixError,
    ParsedToolCall,
    StepResult,
    StopReason,
    StructuredOutputStepResult,
    TextStepResult,
    ThinkingContent,
    ToolCallsStepResult,
)

from ._callbacks import SafeCallbacks

STOP_REASONS: dict[str, StopReason] = {  # STOP-01; anything else is "unknown", never the provider's string
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "end_turn",
}


def _get(obj: Any, name: str) -> Any:
    """A field of an SDK model, or of a plain dict (what the SDK leaves for types it does not know)."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


@dataclass
class _Block:
    """One content block, by its ``index``."""

    type: str
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    initial_input: Any = None
    signature: list[str] = field(default_factory=list)
    stopped: bool = False


class EventAccumulator:
    """Feed it every event in order (``add``), then ask for the ``result``."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self._emit = emit
        self._blocks: dict[int, _Block] = {}
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._has_thinking = False
        self._signature: str | None = None
        self._redacted: list[str] = []
        self._calls: list[_Block] = []
        self._stop_reason: str | None = None
        self._done = False

    @property
    def done(self) -> bool:
        """``message_stop`` arrived: the response is complete, whether or not the body ends (NT-04)."""
        return self._done

    async def add(self, event: Any) -> None:
        """One event: callbacks for it fire now, before the next one is read (STR-02, STR-04)."""
        kind = _get(event, "type")
        if kind == "content_block_start":
            await self._start(_get(event, "index"), _get(event, "content_block"))
        elif kind == "content_block_delta":
            await self._delta(self._blocks.get(_get(event, "index")), _get(event, "delta"))
        elif kind == "content_block_stop":
            block = self._blocks.get(_get(event, "index"))
            if block is not None:
                await self._close(block)
        elif kind == "message_delta":
            reason = _get(_get(event, "delta"), "stop_reason")
            if isinstance(reason, str) and reason:
                self._stop_reason = reason
        elif kind == "message_stop":
            self._done = True

    async def _start(self, index: Any, content: Any) -> None:
        if not isinstance(index, int):
            raise HelixError("anthropic: content_block_start without an index", code=PROVIDER_ERROR)
        kind = _get(content, "type")
        block = self._blocks[index] = _Block(type=kind if isinstance(kind, str) else "")
        if kind == "text":
            await self._text_delta(_get(content, "text"))
        elif kind == "thinking":
            self._has_thinking = True
            await self._thinking_delta(_get(content, "thinking"))
            if isinstance(_get(content, "signature"), str):
                block.signature.append(_get(content, "signature"))
        elif kind == "redacted_thinking":  # MSG-08: kept to be sent back, never shown
            self._has_thinking = True
            self._redacted.append(str(_get(content, "data") or ""))
        elif kind == "tool_use":  # RES-03: the provider's id; RES-06: one call per block, in order
            block.id = _get(content, "id") or ""
            block.name = _get(content, "name") or ""
            block.initial_input = _get(content, "input")
            self._calls.append(block)

    async def _delta(self, block: _Block | None, delta: Any) -> None:
        kind = _get(delta, "type")
        if kind == "text_delta":
            await self._text_delta(_get(delta, "text"))
        elif kind == "thinking_delta":
            await self._thinking_delta(_get(delta, "thinking"))
        elif kind == "signature_delta" and block is not None and isinstance(_get(delta, "signature"), str):
            block.signature.append(_get(delta, "signature"))
        elif kind == "input_json_delta" and block is not None and block.type == "tool_use":
            piece = _get(delta, "partial_json")
            if isinstance(piece, str):  # may be "" (RES-05) and may split anywhere: joined at the end
                block.arguments.append(piece)

    async def _close(self, block: _Block) -> None:
        if block.stopped:
            return
        block.stopped = True
        if block.type == "thinking":
            self._signature = "".join(block.signature) or self._signature  # MSG-08
            await self._emit.thinking("", True)  # STR-03: one completion call per thinking block

    async def _text_delta(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # STR-01: never an empty delta
            self._text.append(piece)
            await self._emit.text(piece)

    async def _thinking_delta(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:
            self._thinking.append(piece)
            await self._emit.thinking(piece, False)  # STR-03

    async def result(self) -> StepResult:
        """The finished step; raises HelixError when the stream is not a complete, usable answer."""
        if not self._done:  # ERR-04: without message_stop the output may be cut: no success
            raise HelixError(
                "anthropic: the stream ended without message_stop", code=PROVIDER_ERROR, retryable=True
            )
        for block in self._blocks.values():  # STR-03: a thinking block left open still gets its completion
            await self._close(block)
        thinking = None
        if self._has_thinking:  # RES-08, MSG-08: with the signature the API needs to accept it back
            thinking = ThinkingContent(
                content="".join(self._thinking), signature=self._signature, redacted=self._redacted
            )
        text = "".join(self._text)
        stop = STOP_REASONS.get(self._stop_reason or "", "unknown")
        if not self._calls or stop == "max_tokens":  # STOP-02; RES-10: cut-off calls are not run
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        calls: list[ParsedToolCall] = []  # RES-09: tool calls win over the stop reason
        for position, block in enumerate(self._calls):
            duplicate = any(block.id == earlier.id for earlier in calls)
            calls.append(_parse(block, "" if duplicate else block.id, position))  # RES-03: unique ids
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05: exact name
        if finish is not None:  # FIN-01, FIN-02, FIN-04
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:
            await self._emit.tool_call(call)  # STR-05: once each, arguments complete, in order
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )


def _parse(block: _Block, call_id: str, position: int) -> ParsedToolCall:
    if not block.name:
        raise HelixError("anthropic: a tool_use block has no name", code=PROVIDER_ERROR)
    raw = "".join(block.arguments)
    if not raw.strip() and isinstance(block.initial_input, dict):  # the whole input on block start
        raw = json.dumps(block.initial_input)
    try:
        arguments = json.loads(raw) if raw.strip() else {}  # RES-05: "" is {}
    except ValueError as exc:  # FIN-03: an error result, not an exception
        raise HelixError(
            f"anthropic: input of tool_use {block.name!r} is not valid JSON", code=PROVIDER_ERROR, cause=exc
        ) from exc
    if not isinstance(arguments, dict):  # RES-04
        raise HelixError(f"anthropic: input of {block.name!r} is not a JSON object", code=PROVIDER_ERROR)
    call_id = call_id or f"toolu_{position}_{uuid.uuid4().hex[:8]}"
    return ParsedToolCall(id=call_id, name=block.name, arguments=arguments)
