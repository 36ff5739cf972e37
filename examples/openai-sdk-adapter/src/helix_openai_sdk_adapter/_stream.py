"""Turns the SDK's ``ChatCompletionChunk`` objects into callbacks (as each arrives) and one StepResult.

Deliberately not ``client.chat.completions.stream(...)``/``get_final_completion()``: the accumulated
completion only exists at the end, and the contract wants ``on_text_delta`` as data arrives (STR-02). The
SDK builds chunks without validating them, so fields are read defensively: OpenAI-compatible servers omit
``index``, send ``reasoning`` instead of ``reasoning_content``, or content as a list of typed parts.
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
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


@dataclass
class _Call:
    """A tool call being assembled from deltas."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChunkAccumulator:
    """Feed it every chunk in order (``add``), then ask for the ``result``."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self._emit = emit
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._in_thinking = False
        self._refused = False
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._finish_reason: str | None = None

    async def add(self, chunk: Any) -> None:
        """One chunk: callbacks for its deltas fire now, before the next chunk is read (STR-02, STR-04)."""
        for choice in getattr(chunk, "choices", None) or ():  # usage-only chunks have no choices
            if getattr(choice, "index", 0) not in (0, None):
                continue
            delta = getattr(choice, "delta", None)
            if delta is not None:
                await self._delta(delta)
            reason = getattr(choice, "finish_reason", None)
            if isinstance(reason, str) and reason:
                self._finish_reason = reason

    async def _delta(self, delta: Any) -> None:
        # DeepSeek sends `reasoning_content`, OpenRouter/Groq/Ollama `reasoning`: extra fields on the model.
        # OpenRouter and Snowflake may send only `reasoning_details` (OpenRouter sends it beside `reasoning`).
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            await self._reasoning(reasoning)
        else:
            for entry in getattr(delta, "reasoning_details", None) or ():
                if isinstance(entry, dict) and entry.get("type") == "reasoning.text":
                    await self._reasoning(entry.get("text"))
                elif isinstance(entry, dict) and entry.get("type") == "reasoning.summary":
                    await self._reasoning(entry.get("summary"))  # reasoning.encrypted: opaque, no text
        content = getattr(delta, "content", None)
        for part in content if isinstance(content, list) else [content]:  # Mistral: a list of typed parts
            if isinstance(part, dict) and part.get("type") == "thinking":
                items = part.get("thinking")
                for item in items if isinstance(items, list) else [{"text": items}]:
                    await self._reasoning(item.get("text") if isinstance(item, dict) else None)
            else:
                await self._visible(part.get("text") if isinstance(part, dict) else part)
        await self._visible(getattr(delta, "refusal", None), refusal=True)
        tool_calls = getattr(delta, "tool_calls", None)
        if tool_calls:
            await self._end_thinking()
            for position, entry in enumerate(tool_calls):
                self._tool_delta(entry, position)

    async def _reasoning(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # RES-08, STR-03
            self._in_thinking = True
            self._thinking.append(piece)
            await self._emit.thinking(piece, False)

    async def _visible(self, piece: Any, *, refusal: bool = False) -> None:
        if isinstance(piece, str) and piece:  # STR-01: never an empty delta
            await self._end_thinking()  # STR-04: the thinking block ends before the text
            self._refused = self._refused or refusal
            self._text.append(piece)
            await self._emit.text(piece)

    async def _end_thinking(self) -> None:
        if self._in_thinking:  # STR-03: one completion call per thinking block
            self._in_thinking = False
            await self._emit.thinking("", True)

    def _tool_delta(self, entry: Any, position: int) -> None:
        """RES-06: deltas belong to the call of their ``index`` (by id or position where a server omits it)."""
        call_id = getattr(entry, "id", None) or ""
        call = self._slot(getattr(entry, "index", None), call_id, position)
        call.id = call.id or call_id
        function = getattr(entry, "function", None)
        name = getattr(function, "name", None)
        arguments = getattr(function, "arguments", None)
        if isinstance(name, str) and name and not call.name:  # some servers repeat an empty name
            call.name = name
        if isinstance(arguments, dict):  # some compatible servers send an object, not a string
            arguments = json.dumps(arguments)
        if isinstance(arguments, str) and not _sent_again(call, arguments):
            call.arguments.append(arguments)

    def _slot(self, index: Any, call_id: str, position: int) -> _Call:
        if isinstance(index, int) and not isinstance(index, bool):
            if index not in self._by_index:
                self._by_index[index] = self._new_call()
            return self._by_index[index]
        for call in self._calls:
            if call_id and call.id == call_id:
                return call
        if call_id or position > 0 or not self._calls:
            return self._new_call()
        return self._calls[-1]

    def _new_call(self) -> _Call:
        self._calls.append(_Call())
        return self._calls[-1]

    async def result(self, *, done: bool = False) -> StepResult:
        """The finished step; raises HelixError when the stream is not a complete, usable answer. ``done``:
        the server ended the stream with ``[DONE]`` (some send no finish_reason at all: STOP-01 unknown)."""
        if self._finish_reason is None and not done:  # ERR-04: partial output is not a successful step
            raise HelixError(
                "openai: the stream ended without [DONE] or a finish_reason",
                code=PROVIDER_ERROR,
                retryable=True,
            )
        await self._end_thinking()
        thinking = ThinkingContent(content="".join(self._thinking)) if self._thinking else None  # RES-08
        text = "".join(self._text)
        if not self._calls or self._finish_reason == "length":  # STOP-02; RES-10: cut-off calls not run
            stop = "refusal" if self._refused else STOP_REASONS.get(self._finish_reason or "", "unknown")
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        calls: list[ParsedToolCall] = []  # RES-09: tool calls win over the finish reason ("stop" happens)
        for position, call in enumerate(self._calls):
            duplicate = any(call.id == earlier.id for earlier in calls)
            calls.append(self._parse(call, "" if duplicate else call.id, position))  # RES-03: unique ids
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05: exact name
        if finish is not None:  # FIN-01, FIN-02, FIN-04
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for parsed in calls:
            await self._emit.tool_call(parsed)  # STR-05: once each, arguments complete, in order
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )

    @staticmethod
    def _parse(call: _Call, call_id: str, position: int) -> ParsedToolCall:
        if not call.name:
            raise HelixError("openai: a streamed tool call has no name", code=PROVIDER_ERROR)
        raw = "".join(call.arguments)
        try:
            arguments = json.loads(raw) if raw.strip() else {}  # RES-05: "" is {}
        except ValueError as exc:  # FIN-03: an error result, not an exception
            raise HelixError(
                f"openai: arguments of tool call {call.name!r} are not valid JSON",
                code=PROVIDER_ERROR,
                cause=exc,
            ) from exc
        if not isinstance(arguments, dict):  # RES-04
            raise HelixError(f"openai: arguments of {call.name!r} are not a JSON object", code=PROVIDER_ERROR)
        call_id = call_id or f"call_{position}_{uuid.uuid4().hex[:8]}"  # the provider's id where it sent one
        return ParsedToolCall(id=call_id, name=call.name, arguments=arguments)


def _sent_again(call: _Call, fragment: str) -> bool:
    """A whole JSON object after the call's arguments already parse: the call sent again (seen behind
    OpenRouter), not more of it; appended it would make ``{...}{...}``."""
    if not call.arguments or not fragment.lstrip().startswith("{"):
        return False
    try:
        json.loads("".join(call.arguments))
    except ValueError:
        return False
    return True
