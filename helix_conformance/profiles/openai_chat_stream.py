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
* ``empty_chunk_first``, ``unknown_fields``: see ``scenarios.model.Stream`` (``unknown_fields`` also puts one
  inside the delta);
* ``interleaved_tool_calls``: the heads of all calls first, then their argument fragments in turn, keyed by
  ``index`` only (a gateway turning the Responses API's parallel function calls into chunks);
* ``tool_deltas_by_id``: no ``index``; every fragment of a call repeats its ``id`` (servers that omit
  ``index``: Ollama, Gemini's OpenAI-compatible endpoint);
* ``repeated_whole_call``: after its fragments, a call is sent again whole in one more delta, arguments and
  all (the byte-exact 2x duplication seen behind OpenRouter);
* ``typed_content_parts``: thinking as Mistral's ``content: [{"type": "thinking", ...}]`` parts (magistral);
* ``reasoning_details``: thinking only in ``delta.reasoning_details`` entries, never ``reasoning`` (OpenRouter,
  Snowflake), closed by a ``reasoning.encrypted`` entry that is no text;
* ``no_finish_reason``: no chunk carries a finish_reason; the stream ends with ``[DONE]`` (Snowflake Cortex,
  Novita behind OpenRouter);
* ``annotation_after_finish``: after the finish chunk, a chunk whose choice has no ``delta`` at all, only
  content-filter results and offsets (Azure's asynchronous filter);
* ``completion_done_object``: the finish chunk is ``"object": "chat.completion.done"`` with search results
  (Perplexity's concise stream mode);
* ``usage_chunk``: the request asked for usage (``stream_options.include_usage``): every chunk carries
  ``"usage": null`` and a last chunk with ``choices: []`` carries the usage, before ``[DONE]``; without it OpenAI
  sends neither (API reference, ``stream_options``), which is how the other scenarios are rendered;
* ``usage_resets_finish``: the usage chunk repeats a choice with ``"finish_reason": null`` after the finish
  chunk (OpenRouter; a usage chunk, so it implies ``usage_chunk``);
* ``empty_refusal``: every delta carries ``"refusal": ""`` (Snowflake);
* ``sse_framing``: what the SSE standard allows and OpenAI never sends: a byte-order mark, lines ended by a
  lone CR, ``id:`` and ``event: message`` lines on every event, a ``retry:`` line and ``data:`` lines with no
  space after the colon;
* ``two_choices``: a second choice (``index: 1``) streams beside the first, chunk for chunk, as the API does
  for a request with ``n: 2`` ("How many chat completion choices to generate for each input message",
  https://platform.openai.com/docs/api-reference/chat/create); it ends with ``length`` where the first ends
  with its own finish_reason.
"""

from __future__ import annotations

import hashlib
import json
import re
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

_SAFE = {"filtered": False, "severity": "safe"}
AZURE_ANNOTATION: dict[str, Any] = {  # Azure's asynchronous filter: results for text already sent, no delta
    "choices": [
        {
            "index": 0,
            "finish_reason": None,
            "content_filter_results": {k: dict(_SAFE) for k in ("hate", "self_harm", "sexual", "violence")},
            "content_filter_offsets": {"check_offset": 35, "start_offset": 35, "end_offset": 178},
        }
    ],
    "created": 0,
    "id": "",
    "model": "",
    "object": "",
}
SEARCH_RESULTS = [  # Perplexity sends its search results on the chat.completion.done chunk (concise mode)
    {"title": "Weather in Paris", "url": "https://example.com/paris-weather", "date": "2026-11-20"}
]
SSE_RETRY = "retry: 3000"
SECOND_CHOICE_FINISH = "length"
"""The finish_reason of ``two_choices``'s second choice: not the first's, so reading the wrong one shows."""


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
        self.second_role_sent = False
        self.quirks: frozenset[str] = frozenset()
        self.usage_asked = False

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
        choices: list[dict[str, Any]] | None = None,
    ) -> None:
        if delta is not None and "empty_refusal" in self.quirks and not delta.get("refusal"):
            delta = {**delta, "refusal": ""}  # Snowflake: an empty refusal on every delta
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "service_tier": "default",
            "system_fingerprint": self.fingerprint,
            "choices": choices
            if choices is not None
            else []
            if delta is None
            else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self.usage_asked:  # every chunk has the field once the request asks for usage
            chunk["usage"] = (
                {
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
                else None
            )
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
        if "typed_content_parts" in self.quirks and not self.role_sent:
            self.role_sent = True  # Mistral: a role chunk with empty content comes first
            self._chunk({"role": "assistant", "content": ""})
        for i, piece in enumerate(part.chunks):
            delta: dict[str, Any] = {"content": None, key: piece}
            if "typed_content_parts" in self.quirks:
                delta = {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]}
            elif "reasoning_details" in self.quirks:
                entry = {"type": "reasoning.text", "text": piece, "format": "unknown", "index": 0}
                delta = {"content": "", "reasoning_details": [entry]}
            self._chunk(self._first(delta) if i == 0 else delta)
        if "reasoning_details" in self.quirks:  # the opaque form closes it: no text to show
            data = hashlib.sha256("".join(part.chunks).encode()).hexdigest()
            entry = {"type": "reasoning.encrypted", "data": "gAAAAB" + data, "format": "unknown", "index": 1}
            self._chunk({"content": "", "reasoning_details": [entry]})

    def _tool_call(self, part: ToolCall, index: int, finish: str | None) -> None:
        if "tool_calls_without_index" in self.quirks:  # Mistral: the whole call at once, no index, no type
            whole = {"id": part.id, "function": {"name": part.name, "arguments": "".join(part.arguments)}}
            self._chunk(self._first({"content": None, "tool_calls": [whole]}), finish)
            return
        self._tool_head(part, index)
        for piece in part.arguments:
            self._tool_fragment(part, index, piece)
        if "repeated_whole_call" in self.quirks:  # the whole call once more, arguments and all
            whole = {"name": part.name, "arguments": "".join(part.arguments)}
            self._chunk(
                {"tool_calls": [{"index": index, "id": part.id, "type": "function", "function": whole}]}
            )

    def _tool_head(self, part: ToolCall, index: int) -> None:
        head: dict[str, Any] = {
            "index": index,
            "id": part.id,
            "type": "function",
            "function": {"name": part.name, "arguments": ""},
        }
        if "tool_deltas_by_id" in self.quirks:
            del head["index"]
        first = {"content": None, "tool_calls": [head]} if not self.role_sent else {"tool_calls": [head]}
        self._chunk(self._first(first))

    def _tool_fragment(self, part: ToolCall, index: int, piece: str) -> None:
        entry: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
        if "repeated_empty_name" in self.quirks:
            entry = {"index": index, "type": "function", "function": {"name": "", "arguments": piece}}
        if "tool_deltas_by_id" in self.quirks:
            entry = {"id": part.id, "function": {"arguments": piece}}
        self._chunk({"tool_calls": [entry]})

    def _interleaved(self, calls: list[ToolCall], first_index: int) -> None:
        """All heads, then the argument fragments of the calls in turn: keyed by ``index`` only."""
        for n, part in enumerate(calls):
            self._tool_head(part, first_index + n)
        for step in range(max(len(part.arguments) for part in calls)):
            for n, part in enumerate(calls):
                if step < len(part.arguments):
                    self._tool_fragment(part, first_index + n, part.arguments[step])

    def render(self, response: Stream | StreamError) -> bytes:
        self.quirks = response.quirks
        quirks = self.quirks
        self.usage_asked = bool(quirks & {"usage_chunk", "usage_resets_finish"})
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
                    self._chunk({"content": piece, **(unknown or {})}, extra=unknown)
                    if "two_choices" in quirks:
                        self._second_choice({"content": _other_answer(piece)}, None)
            elif isinstance(part, Refusal):
                self._chunk(self._first({"refusal": ""}))
                for piece in part.chunks:
                    self._chunk({"refusal": piece})
            elif isinstance(part, ToolCall) and "interleaved_tool_calls" in quirks:
                if part is calls[0]:
                    self._interleaved(calls, tool_index)
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
            self._finish(finish, bool(calls))
        if "sse_framing" in quirks:
            return _sse_framing(self.events).encode()
        return "".join(self.events).encode()

    def _second_choice(self, delta: dict[str, Any], finish: str | None) -> None:
        """One chunk of choice ``index: 1`` (``two_choices``); its first delta carries the role."""
        if delta and not self.second_role_sent:
            self.second_role_sent = True
            delta = {"role": "assistant", **delta, "refusal": None}
        choice = {"index": 1, "delta": delta, "logprobs": None, "finish_reason": finish}
        self._chunk(None, choices=[choice])

    def _finish(self, finish: str, has_calls: bool) -> None:
        quirks = self.quirks
        if "completion_done_object" in quirks:  # Perplexity: the last chunk is another object
            extra = {"object": "chat.completion.done", "search_results": SEARCH_RESULTS}
            self._chunk({"role": "assistant", "content": ""}, finish, extra=extra)
        elif "no_finish_reason" not in quirks and not (has_calls and "tool_calls_without_index" in quirks):
            self._chunk({}, finish)
        if "two_choices" in quirks:
            self._second_choice({}, SECOND_CHOICE_FINISH)
        if "annotation_after_finish" in quirks:
            self.events.append(f"data: {dumps(AZURE_ANNOTATION)}\n\n")
        if self.usage_asked:
            reset = None
            if (
                "usage_resets_finish" in quirks
            ):  # OpenRouter: the usage chunk's choice says finish_reason null
                delta = {"role": "assistant", "content": ""}
                reset = [{"index": 0, "delta": delta, "finish_reason": None, "logprobs": None}]
            self._chunk(None, usage=True, choices=reset)
        self.events.append("data: [DONE]\n\n")


def _other_answer(piece: str) -> str:
    """What ``two_choices``'s second choice streams where the first streams ``piece``: another answer."""
    return piece.upper() if piece.upper() != piece else f"{piece}~"


def _sse_framing(events: list[str]) -> str:
    """The events as the SSE standard also allows: a BOM, ``id:``/``event:`` lines, one ``retry:``, lone CRs,
    ``data:`` with no space before its value."""
    framed = []
    for n, event in enumerate(events, start=1):
        lines = [SSE_RETRY] if n == 1 else []
        data = [_no_space(line) for line in event.rstrip("\n").split("\n")]
        lines += [f"id: {n}", "event: message", *data]
        framed.append("\r".join(lines) + "\r\r")
    return "\ufeff" + "".join(framed)


def _no_space(line: str) -> str:
    """``data:{...}``: the space after the colon is optional (the standard strips one if present), and servers
    behind Spring's SSE writer and LongCat send none (``compat_sse_framing``'s evidence)."""
    return "data:" + line.removeprefix("data: ") if line.startswith("data: ") else line


# --- reading one rendered event back as the SDK's ChatCompletionChunk (the project's cassette tests) --------

_SSE_FIELDS = ("id", "event", "retry")


def event_data(event: bytes) -> str | None:
    """The ``data:`` of one rendered event, whatever SSE framing carries it (None for a comment): lines may end
    with a lone CR, a BOM may lead, and ``id:``/``event:``/``retry:`` lines may come with it."""
    lines = [line for line in re.split(r"\r\n|\r|\n", event.decode("utf-8").lstrip("\ufeff")) if line]
    data = [line for line in lines if line.startswith("data:")]
    others = [line for line in lines if not line.startswith(("data:", ":", *(f"{f}:" for f in _SSE_FIELDS)))]
    if others:
        raise ValueError(f"not an SSE field: {others[0]!r:.60}")
    if not data:
        if all(line.startswith(":") for line in lines):
            return None  # an SSE comment (OpenRouter keep-alive): no payload to validate
        raise ValueError(f"no data line: {lines!r:.60}")
    return "\n".join(line[len("data:") :].removeprefix(" ") for line in data)


def as_sdk_chunk(data: dict[str, Any]) -> dict[str, Any] | None:
    """``data`` in the shape the SDK's ``ChatCompletionChunk`` accepts, the compatible servers' quirks checked
    and set aside; None for a chunk of Azure's that is no ChatCompletionChunk at all (checked here)."""
    if data.get("object") == "" and data.get("choices") == []:  # Azure's prompt-filter chunk
        if set(data) != set(AZURE_FIRST_CHUNK):
            raise ValueError(f"Azure's first chunk has other fields: {sorted(data)}")
        return None
    if data.get("object") == "":  # Azure's asynchronous-filter annotation: choices without a delta
        if set(data) != set(AZURE_ANNOTATION) or any("delta" in c for c in data["choices"]):
            raise ValueError(f"Azure's annotation chunk differs: {data!r:.120}")
        return None
    if data.get("object") == "chat.completion.done":  # Perplexity's last chunk: a chunk by another name
        data = {**data, "object": "chat.completion.chunk"}
    for choice in data.get("choices", []):
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if isinstance(content, list):  # Mistral's typed parts: thinking parts of text items
            for part in content:
                if part.get("type") != "thinking" or not all(
                    i.get("type") == "text" for i in part["thinking"]
                ):
                    raise ValueError(f"not a Mistral thinking part: {part!r:.80}")
            delta["content"] = None
        for entry in delta.get("reasoning_details") or []:
            if entry.get("type") not in ("reasoning.text", "reasoning.summary", "reasoning.encrypted"):
                raise ValueError(f"not an OpenRouter reasoning_details entry: {entry!r:.80}")
    return data
