"""The response side of ``bedrock-converse``: the ConverseStream body, error bodies and exception events.

Framing as in live recordings (pydantic-ai's boto3 cassettes, ``tests/recordings/bedrock``): AWS event-stream
messages with the headers ``:event-type``, ``:content-type``, ``:message-type`` in that order, JSON payloads
with their keys sorted and a ``"p"`` field of padding (``"abcdefgh…"``, a length that varies), text and
reasoning blocks that open with their first ``contentBlockDelta`` (only ``toolUse`` blocks get a
``contentBlockStart``), a reasoning block's ``signature`` in a delta of its own, ``messageStop`` and then
``metadata`` (usage, latency) last.

Stream ``quirks``: ``unknown_events`` (an event type, a block start and a delta no adapter has seen: RES-12),
``unknown_fields``, ``empty_chunk_first`` (an empty text block first, as openai.gpt-oss on Bedrock sends it),
``server_tools`` (a server-side ``toolUse`` with ``"type": "server_tool_use"`` and its ``toolResult`` block,
as Nova's code interpreter streams them: not calls for the client to run).
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from typing import Any

from ..scenarios.model import HttpError, RedactedThinking, Stream, StreamError, Text, Thinking, ToolCall
from . import eventstream

# STOP-01, Bedrock column: the stopReason the authored streams send per canonical reason (StopReason enum of
# the bedrock-runtime service model; https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_MessageStopEvent.html).
STOP_REASONS: dict[str, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filter": "content_filtered",
}

CONTENT_TYPE = "application/vnd.amazon.eventstream"
ERROR_NAMESPACE = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
"""The suffix of ``x-amzn-ErrorType`` on Bedrock's error responses (``ThrottlingException:http://…``)."""

# HTTP status or kind -> (error type, message). The types and statuses are ConverseStream's errors in the
# API reference (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html,
# "Errors"; botocore's bedrock-runtime service model gives the same httpStatusCode per shape). 400's message is
# recorded (pydantic-ai test_bedrock_streaming_error.yaml); statuses Bedrock does not document get the
# nearest type, the body shape staying Bedrock's.
ERROR_BODIES: dict[int | str, tuple[str, str]] = {
    400: ("ValidationException", "The provided model identifier is invalid."),
    401: ("UnrecognizedClientException", "The security token included in the request is invalid."),
    403: ("AccessDeniedException", "You don't have access to the model with the specified model ID."),
    404: ("ResourceNotFoundException", "Model not found. Check the model ID and try again."),
    408: ("ModelTimeoutException", "Model has timed out in processing the request. Try your request again."),
    413: ("ValidationException", "Input is too long for requested model."),
    422: ("ValidationException", "Malformed input request, please reformat your input and try again."),
    424: ("ModelErrorException", "The model returned an error while processing the request."),
    429: ("ThrottlingException", "Too many requests, please wait before trying again."),
    500: ("InternalServerException", "The system encountered an unexpected error during processing."),
    502: ("InternalServerException", "Bad gateway."),
    503: ("ServiceUnavailableException", "Bedrock is unable to process your request."),
    504: ("ModelTimeoutException", "The request timed out."),
    529: ("ServiceUnavailableException", "Bedrock is unable to process your request."),
    "invalid_tool_name": (
        "ValidationException",
        "1 validation error detected: Value at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy "
        "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
    ),
}

# Neutral StreamError kind -> (exception event, payload): the exception members of ConverseStreamOutput.
STREAM_ERRORS: dict[str, tuple[str, dict[str, Any]]] = {
    "server_error": ("internalServerException", {"message": "The system encountered an unexpected error."}),
    "rate_limit": ("throttlingException", {"message": "Too many tokens, please wait before trying again."}),
    "overloaded": ("serviceUnavailableException", {"message": "Bedrock is unable to process your request."}),
    "model_stream_error": (
        "modelStreamErrorException",
        {
            "message": "Model stream error: the model failed while streaming its answer.",
            "originalStatusCode": 500,
            "originalMessage": "Internal server error",
        },
    ),
    "validation": (
        "validationException",
        {"message": "Output blocked: the response exceeded the model's maximum output length."},
    ),
}

_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def tool_use_id(seed: str) -> str:
    """A toolUseId in Bedrock's style (``tooluse_lAG_zP8QRHmSYOwZzzaCqA``), derived from ``seed``."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "tooluse_" + "".join(_ID_ALPHABET[b % len(_ID_ALPHABET)] for b in digest[:22])


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def event_message(event_type: str, payload: dict[str, Any]) -> bytes:
    return event_message_raw(event_type, _dumps(payload))


def event_message_raw(event_type: str, payload: bytes) -> bytes:
    """An event message with the live service's headers, in their order, around ``payload`` as given."""
    headers = [(":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")]
    return eventstream.encode(headers, payload)


def exception_message(exception_type: str, payload: dict[str, Any]) -> bytes:
    headers = [
        (":exception-type", exception_type),
        (":content-type", "application/json"),
        (":message-type", "exception"),
    ]
    return eventstream.encode(headers, _dumps(payload))


def request_id(seed: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256(("request:" + seed).encode()).digest()[:16], version=4))


def error_response(error: HttpError, *, seed: str) -> tuple[dict[str, str], bytes]:
    """A Bedrock error response: ``{"message": …}`` with the type in ``x-amzn-ErrorType``."""
    type_, message = (
        ERROR_BODIES.get(error.kind or error.status) or ERROR_BODIES[500 if error.status >= 500 else 400]
    )
    headers = {
        "content-type": "application/json",
        "x-amzn-requestid": request_id(seed),
        "x-amzn-errortype": type_ + ERROR_NAMESPACE,
    }
    if error.retry_after_ms is not None:  # Bedrock sends none; kept for CFG-05's scenarios
        headers["retry-after"] = str(max(1, -(-error.retry_after_ms // 1000)))
    return headers, _dumps({"message": message})


class MessageWriter:
    """Writes one ConverseStream body as the live service frames it."""

    def __init__(self, seed: str, tool_id: Any) -> None:
        self.seed = seed
        self.tool_id = tool_id
        self.count = 0
        self.index = 0
        self.messages: list[bytes] = []
        self.quirks: frozenset[str] = frozenset()

    def _roll(self, salt: str) -> int:
        self.count += 1
        return hashlib.sha256(f"{self.seed}:{salt}:{self.count}".encode()).digest()[0]

    def _event(self, event_type: str, payload: dict[str, Any]) -> None:
        padded = {**payload, "p": _PADDING[: 1 + self._roll("pad") % len(_PADDING)]}
        self.messages.append(event_message(event_type, padded))

    def _delta(self, delta: dict[str, Any]) -> None:
        unknown = {"x_helix_future_field": {"nested": [1, 2]}} if "unknown_fields" in self.quirks else {}
        self._event("contentBlockDelta", {"contentBlockIndex": self.index, "delta": delta, **unknown})

    def _stop(self) -> None:
        self._event("contentBlockStop", {"contentBlockIndex": self.index})
        self.index += 1

    def render(self, response: Stream | StreamError) -> bytes:
        self.quirks = response.quirks
        self._event("messageStart", {"role": "assistant"})
        if "empty_chunk_first" in self.quirks:
            self._delta({"text": ""})
            self._stop()
        if "unknown_events" in self.quirks:
            self._event("x_helix_future_event", {"detail": {"nested": [1, 2]}})
            start = {"x_helix_future_block": {"payload": "ignored by conforming adapters"}}
            self._event("contentBlockStart", {"contentBlockIndex": self.index, "start": start})
            self._delta({"x_helix_future_delta": {"nested": [1, 2]}})
            self._stop()
        if "server_tools" in self.quirks:
            self._server_tools()
        ends_cleanly = isinstance(response, Stream) and response.finish is not None
        for n, part in enumerate(response.parts):
            self._part(part)
            if ends_cleanly or n < len(response.parts) - 1:
                self._stop()
        if isinstance(response, StreamError):
            exception_type, payload = STREAM_ERRORS[response.kind]
            self.messages.append(exception_message(exception_type, payload))
            return b"".join(self.messages)
        if response.finish is not None:
            finish = response.finish
            stop: dict[str, Any] = {
                "stopReason": finish.wire_value("bedrock-converse") or STOP_REASONS[finish.reason]
            }
            if (
                finish.sequence is not None
            ):  # Anthropic models report the sequence (additionalModelResponseFields)
                stop["additionalModelResponseFields"] = {"stop_sequence": finish.sequence}
            self._event("messageStop", stop)
            usage = {"inputTokens": 42, "outputTokens": 27, "totalTokens": 69}
            self._event("metadata", {"metrics": {"latencyMs": 200 + self._roll("latency")}, "usage": usage})
        return b"".join(self.messages)

    def _part(self, part: Any) -> None:
        if isinstance(part, Text):
            for piece in part.chunks:
                self._delta({"text": piece})
        elif isinstance(part, Thinking):
            for piece in part.chunks:
                self._delta({"reasoningContent": {"text": piece}})
            signature = part.signature or tool_use_id("signature:" + "".join(part.chunks))[8:] * 8
            self._delta({"reasoningContent": {"signature": signature}})
        elif isinstance(part, RedactedThinking):
            self._delta({"reasoningContent": {"redactedContent": part.data}})
        elif isinstance(part, ToolCall):
            call_id = self.tool_id(part.id) if part.id else tool_use_id(self.seed + part.name)
            start = {"toolUse": {"name": part.name, "toolUseId": call_id}}
            self._event("contentBlockStart", {"contentBlockIndex": self.index, "start": start})
            for piece in part.arguments:
                self._delta({"toolUse": {"input": piece}})
        else:
            raise NotImplementedError(f"bedrock-converse has no {type(part).__name__} content")

    def _server_tools(self) -> None:
        """Nova's code interpreter: a server-side toolUse and its toolResult, as recorded (pydantic-ai
        test_bedrock_model_code_execution_tool_stream.yaml)."""
        call_id = tool_use_id(self.seed + "code_interpreter")
        start = {
            "toolUse": {"name": "nova_code_interpreter", "toolUseId": call_id, "type": "server_tool_use"}
        }
        self._event("contentBlockStart", {"contentBlockIndex": self.index, "start": start})
        self._delta({"toolUse": {"input": '{"snippet":"1234 * 5678"}'}})
        self._stop()
        result = {"status": "success", "toolUseId": call_id, "type": "nova_code_interpreter_result"}
        self._event("contentBlockStart", {"contentBlockIndex": self.index, "start": {"toolResult": result}})
        output = [{"json": {"exitCode": 0, "isError": False, "stdErr": "", "stdOut": "7006652"}}]
        self._delta({"toolResult": output})
        self._stop()


# --- validation against botocore (the project's tests) ------------------------------------------------------

PADDING_FIELD = "p"
"""The service's padding field on every event payload: in no service model, never read by the SDKs."""


def validate_event(message: bytes) -> None:
    """Validate one message the way boto3 reads it: botocore's ``EventStreamBuffer`` parses it (prelude,
    CRCs, headers), its type is a member of the bedrock-runtime service model's ``ConverseStreamOutput``
    (an exception one of its exception members), and every payload field is a member of that shape, of the
    right JSON type, enums and required members included (``p`` aside; ``x_helix_`` names are RES-12's
    deliberate unknowns)."""
    from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]

    buffer = EventStreamBuffer()
    buffer.add_data(message)
    parsed = list(buffer)  # raises on a bad prelude, CRC or header
    if len(parsed) != 1:
        raise ValueError(f"{len(parsed)} event-stream messages where one was expected")
    headers = parsed[0].headers
    message_type = headers.get(":message-type")
    kind = headers.get(":event-type") if message_type == "event" else headers.get(":exception-type")
    if message_type not in ("event", "exception") or not isinstance(kind, str):
        raise ValueError(f"not an event or exception message: headers {headers}")
    if headers.get(":content-type") != "application/json":
        raise ValueError(f"{kind}: :content-type is {headers.get(':content-type')!r}")
    if kind.startswith("x_helix_"):
        return
    members = _stream_shape().members
    if kind not in members:
        raise ValueError(f"{kind!r} is not a ConverseStreamOutput member: {sorted(members)}")
    shape = members[kind]
    if bool(shape.metadata.get("exception")) != (message_type == "exception"):
        raise ValueError(f"{kind} sent as an {message_type} message")
    payload = json.loads(parsed[0].payload)
    if not isinstance(payload, dict):
        raise ValueError(f"{kind}: the payload is not a JSON object")
    payload.pop(PADDING_FIELD, None)
    _conforms(payload, shape, kind)


def _stream_shape() -> Any:
    import botocore.session  # type: ignore[import-untyped]

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return model.operation_model("ConverseStream").output_shape.members["stream"]


def _conforms(value: Any, shape: Any, where: str) -> None:
    kind = shape.type_name
    if kind == "structure":
        if shape.metadata.get("document"):
            return  # a free-form document (additionalModelResponseFields)
        if not isinstance(value, dict):
            raise ValueError(f"{where}: {shape.name} must be an object, not {type(value).__name__}")
        known = shape.members
        for key, item in value.items():
            if key.startswith("x_helix_"):
                continue
            if key not in known:
                raise ValueError(f"{where}: {key!r} is not a member of {shape.name} ({sorted(known)})")
            _conforms(item, known[key], f"{where}.{key}")
        missing = [m for m in shape.metadata.get("required", ()) if m not in value]
        if missing:
            raise ValueError(f"{where}: {shape.name} lacks its required {missing}")
        if shape.metadata.get("union") and len(value) != 1:
            raise ValueError(f"{where}: the union {shape.name} has {len(value)} members set, not one")
    elif kind == "list":
        if not isinstance(value, list):
            raise ValueError(f"{where}: {shape.name} must be a list")
        for i, item in enumerate(value):
            _conforms(item, shape.member, f"{where}[{i}]")
    elif kind == "map":
        if not isinstance(value, dict):
            raise ValueError(f"{where}: {shape.name} must be an object")
    elif kind == "string":
        if not isinstance(value, str):
            raise ValueError(f"{where}: {shape.name} must be a string")
        if shape.enum and value not in shape.enum and not value.startswith("x_helix_"):
            raise ValueError(f"{where}: {value!r} is not one of {shape.enum}")
    elif kind == "blob":
        base64.b64decode(value, validate=True)
    elif kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{where}: {shape.name} must be an integer")
    elif kind in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError(f"{where}: {shape.name} must be a number")
    elif kind == "boolean" and not isinstance(value, bool):
        raise ValueError(f"{where}: {shape.name} must be a boolean")
