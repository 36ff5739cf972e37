"""The response side of ``gemini``: the ``streamGenerateContent?alt=sse`` stream and error bodies, byte-exact.

Framing as in live recordings (../shared/recordings/google): ``data: {json}`` events separated by ``\\r\\n\\r\\n``,
JSON written with ``": "`` after keys and ``,`` alone between members, a whole ``functionCall`` in one part
(usually without an id), ``thought: true`` parts, a last chunk with an empty text part and the finishReason,
MAX_TOKENS with no parts, a blocked prompt with no candidates, and errors in the middle of the stream written
as raw, pretty-printed JSON rather than as an event. A call without arguments has no ``args`` at all
(``FunctionCall.args`` is optional).

Quirks: ``partial_args`` on a Stream streams each call's arguments as Vertex does when asked to
(``willContinue``, ``partialArgs`` by ``jsonPath``, an empty ``functionCall`` closing the call; as in
../shared/recordings/google/google-stream-tool-call-arguments.chunks.txt). ``call_ids``: every
``functionCall`` carries the call's own ``id`` (Gemini 3 "always returns a unique id with every
functionCall", https://ai.google.dev/gemini-api/docs/function-calling). ``finish_without_content``: the
finish chunk's candidate has no ``content`` at all, only ``finishReason`` and ``index`` (what symfony/ai#1610
and Portkey-AI/gateway#1705 met in Gemini streams); ``finish_empty_content``: its ``content`` is ``{}`` beside
``safetyRatings`` with ``blocked: true``, as recorded for a SAFETY stop
(../shared/recordings/google/test_google_model_safety_settings.yaml). On a StreamError, ``data_error`` sends
the error as a ``data:`` event; by default it is a raw, pretty-printed object.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from typing import Any

from ..scenarios.model import HttpError, Refusal, Stream, StreamError, Text, Thinking, ToolCall

# STOP-01, Gemini column: the finishReason the authored streams send per canonical reason.
FINISH_REASONS: dict[str, str] = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "max_tokens": "MAX_TOKENS",
    "content_filter": "SAFETY",
    "stop_sequence": "STOP",
}
PROMPT_BLOCKED = "PROMPT_BLOCKED"
"""Wire override meaning: no candidates at all, only ``promptFeedback.blockReason`` (content_filter)."""

# status or kind: (gRPC status, message) as the API sends them.
ERROR_BODIES: dict[int | str, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "* GenerateContentRequest.generation_config.temperature: must be in [0, 2]\n"),
    401: (
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
        "other valid authentication credential.",
    ),
    403: (
        "PERMISSION_DENIED",
        "Method doesn't allow unregistered callers (callers without established identity).",
    ),
    404: (
        "NOT_FOUND",
        "models/gemini-2.5-flsh is not found for API version v1beta, or is not supported for generateContent.",
    ),
    408: ("DEADLINE_EXCEEDED", "The request timed out. Please try again."),
    413: ("INVALID_ARGUMENT", "Request payload size exceeds the limit: 20971520 bytes."),
    422: ("INVALID_ARGUMENT", "Invalid JSON payload received."),
    429: (
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    ),
    502: ("UNAVAILABLE", "Bad gateway."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    # ai.google.dev/gemini-api/docs/troubleshooting: 504 DEADLINE_EXCEEDED
    504: ("DEADLINE_EXCEEDED", "The service is unable to finish processing within the deadline."),
    529: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    "invalid_tool_name": (
        "INVALID_ARGUMENT",
        "* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name. Must start "
        "with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or "
        "dashes (-), with a maximum length of 64.\n",
    ),
}

SAFETY_RATINGS: list[
    dict[str, Any]
] = [  # as recorded beside a SAFETY stop (test_google_model_safety_settings)
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW", "blocked": True},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
]

STREAM_ERRORS: dict[str, tuple[int, str, str]] = {
    "server_error": (500, "INTERNAL", "An internal error has occurred. Please retry."),
    "rate_limit": (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
}


def _dumps(value: Any) -> str:
    """Google's JSON spacing: ``": "`` after keys, nothing after commas."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ": "))


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def error_response(error: HttpError) -> tuple[dict[str, str], bytes]:
    status, message = (
        ERROR_BODIES.get(error.kind or error.status) or ERROR_BODIES[500 if error.status >= 500 else 400]
    )
    body: dict[str, Any] = {"code": error.status, "message": message, "status": status}
    if error.status == 429:
        body["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}],
            }
        ]
        if error.retry_after_ms is not None:
            delay = f"{error.retry_after_ms / 1000:.3f}".rstrip("0").rstrip(".")
            body["details"].append(
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay}s"}
            )
    return {"content-type": "application/json; charset=UTF-8"}, _pretty({"error": body}).encode()


class ChunkWriter:
    """Writes one streamed GenerateContentResponse sequence as the live API frames it."""

    def __init__(self, seed: str, model: str) -> None:
        digest = hashlib.sha256(seed.encode()).digest()
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        self.response_id = "".join(alphabet[b % len(alphabet)] for b in digest[:23])
        self.model = model
        self.events: list[str] = []
        self.output_tokens = 0

    def _usage(self, final: bool) -> dict[str, Any]:
        usage: dict[str, Any] = {"promptTokenCount": 12}
        if final:
            usage["candidatesTokenCount"] = self.output_tokens
        usage["totalTokenCount"] = 12 + (self.output_tokens if final else 0)
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": 12}]
        return usage

    def _chunk(
        self,
        parts: list[dict[str, Any]] | None,
        finish: str | None = None,
        extra: Any = None,
        candidate: dict[str, Any] | None = None,
    ) -> None:
        if candidate is None:
            candidate = {
                "content": {"parts": parts, "role": "model"} if parts is not None else {"role": "model"}
            }
            if finish is not None:
                candidate["finishReason"] = finish
            candidate["index"] = 0
        chunk: dict[str, Any] = {
            "candidates": [candidate],
            "usageMetadata": self._usage(finish is not None),
            "modelVersion": self.model,
            "responseId": self.response_id,
        }
        chunk.update(extra or {})
        self.events.append(f"data: {_dumps(chunk)}\r\n\r\n")

    def _streamed_calls(self, calls: list[dict[str, Any]], reason: str | None) -> None:
        """Each call as Vertex streams it: its name, its arguments piece by piece, an empty call closing it."""
        for n, call in enumerate(calls):
            function = call["functionCall"]
            head: dict[str, Any] = {"functionCall": {"name": function["name"], "willContinue": True}}
            if "thoughtSignature" in call:
                head["thoughtSignature"] = call["thoughtSignature"]
            self._chunk([head])
            for piece in _partial_args(function.get("args", {})):
                self._chunk([{"functionCall": {"partialArgs": piece, "willContinue": True}}])
            last = n == len(calls) - 1
            self._chunk([{"functionCall": {}}], reason if last else None)

    def render(self, response: Stream | StreamError) -> bytes:
        quirks = response.quirks if isinstance(response, Stream) else frozenset()
        unknown = {"x_helix_future_field": {"nested": [1, 2]}} if "unknown_fields" in quirks else None
        signature: str | None = None
        calls: list[dict[str, Any]] = []
        for part in response.parts:
            if isinstance(part, Thinking):
                for piece in part.chunks:
                    self._chunk([{"text": piece, "thought": True}])
                signature = part.signature or signature
            elif isinstance(part, Text):
                for piece in part.chunks:
                    text: dict[str, Any] = {"text": piece}
                    if signature and not calls:
                        text["thoughtSignature"], signature = signature, None
                    self.output_tokens += 2
                    self._chunk([text], extra=unknown)
            elif isinstance(part, ToolCall):
                function: dict[str, Any] = {"name": part.name}
                if "call_ids" in quirks and part.id:
                    function = {"id": part.id, **function}
                if part.arguments:  # no arguments at all: no `args` (FunctionCall.args is optional)
                    function["args"] = json.loads("".join(part.arguments))
                call: dict[str, Any] = {"functionCall": function}
                if signature:
                    call["thoughtSignature"], signature = signature, None
                calls.append(call)
            elif isinstance(part, Refusal):
                raise ValueError("Gemini has no refusal message: restrict the scenario to other profiles")
        finish = response.finish if isinstance(response, Stream) else None
        reason = (
            (finish.wire_value("gemini") or FINISH_REASONS.get(finish.reason, "OTHER")) if finish else None
        )
        if calls and "partial_args" in quirks:  # Vertex: each call's arguments streamed, then closed
            self._streamed_calls(calls, reason)
            return "".join(self.events).encode()
        if calls:  # Gemini sends the parallel calls of a step together, in one chunk
            self._chunk(calls)
        if isinstance(response, StreamError):
            code, status, message = STREAM_ERRORS[response.kind]
            error = {"error": {"code": code, "message": message, "status": status}}
            if "data_error" in response.quirks:
                self.events.append(f"data: {_dumps(error)}\r\n\r\n")
            else:
                self.events.append(_pretty(error))
            return "".join(self.events).encode()
        if finish is None or reason is None:
            return "".join(self.events).encode()
        if reason == PROMPT_BLOCKED:
            blocked = {
                "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
                "usageMetadata": self._usage(False),
                "modelVersion": self.model,
                "responseId": self.response_id,
            }
            self.events.append(f"data: {_dumps(blocked)}\r\n\r\n")
        elif "finish_without_content" in quirks:  # the candidate alone: no content at all
            self._chunk(None, reason, candidate={"finishReason": reason, "index": 0})
        elif "finish_empty_content" in quirks:  # `content: {}` beside the ratings that blocked it
            bare = {"content": {}, "finishReason": reason, "index": 0, "safetyRatings": SAFETY_RATINGS}
            self._chunk(None, reason, candidate=bare)
        elif reason == "STOP":
            self._chunk([{"text": ""}], "STOP")  # the live API ends with an empty text part
        else:
            self._chunk(None, reason)  # MAX_TOKENS, SAFETY…: a content with no parts
        return "".join(self.events).encode()


def _partial_args(args: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The ``partialArgs`` pieces of one call, one list per chunk: strings in two fragments then an empty
    last one, as the live stream sends them; other values whole."""
    pieces: list[list[dict[str, Any]]] = []
    for key, value in args.items():
        path = f"$.{key}"
        if isinstance(value, str):
            half = len(value) // 2
            pieces.append([{"jsonPath": path, "stringValue": value[:half], "willContinue": True}])
            pieces.append([{"jsonPath": path, "stringValue": value[half:], "willContinue": True}])
            pieces.append([{"jsonPath": path, "stringValue": ""}])
        elif isinstance(value, bool):
            pieces.append([{"jsonPath": path, "boolValue": value}])
        elif isinstance(value, (int, float)):
            pieces.append([{"jsonPath": path, "numberValue": value}])
        elif value is None:
            pieces.append([{"jsonPath": path, "nullValue": None}])
        else:
            raise ValueError(f"partial_args renders flat arguments only, not {key}={value!r}")
    return pieces


def validate_event(event: bytes) -> None:
    """Validate one event against ``google-genai``'s GenerateContentResponse (which forbids unknown fields)."""
    from google.genai import types

    text = event.decode("utf-8")
    if not text.startswith("data: ") or not text.endswith("\r\n\r\n"):
        if json.loads(text).keys() != {"error"}:  # the raw JSON error written into the stream
            raise ValueError(f"neither a data event nor a raw error object: {text!r:.80}")
        return
    data = json.loads(text[len("data: ") :])
    if data.keys() == {"error"}:  # the error as a data: event
        if not {"code", "message", "status"} <= data["error"].keys():
            raise ValueError(f"not a Google API error: {data!r:.120}")
        return
    data.pop("x_helix_future_field", None)  # RES-12's deliberately unknown field
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the SDK only warns about an enum value it does not know
        types.GenerateContentResponse.model_validate(data, strict=False)


def validate_error_body(body: bytes) -> None:
    data = json.loads(body)
    error = data["error"]
    if set(data) != {"error"} or not {"code", "message", "status"} <= error.keys():
        raise ValueError(f"not a Google API error body: {data!r:.120}")
    for detail in error.get("details", []):
        if not str(detail.get("@type", "")).startswith("type.googleapis.com/google.rpc."):
            raise ValueError(f"unknown error detail: {detail}")
