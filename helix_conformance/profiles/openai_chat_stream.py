"""The ``openai-chat`` stream writer: neutral scripts as ``chat.completion.chunk`` events, byte-exact.

Framing and field order follow live OpenAI recordings (../shared/recordings/openai). Stream ``quirks`` render
what OpenAI-compatible servers do differently, each copied from a live recording of that server, so every
adapter of this profile is judged on them:

* ``reasoning_field``: thinking in ``delta.reasoning`` (Groq, OpenRouter, Ollama), not ``reasoning_content``
  (DeepSeek, the default rendering);
* ``tool_calls_without_index``: whole calls without ``index`` or ``type``, the finish_reason riding on the
  last call's chunk (Mistral);
* ``tool_index_from_one``: the first tool call has ``index: 1`` (Claude behind an OpenAI-compatible proxy);
* ``repeated_empty_name``: later deltas of a call repeat ``type`` and ``"name": ""`` (a compatible server in
  Vercel's Mistral fixtures);
* ``sse_comments``: ``: OPENROUTER PROCESSING`` comment lines between events (OpenRouter);
* ``azure_first_chunk``: a first chunk with ``choices: []``, empty id/model/object and
  ``prompt_filter_results`` (Azure OpenAI);
* ``after_finish`` (on a StreamError): the error chunk comes after a ``finish_reason`` chunk, in OpenRouter's
  shape ``{"error": {"code": 400, "message": ...}}``;
* ``empty_chunk_first``, ``unknown_fields``: see ``scenarios.model.Stream``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..scenarios.model import Refusal, Stream, StreamError, Text, Thinking, ToolCall

# STOP-01, OpenAI Chat column: the finish_reason values the authored cassettes send per canonical reason.
FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "content_filter": "content_filter",
    "stop_sequence": "stop",
    "refusal": "stop",
}
STREAM_ERRORS: dict[str, tuple[str, str, str | None]] = {
    "server_error": (
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        None,
    ),
    "rate_limit": (
        "Rate limit reached for gpt-4o-mini on tokens per min (TPM). Please try again in 1s.",
        "tokens",
        "rate_limit_exceeded",
    ),
    "overloaded": ("Overloaded", "overloaded_error", None),
}
COMMENT = ": OPENROUTER PROCESSING\n\n"
AZURE_FIRST_CHUNK: dict[str, Any] = {  # keys in the order Azure sends them (azure-model-router.1.chunks.txt)
    "choices": [],
    "created": 0,
    "id": "",
    "model": "",
    "object": "",
    "prompt_filter_results": [
        {
            "prompt_index": 0,
            "content_filter_results": {
                "hate": {"filtered": False, "severity": "safe"},
                "self_harm": {"filtered": False, "severity": "safe"},
                "sexual": {"filtered": False, "severity": "safe"},
                "violence": {"filtered": False, "severity": "safe"},
            },
        }
    ],
}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class ChunkWriter:
    """Writes ``chat.completion.chunk`` events exactly as the live API frames them (see shared recordings)."""

    def __init__(self, seed: str, model: str) -> None:
        digest = hashlib.sha256(seed.encode()).hexdigest()
        self.id = (
            "chatcmpl-" + "".join(c for c in hashlib.sha256(digest.encode()).hexdigest() if c.isalnum())[:29]
        )
        self.created = 1782955817 + int(digest[:4], 16) % 100000
        self.model = model
        self.fingerprint = "fp_" + digest[4:14]
        self.count = 0
        self.events: list[str] = []
        self.role_sent = False
        self.quirks: frozenset[str] = frozenset()

    def _obfuscation(self) -> str:
        self.count += 1
        raw = hashlib.sha256(f"{self.id}:{self.count}".encode()).hexdigest()
        return "".join(chr(65 + int(c, 16)) if i % 3 else c for i, c in enumerate(raw))[: 3 + self.count % 12]

    def _chunk(
        self,
        delta: dict[str, Any] | None,
        finish: str | None = None,
        *,
        usage: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> None:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "service_tier": "default",
            "system_fingerprint": self.fingerprint,
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": 19,
                "completion_tokens": 10,
                "total_tokens": 29,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            }
            if usage
            else None,
        }
        chunk.update(extra or {})
        chunk["obfuscation"] = self._obfuscation()
        self.events.append(f"data: {dumps(chunk)}\n\n")
        if "sse_comments" in self.quirks and self.count % 2 == 0:
            self.events.append(COMMENT)  # OpenRouter: keep-alive comments between events

    def _first(self, delta: dict[str, Any]) -> dict[str, Any]:
        """The first delta of a message carries the role and the null/empty fields the API sends."""
        if self.role_sent:
            return delta
        self.role_sent = True
        return (
            {"role": "assistant", **delta, "refusal": None}
            if "refusal" not in delta
            else {"role": "assistant", "content": None, **delta}
        )

    def _thinking(self, part: Thinking) -> None:
        key = "reasoning" if "reasoning_field" in self.quirks else "reasoning_content"
        for i, piece in enumerate(part.chunks):
            delta = {"content": None, key: piece}
            self._chunk(self._first(delta) if i == 0 else delta)

    def _tool_call(self, part: ToolCall, index: int, finish: str | None) -> None:
        if "tool_calls_without_index" in self.quirks:  # Mistral: the whole call at once, no index, no type
            whole = {"id": part.id, "function": {"name": part.name, "arguments": "".join(part.arguments)}}
            self._chunk(self._first({"content": None, "tool_calls": [whole]}), finish)
            return
        head = {
            "index": index,
            "id": part.id,
            "type": "function",
            "function": {"name": part.name, "arguments": ""},
        }
        first = {"content": None, "tool_calls": [head]} if not self.role_sent else {"tool_calls": [head]}
        self._chunk(self._first(first))
        for piece in part.arguments:
            entry: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
            if "repeated_empty_name" in self.quirks:
                entry = {"index": index, "type": "function", "function": {"name": "", "arguments": piece}}
            self._chunk({"tool_calls": [entry]})

    def render(self, response: Stream | StreamError) -> bytes:
        self.quirks = response.quirks
        quirks = self.quirks
        if "sse_comments" in quirks:
            self.events.append(COMMENT)
        if "azure_first_chunk" in quirks:
            self.events.append(f"data: {dumps(AZURE_FIRST_CHUNK)}\n\n")
        if "empty_chunk_first" in quirks:
            self._chunk(None)  # a chunk with `choices: []` before any content (usage/moderation chunks)
        unknown = {"x_helix_future_field": {"nested": [1, 2]}} if "unknown_fields" in quirks else None
        finish = None
        if isinstance(response, Stream) and response.finish is not None:
            finish = response.finish.wire_value("openai-chat") or FINISH_REASONS.get(response.finish.reason)
        calls = [p for p in response.parts if isinstance(p, ToolCall)]
        tool_index = 1 if "tool_index_from_one" in quirks else 0
        for part in response.parts:
            if isinstance(part, Thinking):
                self._thinking(part)
            elif isinstance(part, Text):
                if not self.role_sent:
                    self._chunk(self._first({"content": ""}))
                for piece in part.chunks:
                    self._chunk({"content": piece}, extra=unknown)
            elif isinstance(part, Refusal):
                self._chunk(self._first({"refusal": ""}))
                for piece in part.chunks:
                    self._chunk({"refusal": piece})
            elif isinstance(part, ToolCall):
                last = part is calls[-1] and "tool_calls_without_index" in quirks
                self._tool_call(part, tool_index, finish if last else None)
                tool_index += 1
        if isinstance(response, StreamError):
            message, type_, code = STREAM_ERRORS[response.kind]
            if "after_finish" in quirks:  # OpenRouter: finish_reason first, then a chunk carrying `error`
                self._chunk({}, "length")
                error = {"error": {"code": 400, "message": message}}
                self._chunk({"role": "assistant", "content": ""}, extra=error)
                self.events.append("data: [DONE]\n\n")
                return "".join(self.events).encode()
            body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
            self.events.append(f"data: {dumps(body)}\n\n")
            return "".join(self.events).encode()
        if finish is not None:
            if not (calls and "tool_calls_without_index" in quirks):
                self._chunk({}, finish)
            self._chunk(None, usage=True)
            self.events.append("data: [DONE]\n\n")
        return "".join(self.events).encode()
