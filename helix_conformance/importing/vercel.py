"""Vercel AI SDK fixtures (``packages/*/src/**/__fixtures__``): ``*.chunks.txt``, ``*.sse`` and ``*.json``.

``*.chunks.txt`` holds one stream payload per line with the SSE framing stripped; we put back the framing
each provider uses on the wire (OpenAI ``data:`` + ``[DONE]``, Anthropic ``event:``/``data:``, Gemini
``\\r\\n\\r\\n``) and say so in the provenance. ``*.sse`` is raw SSE, kept verbatim. ``*.json`` is a bare
response or error body without its HTTP status, which must be given (or is read from a Google error body).
What a file holds is read from its content, not its name alone: a ``.chunks.txt`` that holds framed SSE is
kept verbatim as SSE. JSON nested too deeply to parse is refused in one line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..profiles import get_profile
from .common import Imported, fail, interaction

FORMAT = "vercel"
_ANTHROPIC_TYPES = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta"}
)
_BEDROCK_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)
"""Members of ConverseStreamOutput: a Vercel Bedrock fixture line is ``{"<member>": {...}}``."""
_COHERE_TYPES = frozenset(
    {"message-start", "content-start", "content-delta", "tool-plan-delta", "tool-call-start"}
)


def detect_profile(payload: Any, path: Path) -> str:
    """The wire profile a stream payload belongs to, or an ImportFailure saying why none fits."""
    if not isinstance(payload, dict):
        raise fail(path, f"stream payload is not a JSON object: {json.dumps(payload)[:60]}")
    kind = payload.get("type")
    if payload.get("object") == "chat.completion.chunk" or "choices" in payload:
        return "openai-chat"
    if len(payload) == 1 and next(iter(payload)) in _BEDROCK_EVENTS:
        return "bedrock-converse"
    if kind in _COHERE_TYPES:
        return "cohere-chat"
    if kind in _ANTHROPIC_TYPES or kind in ("ping", "message_stop"):
        return "anthropic-messages"
    if {"candidates", "promptFeedback", "usageMetadata"} & set(payload):
        return "gemini"
    if isinstance(kind, str) and (kind.startswith("response.") or kind == "error"):
        return "openai-responses"
    raise fail(path, f"stream payload matches no wire profile (keys: {', '.join(sorted(payload)[:6])})")


def _model(payload: dict[str, Any]) -> str:
    message = payload.get("message")
    response = payload.get("response")  # the Responses API: the model is on the response object
    for value in (
        payload.get("model"),
        message.get("model") if isinstance(message, dict) else None,
        response.get("model") if isinstance(response, dict) else None,
        payload.get("modelVersion"),
    ):
        if isinstance(value, str) and value:
            return value
    return "unknown"


def _frame(profile: str, lines: list[str], payloads: list[dict[str, Any]]) -> tuple[str | bytes, str]:
    if profile == "bedrock-converse":
        return _event_stream(lines, payloads), (
            "each line's member framed as an AWS event-stream message (:event-type the member, its JSON as "
            "the payload, sliced from the line unchanged; both CRCs computed here); the service's 'p' "
            "padding field is not in the fixture"
        )
    if profile in ("anthropic-messages", "openai-responses", "cohere-chat"):  # typed events, no [DONE]
        body = "".join(f"event: {p.get('type')}\ndata: {line}\n\n" for line, p in zip(lines, payloads))
        return body, "each line framed as 'event: <type>' + 'data: <line>' + a blank line"
    if profile == "gemini":
        return "".join(
            f"data: {line}\r\n\r\n" for line in lines
        ), "each line framed as 'data: <line>\\r\\n\\r\\n'"
    body = "".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n"
    return body, "each line framed as 'data: <line>' + a blank line, then 'data: [DONE]' appended"


def _event_stream(lines: list[str], payloads: list[dict[str, Any]]) -> bytes:
    """The event-stream body of a Bedrock fixture: one message per line, ``{"<member>": <payload>}``."""
    from ..profiles.bedrock_stream import event_message_raw

    body = b""
    for line, payload in zip(lines, payloads):
        member = next(iter(payload))
        inner = line.strip()[len(json.dumps(member)) + 2 : -1].strip()  # '{"member":' ... '}'
        body += event_message_raw(member, inner.encode("utf-8"))
    return body


def _stream(path: Path, body: str | bytes, model: str, profile_name: str, notes: list[str]) -> Imported:
    """One 200 streamed interaction at the profile's endpoint (the fixture stores no request)."""
    profile = get_profile(profile_name)
    content_type = profile.stream_content_type + ("" if profile.binary_stream else "; charset=utf-8")
    item = interaction(
        profile.endpoint_method,
        profile.endpoint_url(model),
        None,
        {},
        200,
        "OK",
        {"content-type": [content_type]},
        body,
    )
    notes.append("the fixture stores no request or headers: request URI and content-type are the profile's")
    return Imported(FORMAT, [item], notes, model=None if model == "unknown" else model)


_SSE_FIELD = re.compile(r"^(data|event|id|retry):")


def _parse(path: Path, text: str, what: str) -> Any:
    """JSON, or an ImportFailure: invalid, or nested deeper than Python's parser goes."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(path, f"{what} is not JSON ({exc.msg}): {text[:60]!r}") from None
    except RecursionError:
        raise fail(path, f"{what} is JSON nested too deeply to read") from None


def _chunks(path: Path, text: str, profile: str | None) -> Imported:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise fail(path, "is empty: a .chunks.txt fixture holds one JSON payload per line")
    if _SSE_FIELD.match(lines[0]):  # framed already: the content says SSE, whatever the name
        imported = _sse(path, text, profile)
        imported.notes.insert(0, "the .chunks.txt fixture holds framed server-sent events: kept verbatim")
        return imported
    payloads = [_parse(path, line, f"line {number}") for number, line in enumerate(lines, 1)]
    profile = profile or detect_profile(payloads[0], path)
    body, framing = _frame(profile, lines, payloads)
    notes = [f"Vercel stores one payload per line without SSE framing; {framing} (as the provider frames it)"]
    model = next((m for m in map(_model, payloads) if m != "unknown"), "unknown")
    return _stream(path, body, model, profile, notes)


def _sse(path: Path, text: str, profile: str | None) -> Imported:
    first = next((ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")), None)
    if first is None:
        raise fail(path, "has no 'data:' line: not a server-sent event stream")
    payload = _parse(path, first, "the first data line")
    profile = profile or detect_profile(payload, path)
    return _stream(path, text, _model(payload) if isinstance(payload, dict) else "unknown", profile, [])


def _json(path: Path, text: str, profile: str | None, status: int | None) -> Imported:
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(path, f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise fail(path, "is JSON nested too deeply to read") from None
    error = body.get("error") if isinstance(body, dict) else None
    how = "supplied at import (--status)"
    if status is None and isinstance(error, dict) and isinstance(error.get("code"), int):
        status, how = error["code"], "taken from the body's error.code"  # Google bodies repeat the status
    if status is None:
        raise fail(path, "a Vercel .json fixture does not store its HTTP status: pass --status")
    if profile is None:
        raise fail(path, "a Vercel .json fixture does not say which API it is from: pass --profile")
    wire = get_profile(profile)
    headers = {"content-type": ["application/json; charset=utf-8"]}
    item = interaction(
        wire.endpoint_method, wire.endpoint_url("unknown"), None, {}, status, "", headers, text
    )
    note = f"the fixture does not store its HTTP status; {status} was {how}"
    return Imported(FORMAT, [item], [note, "request URI and content-type are the profile's"])


def convert(path: Path, *, profile: str | None = None, status: int | None = None) -> Imported:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(path, f"cannot be read as UTF-8 text ({exc})") from None
    name = path.name
    if name.endswith(".chunks.txt"):
        return _chunks(path, text, profile)
    if name.endswith(".sse"):
        return _sse(path, text, profile)
    if name.endswith(".json"):
        return _json(path, text, profile, status)
    raise fail(path, "is not a Vercel fixture (expected *.chunks.txt, *.sse or *.json)")
