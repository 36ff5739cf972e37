"""Responses stream events to callbacks as they arrive, and the ``StepResult`` of the whole stream.

The SDK yields typed events (``ResponseStreamEvent``) without validating them; each is read by its ``type``.
Not ``.stream()``/``get_final_response()``: callbacks must fire as data arrives (STR-02), and the SDK's
accumulator raises on ``response.incomplete`` (a truncated step is a result here, STOP-02).
"""

from __future__ import annotations

import json
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

_INCOMPLETE: dict[str, StopReason] = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}


class _Call:
    """A function call being assembled: its call_id, name and arguments (the deltas, until ``.done``)."""

    def __init__(self) -> None:
        self.call_id = ""
        self.name = ""
        self.arguments: list[str] = []


class Failed(Exception):
    """``response.failed`` or a flat ``error`` event: its code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class EventAccumulator:
    """Accumulates one streamed response, firing callbacks as each event arrives (STR-01..05)."""

    def __init__(self, emit: SafeCallbacks, reasoning_ids: dict[str, str]) -> None:
        self._emit = emit
        self._reasoning_ids = reasoning_ids
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._thinking_open = False
        self._signature: str | None = None
        self._refused = False
        self._calls: dict[str, _Call] = {}  # by output item id (fc_…), in the order they came (RES-06)
        self.status: str | None = None
        self._reason: str | None = None

    async def add(self, event: Any) -> bool:
        """Apply one event; True once the terminal event arrived. Raises ``Failed`` for a failure event."""
        kind = getattr(event, "type", None)
        if kind == "response.failed":  # ERR-03
            error = getattr(getattr(event, "response", None), "error", None)
            raise Failed(
                str(getattr(error, "code", "") or ""), str(getattr(error, "message", "") or "failed")
            )
        if kind == "error":  # the flat form of the SDK's ResponseErrorEvent (the nested one the SDK raises)
            raise Failed(str(getattr(event, "code", "") or ""), str(getattr(event, "message", "") or "error"))
        if kind in ("response.completed", "response.incomplete"):
            details = getattr(getattr(event, "response", None), "incomplete_details", None)
            self.status = "completed" if kind == "response.completed" else "incomplete"
            self._reason = getattr(details, "reason", None)
            return True
        delta = getattr(event, "delta", None)
        if kind == "response.reasoning_summary_part.added" and self._thinking:
            await self._reasoning("\n\n")  # summary parts are joined by a blank line (STR-03)
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            await self._reasoning(
                delta
            )  # a summary, or the reasoning text itself (gpt-oss servers, DeepSeek)
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            await self._visible(delta, refusal=kind == "response.refusal.delta")
        elif kind == "response.function_call_arguments.delta":
            call = self._calls.get(str(getattr(event, "item_id", "")))
            if call is not None and isinstance(delta, str):
                call.arguments.append(delta)
        elif kind == "response.function_call_arguments.done":
            call = self._calls.get(str(getattr(event, "item_id", "")))
            if call is not None and isinstance(getattr(event, "arguments", None), str):
                call.arguments = [event.arguments]
        elif kind in ("response.output_item.added", "response.output_item.done"):
            await self._item(getattr(event, "item", None), done=kind.endswith(".done"))
        return False  # RES-12: other event types are ignored

    async def _item(self, item: Any, *, done: bool) -> None:
        item_type = getattr(item, "type", None)
        item_id = str(getattr(item, "id", ""))
        if item_type == "function_call":
            await self._end_thinking()
            call = self._calls.setdefault(item_id, _Call())
            call.call_id = str(
                getattr(item, "call_id", "") or call.call_id
            )  # RES-03: call_id, not the item id
            call.name = str(getattr(item, "name", "") or call.name)
            if done and isinstance(getattr(item, "arguments", None), str):
                call.arguments = [item.arguments]
        elif item_type == "reasoning" and done:
            encrypted = getattr(item, "encrypted_content", None)
            if isinstance(encrypted, str) and encrypted:  # MSG-08: from .done; the .added value is incomplete
                self._signature = encrypted
                self._reasoning_ids[encrypted] = item_id
            await self._end_thinking()

    async def _reasoning(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # RES-08
            self._thinking_open = True
            self._thinking.append(piece)
            await self._emit.thinking(piece, False)  # STR-03

    async def _visible(self, piece: Any, *, refusal: bool) -> None:
        if isinstance(piece, str) and piece:  # STR-01: no empty deltas
            await self._end_thinking()  # STR-04
            self._refused = self._refused or refusal
            self._text.append(piece)
            await self._emit.text(piece)  # STR-02

    async def _end_thinking(self) -> None:
        if self._thinking_open:  # STR-03: one completion call per reasoning item
            self._thinking_open = False
            await self._emit.thinking("", True)

    async def result(self) -> StepResult:
        if self.status is None:  # ERR-04: a stream without its terminal event is not a success
            raise HelixError("openai: the stream ended early", code=PROVIDER_ERROR, retryable=True)
        await self._end_thinking()
        thinking = None
        if self._thinking or self._signature:  # RES-08, MSG-08
            thinking = ThinkingContent(content="".join(self._thinking), signature=self._signature)
        text = "".join(self._text)
        stop: StopReason = "end_turn"
        if self._refused:
            stop = "refusal"
        elif self.status == "incomplete":
            stop = _INCOMPLETE.get(self._reason or "", "unknown")
        if not self._calls or self.status == "incomplete":  # RES-10: cut-off calls are not executable
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        calls = [self._parsed(position, call) for position, call in enumerate(self._calls.values())]
        finish = next((c for c in calls if c.name == FINISH_TOOL_NAME), None)  # FIN-05: the exact name
        if finish is not None:  # FIN-01, FIN-02, FIN-04
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:  # STR-05
            await self._emit.tool_call(call)
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )

    def _parsed(self, position: int, call: _Call) -> ParsedToolCall:
        if not call.name:
            raise HelixError("openai: a function call has no name", code=PROVIDER_ERROR)
        raw = "".join(call.arguments)
        try:
            arguments = json.loads(raw) if raw.strip() else {}  # RES-05
        except ValueError as exc:  # FIN-03: an error result, not an exception
            raise HelixError(f"openai: arguments of {call.name!r} are not JSON", code=PROVIDER_ERROR) from exc
        if not isinstance(arguments, dict):  # RES-04
            raise HelixError(f"openai: arguments of {call.name!r} are not an object", code=PROVIDER_ERROR)
        return ParsedToolCall(id=call.call_id or f"call_{position}", name=call.name, arguments=arguments)
