"""Broken Amazon Bedrock ConverseStream adapters: the traps of the binary framing and of Converse's rules.

Each is ``reference_adapters.bedrock_converse`` with one part changed: a decoder that skips the CRC checks,
the stop-reason table, toolUse input pieces, exception messages, server-side tools, the request's turns and
blank text blocks, the reasoning signature, and ``messageStop`` as the proof the stream is complete.
"""

from __future__ import annotations

import struct
from typing import Any

from helix_conformance.contract import LLMGenerateInput, StepResult
from reference_adapters._eventstream import EventStreamMessage
from reference_adapters.bedrock_converse import _Block, _Decoder

from ._base import BrokenAdapter
from ._bedrock_base import HookedBedrockAdapter, HookedConverseStream, broken_bedrock

# --- ERR-05: the CRC checks skipped ------------------------------------------------------------------------


class _NoCrcDecoder:
    """Reads messages by their lengths and never checks a CRC: a changed byte is read as data."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        self._buffer += chunk
        messages = []
        while len(self._buffer) >= 12:
            total, headers_length = struct.unpack(">II", self._buffer[:8])
            if len(self._buffer) < total:
                break
            raw, self._buffer = self._buffer[:total], self._buffer[total:]
            headers: dict[str, object] = {}
            at = 12
            while at < 12 + headers_length:  # Bug: "the lengths are enough", no prelude or message CRC
                size = raw[at]
                name = raw[at + 1 : at + 1 + size].decode("utf-8", "replace")
                length = struct.unpack(">H", raw[at + 2 + size : at + 4 + size])[0]
                headers[name] = raw[at + 4 + size : at + 4 + size + length].decode("utf-8", "replace")
                at += 4 + size + length
            messages.append(EventStreamMessage(headers, raw[12 + headers_length : -4]))
        return messages

    def close(self) -> list[EventStreamMessage]:
        return _Decoder().close() if self._buffer else []


class IgnoresMessageCrc(HookedBedrockAdapter):
    decoder_class = _NoCrcDecoder


# --- STOP-01: the Bedrock column of the table ---------------------------------------------------------------


class _GuardrailAsEndTurn(HookedConverseStream):
    async def result(self) -> StepResult:
        if self._stop_reason == "guardrail_intervened":
            self._stop_reason = "end_turn"  # Bug: "a guardrail only trims the answer: it ended normally"
        return await super().result()


class GuardrailAsEndTurn(HookedBedrockAdapter):
    stream_class = _GuardrailAsEndTurn


class _ContentFilteredPassedThrough(HookedConverseStream):
    async def result(self) -> StepResult:
        result = await super().result()
        if self._stop_reason == "content_filtered" and hasattr(result, "stop_reason"):
            stop: Any = "content_filtered"  # Bug: the provider's string as the stop reason
            object.__setattr__(result, "stop_reason", stop)
        return result


class ContentFilteredPassedThrough(HookedBedrockAdapter):
    stream_class = _ContentFilteredPassedThrough


# --- RES-04: toolUse input pieces ----------------------------------------------------------------------------


class _LastInputPieceWins(HookedConverseStream):
    async def _delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        block = self._blocks.get(payload.get("contentBlockIndex"))  # type: ignore[arg-type]
        tool = delta.get("toolUse") if isinstance(delta, dict) else None
        if isinstance(tool, dict) and block is not None and block.kind == "tool":
            block.call.arguments = [str(tool.get("input", ""))]  # Bug: each delta taken as the whole input
            return
        await super()._delta(payload)


class LastInputPieceWins(HookedBedrockAdapter):
    stream_class = _LastInputPieceWins


# --- ERR-03: exception messages ------------------------------------------------------------------------------


class _ExceptionsIgnored(HookedConverseStream):
    async def _message(self, message: EventStreamMessage) -> bool:
        if message.header(":message-type") == "exception":
            return False  # Bug: "only :event-type messages are events"; a throttlingException passes unseen
        return await super()._message(message)

    async def result(self) -> StepResult:
        if self._stop_reason is None:
            self._stop_reason = "end_turn"  # ... and the text so far is returned as a complete answer
        return await super().result()


class ExceptionsIgnored(HookedBedrockAdapter):
    stream_class = _ExceptionsIgnored


# --- RES-06: a server-side tool taken for a call ------------------------------------------------------------


class _ServerToolsAreCalls(HookedConverseStream):
    def _start(self, payload: dict[str, Any]) -> None:
        start = payload.get("start")
        tool = start.get("toolUse") if isinstance(start, dict) else None
        if isinstance(tool, dict) and tool.get("type") == "server_tool_use":
            tool = {k: v for k, v in tool.items() if k != "type"}  # Bug: every toolUse start is a call
            payload = {**payload, "start": {"toolUse": tool}}
        super()._start(payload)


class ServerToolsAreCalls(HookedBedrockAdapter):
    stream_class = _ServerToolsAreCalls


# --- ERR-04: messageStop as the proof of a complete stream ---------------------------------------------------


class _EndOfBodyIsEnough(HookedConverseStream):
    async def result(self) -> StepResult:
        if self._stop_reason is None and self._error is None:
            self._stop_reason = "end_turn"  # Bug: "the body ended, so the answer is complete"
        return await super().result()


class EndOfBodyIsEnough(HookedBedrockAdapter):
    stream_class = _EndOfBodyIsEnough


# --- STR-03: redacted reasoning completed as a shown block ---------------------------------------------------


class _RedactedCompleted(HookedConverseStream):
    async def _close(self, block: _Block) -> None:
        if block.kind == "redacted":
            block.kind = "reasoning"  # Bug: every reasoningContent block is a thinking block to complete
        await super()._close(block)


class RedactedReasoningCompleted(HookedBedrockAdapter):
    stream_class = _RedactedCompleted


# --- the request side ----------------------------------------------------------------------------------------


class ToolResultTurnPerResult(HookedBedrockAdapter):
    def _request_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._request_body(input)
        turns: list[dict[str, Any]] = []
        for turn in body["messages"]:  # Bug: one user turn per toolResult, as OpenAI's role:tool messages
            results = [b for b in turn["content"] if "toolResult" in b]
            if turn["role"] == "user" and len(results) > 1:
                turns.extend({"role": "user", "content": [b]} for b in turn["content"])
            else:
                turns.append(turn)
        body["messages"] = turns
        return body


class BlankTextBesideToolUse(HookedBedrockAdapter):
    def _request_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._request_body(input)
        for turn in body["messages"]:
            if turn["role"] == "assistant" and not any("text" in b for b in turn["content"]):
                turn["content"].insert(0, {"text": ""})  # Bug: `content or ""` always sent as a text block
        return body


class _SignatureDropped(HookedConverseStream):
    async def _delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        reasoning = delta.get("reasoningContent") if isinstance(delta, dict) else None
        if isinstance(reasoning, dict) and "signature" in reasoning and "text" not in reasoning:
            return  # Bug: "a delta without text carries nothing": the signature is lost
        await super()._delta(payload)


class ReasoningSignatureDropped(HookedBedrockAdapter):
    stream_class = _SignatureDropped


ADAPTERS: tuple[BrokenAdapter, ...] = (
    broken_bedrock(
        "bedrock_ignores_message_crc",
        IgnoresMessageCrc,
        "ERR-05",
        ("text_basic", "tool_call"),
        "Reads event-stream messages by their lengths and never checks a CRC: a changed byte is used as data.",
    ),
    broken_bedrock(
        "bedrock_guardrail_as_end_turn",
        GuardrailAsEndTurn,
        "STOP-01",
        ("stop_guardrail_intervened",),
        "Maps stopReason guardrail_intervened to end_turn: a guardrail-stopped answer passes as complete.",
    ),
    broken_bedrock(
        "bedrock_content_filtered_passed_through",
        ContentFilteredPassedThrough,
        "STOP-01",
        ("stop_content_filter",),
        "Returns Bedrock's content_filtered as the stop reason instead of content_filter.",
    ),
    broken_bedrock(
        "bedrock_last_input_piece_wins",
        LastInputPieceWins,
        "RES-04",
        ("tool_call", "tool_call_typed_arguments"),
        "Takes each toolUse.input delta as the whole input: only the last JSON piece is kept.",
    ),
    broken_bedrock(
        "bedrock_exceptions_ignored",
        ExceptionsIgnored,
        "ERR-03",
        ("midstream_rate_limit", "midstream_overloaded", "midstream_model_stream_error"),
        "Skips :message-type exception messages: a throttlingException mid-stream returns the partial text.",
    ),
    broken_bedrock(
        "bedrock_server_tools_are_calls",
        ServerToolsAreCalls,
        "RES-06",
        ("server_tool_then_call",),
        "Takes Nova's server_tool_use start for a call of the client's: the step asks to run a tool it has not.",
    ),
    broken_bedrock(
        "bedrock_end_of_body_is_enough",
        EndOfBodyIsEnough,
        "ERR-04",
        ("truncated_stream",),
        "Accepts a stream that ends without messageStop as a complete answer.",
    ),
    broken_bedrock(
        "bedrock_redacted_reasoning_completed",
        RedactedReasoningCompleted,
        "STR-03",
        ("thinking_redacted",),
        "Calls on_thinking(_, True) for a block of redactedContent that showed no reasoning.",
    ),
    broken_bedrock(
        "bedrock_tool_result_turn_per_result",
        ToolResultTurnPerResult,
        "MSG-04",
        ("tool_result_roundtrip",),
        "Sends each toolResult in a user turn of its own: two user turns in a row, results split.",
    ),
    broken_bedrock(
        "bedrock_blank_text_beside_tool_use",
        BlankTextBesideToolUse,
        "MSG-06",
        ("tool_result_empty",),
        'Sends {"text": ""} in an assistant turn that only has toolUse blocks: Bedrock rejects blank text.',
    ),
    broken_bedrock(
        "bedrock_reasoning_signature_dropped",
        ReasoningSignatureDropped,
        "MSG-08",
        ("thinking_tool_call",),
        "Drops the reasoningContent delta that carries only the signature: the reasoning cannot go back.",
    ),
)
