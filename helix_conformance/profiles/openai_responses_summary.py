"""Reads an ``openai-responses`` response (typed SSE events, or an HTTP error body) into a ResponseSummary.

Text comes from ``response.output_text.delta``, reasoning from ``response.reasoning_summary_text.delta``
(summary parts joined with a blank line) or ``response.reasoning_text.delta`` (reasoning text), function calls from ``response.output_item.done`` (arguments from
their ``.done``; deltas only where no ``.done`` came). A refusal content part stops ``refusal``; the terminal
event says the rest (``completed``; ``incomplete`` by ``incomplete_details.reason``; ``failed`` and ``error``
are errors, the first one ends the response; a ``data: [DONE]`` after the terminal event, as OpenRouter sends,
is an end marker). Event labels are the event types, ``invalid`` for data that
is not a JSON object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..contract import StopReason
from .summary import (
    Collector,
    ResponseSummary,
    SummaryToolCall,
    http_error,
    json_body,
    json_object,
    parse_arguments,
    read_sse,
    stream_collector,
)

INCOMPLETE_REASONS: dict[str, StopReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}


@dataclass
class _Call:
    call_id: str = ""
    name: str = ""
    deltas: list[str] = field(default_factory=list)
    arguments: str | None = None


@dataclass
class _State:
    collector: Collector
    calls: dict[str, _Call] = field(default_factory=dict)
    """By item id (``fc_…``), in the order the items were added."""
    summary_parts: set[tuple[str, int]] = field(default_factory=set)
    refused: bool = False
    terminal: str | None = None


def error_type(payload: Any) -> str | None:
    """The code (else type) of an error body, an ``error`` event (nested or flat) or ``response.failed``."""
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if not isinstance(error, dict):
        response = payload.get("response")
        error = response.get("error") if isinstance(response, dict) else None
    if not isinstance(error, dict):
        error = payload if payload.get("type") == "error" else None
    if not isinstance(error, dict):
        return None
    for key in ("code", "type"):
        value = error.get(key)
        if isinstance(value, str) and value and value != "error":
            return value
    return "error"


def summarise(status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
    """The summary of one Responses API response."""
    if not 200 <= status < 300:
        return http_error(status, body, error_type(json_body(body)))
    state = _State(stream_collector(status, headers))
    out = state.collector
    for n, item in enumerate(read_sse(body, out.problems)):
        if out.errored:
            break  # the first error ends the response (``response.failed`` follows an ``error`` event)
        if item.kind == "comment":
            out.events.append("comment")
        elif item.kind == "stray":
            out.problems.append(f"line {n} is not an SSE field: {item.data[:60]!r}")
        elif item.data.strip() == "[DONE]" and state.terminal is not None:
            out.events.append("[DONE]")  # OpenRouter ends a Responses stream as Chat Completions does
        else:
            payload = json_object(item.data.strip(), f"event {n}", out.problems)
            if payload is None:
                out.events.append("invalid")
            else:
                _event(state, payload)
    if state.terminal is None and not out.errored:
        out.problems.append(
            "the stream ended without response.completed, response.incomplete or response.failed"
        )
    out.calls = [_finished(call) for call in state.calls.values()]
    stop: StopReason | None = None
    if state.refused:
        stop = "refusal"
    elif out.wire_stop is not None:
        stop = (
            "end_turn" if out.wire_stop == "completed" else INCOMPLETE_REASONS.get(out.wire_stop, "unknown")
        )
    return out.summary(stop)


def _finished(call: _Call) -> SummaryToolCall:
    arguments, valid = parse_arguments(call.arguments if call.arguments is not None else "".join(call.deltas))
    return SummaryToolCall(call.call_id or None, call.name, arguments, valid)


def _event(state: _State, payload: dict[str, Any]) -> None:
    out = state.collector
    kind = str(payload.get("type", ""))
    out.events.append(kind or "untyped")
    if kind in ("error", "response.failed"):
        out.error(error_type(payload))
        state.terminal = kind
        return
    delta = payload.get("delta")
    if kind == "response.output_text.delta" and isinstance(delta, str):
        out.text.append(delta)
    elif kind == "response.refusal.delta" and isinstance(delta, str):
        state.refused = True
        out.text.append(delta)
    elif kind == "response.reasoning_summary_part.added":
        part = (str(payload.get("item_id")), int(payload.get("summary_index") or 0))
        if state.summary_parts:
            out.thinking.append("\n\n")
        state.summary_parts.add(part)
    elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta") and isinstance(
        delta, str
    ):
        out.thinking.append(delta)
    elif kind in ("response.output_item.added", "response.output_item.done"):
        _item(state, payload.get("item"), kind.endswith("done"))
    elif kind == "response.function_call_arguments.delta" and isinstance(delta, str):
        call = state.calls.get(str(payload.get("item_id")))
        if call is not None:
            call.deltas.append(delta)
    elif kind == "response.function_call_arguments.done":
        call = state.calls.get(str(payload.get("item_id")))
        if call is not None and isinstance(payload.get("arguments"), str):
            call.arguments = payload["arguments"]
    elif kind in ("response.completed", "response.incomplete"):
        state.terminal = kind
        raw = payload.get("response")
        response: dict[str, Any] = raw if isinstance(raw, dict) else {}
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        out.wire_stop = "completed" if kind == "response.completed" else str(reason or "incomplete")
        if isinstance(response.get("usage"), dict):
            out.usage = response["usage"]


def _item(state: _State, item: Any, done: bool) -> None:
    if not isinstance(item, dict):
        return
    if item.get("type") == "reasoning" and done and item.get("encrypted_content"):
        state.collector.thinking_signed = True
    if item.get("type") != "function_call":
        return
    call = state.calls.setdefault(str(item.get("id")), _Call())
    call.call_id = str(item.get("call_id") or call.call_id)
    call.name = str(item.get("name") or call.name)
    if done and isinstance(item.get("arguments"), str):
        call.arguments = item["arguments"]
