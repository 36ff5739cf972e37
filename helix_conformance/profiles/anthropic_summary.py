"""Reads an ``anthropic-messages`` response into a ResponseSummary.

Content blocks are kept by ``index``: ``text`` and ``thinking`` deltas are joined, a ``tool_use`` block's
``input_json_delta`` fragments are joined per block (its start ``input`` counts when nothing was streamed),
``redacted_thinking`` and server-tool blocks are not tool calls and carry no visible text. Event labels are
the SSE ``event:`` names as sent (``ping`` included; the data's ``type`` where the name is missing, else
``data``), plus ``invalid`` for data that is not a JSON object; SSE comments are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..contract import StopReason
from .anthropic_stream import STOP_REASONS
from .summary import (
    Collector,
    ResponseSummary,
    SummaryToolCall,
    http_error,
    invert_stop_table,
    json_body,
    json_object,
    parse_arguments,
    read_sse,
    stream_collector,
)

STOP_TABLE = invert_stop_table(
    STOP_REASONS, {"model_context_window_exceeded": "max_tokens", "pause_turn": "end_turn"}
)


@dataclass
class _Block:
    type: str
    call_id: str = ""
    name: str = ""
    initial_input: Any = None
    arguments: list[str] = field(default_factory=list)


def _error_type(payload: Any) -> str | None:
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None
    kind = error.get("type")
    return kind if isinstance(kind, str) and kind else "error"


def summarise(status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
    """The summary of one Messages response: an HTTP error body or a streamed message."""
    if not 200 <= status < 300:
        return http_error(status, body, _error_type(json_body(body)))
    out = stream_collector(status, headers)
    blocks: dict[int, _Block] = {}
    calls: list[_Block] = []
    stopped = False
    for n, item in enumerate(read_sse(body, out.problems)):
        if item.kind == "stray":
            out.problems.append(f"line {n} is not an SSE field: {item.data[:60]!r}")
            continue
        if item.kind == "comment":
            continue
        payload = json_object(item.data.strip(), f"event {n}", out.problems)
        if payload is None:
            out.events.append("invalid")
            continue
        kind = payload.get("type") if isinstance(payload.get("type"), str) else item.event
        out.events.append(item.event or kind or "data")
        if item.event == "error" or kind == "error":
            out.error(_error_type(payload) or "error")
        elif kind == "message_start":
            message = payload.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            out.usage = dict(usage) if isinstance(usage, dict) else out.usage
        elif kind == "content_block_start":
            _start(out, blocks, calls, payload, n)
        elif kind == "content_block_delta":
            _delta(out, blocks, payload)
        elif kind == "message_delta":
            delta = payload.get("delta")
            reason = delta.get("stop_reason") if isinstance(delta, dict) else None
            if isinstance(reason, str) and reason:
                out.wire_stop = reason
            if isinstance(payload.get("usage"), dict):
                out.usage = {**(out.usage or {}), **payload["usage"]}
        elif kind == "message_stop":
            stopped = True
    if not stopped and not out.errored:
        out.problems.append("the stream ended without message_stop")
    out.calls = [_finished(block) for block in calls]
    stop: StopReason | None = None
    if out.wire_stop is not None:
        stop = STOP_TABLE.get(out.wire_stop, "unknown")
    return out.summary(stop)


def _start(
    out: Collector, blocks: dict[int, _Block], calls: list[_Block], payload: dict[str, Any], n: int
) -> None:
    index, block = payload.get("index"), payload.get("content_block")
    if not isinstance(index, int) or not isinstance(block, dict):
        out.problems.append(f"event {n}: content_block_start without an index or a block")
        return
    kind = block.get("type")
    state = blocks[index] = _Block(kind if isinstance(kind, str) else "")
    if kind == "text":
        _append(out.text, block.get("text"))
    elif kind == "thinking":
        _append(out.thinking, block.get("thinking"))
        out.thinking_signed = out.thinking_signed or bool(block.get("signature"))
    elif kind == "tool_use":
        state.call_id = block["id"] if isinstance(block.get("id"), str) else ""
        state.name = block["name"] if isinstance(block.get("name"), str) else ""
        state.initial_input = block.get("input")
        calls.append(state)


def _delta(out: Collector, blocks: dict[int, _Block], payload: dict[str, Any]) -> None:
    delta = payload.get("delta")
    index = payload.get("index")
    state = blocks.get(index) if isinstance(index, int) else None
    if not isinstance(delta, dict):
        return
    kind = delta.get("type")
    if kind == "text_delta":
        _append(out.text, delta.get("text"))
    elif kind == "thinking_delta":
        _append(out.thinking, delta.get("thinking"))
    elif kind == "signature_delta":
        out.thinking_signed = out.thinking_signed or bool(delta.get("signature"))
    elif kind == "input_json_delta" and state is not None and state.type == "tool_use":
        piece = delta.get("partial_json")
        if isinstance(piece, str):
            state.arguments.append(piece)


def _append(parts: list[str], piece: Any) -> None:
    if isinstance(piece, str) and piece:
        parts.append(piece)


def _finished(block: _Block) -> SummaryToolCall:
    raw = "".join(block.arguments)
    if not raw.strip() and isinstance(block.initial_input, dict):
        raw = json.dumps(block.initial_input)  # a proxy sent the whole input on block start
    arguments, valid = parse_arguments(raw)
    return SummaryToolCall(block.call_id or None, block.name, arguments, valid)
