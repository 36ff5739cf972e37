"""Reads a ``cohere-chat`` response into a ResponseSummary.

``content-delta`` text and thinking are joined; the ``tool-plan-delta`` pieces are the text of a tool-calling
answer (RES-07: the text that accompanies the calls) and count as text; tool calls are kept by their
``index``, their ``arguments`` pieces joined; ``message-end`` carries the finish reason, and
``finish_reason: "ERROR"`` is the stream's error. Event labels are the SSE ``event:`` names as sent (the
data's ``type`` where the name is missing), plus ``invalid`` for data that is not a JSON object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..contract import StopReason
from .cohere_stream import ERROR_FINISH, STOP_REASONS
from .summary import (
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

STOP_TABLE = invert_stop_table(STOP_REASONS)
"""STOP-01's Cohere column, wire -> canonical; TIMEOUT and values the table does not name are ``unknown``."""


@dataclass
class _Call:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def error_type(body: bytes) -> str | None:
    """Cohere's error body is ``{"id", "message"}``; None when the body is not that."""
    data = json_body(body)
    return "error" if isinstance(data, dict) and isinstance(data.get("message"), str) else None


def _message(payload: dict[str, Any]) -> dict[str, Any]:
    delta = payload.get("delta")
    message = delta.get("message") if isinstance(delta, dict) else None
    return message if isinstance(message, dict) else {}


def summarise(status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
    """The summary of one v2 chat response: an HTTP error body or a streamed message."""
    if not 200 <= status < 300:
        return http_error(status, body, error_type(body))
    out = stream_collector(status, headers)
    calls: dict[int, _Call] = {}
    ended = False
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
        message = _message(payload)
        if kind == "content-delta":
            content = message.get("content")
            if isinstance(content, dict):
                _append(out.text, content.get("text"))
                _append(out.thinking, content.get("thinking"))
        elif kind == "tool-plan-delta":
            _append(out.text, message.get("tool_plan"))
        elif kind in ("tool-call-start", "tool-call-delta"):
            _call(payload, message, calls)
        elif kind == "message-end":
            ended = True
            raw_delta = payload.get("delta")
            delta: dict[str, Any] = raw_delta if isinstance(raw_delta, dict) else {}
            reason = delta.get("finish_reason")
            if reason == ERROR_FINISH:
                out.error(ERROR_FINISH)
            elif isinstance(reason, str) and reason:
                out.wire_stop = reason
            if isinstance(delta.get("usage"), dict):
                out.usage = dict(delta["usage"])
    if not ended and not out.errored:
        out.problems.append("the stream ended without message-end")
    out.calls = [_finished(calls[i]) for i in sorted(calls)]
    stop: StopReason | None = None
    if out.wire_stop is not None:
        stop = STOP_TABLE.get(out.wire_stop, "unknown")
    return out.summary(stop)


def _call(payload: dict[str, Any], message: dict[str, Any], calls: dict[int, _Call]) -> None:
    index = payload.get("index")
    tool = message.get("tool_calls")
    if not isinstance(index, int) or not isinstance(tool, dict):
        return
    call = calls.setdefault(index, _Call())
    if isinstance(tool.get("id"), str):
        call.call_id = tool["id"]
    function = tool.get("function")
    if isinstance(function, dict):
        if isinstance(function.get("name"), str):
            call.name = function["name"]
        if isinstance(function.get("arguments"), str):
            call.arguments.append(function["arguments"])


def _append(parts: list[str], piece: Any) -> None:
    if isinstance(piece, str) and piece:
        parts.append(piece)


def _finished(call: _Call) -> SummaryToolCall:
    arguments, valid = parse_arguments("".join(call.arguments))
    return SummaryToolCall(call.call_id or None, call.name, arguments, valid)
