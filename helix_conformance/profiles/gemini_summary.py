"""Reads a ``gemini`` ``streamGenerateContent?alt=sse`` response into a ResponseSummary.

Each ``functionCall`` part is one whole call (Gemini issues no ids); Vertex's streamed arguments
(``willContinue`` with ``partialArgs``, closed by an empty ``functionCall``) are assembled into their call.
A mid-stream error arrives as raw JSON lines between the events. ``STOP`` is tool_use when the response
has function calls (STOP-01); a blocked prompt (``promptFeedback.blockReason``, no candidates) is
content_filter, its ``wire_stop`` written ``blockReason:<value>``. Event labels, one per chunk (``+``
joins what one chunk carries): ``thought``, ``text``, ``functionCall``, ``finish``, ``blocked``, ``usage``
(only when the chunk carries nothing else: every chunk has usageMetadata), ``error``, ``invalid``. Chunks are
proto3 JSON: snake_case field names (``finish_reason``, ``function_call``) read as their lowerCamelCase ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..contract import StopReason
from .gemini_stream import FINISH_REASONS
from .proto_json import camel_keys
from .summary import (
    Collector,
    ResponseSummary,
    SummaryToolCall,
    http_error,
    invert_stop_table,
    json_body,
    json_object,
    read_sse,
    short,
    stream_collector,
)

_FILTERED: StopReason = "content_filter"
STOP_TABLE = invert_stop_table(
    FINISH_REASONS,
    dict.fromkeys(
        (
            "RECITATION",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "IMAGE_SAFETY",
            "IMAGE_PROHIBITED_CONTENT",
            "IMAGE_RECITATION",
            "MODEL_ARMOR",
        ),
        _FILTERED,
    ),
)
_PATH_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class _Call:
    id: str | None
    name: str
    arguments: Any
    streaming: bool = False


@dataclass
class _State:
    collector: Collector
    calls: list[_Call] = field(default_factory=list)
    open_call: _Call | None = None
    raw: list[str] = field(default_factory=list)
    blocked: bool = False


def _error_type(payload: Any) -> str | None:
    """The gRPC ``status`` of ``{"error": {code, message, status}}`` (a list of one is accepted too)."""
    if isinstance(payload, list) and payload:
        payload = payload[0]
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None
    status, code = error.get("status"), error.get("code")
    if isinstance(status, str) and status:
        return status
    return str(code) if isinstance(code, int) else "error"


def summarise(status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
    """The summary of one streamGenerateContent response: an HTTP error body or an SSE stream."""
    if not 200 <= status < 300:
        return http_error(status, body, _error_type(json_body(body)))
    state = _State(stream_collector(status, headers))
    out = state.collector
    for n, item in enumerate(read_sse(body, out.problems)):
        if item.kind == "stray":
            _raw_line(state, item.data, n)
        elif item.kind == "event":
            _flush_raw(state)
            _event(state, item.event, item.data.strip(), n)
    _flush_raw(state)
    if out.wire_stop is None and not out.errored:
        out.problems.append("the stream ended without a finishReason")
    out.calls = [_finished(call) for call in state.calls]
    stop: StopReason | None = None
    if state.blocked and out.wire_stop is not None and out.wire_stop.startswith("blockReason:"):
        stop = "content_filter"
    elif out.wire_stop is not None:
        stop = STOP_TABLE.get(out.wire_stop, "unknown")
        if stop == "end_turn" and state.calls:
            stop = "tool_use"
    return out.summary(stop)


def _raw_line(state: _State, line: str, n: int) -> None:
    """Collect the lines of a raw JSON value (a mid-stream error) until they parse."""
    out = state.collector
    if not state.raw and not line.lstrip().startswith(("{", "[")):
        out.problems.append(f"line {n} is neither an event nor raw JSON: {short(line)!r}")
        return
    state.raw.append(line)
    try:
        value = json.loads("\n".join(state.raw))
    except ValueError:
        return
    state.raw = []
    error_type = _error_type(value)
    if error_type is None:
        out.events.append("invalid")
        out.problems.append(f"line {n}: raw JSON in the stream is not an error: {short(json.dumps(value))!r}")
        return
    out.events.append("error")
    out.error(error_type)


def _flush_raw(state: _State) -> None:
    if state.raw:
        state.collector.problems.append(f"raw text in the stream is not JSON: {short(' '.join(state.raw))!r}")
        state.raw = []


def _event(state: _State, name: str | None, data: str, n: int) -> None:
    out = state.collector
    payload = json_object(data, f"event {n}", out.problems)
    if payload is None:
        out.events.append("invalid")
        return
    payload = camel_keys(payload)
    if payload.get("error") is not None or name == "error":
        out.events.append("error")
        out.error(_error_type(payload) or "error")
        return
    if isinstance(payload.get("usageMetadata"), dict):
        out.usage = payload["usageMetadata"]
    labels: list[str] = []
    candidates = payload.get("candidates")
    if isinstance(candidates, list) and candidates:
        candidate = next((c for c in candidates if isinstance(c, dict) and c.get("index", 0) == 0), None)
        if candidate is not None:
            labels = _candidate(state, candidate)
    else:
        feedback = payload.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if reason:
            state.blocked = True
            out.wire_stop = f"blockReason:{reason}"
            labels = ["blocked"]
    out.events.append("+".join(labels) or "usage")


def _candidate(state: _State, candidate: dict[str, Any]) -> list[str]:
    out = state.collector
    labels: list[str] = []
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict) and (label := _part(state, part)):
            labels.append(label)
    reason = candidate.get("finishReason")
    if isinstance(reason, str) and reason:
        out.wire_stop = reason
        labels.append("finish")
    return list(dict.fromkeys(labels))


def _part(state: _State, part: dict[str, Any]) -> str | None:
    out = state.collector
    if isinstance(part.get("thoughtSignature"), str) and part["thoughtSignature"]:
        out.thinking_signed = True
    text = part.get("text")
    if part.get("thought") is True:
        if isinstance(text, str) and text:
            out.thinking.append(text)
        return "thought"
    call = part.get("functionCall")
    if isinstance(call, dict):
        _function_call(state, call)
        return "functionCall"
    if isinstance(text, str) and text:  # the final chunk's {"text": ""} carries nothing
        out.text.append(text)
        return "text"
    return None


def _function_call(state: _State, call: dict[str, Any]) -> None:
    name, call_id = call.get("name"), call.get("id")
    if not name and state.open_call is not None:  # a continuation of a streamed call, or its end
        pieces = call.get("partialArgs")
        for piece in pieces if isinstance(pieces, list) else ():
            if isinstance(piece, dict):
                _partial(state, state.open_call, piece)
        if not call.get("willContinue"):
            state.open_call = None
        return
    if not name:
        state.collector.problems.append(f"a functionCall part has no name: {short(json.dumps(call))!r}")
    args = call.get("args")
    entry = _Call(call_id if isinstance(call_id, str) and call_id else None, str(name or ""), args)
    state.calls.append(entry)
    state.open_call = None
    if call.get("willContinue"):  # Vertex streamed arguments: partialArgs follow in later parts
        entry.arguments = args if isinstance(args, dict) else {}
        state.open_call = entry


def _partial(state: _State, call: _Call, piece: dict[str, Any]) -> None:
    """Apply one ``partialArgs`` entry (``jsonPath`` ``$.a.b``; string values arrive in fragments)."""
    path = str(piece.get("jsonPath", ""))
    keys = path.removeprefix("$.").split(".") if path.startswith("$.") else []
    if not keys or not all(_PATH_KEY.match(key) for key in keys):
        state.collector.problems.append(f"partialArgs path {path!r} is not supported")
        return
    target = call.arguments
    for key in keys[:-1]:
        target = target.setdefault(key, {}) if isinstance(target, dict) else None
    if not isinstance(target, dict):
        state.collector.problems.append(f"partialArgs path {path!r} runs into a value that is no object")
        return
    last = keys[-1]
    if "stringValue" in piece:
        target[last] = str(target.get(last, "")) + str(piece["stringValue"])
    for kind in ("numberValue", "boolValue"):
        if kind in piece:
            target[last] = piece[kind]
    if "nullValue" in piece:
        target[last] = None


def _finished(call: _Call) -> SummaryToolCall:
    args = call.arguments
    if args is None:
        return SummaryToolCall(call.id, call.name, {}, True)  # RES-05: absent args are {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return SummaryToolCall(call.id, call.name, args, False)
    return SummaryToolCall(call.id, call.name, args, isinstance(args, dict))
