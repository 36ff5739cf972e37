"""Reads a ``bedrock-converse`` response into a ResponseSummary.

The body is AWS event-stream messages (``eventstream``): each one is checked (prelude, CRCs, headers) and a
broken one becomes a problem, never an exception. Content blocks are kept by ``contentBlockIndex``: ``text``
and ``reasoningContent.text`` deltas are joined, a ``toolUse`` block's ``input`` pieces are joined per block,
a ``toolUse`` start of ``"type": "server_tool_use"`` (a tool the service ran) and ``toolResult`` blocks are no
calls. Event labels are the ``:event-type`` names as sent, ``exception:<type>`` for an exception message and
``invalid`` for a message that is not one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..contract import StopReason
from . import eventstream
from .bedrock_stream import CONTENT_TYPE, STOP_REASONS
from .summary import (
    Collector,
    ResponseSummary,
    SummaryToolCall,
    header,
    http_error,
    invert_stop_table,
    json_body,
    parse_arguments,
)

STOP_TABLE = invert_stop_table(
    STOP_REASONS, {"guardrail_intervened": "content_filter", "model_context_window_exceeded": "max_tokens"}
)
"""STOP-01's Bedrock column, wire -> canonical; ``malformed_model_output``, ``malformed_tool_use`` and values
the table does not name are ``unknown``."""


@dataclass
class _Block:
    call_id: str = ""
    name: str = ""
    server_side: bool = False
    arguments: list[str] = field(default_factory=list)


def error_type(headers: Mapping[str, str], body: bytes) -> str | None:
    """The error type of an HTTP error: ``x-amzn-ErrorType`` (up to its ``:``), else the body's ``__type``;
    None when neither is there and the body is not Bedrock's ``{"message": …}``."""
    named = header(headers, "x-amzn-errortype").split(":", 1)[0].strip()
    if named:
        return named
    data = json_body(body)
    if isinstance(data, dict):
        kind = data.get("__type")
        if isinstance(kind, str) and kind:
            return kind.rsplit("#", 1)[-1]
        if isinstance(data.get("message"), str):
            return "error"
    return None


def summarise(status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
    """The summary of one ConverseStream response: an HTTP error body or an event stream."""
    if not 200 <= status < 300:
        return http_error(status, body, error_type(headers, body))
    out = Collector(status)
    content_type = header(headers, "content-type")
    if content_type and CONTENT_TYPE not in content_type.lower():
        out.problems.append(f"content-type {content_type!r} is not {CONTENT_TYPE}")
    blocks: dict[int, _Block] = {}
    calls: list[_Block] = []
    stopped = False
    for n, raw in enumerate(eventstream.split_messages(body)):
        message = eventstream.decode(raw)
        if message is None:
            out.events.append("invalid")
            out.problems.append(f"message {n}: {eventstream.problem(raw)}")
            continue
        kind = message.event_type
        if message.message_type != "event":
            out.events.append(f"exception:{kind}")
            out.error(kind or message.message_type or "error")
            continue
        out.events.append(kind)
        payload = _payload(message.payload, n, out)
        if payload is None:
            continue
        if kind == "contentBlockStart":
            _start(payload, blocks, calls)
        elif kind == "contentBlockDelta":
            _delta(payload, blocks, out)
        elif kind == "messageStop":
            reason = payload.get("stopReason")
            if isinstance(reason, str) and reason:
                out.wire_stop = reason
            stopped = True
        elif kind == "metadata" and isinstance(payload.get("usage"), dict):
            out.usage = dict(payload["usage"])
    if not stopped and not out.errored:
        out.problems.append("the stream ended without messageStop")
    out.calls = [_finished(block) for block in calls]
    stop: StopReason | None = None
    if out.wire_stop is not None:
        stop = STOP_TABLE.get(out.wire_stop, "unknown")
    return out.summary(stop)


def _payload(raw: bytes, n: int, out: Collector) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        out.problems.append(f"message {n}: the payload is not JSON")
        return None
    if not isinstance(value, dict):
        out.problems.append(f"message {n}: the payload is not a JSON object")
        return None
    return value


def _index(payload: dict[str, Any]) -> int | None:
    index = payload.get("contentBlockIndex")
    return index if isinstance(index, int) else None


def _start(payload: dict[str, Any], blocks: dict[int, _Block], calls: list[_Block]) -> None:
    start = payload.get("start")
    tool = start.get("toolUse") if isinstance(start, dict) else None
    index = _index(payload)
    if index is None or not isinstance(tool, dict):
        return
    block = blocks[index] = _Block(
        call_id=tool["toolUseId"] if isinstance(tool.get("toolUseId"), str) else "",
        name=tool["name"] if isinstance(tool.get("name"), str) else "",
        server_side=tool.get("type") == "server_tool_use",
    )
    if not block.server_side:
        calls.append(block)


def _delta(payload: dict[str, Any], blocks: dict[int, _Block], out: Collector) -> None:
    delta = payload.get("delta")
    if not isinstance(delta, dict):
        return
    if isinstance(delta.get("text"), str) and delta["text"]:
        out.text.append(delta["text"])
    reasoning = delta.get("reasoningContent")
    if isinstance(reasoning, dict):
        if isinstance(reasoning.get("text"), str) and reasoning["text"]:
            out.thinking.append(reasoning["text"])
        out.thinking_signed = out.thinking_signed or bool(reasoning.get("signature"))
    tool = delta.get("toolUse")
    index = _index(payload)
    block = blocks.get(index) if index is not None else None
    if isinstance(tool, dict) and block is not None and isinstance(tool.get("input"), str):
        block.arguments.append(tool["input"])


def _finished(block: _Block) -> SummaryToolCall:
    arguments, valid = parse_arguments("".join(block.arguments))
    return SummaryToolCall(block.call_id or None, block.name, arguments, valid)
