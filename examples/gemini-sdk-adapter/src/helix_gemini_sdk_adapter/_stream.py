"""Turns the SDK's ``GenerateContentResponse`` chunks into callbacks (as each arrives) and one StepResult.

Each chunk of ``generate_content_stream`` is one SSE event, parsed by the SDK into pydantic models. Not
``chunk.text`` / ``chunk.function_calls``: those helpers mix thought parts into the text (or warn and skip
them) and drop thought signatures; the parts are read one by one instead.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
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
    "STOP": "end_turn",  # -> tool_use when the response carries function calls (RES-09)
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MODEL_ARMOR": "content_filter",
}


@dataclass
class _Call:
    id: str
    name: str
    args: Any


class ChunkAccumulator:
    """Feed it every chunk in order (``add``), then ask for the ``result``."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self._emit = emit
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._has_thinking = False
        self._in_thinking = False
        self._signature: str | None = None
        self._calls: list[_Call] = []
        self._finish_reason: str | None = None
        self._blocked = False
        self._streaming: _Call | None = None  # a call whose arguments arrive in pieces (Vertex partialArgs)

    @property
    def done(self) -> bool:
        """A finish reason (or a blocked prompt) arrived: Gemini sends nothing after that chunk (NT-04)."""
        return self._finish_reason is not None or self._blocked

    async def add(self, chunk: Any) -> None:
        """One chunk: callbacks for its parts fire now, before the next chunk is read (STR-02, STR-04)."""
        candidates = chunk.candidates or []
        candidate = next((c for c in candidates if (c.index or 0) == 0), None)  # one candidate is asked for
        if candidate is None:
            feedback = chunk.prompt_feedback
            if feedback is not None and feedback.block_reason is not None:
                self._blocked = True  # STOP-02: the prompt was blocked, nothing was generated
            return
        content = candidate.content
        for part in (content.parts if content is not None else None) or ():  # MAX_TOKENS: often no parts
            await self._part(part)
        if candidate.finish_reason is not None:  # an enum, or a plain str for values the SDK does not know
            reason = candidate.finish_reason
            self._finish_reason = str(getattr(reason, "value", reason))

    async def _part(self, part: Any) -> None:
        if part.thought_signature:  # MSG-08: bytes in the SDK, base64 text in Helix
            self._signature = base64.b64encode(part.thought_signature).decode("ascii")
        if part.thought:  # RES-08, STR-03: reasoning, streamed as it arrives
            self._has_thinking = True
            if part.text:
                self._in_thinking = True
                self._thinking.append(part.text)
                await self._emit.thinking(part.text, False)
            return
        if part.function_call is not None:  # RES-06: a whole call per part, in the order parts arrive
            await self._end_thinking()  # STR-04: the thinking block closes before what follows it
            self._function_call(part.function_call)
        elif part.text:  # STR-01: the final chunk's empty text is no delta
            await self._end_thinking()
            self._text.append(part.text)
            await self._emit.text(part.text)
        # RES-12: other parts (inline_data, executable_code, ...) are not ours to handle

    def _function_call(self, call: Any) -> None:
        """A whole call, or a piece of one whose arguments stream (Vertex, when asked: the name with
        ``will_continue``, then name-less ``partial_args`` parts, then an empty part closing the call)."""
        if not call.name and self._streaming is not None:
            for piece in call.partial_args or ():
                _apply(self._streaming.args, piece)
            if not call.will_continue:
                self._streaming = None
            return
        self._calls.append(_Call(call.id or "", call.name or "", call.args))
        self._streaming = None
        if call.will_continue:
            self._calls[-1].args = dict(call.args or {})
            self._streaming = self._calls[-1]

    async def _end_thinking(self) -> None:
        if self._in_thinking:  # STR-03: exactly one completion call per thinking block
            self._in_thinking = False
            await self._emit.thinking("", True)

    async def result(self) -> StepResult:
        """The finished step; raises HelixError when the stream is not a complete, usable answer."""
        if self._finish_reason is None and not self._blocked:  # ERR-04: the output may be cut: no success
            raise HelixError(
                "gemini: the stream ended without a finishReason", code=PROVIDER_ERROR, retryable=True
            )
        await self._end_thinking()
        thinking = None
        if self._has_thinking or self._signature:  # RES-08, MSG-08: with what Gemini needs back
            thinking = ThinkingContent(content="".join(self._thinking), signature=self._signature)
        text = "".join(self._text)
        stop = STOP_REASONS.get(self._finish_reason or "", "content_filter" if self._blocked else "unknown")
        if not self._calls or stop == "max_tokens":  # STOP-02; RES-10: cut-off calls are not run
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        calls = _parse_all(
            self._calls
        )  # RES-09: function calls make a tool-calls result, whatever the reason
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05: exact name
        if finish is not None:  # FIN-01, FIN-02, FIN-04
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:
            await self._emit.tool_call(call)  # STR-05: once each, arguments complete, in order
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )


def _parse_all(calls: list[_Call]) -> list[ParsedToolCall]:
    """RES-03: the provider's id where it sent one, else a fresh one, as the Vercel AI SDK and LangChain
    mint them (random: the same response gets other ids on another run, which the contract allows)."""
    parsed: list[ParsedToolCall] = []
    for call in calls:
        if not call.name:
            raise HelixError("gemini: a functionCall part has no name", code=PROVIDER_ERROR)
        arguments = {} if call.args is None else call.args  # RES-05: absent args are {}
        if not isinstance(arguments, dict):  # RES-04 (the SDK already refuses a chunk where it is not)
            raise HelixError(f"gemini: arguments of {call.name!r} are not a JSON object", code=PROVIDER_ERROR)
        taken = {p.id for p in parsed}
        call_id = call.id if call.id and call.id not in taken else f"call_{uuid.uuid4().hex}"
        parsed.append(ParsedToolCall(id=call_id, name=call.name, arguments=arguments))
    return parsed


def _apply(arguments: dict[str, Any], piece: Any) -> None:
    """One streamed argument (``json_path`` ``$.a.b``; string values arrive in fragments)."""
    path = piece.json_path or ""
    keys = path[2:].split(".") if path.startswith("$.") else []
    if not keys or not all(key.isidentifier() for key in keys):
        raise HelixError(f"gemini: streamed argument path {path!r} is not supported", code=PROVIDER_ERROR)
    target = arguments
    for key in keys[:-1]:
        target = target.setdefault(key, {})
        if not isinstance(target, dict):
            raise HelixError(
                f"gemini: streamed argument path {path!r} runs into a value", code=PROVIDER_ERROR
            )
    if piece.string_value is not None:
        target[keys[-1]] = str(target.get(keys[-1], "")) + piece.string_value
    elif piece.number_value is not None:
        target[keys[-1]] = piece.number_value
    elif piece.bool_value is not None:
        target[keys[-1]] = piece.bool_value
    elif piece.null_value is not None:
        target[keys[-1]] = None
