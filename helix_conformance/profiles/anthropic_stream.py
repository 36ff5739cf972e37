"""The response side of ``anthropic-messages``: the stream, error bodies and error events, byte-exact.

Framing as in live recordings (../shared/recordings/anthropic): ``event:``/``data:`` pairs, ``data:`` lines
padded with trailing spaces, ``ping`` events between and inside blocks, a first ``input_json_delta`` of ``""``,
an empty ``thinking_delta`` before the ``signature_delta``, and a refusal with zero content blocks.

Stream ``quirks``: ``unknown_events`` (an event, a block and a delta type no adapter has seen: RES-12),
``unknown_fields``, ``input_at_start`` (a tool_use block whose whole ``input`` comes with its
``content_block_start`` and no ``input_json_delta``: Bedrock and proxies), ``server_tools`` (the server-side
tool blocks a response carries before the answer: ``server_tool_use`` with its input deltas and
``web_search_tool_result`` as in ../shared/recordings/anthropic/test_pause_turn_web_search_streaming_vcr.yaml,
and the MCP connector's ``mcp_tool_use``/``mcp_tool_result`` as in Vercel's ``anthropic-mcp.1.chunks.txt``).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from ..scenarios.model import (
    HttpError,
    RedactedThinking,
    Refusal,
    Stream,
    StreamError,
    Text,
    Thinking,
    ToolCall,
)

# STOP-01, Anthropic column: the stop_reason the authored streams send per canonical reason.
STOP_REASONS: dict[str, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}

UNKNOWN_PREFIX = "x_helix_"
"""The prefix of what the authored streams make up on purpose, which no SDK type knows: RES-12's event, block and
delta types, and ``stop_unknown``'s stop reason (validated as if it were ``end_turn``)."""

_ID_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

# status or kind: (error type, message) as the API sends them; 413's type is documented but not in the SDK.
ERROR_BODIES: dict[int | str, tuple[str, str]] = {
    400: (
        "invalid_request_error",
        "max_tokens: Input should be a valid integer, got a number with a fractional part",
    ),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "model: claude-haiku-4-5-2025100"),
    408: ("timeout_error", "Request timed out before the model started responding."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    422: ("invalid_request_error", "messages: Unprocessable entity"),
    429: (
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50 requests per minute. For details, "
        "refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current "
        "usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
    ),
    500: ("api_error", "Internal server error"),
    502: ("api_error", "Bad gateway"),
    503: ("api_error", "Service unavailable"),
    504: ("timeout_error", "The request timed out while processing."),  # docs.claude.com/en/api/errors: 504
    529: ("overloaded_error", "Overloaded"),
    "invalid_tool_name": (
        "invalid_request_error",
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    ),
}
OFF_SDK_ERROR_TYPES = frozenset({"request_too_large"})

STREAM_ERRORS: dict[str, tuple[str, str]] = {
    "server_error": ("api_error", "Internal server error"),
    "rate_limit": (
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit; see the response headers for "
        "current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
    ),
    "overloaded": ("overloaded_error", "Overloaded"),
}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def anthropic_id(prefix: str, seed: str) -> str:
    """An id in Anthropic's style (``msg_01…``, ``toolu_01…``, ``req_011C…``), derived from ``seed``."""
    digest = hashlib.sha256(seed.encode()).digest()
    return prefix + "".join(_ID_ALPHABET[b % len(_ID_ALPHABET)] for b in digest[:22])


def _request_id(seed: str) -> str:
    return anthropic_id("req_011C", "request:" + seed)[:28]


def error_response(error: HttpError, *, seed: str) -> tuple[dict[str, str], bytes]:
    type_, message = (
        ERROR_BODIES.get(error.kind or error.status) or ERROR_BODIES[500 if error.status >= 500 else 400]
    )
    retryable = error.status in (408, 409, 429) or error.status >= 500
    headers = {
        "content-type": "application/json",
        "request-id": _request_id(seed),
        "x-should-retry": "true" if retryable else "false",
    }
    if error.retry_after_ms is not None:
        headers["retry-after"] = str(max(1, math.ceil(error.retry_after_ms / 1000)))
    body = {
        "type": "error",
        "error": {"type": type_, "message": message},
        "request_id": headers["request-id"],
    }
    return headers, _dumps(body).encode()


class EventWriter:
    """Writes one streamed Messages response as the live API frames it."""

    def __init__(self, seed: str, model: str, tool_id: Any) -> None:
        self.seed = seed
        self.model = model
        self.tool_id = tool_id
        self.count = 0
        self.index = 0
        self.events: list[str] = []
        self.quirks: frozenset[str] = frozenset()

    def _roll(self, salt: str) -> int:
        self.count += 1
        return hashlib.sha256(f"{self.seed}:{salt}:{self.count}".encode()).digest()[0]

    def _event(self, data: dict[str, Any]) -> None:
        padding = " " * (self._roll("pad") % 17 if self._roll("padded") % 3 else 0)
        self.events.append(f"event: {data['type']}\ndata: {_dumps(data)}{padding}\n\n")

    def _ping(self) -> None:
        self.events.append('event: ping\ndata: {"type": "ping"}\n\n')

    def _maybe_ping(self) -> None:
        if self._roll("ping") % 2:
            self._ping()

    def _usage(self, output_tokens: int, *, start: bool) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "input_tokens": 42,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if start:
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
        usage["output_tokens"] = output_tokens
        if start:
            usage["service_tier"] = "standard"
            usage["inference_geo"] = "not_available"
        return usage

    def _start(self, block: dict[str, Any]) -> None:
        if self.index:
            self._maybe_ping()
        self._event({"type": "content_block_start", "index": self.index, "content_block": block})
        if self.index == 0:
            self._ping()  # the live API pings right after the first block starts

    def _delta(self, delta: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        self._event({"type": "content_block_delta", "index": self.index, "delta": delta, **(extra or {})})

    def _stop(self) -> None:
        self._event({"type": "content_block_stop", "index": self.index})
        self.index += 1

    def render(self, response: Stream | StreamError) -> bytes:
        quirks = response.quirks if isinstance(response, Stream) else frozenset()
        self.quirks = quirks
        self._event(
            {
                "type": "message_start",
                "message": {
                    "model": self.model,
                    "id": anthropic_id("msg_01", self.seed),
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "stop_details": None,
                    "usage": self._usage(3, start=True),
                },
            }
        )
        if "unknown_events" in quirks:
            self._event({"type": "x_helix_future_event", "detail": {"nested": [1, 2]}})
            self._start({"type": "x_helix_future_block", "payload": "ignored by conforming adapters"})
            self._stop()
        if "server_tools" in quirks:
            self._server_tools()
        unknown = {"x_helix_future_field": {"nested": [1, 2]}} if "unknown_fields" in quirks else None
        ends_cleanly = isinstance(response, Stream) and response.finish is not None
        for n, part in enumerate(response.parts):
            self._part(part, unknown)
            block_complete = ends_cleanly or n < len(response.parts) - 1
            if block_complete and not isinstance(part, Refusal):  # a refusal opens no block
                self._stop()
        if isinstance(response, StreamError):
            type_, message = STREAM_ERRORS[response.kind]
            body = {
                "type": "error",
                "error": {"type": type_, "message": message},
                "request_id": _request_id(self.seed),
            }
            self.events.append(f"event: error\ndata: {_dumps(body)}\n\n")
            return "".join(self.events).encode()
        if response.finish is not None:
            finish = response.finish
            reason = finish.wire_value("anthropic-messages") or STOP_REASONS[finish.reason]
            details = None
            if reason == "refusal":
                details = {
                    "type": "refusal",
                    "category": None,
                    "explanation": "This request was declined under Anthropic's usage policies.",
                }
            self._event(
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": reason,
                        "stop_sequence": finish.sequence if reason == "stop_sequence" else None,
                        "stop_details": details,
                    },
                    "usage": self._usage(27, start=False),
                }
            )
            self._event({"type": "message_stop"})
        return "".join(self.events).encode()

    def _part(self, part: Any, unknown: dict[str, Any] | None) -> None:
        if isinstance(part, Text):
            self._start({"type": "text", "text": ""})
            for n, piece in enumerate(part.chunks):
                self._delta({"type": "text_delta", "text": piece}, unknown)
                if n == 0 and "unknown_events" in self.quirks:  # a delta type no adapter has seen (RES-12)
                    self._delta({"type": "x_helix_future_delta", "payload": {"nested": [1, 2]}})
        elif isinstance(part, Thinking):
            self._start({"type": "thinking", "thinking": "", "signature": ""})
            for piece in part.chunks:
                self._delta({"type": "thinking_delta", "thinking": piece})
            self._delta({"type": "thinking_delta", "thinking": ""})  # live streams send an empty one last
            signature = part.signature or anthropic_id("Eu", "signature:" + "".join(part.chunks)) * 4
            self._delta({"type": "signature_delta", "signature": signature})
        elif isinstance(part, RedactedThinking):
            self._start({"type": "redacted_thinking", "data": part.data})
        elif isinstance(part, ToolCall):
            call_id = self.tool_id(part.id) if part.id else anthropic_id("toolu_01", self.seed + part.name)
            whole = "input_at_start" in self.quirks  # Bedrock, proxies: the input at once, no deltas
            self._start(
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": part.name,
                    "input": json.loads("".join(part.arguments) or "{}") if whole else {},
                    "caller": {"type": "direct"},
                }
            )
            if whole:
                return
            self._delta({"type": "input_json_delta", "partial_json": ""})
            for i, piece in enumerate(part.arguments):
                if i == 1:
                    self._maybe_ping()
                self._delta({"type": "input_json_delta", "partial_json": piece})
        # A refusal has no content block at all: the stop_reason carries it.

    def _server_tools(self) -> None:
        """Server-side tool blocks, as the live API streams them: not calls for the client to run."""
        search_id = anthropic_id("srvtoolu_01", self.seed + "web_search")
        self._start({"type": "server_tool_use", "id": search_id, "name": "web_search", "input": {}})
        for piece in ("", '{"query": ', '"Paris weath', 'er today"}'):
            self._delta({"type": "input_json_delta", "partial_json": piece})
        self._stop()
        result = {
            "type": "web_search_result",
            "title": "Paris, France Weather Forecast",
            "url": "https://www.example.com/weather/paris",
            "encrypted_content": anthropic_id("Ev", "encrypted:" + self.seed) * 3,
            "page_age": None,
        }
        self._start({"type": "web_search_tool_result", "tool_use_id": search_id, "content": [result]})
        self._stop()
        mcp_id = anthropic_id("mcptoolu_01", self.seed + "mcp")
        mcp = {"type": "mcp_tool_use", "id": mcp_id, "name": "lookup", "input": {}, "server_name": "docs"}
        self._start(mcp)
        for piece in ("", '{"ter', 'm": "Paris"}'):
            self._delta({"type": "input_json_delta", "partial_json": piece})
        self._stop()
        content = [{"type": "text", "text": "No matching page."}]
        self._start({"type": "mcp_tool_result", "tool_use_id": mcp_id, "is_error": False, "content": content})
        self._stop()


def validate_event(event: bytes) -> None:
    """Validate one event against the ``anthropic`` SDK's stream event (or error) types."""
    from anthropic.types import RawMessageStreamEvent
    from anthropic.types.shared import ErrorResponse
    from pydantic import TypeAdapter

    lines = event.decode("utf-8").rstrip("\n").split("\n")
    if len(lines) != 2 or not lines[0].startswith("event: ") or not lines[1].startswith("data: "):
        raise ValueError(f"not an event:/data: pair: {event!r:.80}")
    name = lines[0][len("event: ") :]
    data = json.loads(lines[1][len("data: ") :])
    if data.get("type") != name:
        raise ValueError(f"event name {name!r} differs from the data's type {data.get('type')!r}")
    if name == "ping" or name.startswith(UNKNOWN_PREFIX):
        return  # ping has no SDK type; x_helix_ events are RES-12's deliberately unknown ones
    if name == "error":
        if data["error"]["type"] not in OFF_SDK_ERROR_TYPES:
            ErrorResponse.model_validate(data)
        return
    block = data.get("content_block") or {}
    if str(block.get("type", "")).startswith(UNKNOWN_PREFIX):
        return
    if str((data.get("delta") or {}).get("type", "")).startswith(UNKNOWN_PREFIX):
        return  # RES-12's deliberately unknown delta type
    if str(block.get("type", "")).startswith("mcp_"):  # the MCP connector's blocks are beta types
        from anthropic.types.beta import BetaRawContentBlockStartEvent

        BetaRawContentBlockStartEvent.model_validate(data, strict=True)
        return
    if name == "message_delta" and str(data["delta"]["stop_reason"]).startswith(UNKNOWN_PREFIX):
        data = {
            **data,
            "delta": {**data["delta"], "stop_reason": "end_turn"},
        }  # every other field still typed
    TypeAdapter(RawMessageStreamEvent).validate_python(data, strict=True)


def validate_error_body(body: bytes) -> None:
    from anthropic.types.shared import ErrorResponse

    data = json.loads(body)
    if data["error"]["type"] not in OFF_SDK_ERROR_TYPES:
        ErrorResponse.model_validate(data, strict=True)
