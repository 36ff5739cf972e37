"""One streamed completion -> a StepResult, each delta handed to the callbacks as it arrives (STR-01..05)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
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
    ToolCallsStepResult,
)

from ._errors import ProviderSaid, for_event
from ._request import PROVIDER
from ._sse import Event

STOP_REASONS: dict[str, StopReason] = {  # STOP-01: anything else is "unknown", never the provider's word
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class Completion:
    """``feed`` it the decoded events; ``result()`` once the stream is over."""

    def __init__(
        self,
        on_text: Callable[[str], Awaitable[None]],
        on_tool_call: Callable[[ParsedToolCall], Awaitable[None]],
    ) -> None:
        self._on_text, self._on_tool_call = on_text, on_tool_call
        self._text: list[str] = []
        self._refused = False
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._finish: str | None = None
        self._done = False

    async def feed(self, events: list[Event]) -> bool:
        """Apply the events in order; True once reading can stop (``[DONE]``). Raises HelixError for an error
        event or a body that is not the provider's format."""
        for event in events:
            data = event.data.strip()
            if not data or event.name not in (None, "message", "error"):
                continue  # RES-12: unknown event types are skipped
            if data == "[DONE]":
                self._done = True
                return True
            try:
                payload = json.loads(data)
            except ValueError as exc:  # ERR-05
                raise HelixError(
                    f"{PROVIDER}: a stream event is not JSON", code=PROVIDER_ERROR, cause=exc
                ) from exc
            if not isinstance(payload, dict):
                raise HelixError(f"{PROVIDER}: a stream event is not a JSON object", code=PROVIDER_ERROR)
            if payload.get("error") is not None or event.name == "error":  # ERR-03
                raise for_event(payload)
            choices = payload.get("choices")
            for choice in (
                choices if isinstance(choices, list) else ()
            ):  # empty (usage, Azure's first): skipped
                if isinstance(choice, dict) and choice.get("index", 0) == 0:
                    await self._choice(choice)
        return False

    async def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            # Reasoning deltas (reasoning_content, reasoning, reasoning_details) are left out: this adapter
            # does not declare thinking, and they are not answer text.
            content = delta.get("content")
            for part in content if isinstance(content, list) else [content]:  # Mistral: typed parts
                await self._visible(_text_of(part))
            await self._visible(delta.get("refusal"), refusal=True)
            calls = delta.get("tool_calls")
            for position, entry in enumerate(calls if isinstance(calls, list) else ()):
                if isinstance(entry, dict):
                    self._tool_delta(entry, position)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish = reason

    async def _visible(self, piece: Any, *, refusal: bool = False) -> None:
        if isinstance(piece, str) and piece:  # STR-01: never an empty delta
            self._refused = self._refused or refusal
            self._text.append(piece)
            await self._on_text(piece)  # STR-02: as it arrives

    def _tool_delta(self, entry: dict[str, Any], position: int) -> None:
        call_id = entry.get("id") if isinstance(entry.get("id"), str) else ""
        call = self._call_for(entry.get("index"), call_id or "", position)
        call.id = call.id or call_id or ""
        function = entry.get("function")
        if not isinstance(function, dict):
            return
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(name, str) and name and not call.name:
            call.name = name
        if isinstance(arguments, dict):  # some compatible servers send an object
            arguments = json.dumps(arguments)
        if isinstance(arguments, str) and not _sent_again(call, arguments):
            call.arguments.append(arguments)

    def _call_for(self, index: Any, call_id: str, position: int) -> _Call:
        """RES-06: a delta's call by ``index``; without one (Mistral), by id, else by position."""
        if isinstance(index, int) and not isinstance(index, bool):
            if index not in self._by_index:
                self._by_index[index] = self._new_call()
            return self._by_index[index]
        known = next((c for c in self._calls if call_id and c.id == call_id), None)
        if known is not None:
            return known
        if call_id or position > 0 or not self._calls:
            return self._new_call()
        return self._calls[-1]

    def _new_call(self) -> _Call:
        self._calls.append(_Call())
        return self._calls[-1]

    async def result(self) -> StepResult:
        if not self._done and self._finish is None:  # ERR-04: a partial answer is not a success
            raise HelixError(
                f"{PROVIDER}: the stream ended early",
                code=PROVIDER_ERROR,
                retryable=True,
                cause=ProviderSaid("no [DONE] and no finish_reason"),
            )
        text = "".join(self._text)
        if not self._calls or self._finish == "length":  # RES-10: calls cut off by the limit do not run
            stop = "refusal" if self._refused else STOP_REASONS.get(self._finish or "", "unknown")
            return TextStepResult(content=text, should_stop=True, stop_reason=stop)
        calls = [_parsed(call, position) for position, call in enumerate(self._calls)]
        for i, call in enumerate(calls):  # RES-03: a missing or repeated id gets one of ours
            if any(other.id == call.id for other in calls[:i]):
                calls[i] = call.model_copy(update={"id": _new_id(i)})
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)
        if finish is not None:  # FIN-01, FIN-02
            return StructuredOutputStepResult(output=finish.arguments)
        for call in calls:  # STR-05: once each, complete
            await self._on_tool_call(call)
        return ToolCallsStepResult(tool_calls=calls, sub_agent_calls=[], content=text or None)  # RES-07


def _text_of(part: Any) -> Any:
    """A content part's text: a string as is; of Mistral's typed parts, a ``text`` part's text."""
    if isinstance(part, dict):
        return part.get("text") if part.get("type") == "text" else None
    return part


def _parsed(call: _Call, position: int) -> ParsedToolCall:
    if not call.name:
        raise HelixError(f"{PROVIDER}: a tool call has no name", code=PROVIDER_ERROR)
    raw = "".join(call.arguments)
    arguments: Any = {}
    if raw.strip():  # RES-05: no arguments are {}
        try:
            arguments = json.loads(raw)
        except ValueError as exc:  # FIN-03
            raise HelixError(
                f"{PROVIDER}: {call.name!r} arguments are not JSON", code=PROVIDER_ERROR, cause=exc
            ) from exc
    if not isinstance(arguments, dict):  # RES-04
        raise HelixError(f"{PROVIDER}: {call.name!r} arguments are not a JSON object", code=PROVIDER_ERROR)
    return ParsedToolCall(id=call.id or _new_id(position), name=call.name, arguments=arguments)


def _new_id(position: int) -> str:
    return f"call_{position}_{uuid.uuid4().hex[:8]}"


def _sent_again(call: _Call, fragment: str) -> bool:
    """A whole JSON object after arguments that already form one: the call repeated (seen behind OpenRouter)."""
    if not call.arguments or not fragment.lstrip().startswith("{"):
        return False
    try:
        json.loads("".join(call.arguments))
    except ValueError:
        return False
    return True
