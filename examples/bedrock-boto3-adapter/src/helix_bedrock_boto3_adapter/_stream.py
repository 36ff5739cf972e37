"""boto3's parsed ConverseStream events -> a StepResult, callbacks fired as each delta arrives (STR-01..05)."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
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

from ._errors import ProviderSaid

STOP_REASONS: dict[str, StopReason] = {  # STOP-01 (ConverseStream's StopReason enum); else "unknown"
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}


@dataclass
class _Block:
    kind: str = ""  # "text", "reasoning", "tool", or "" (a server tool, a result, something newer)
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    stopped: bool = False


@dataclass
class Emitters:
    """The step's callbacks, already made safe (awaited in turn, exceptions logged, silent after an abort)."""

    text: Callable[[str], Awaitable[None]]
    thinking: Callable[[str, bool], Awaitable[None]]
    tool_call: Callable[[ParsedToolCall], Awaitable[None]]


class ConverseStream:
    """Accumulates one streamed answer from the events boto3 yields (one dict with one key each)."""

    def __init__(self, emit: Emitters, required: Mapping[str, Sequence[str]]) -> None:
        self._emit = emit
        self._required = required  # each event type's required members, from boto3's service model
        self._blocks: dict[int, _Block] = {}
        self._calls: list[_Block] = []
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._has_thinking = False
        self._signature: str | None = None
        self._redacted: list[str] = []
        self.stop_reason: str | None = None

    async def feed(self, event: dict[str, Any]) -> bool:
        """Apply one event; True after ``metadata``, the last event of a complete answer."""
        for kind, payload in event.items():
            missing = [name for name in self._required.get(kind, ()) if name not in payload]
            if missing:
                # botocore's parser turns a payload that is not JSON into {"message": <the text>} and then keeps
                # only the shape's members, instead of raising: an event without its required members is the
                # broken payload (ERR-05), never data.
                message = f"bedrock: {kind} event without {', '.join(missing)}: its payload is not the provider's JSON"
                raise HelixError(message, code=PROVIDER_ERROR, cause=ProviderSaid(str(payload)[:200]))
        if "contentBlockStart" in event:
            self._start(event["contentBlockStart"])
        elif "contentBlockDelta" in event:
            await self._delta(event["contentBlockDelta"])
        elif "contentBlockStop" in event:
            block = self._blocks.get(event["contentBlockStop"].get("contentBlockIndex", -1))
            if block is not None:
                await self._close(block)
        elif "messageStop" in event:
            self.stop_reason = str(event["messageStop"].get("stopReason") or "")
        elif "metadata" in event:
            return True
        return False  # messageStart and event types newer than this code carry nothing we return (RES-12)

    def _block(self, payload: dict[str, Any], kind: str) -> _Block:
        index = payload.get("contentBlockIndex", -1)
        if index not in self._blocks:  # text and reasoning blocks open with their first delta
            self._blocks[index] = _Block(kind=kind)
        return self._blocks[index]

    def _start(self, payload: dict[str, Any]) -> None:
        tool = (payload.get("start") or {}).get("toolUse")
        block = self._block(payload, "")
        if not isinstance(tool, dict) or tool.get("type") == "server_tool_use":
            return  # not a call for us to run
        block.kind, block.call_id, block.name = (
            "tool",
            str(tool.get("toolUseId", "")),
            str(tool.get("name", "")),
        )
        self._calls.append(block)  # RES-03: the provider's id; RES-06: one call per block, in order

    async def _delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta") or {}
        if isinstance(delta.get("text"), str):
            self._block(payload, "text")
            if delta["text"]:  # STR-01: no empty deltas
                self._text.append(delta["text"])
                await self._emit.text(delta["text"])  # STR-02
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            block = self._block(payload, "reasoning")
            self._has_thinking = True
            if isinstance(reasoning.get("text"), str) and reasoning["text"]:
                self._thinking.append(reasoning["text"])
                await self._emit.thinking(reasoning["text"], False)  # STR-03
            if isinstance(reasoning.get("signature"), str):
                block.signature.append(reasoning["signature"])
            if isinstance(reasoning.get("redactedContent"), bytes):  # MSG-08: kept as the wire's base64
                self._redacted.append(base64.b64encode(reasoning["redactedContent"]).decode("ascii"))
        tool = delta.get("toolUse")
        call = self._blocks.get(payload.get("contentBlockIndex", -1))
        if (
            isinstance(tool, dict)
            and call is not None
            and call.kind == "tool"
            and isinstance(tool.get("input"), str)
        ):
            call.arguments.append(tool["input"])  # JSON text in pieces, joined at the end (RES-04)

    async def _close(self, block: _Block) -> None:
        if block.stopped:
            return
        block.stopped = True
        if block.kind == "reasoning" and (block.signature or not self._redacted):
            self._signature = "".join(block.signature) or self._signature
            await self._emit.thinking("", True)  # STR-03: one completion per reasoning block

    async def result(self) -> StepResult:
        if self.stop_reason is None:  # ERR-04: without messageStop the answer may be cut
            cause = ProviderSaid("the stream ended without messageStop")
            raise HelixError("bedrock: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)
        for block in self._blocks.values():
            await self._close(block)
        thinking = None
        if self._has_thinking:  # RES-08, MSG-08
            thinking = ThinkingContent(
                content="".join(self._thinking), signature=self._signature, redacted=self._redacted
            )
        text = "".join(self._text)
        stop = STOP_REASONS.get(self.stop_reason, "unknown")
        if not self._calls or stop == "max_tokens":  # RES-02, STOP-02; RES-10: cut-off calls do not run
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        taken: set[str] = set()
        calls = [_parsed(block, position, taken) for position, block in enumerate(self._calls)]
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)
        if finish is not None:  # FIN-01, FIN-02, FIN-04, FIN-05
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:  # STR-05: once per call, complete, in result order
            await self._emit.tool_call(call)
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )


def _parsed(block: _Block, position: int, taken: set[str]) -> ParsedToolCall:
    """RES-04/05: the joined JSON text as an object ({} when empty); unusable arguments are an error result."""
    if not block.name:
        raise HelixError("bedrock: a tool call came without a name", code=PROVIDER_ERROR)
    text = "".join(block.arguments)
    try:
        arguments = json.loads(text) if text.strip() else {}
    except ValueError as exc:  # FIN-03: also for the finish tool
        message = f"bedrock: tool call {block.name!r}: arguments are not valid JSON"
        raise HelixError(message, code=PROVIDER_ERROR, cause=exc) from exc
    if not isinstance(arguments, dict):
        message = f"bedrock: tool call {block.name!r}: arguments are not a JSON object"
        raise HelixError(message, code=PROVIDER_ERROR)
    call_id = (
        block.call_id if block.call_id and block.call_id not in taken else f"call_{position}_{block.name}"
    )
    taken.add(call_id)  # RES-03: the provider's id, or one of ours when it is missing or repeated
    return ParsedToolCall(id=call_id, name=block.name, arguments=arguments)
