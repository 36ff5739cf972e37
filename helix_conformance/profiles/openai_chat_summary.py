"""Reads an ``openai-chat`` response (and the OpenAI-compatible servers' variants) into a ResponseSummary.

Tool calls are assembled as a conforming adapter does: by ``index``; without one (Mistral) by id, else by
position; a whole call sent again after its arguments are complete is not appended. Reasoning comes in
``reasoning_content`` (DeepSeek), ``reasoning`` (Groq, OpenRouter, Ollama), ``reasoning_details`` only
(OpenRouter, Snowflake) or Mistral's typed ``thinking`` parts. ``[DONE]`` ends the stream: without a
finish_reason, text stops ``unknown`` (STOP-01's "anything else"). Event labels, one per SSE item (``+`` joins what one chunk carries):
``role`` (a delta with only the role), ``reasoning``, ``content``, ``refusal``, ``tool_calls``, ``finish``,
``usage``, ``empty`` (no choices and no usage: Azure's first chunk), ``delta`` (an empty delta), ``error``,
``[DONE]``, ``comment`` (an SSE comment: OpenRouter's keep-alive) and ``invalid`` (not a JSON object).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..contract import StopReason
from .openai_chat_stream import FINISH_REASONS
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

STOP_TABLE = invert_stop_table(FINISH_REASONS, {"function_call": "tool_use"})


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _State:
    collector: Collector
    calls: list[_Call] = field(default_factory=list)
    by_index: dict[int, _Call] = field(default_factory=dict)
    refused: bool = False
    done: bool = False


def _error_type(payload: Any) -> str | None:
    """``error.type``, else ``error.code`` (OpenRouter sends only a numeric code), as a string."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None
    for key in ("type", "code"):
        value = error.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
            return str(value)
    return "error"


def summarise(status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
    """The summary of one Chat Completions response: an HTTP error body or a streamed completion."""
    if not 200 <= status < 300:
        return http_error(status, body, _error_type(json_body(body)))
    state = _State(stream_collector(status, headers))
    out = state.collector
    for n, item in enumerate(read_sse(body, out.problems)):
        if item.kind == "comment":
            out.events.append("comment")
        elif item.kind == "stray":
            out.problems.append(f"line {n} is not an SSE field: {item.data[:60]!r}")
        else:
            _event(state, item.event, item.data.strip(), n)
    if not state.done and out.wire_stop is None and not out.errored:
        out.problems.append("the stream ended without [DONE] or a finish_reason")
    out.calls = [_finished(call) for call in state.calls]
    stop: StopReason | None = None
    if state.refused:
        stop = "refusal"  # STOP-01: refusal content -> refusal, whatever the finish_reason
    elif out.wire_stop is not None:
        stop = STOP_TABLE.get(out.wire_stop, "unknown")
    elif state.done:
        stop = "unknown"  # [DONE] without any finish_reason (Snowflake Cortex, Novita)
    return out.summary(stop)


def _finished(call: _Call) -> SummaryToolCall:
    arguments, valid = parse_arguments("".join(call.arguments))
    return SummaryToolCall(call.id or None, call.name, arguments, valid)


def _event(state: _State, name: str | None, data: str, n: int) -> None:
    out = state.collector
    if data == "[DONE]":
        out.events.append("[DONE]")
        state.done = True
        return
    payload = json_object(data, f"event {n}", out.problems)
    if payload is None:
        out.events.append("invalid")
        return
    if payload.get("error") is not None or name == "error":
        out.events.append("error")
        out.error(_error_type(payload) or "error")
        return
    labels: list[str] = []
    choices = payload.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            labels += _choice(state, choice)
    if isinstance(payload.get("usage"), dict):
        out.usage = payload["usage"]
        labels.append("usage")
    out.events.append("+".join(labels) or ("empty" if not choices else "delta"))


def _choice(state: _State, choice: dict[str, Any]) -> list[str]:
    out = state.collector
    labels: list[str] = []
    delta = choice.get("delta")
    if isinstance(delta, dict):
        reasoned = _reasoning(out, delta.get("reasoning_content")) | _reasoning(out, delta.get("reasoning"))
        if not reasoned:  # OpenRouter sends reasoning_details beside reasoning: read them only alone
            details = _details_text(delta.get("reasoning_details"))
            reasoned = sum(_reasoning(out, piece) for piece in details) > 0
        if reasoned:
            labels.append("reasoning")
        content = delta.get("content")
        if isinstance(content, list):  # Mistral (magistral): typed parts
            labels += _typed_parts(out, content)
        elif isinstance(content, str) and content:
            out.text.append(content)
            labels.append("content")
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            state.refused = True
            out.text.append(refusal)  # the model's answer text, as a conforming adapter returns it
            labels.append("refusal")
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list) and tool_calls:
            for position, entry in enumerate(tool_calls):
                if isinstance(entry, dict):
                    _tool_delta(state, entry, position)
            labels.append("tool_calls")
        if not labels and delta.get("role") is not None:
            labels.append("role")
    reason = choice.get("finish_reason")
    if isinstance(reason, str) and reason:
        out.wire_stop = reason
        labels.append("finish")
    return labels


def _reasoning(out: Collector, piece: Any) -> bool:
    if isinstance(piece, str) and piece:
        out.thinking.append(piece)
        return True
    return False


def _details_text(details: Any) -> list[str]:
    """The text of ``reasoning.text`` and ``reasoning.summary`` entries (``reasoning.encrypted`` has none)."""
    pieces = []
    for entry in details if isinstance(details, list) else ():
        if isinstance(entry, dict):
            piece = entry.get("text") if entry.get("type") == "reasoning.text" else entry.get("summary")
            if entry.get("type") in ("reasoning.text", "reasoning.summary") and isinstance(piece, str):
                pieces.append(piece)
    return pieces


def _typed_parts(out: Collector, parts: list[Any]) -> list[str]:
    labels: list[str] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"]:
            out.text.append(part["text"])
            labels.append("content")
        elif part.get("type") == "thinking":
            thinking = part.get("thinking")
            for item in thinking if isinstance(thinking, list) else [{"text": thinking}]:
                if _reasoning(out, item.get("text") if isinstance(item, dict) else None):
                    labels.append("reasoning")
    return list(dict.fromkeys(labels))


def _tool_delta(state: _State, entry: dict[str, Any], position: int) -> None:
    """Merge one delta: first id, first non-empty name (a repeated ``""`` never erases it), fragments joined."""
    call_id = entry.get("id") if isinstance(entry.get("id"), str) else ""
    call = _slot(state, entry.get("index"), call_id or "", position)
    call.id = call.id or call_id or ""
    function = entry.get("function")
    if not isinstance(function, dict):
        return
    name, arguments = function.get("name"), function.get("arguments")
    if isinstance(name, str) and name and not call.name:
        call.name = name
    if isinstance(arguments, (dict, list)):  # some compatible servers send an object, not a string
        arguments = json.dumps(arguments)
    if isinstance(arguments, str) and not _whole_again(call, arguments):
        call.arguments.append(arguments)


def _whole_again(call: _Call, fragment: str) -> bool:
    """A whole JSON object arriving after the call's arguments already parse: the call repeated, not more."""
    if not call.arguments or not fragment.lstrip().startswith("{"):
        return False
    return parse_arguments("".join(call.arguments))[1] and bool("".join(call.arguments).strip())


def _slot(state: _State, index: Any, call_id: str, position: int) -> _Call:
    """By ``index``; without one (Mistral), a known id continues its call, a new id or entry opens one."""
    if isinstance(index, int) and not isinstance(index, bool):
        if index not in state.by_index:
            state.by_index[index] = _Call()
            state.calls.append(state.by_index[index])
        return state.by_index[index]
    for call in state.calls:
        if call_id and call.id == call_id:
            return call
    if call_id or position > 0 or not state.calls:
        state.calls.append(_Call())
    return state.calls[-1]
