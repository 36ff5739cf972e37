"""The response side of ``cohere-chat``: the v2 chat stream, error bodies and the in-stream error, byte-exact.

Framing as in the recorded streams (the Vercel AI SDK's ``packages/cohere`` fixtures, ``tests/recordings/
cohere``): ``event: <type>`` / ``data: <json>`` pairs; ``message-start`` first with its ``id`` before ``type``
and an empty message (``content``, ``tool_plan``, ``tool_calls``, ``citations``); each text or thinking block
as ``content-start`` (an empty ``text`` or ``thinking``), ``content-delta`` pieces and ``content-end``; the
text of a tool-calling answer as ``tool-plan-delta`` pieces before the calls (Cohere never streams content
beside tool calls: the plan is that text); each call as ``tool-call-start`` (id, name, ``"arguments": ""``),
``tool-call-delta`` argument pieces and ``tool-call-end``; ``message-end`` last with ``finish_reason`` and
usage (https://docs.cohere.com/v2/docs/streaming). An error during generation ends the stream as a
``message-end`` with ``finish_reason: "ERROR"`` and its ``error`` message (``ChatMessageEndEvent`` in
Cohere's OpenAPI spec); the stream has no typed rate-limit or overload error.

Stream ``quirks``: ``unknown_events`` (an event type no adapter has seen: RES-12), ``unknown_fields``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
import warnings
from typing import Any

from ..scenarios.model import HttpError, Stream, StreamError, Text, Thinking, ToolCall

# STOP-01, Cohere column: the finish_reason the authored streams send per canonical reason (ChatFinishReason:
# COMPLETE, STOP_SEQUENCE, MAX_TOKENS, TOOL_CALL, ERROR, TIMEOUT; https://docs.cohere.com/reference/chat-stream).
STOP_REASONS: dict[str, str] = {
    "end_turn": "COMPLETE",
    "tool_use": "TOOL_CALL",
    "max_tokens": "MAX_TOKENS",
    "stop_sequence": "STOP_SEQUENCE",
}
ERROR_FINISH = "ERROR"

# status or kind -> message. Statuses and body shape ({"id", "message"}) are the v2 chat responses of Cohere's
# OpenAPI spec (cohere-openapi.yaml, /v2/chat); the messages are the documented examples
# (https://docs.cohere.com/reference/errors) where there is one.
ERROR_BODIES: dict[int | str, str] = {
    400: "invalid request: temperature must be between 0 and 1.0 inclusive.",
    401: "invalid api token",
    402: "Please add or update your payment method at https://dashboard.cohere.com/billing?tab=payment to continue",
    403: "Forbidden: the api token does not have the permissions needed for this operation.",
    404: "model 'command-a-03-2025x' not found, make sure the correct model ID was used and that you have access to the model.",
    408: "request timed out",
    413: "too many tokens: size limit exceeded by 11326 tokens.",
    422: "invalid request: message must not be empty in a turn",
    429: "You are past the per minute request limit, please wait and try again later.",
    499: "request cancelled",
    500: "internal server error, this has been reported to our developers.",
    502: "bad gateway",
    503: "service unavailable: too many users are trying to access the service at the same time",
    504: "gateway timeout: an internal service took too long to respond",
    529: "service unavailable: too many users are trying to access the service at the same time",
    "invalid_tool_name": (
        "invalid request: tool names can only contain certain characters (A-Za-z0-9_) and can't begin with a "
        "digit (provided name: 'get weather!')."
    ),
}
STREAM_ERROR_MESSAGES: dict[str, str] = {"server_error": "internal server error during generation"}
"""The neutral error kinds a Cohere stream can say: only a generic ERROR (no rate-limit or overload event)."""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _uuid(seed: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256(seed.encode()).digest()[:16], version=4))


def tool_call_id(name: str, seed: str) -> str:
    """A tool-call id in Cohere's style (``get_weather_nsz5zm3w56q3``), derived from ``seed``."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    digest = hashlib.sha256(seed.encode()).digest()
    return f"{name}_" + "".join(alphabet[b % len(alphabet)] for b in digest[:12])


def error_response(error: HttpError, *, seed: str) -> tuple[dict[str, str], bytes]:
    message = (
        ERROR_BODIES.get(error.kind or error.status) or ERROR_BODIES[500 if error.status >= 500 else 400]
    )
    headers = {
        "content-type": "application/json",
        "x-debug-trace-id": _uuid("trace:" + seed).replace("-", ""),
    }
    if error.retry_after_ms is not None:  # CFG-05's scenarios; Cohere documents no retry hint
        headers["retry-after"] = str(max(1, -(-error.retry_after_ms // 1000)))
    return headers, _dumps({"id": _uuid(seed), "message": message}).encode()


class EventWriter:
    """Writes one streamed v2 chat response as the live API frames it."""

    def __init__(self, seed: str, tool_id: Any) -> None:
        self.seed = seed
        self.tool_id = tool_id
        self.events: list[str] = []
        self.content_index = 0
        self.tool_index = 0
        self.unknown: dict[str, Any] = {}

    def _event(self, data: dict[str, Any]) -> None:
        self.events.append(f"event: {data['type']}\ndata: {_dumps({**data, **self.unknown})}\n\n")

    def render(self, response: Stream | StreamError) -> bytes:
        quirks = response.quirks
        self.unknown = {"x_helix_future_field": {"nested": [1, 2]}} if "unknown_fields" in quirks else {}
        empty = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
        self.events.append(
            "event: message-start\ndata: "
            + _dumps({"id": _uuid(self.seed), "type": "message-start", "delta": {"message": empty}})
            + "\n\n"
        )
        if "unknown_events" in quirks:
            self._event({"type": "x-helix-future-event", "delta": {"detail": {"nested": [1, 2]}}})
        calls = any(isinstance(part, ToolCall) for part in response.parts)
        for part in response.parts:
            self._part(part, planning=calls)
        if isinstance(response, StreamError):
            message = STREAM_ERROR_MESSAGES.get(response.kind)
            if message is None:
                raise NotImplementedError(f"a Cohere stream has no {response.kind!r} error event")
            self._end({"finish_reason": ERROR_FINISH, "error": message})
        elif response.finish is not None:
            finish = response.finish
            self._end({"finish_reason": finish.wire_value("cohere-chat") or STOP_REASONS[finish.reason]})
        return "".join(self.events).encode()

    def _end(self, delta: dict[str, Any]) -> None:
        usage = {
            "billed_units": {"input_tokens": 12, "output_tokens": 7},
            "tokens": {"input_tokens": 507, "output_tokens": 10},
            "cached_tokens": 448,
        }
        self._event({"type": "message-end", "delta": {**delta, "usage": usage}})

    def _part(self, part: Any, *, planning: bool) -> None:
        if isinstance(part, Text) and planning:
            for piece in part.chunks:
                self._event({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": piece}}})
        elif isinstance(part, (Text, Thinking)):
            key = "text" if isinstance(part, Text) else "thinking"
            index = self.content_index
            start = {"message": {"content": {"type": key, key: ""}}}
            self._event({"type": "content-start", "index": index, "delta": start})
            for piece in part.chunks:
                delta = {"message": {"content": {key: piece}}}
                self._event({"type": "content-delta", "index": index, "delta": delta})
            self._event({"type": "content-end", "index": index})
            self.content_index += 1
        elif isinstance(part, ToolCall):
            call_id = self.tool_id(part.id) if part.id else tool_call_id(part.name, self.seed + part.name)
            index = self.tool_index
            head = {"id": call_id, "type": "function", "function": {"name": part.name, "arguments": ""}}
            self._event(
                {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": head}}}
            )
            for piece in part.arguments:
                arguments: dict[str, Any] = {"message": {"tool_calls": {"function": {"arguments": piece}}}}
                self._event({"type": "tool-call-delta", "index": index, "delta": arguments})
            self._event({"type": "tool-call-end", "index": index})
            self.tool_index += 1
        else:
            raise NotImplementedError(f"cohere-chat has no {type(part).__name__} content")


def validate_event(event: bytes) -> None:
    """Validate one SSE event against the ``cohere`` SDK's ``V2ChatStreamResponse``: the event name equals the
    data's ``type``, the SDK's model of that type validates the data, and no field is one the model lacks (the
    SDK allows extra fields and would keep them silently)."""
    from cohere.core.unchecked_base_model import construct_type
    from cohere.v2.types import V2ChatStreamResponse
    from pydantic import BaseModel

    lines = event.decode("utf-8").rstrip("\n").split("\n")
    if len(lines) != 2 or not lines[0].startswith("event: ") or not lines[1].startswith("data: "):
        raise ValueError(f"not an event:/data: pair: {event!r:.80}")
    name, data = lines[0][len("event: ") :], json.loads(lines[1][len("data: ") :])
    if data.get("type") != name:
        raise ValueError(f"event name {name!r} differs from the data's type {data.get('type')!r}")
    if name.startswith("x-helix-"):
        return  # RES-12's deliberately unknown event
    with warnings.catch_warnings():  # the SDK reads pydantic's deprecated __fields__; not our concern
        warnings.simplefilter("ignore", DeprecationWarning)
        parsed = construct_type(type_=V2ChatStreamResponse, object_=data)  # type: ignore[arg-type]
    if not isinstance(parsed, BaseModel):
        raise ValueError(f"{name!r} is not an event type of V2ChatStreamResponse")
    type(parsed).model_validate(data)
    _no_extra(parsed, name)


OFF_SDK_FIELDS: dict[str, frozenset[str]] = {
    "message-start.delta.message": frozenset({"content", "tool_plan", "tool_calls", "citations"}),
}
"""Fields every recorded stream carries that the SDK's models lack (the empty message of ``message-start``,
in each of ``tests/recordings/cohere``); allowed where recorded, nowhere else."""


def _no_extra(model: Any, where: str) -> None:
    from pydantic import BaseModel

    allowed = OFF_SDK_FIELDS.get(where, frozenset())
    extra = [k for k in (model.model_extra or {}) if not k.startswith("x_helix_") and k not in allowed]
    if extra:
        raise ValueError(f"{where}: {extra} are not fields of the SDK's {type(model).__name__}")
    for field_name in type(model).model_fields:
        value = getattr(model, field_name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                _no_extra(item, f"{where}.{field_name}")


def validate_error_body(body: bytes) -> None:
    data = json.loads(body)
    if set(data) != {"id", "message"} or not all(isinstance(v, str) for v in data.values()):
        raise ValueError(f"not Cohere's error body ({{id, message}}): {data}")
