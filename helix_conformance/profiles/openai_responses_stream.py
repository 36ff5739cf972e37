"""The response side of ``openai-responses``: the typed SSE stream, in-stream errors and HTTP error bodies.

Framing and field order follow live recordings (../shared/recordings/openai-responses): each event is
``event: <type>`` + ``data: <json>`` + a blank line, numbered by ``sequence_number``; the response object is
repeated whole in ``response.created`` / ``in_progress`` and in the terminal ``response.completed`` /
``response.incomplete`` / ``response.failed``. Deltas carry an ``obfuscation`` padding string. A reasoning
item's ``encrypted_content`` in ``response.output_item.added`` is incomplete (the SDK says to take it from
``response.output_item.done``): the writer sends a prefix there, the whole value at the end. An in-stream error
is an ``error`` event (nested ``error`` object, as recorded) followed by ``response.failed``.

Quirks: ``reasoning_text`` streams a thinking part as reasoning text (``response.reasoning_text.delta`` in a
``reasoning_text`` content part, the item's ``content`` carrying it) instead of a summary: the SDK's
``ResponseReasoningTextDeltaEvent``, what gpt-oss servers, DeepSeek, LM Studio and OpenRouter send.
``done_marker`` ends the stream with Chat Completions' ``data: [DONE]`` after the terminal event (OpenRouter's
Responses API). ``flat_error`` sends the ``error`` event with its fields flat, as the SDK's
``ResponseErrorEvent`` and the streaming-events reference have it, rather than nested as recorded live.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..scenarios.model import HttpError, Refusal, Stream, StreamError, Text, Thinking, ToolCall

# STOP-01, OpenAI Responses column: canonical reason -> (terminal status, incomplete_details.reason).
TERMINALS: dict[str, tuple[str, str | None]] = {
    "end_turn": ("completed", None),
    "tool_use": ("completed", None),
    "refusal": ("completed", None),
    "max_tokens": ("incomplete", "max_output_tokens"),
    "content_filter": ("incomplete", "content_filter"),
}
OFF_SDK_INCOMPLETE_REASONS = frozenset({"x_helix_future_reason"})
"""Incomplete reasons the SDK's Literal does not list, used by ``stop_unknown`` (STOP-01 "anything else")."""

# in-stream error kind -> (error event type, code, message): the `error` event and the response.failed code.
STREAM_ERRORS: dict[str, tuple[str, str, str]] = {
    "server_error": (
        "server_error",
        "server_error",
        "An error occurred while processing your request. You can retry your request, or contact us through "
        "our help center at help.openai.com if the error persists.",
    ),
    "rate_limit": (
        "tokens",
        "rate_limit_exceeded",
        "Rate limit reached for gpt-5-mini on tokens per min (TPM). Please try again in 1s.",
    ),
    "overloaded": (
        "service_unavailable_error",
        "server_is_overloaded",
        "Our servers are currently overloaded. Please try again later.",
    ),
}
OFF_SDK_FAILED_CODES = frozenset({"server_is_overloaded", "slow_down", "insufficient_quota"})
"""``response.failed`` codes sent live that the SDK's ``ResponseError.code`` Literal does not list."""

# status or kind: (message, type, param, code) of the HTTP error body, shapes as the live API sends them.
ERROR_BODIES: dict[int | str, tuple[str, str | None, str | None, str | None]] = {
    400: (
        "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead.",
        "invalid_request_error",
        "temperature",
        "decimal_below_min_value",
    ),
    401: (
        "Incorrect API key provided: sk-helix***0000. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        None,
        "invalid_api_key",
    ),
    403: (
        "Country, region, or territory not supported",
        "request_forbidden",
        None,
        "unsupported_country_region_territory",
    ),
    404: ("Invalid URL (POST /v1/responsess)", "invalid_request_error", None, None),
    408: ("Request timed out.", "timeout", None, None),
    413: (
        "Request too large for gpt-5-mini. Please reduce your prompt.",
        "invalid_request_error",
        "input",
        "request_too_large",
    ),
    422: ("Unprocessable Entity", "invalid_request_error", None, None),
    429: (
        "Rate limit reached for gpt-5-mini in organization org-helix on requests per min (RPM): Limit 3, "
        "Used 3, Requested 1. Please try again in 20s.",
        "requests",
        "requests",
        "rate_limit_exceeded",
    ),
    500: (
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        None,
        None,
    ),
    502: ("Bad gateway.", "server_error", None, None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None, None),
    529: ("Overloaded", "overloaded_error", None, None),
    "insufficient_quota": (
        "You exceeded your current quota, please check your plan and billing details. For more information "
        "on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "insufficient_quota",
        None,
        "insufficient_quota",
    ),
    "invalid_tool_name": (
        "Invalid 'tools[0].name': string does not match pattern. Expected a string that matches the pattern "
        "'^[a-zA-Z0-9_-]+$'.",
        "invalid_request_error",
        "tools[0].name",
        "invalid_value",
    ),
}


DONE_MARKER = "data: [DONE]\n\n"
"""Chat Completions' end of stream, which OpenRouter also sends after a Responses stream's terminal event."""


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_response(error: HttpError) -> tuple[dict[str, str], bytes]:
    message, type_, param, code = (
        ERROR_BODIES.get(error.kind or error.status) or ERROR_BODIES[500 if error.status >= 500 else 400]
    )
    headers = {"content-type": "application/json", "x-request-id": "req_helix_replay"}
    if error.retry_after_ms is not None:
        headers["retry-after-ms"] = str(error.retry_after_ms)
    if error.retry_after_s is not None:
        headers["retry-after"] = str(error.retry_after_s)
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return headers, (json.dumps(body, indent=2) + "\n").encode()


class EventWriter:
    """Writes one streamed Responses API response as the live API frames it."""

    def __init__(self, seed: str, model: str) -> None:
        self.digest = hashlib.sha256(seed.encode()).hexdigest()
        self.tail = self.digest[:16]  # live item ids end like the response id
        self.id = "resp_" + self._hex("resp") + self.tail
        self.created = 1757687055 + int(self.digest[16:20], 16) % 100000
        self.model = model
        self.sequence = 0
        self.events: list[str] = []
        self.output: list[dict[str, Any]] = []
        self.unknown: dict[str, Any] = {}

    def _hex(self, salt: str) -> str:
        return hashlib.sha256(f"{self.digest}:{salt}".encode()).hexdigest()[:32]

    def _item_id(self, prefix: str, index: int) -> str:
        return f"{prefix}_{self._hex(f'{prefix}{index}')}{self.tail}"

    def _obfuscation(self) -> str:
        raw = hashlib.sha256(f"{self.id}:{self.sequence}".encode()).hexdigest()
        return "".join(chr(65 + int(c, 16)) if i % 3 else c for i, c in enumerate(raw))[
            : 3 + self.sequence % 12
        ]

    def _event(self, type_: str, fields: dict[str, Any]) -> None:
        data = {"type": type_, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        self.events.append(f"event: {type_}\ndata: {dumps(data)}\n\n")

    def _response(
        self,
        status: str,
        *,
        error: dict[str, Any] | None = None,
        incomplete: str | None = None,
        usage: bool = False,
    ) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "background": False,
            "error": error,
            "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": None,
            "max_output_tokens": None,
            "max_tool_calls": None,
            "model": self.model,
            "output": list(self.output) if status != "in_progress" else [],
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "prompt_cache_key": None,
            "prompt_cache_retention": None,
            "reasoning": {"effort": "medium", "summary": None},
            "safety_identifier": None,
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": {
                "input_tokens": 19,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": 10,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 29,
            }
            if usage
            else None,
            "user": None,
            "metadata": {},
        }

    # --- output items ------------------------------------------------------------------------------

    def _added(self, index: int, item: dict[str, Any]) -> None:
        self._event("response.output_item.added", {"output_index": index, "item": item})

    def _done(self, index: int, item: dict[str, Any]) -> None:
        self.output.append(item)
        self._event("response.output_item.done", {"output_index": index, "item": item})

    def _reasoning_text(self, part: Thinking, index: int, complete: bool) -> None:
        """Reasoning as reasoning text (``reasoning_text`` quirk): a content part, not a summary."""
        item_id = self._item_id("rs", index)
        text = "".join(part.chunks)
        self._added(index, {"id": item_id, "type": "reasoning", "summary": [], "content": []})
        at = {"item_id": item_id, "output_index": index, "content_index": 0}
        empty = {"type": "reasoning_text", "text": ""}
        self._event("response.content_part.added", {**at, "part": empty})
        for piece in part.chunks:
            self._event("response.reasoning_text.delta", {**at, "delta": piece})
        if not complete:
            return
        self._event("response.reasoning_text.done", {**at, "text": text})
        whole = {"type": "reasoning_text", "text": text}
        self._event("response.content_part.done", {**at, "part": whole})
        self._done(index, {"id": item_id, "type": "reasoning", "summary": [], "content": [whole]})

    def _reasoning(self, part: Thinking, index: int, complete: bool) -> None:
        item_id = self._item_id("rs", index)
        text = "".join(part.chunks)
        signature = part.signature
        head: dict[str, Any] = {"id": item_id, "type": "reasoning"}
        if signature is not None:
            head["encrypted_content"] = signature[: max(1, len(signature) // 2)]  # incomplete, as live
        self._added(index, {**head, "summary": []})
        at = {"item_id": item_id, "output_index": index, "summary_index": 0}
        summary = {"type": "summary_text", "text": ""}
        self._event("response.reasoning_summary_part.added", {**at, "part": summary})
        for piece in part.chunks:
            self._event(
                "response.reasoning_summary_text.delta",
                {**at, "delta": piece, "obfuscation": self._obfuscation()},
            )
        if not complete:
            return
        self._event("response.reasoning_summary_text.done", {**at, "text": text})
        self._event("response.reasoning_summary_part.done", {**at, "part": {**summary, "text": text}})
        done: dict[str, Any] = {"id": item_id, "type": "reasoning"}
        if signature is not None:
            done["encrypted_content"] = signature
        self._done(index, {**done, "summary": [{"type": "summary_text", "text": text}]})

    def _message(self, part: Text | Refusal, index: int, complete: bool, status: str) -> None:
        item_id = self._item_id("msg", index)
        self._added(
            index,
            {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"},
        )
        at = {"item_id": item_id, "output_index": index, "content_index": 0}
        whole = "".join(part.chunks)
        if isinstance(part, Text):
            empty: dict[str, Any] = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            final = {**empty, "text": whole}
            self._event("response.content_part.added", {**at, "part": empty})
            for piece in part.chunks:
                self._event(
                    "response.output_text.delta",
                    {
                        **at,
                        "delta": piece,
                        "logprobs": [],
                        "obfuscation": self._obfuscation(),
                        **self.unknown,
                    },
                )
            if not complete:
                return
            self._event("response.output_text.done", {**at, "text": whole, "logprobs": []})
        else:
            empty = {"type": "refusal", "refusal": ""}
            final = {"type": "refusal", "refusal": whole}
            self._event("response.content_part.added", {**at, "part": empty})
            for piece in part.chunks:
                self._event(
                    "response.refusal.delta", {**at, "delta": piece, "obfuscation": self._obfuscation()}
                )
            if not complete:
                return
            self._event("response.refusal.done", {**at, "refusal": whole})
        self._event("response.content_part.done", {**at, "part": final})
        self._done(
            index,
            {"id": item_id, "type": "message", "status": status, "content": [final], "role": "assistant"},
        )

    def _function_call(self, part: ToolCall, index: int, complete: bool, status: str) -> None:
        item_id = self._item_id("fc", index)
        call_id = part.id or "call_" + self._hex(f"call{index}")[:24]
        head = {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": ""}
        self._added(index, {**head, "call_id": call_id, "name": part.name})
        at = {"item_id": item_id, "output_index": index}
        for piece in part.arguments:
            self._event(
                "response.function_call_arguments.delta",
                {**at, "delta": piece, "obfuscation": self._obfuscation()},
            )
        if not complete:
            return
        arguments = "".join(part.arguments)
        self._event("response.function_call_arguments.done", {**at, "arguments": arguments})
        self._done(
            index,
            {**head, "status": status, "arguments": arguments, "call_id": call_id, "name": part.name},
        )

    # --- the whole stream ----------------------------------------------------------------------------

    def render(self, response: Stream | StreamError) -> bytes:
        quirks = response.quirks
        self.unknown = {"x_helix_future_field": {"nested": [1, 2]}} if "unknown_fields" in quirks else {}
        self._event("response.created", {"response": self._response("in_progress")})
        self._event("response.in_progress", {"response": self._response("in_progress")})
        if "unknown_events" in quirks:
            self._event("x_helix_future_event", {"detail": {"nested": [1, 2]}})
        finish = response.finish if isinstance(response, Stream) else None
        status, reason = ("completed", None)
        if finish is not None:
            wire = finish.wire_value("openai-responses")
            status, reason = ("incomplete", wire) if wire else TERMINALS[finish.reason]
        item_status = "incomplete" if status == "incomplete" else "completed"
        for index, part in enumerate(response.parts):
            complete = finish is not None or index < len(response.parts) - 1
            if isinstance(part, Thinking) and "reasoning_text" in quirks:
                self._reasoning_text(part, index, complete)
            elif isinstance(part, Thinking):
                self._reasoning(part, index, complete)
            elif isinstance(part, (Text, Refusal)):
                self._message(part, index, complete, item_status)
            elif isinstance(part, ToolCall):
                self._function_call(part, index, complete, item_status)
        if isinstance(response, StreamError):
            type_, code, message = STREAM_ERRORS[response.kind]
            error = {"type": type_, "code": code, "message": message, "param": None}
            if "flat_error" in quirks:  # the SDK's ResponseErrorEvent: code, message, param at the top
                self._event("error", {"code": code, "message": message, "param": None})
            else:
                self._event("error", {"error": error})
            failed = self._response("failed", error={"code": code, "message": message})
            self._event("response.failed", {"response": failed})
        elif finish is not None:
            terminal = self._response(status, incomplete=reason, usage=True)
            self._event(f"response.{status}", {"response": terminal})
        if "done_marker" in quirks:
            self.events.append(DONE_MARKER)
        return "".join(self.events).encode()


def event_classes() -> dict[str, Any]:
    """The SDK's stream event model of each event type (``openai.types.responses.ResponseStreamEvent``)."""
    import typing

    from openai.types.responses import ResponseStreamEvent

    union = typing.get_args(ResponseStreamEvent)[0]
    classes = {}
    for cls in typing.get_args(union):
        (type_,) = typing.get_args(cls.model_fields["type"].annotation)
        classes[type_] = cls
    return classes


def validate_event(event: bytes) -> None:
    """Validate one event against the ``openai`` SDK's Responses stream event types (strict)."""
    if event.decode("utf-8") == DONE_MARKER:
        return  # OpenRouter's end marker (``done_marker``): no event of the SDK's, no payload to validate
    lines = event.decode("utf-8").rstrip("\n").split("\n")
    if len(lines) != 2 or not lines[0].startswith("event: ") or not lines[1].startswith("data: "):
        raise ValueError(f"not an event:/data: pair: {event!r:.80}")
    name = lines[0][len("event: ") :]
    data = json.loads(lines[1][len("data: ") :])
    if data.get("type") != name:
        raise ValueError(f"event name {name!r} differs from the data's type {data.get('type')!r}")
    if not isinstance(data.get("sequence_number"), int):
        raise ValueError(f"{name} has no integer sequence_number")
    if name.startswith("x_helix_"):
        return  # RES-12's deliberately unknown event
    data = {k: v for k, v in data.items() if not k.startswith("x_helix_")}
    if name == "error" and isinstance(data.get("error"), dict):
        # Live streams nest the error (recordings/openai-responses/openai-error.1.chunks.txt); the SDK's
        # ResponseErrorEvent has its fields flat: check the same fields there.
        nested = data.pop("error")
        if set(nested) != {"type", "code", "message", "param"}:
            raise ValueError(f"the error event's error has other fields than the live one: {sorted(nested)}")
        data.update({k: nested[k] for k in ("code", "message", "param")})
    response = data.get("response")
    if isinstance(response, dict):
        error = response.get("error")
        if isinstance(error, dict) and error.get("code") in OFF_SDK_FAILED_CODES:
            response["error"] = {**error, "code": "server_error"}
        details = response.get("incomplete_details")
        if isinstance(details, dict) and details.get("reason") in OFF_SDK_INCOMPLETE_REASONS:
            response["incomplete_details"] = {"reason": "max_output_tokens"}
    event_classes()[name].model_validate(data, strict=True)


def validate_error_body(body: bytes) -> None:
    """An HTTP error body has exactly the fields the API sends: ``{"error": {message, type, param, code}}``."""
    data = json.loads(body)
    if set(data) != {"error"} or set(data["error"]) != {"message", "type", "param", "code"}:
        raise ValueError(f"error body fields differ from the API's: {data}")
