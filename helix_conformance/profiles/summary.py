"""A provider response read back as a provider-neutral summary (recording: semantic diffs, expectations).

Each profile reads its own stream into a ``ResponseSummary`` (``WireProfile.summarise_response``); this module
holds what they share: the summary itself, a tolerant SSE reader (garbage becomes ``problems``, never an
exception), argument parsing and the inversion of a profile's STOP-01 table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..contract import StopReason

SummaryType = Literal["text", "tool_calls", "error"]


@dataclass(frozen=True)
class SummaryToolCall:
    """One assembled tool call: ``arguments`` parsed when they are JSON, else the raw string."""

    id: str | None
    name: str
    arguments: Any
    arguments_valid: bool
    """True when the arguments are a JSON object (absent or empty arguments count as ``{}``, RES-05)."""


@dataclass(frozen=True)
class ResponseSummary:
    """What one provider response says, in neutral terms.

    ``result_type`` is the kind of result a conforming adapter returns: ``error`` for an HTTP error or an
    error event in the stream; ``tool_calls`` when the response carries tool calls (RES-09) unless they were
    cut off by the token limit (RES-10: then ``text``). A response with ``problems`` (no terminator, lines
    that are not the provider's format) is one a conforming adapter rejects (ERR-04/05): do not derive
    expectations from it.
    """

    status: int
    result_type: SummaryType
    text: str = ""
    thinking: str = ""
    thinking_signed: bool = False
    tool_calls: tuple[SummaryToolCall, ...] = ()
    wire_stop: str | None = None
    """The provider's finish/stop value exactly as sent (None when the response has none)."""
    stop_reason: StopReason | None = None
    """Canonical (STOP-01) via the profile's table; ``tool_use`` for tool-calls results and ``error`` for
    error results, as a conforming adapter reports them (RES-02, ERR-06); None when the stream has no stop."""
    error_type: str | None = None
    """The provider's error type or status string (HTTP error body or in-stream error event)."""
    events: tuple[str, ...] = ()
    """The event-type sequence; labels per profile (see each ``*_summary`` module)."""
    usage: dict[str, Any] | None = None
    problems: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The summary as plain JSON-able data (tool calls as dicts, tuples as lists)."""
        data = asdict(self)
        data["tool_calls"] = list(data["tool_calls"])
        data["events"] = list(self.events)
        data["problems"] = list(self.problems)
        return data


@dataclass
class Collector:
    """Mutable state while a profile reads one response; ``summary`` freezes it."""

    status: int
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    thinking_signed: bool = False
    calls: list[SummaryToolCall] = field(default_factory=list)
    wire_stop: str | None = None
    error_type: str | None = None
    errored: bool = False
    events: list[str] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)

    def error(self, error_type: str | None) -> None:
        """An error ends the response; the first error's type is kept."""
        self.errored = True
        self.error_type = self.error_type or error_type

    def summary(self, stop_reason: StopReason | None) -> ResponseSummary:
        cut_off = stop_reason == "max_tokens"
        if self.errored:
            result: SummaryType = "error"
            stop_reason = "error"
        elif self.calls and not cut_off:
            result = "tool_calls"
            stop_reason = "tool_use"  # RES-02: whatever the wire said (``stop`` with tool calls happens)
        else:
            result = "text"
        return ResponseSummary(
            status=self.status,
            result_type=result,
            text="".join(self.text),
            thinking="".join(self.thinking),
            thinking_signed=self.thinking_signed,
            tool_calls=tuple(self.calls),
            wire_stop=self.wire_stop,
            stop_reason=stop_reason,
            error_type=self.error_type,
            events=tuple(self.events),
            usage=self.usage,
            problems=tuple(self.problems),
        )


def parse_arguments(raw: str) -> tuple[Any, bool]:
    """(arguments, valid): a JSON object is valid; other JSON is kept parsed, unparseable text kept raw."""
    if not raw.strip():
        return {}, True
    try:
        value = json.loads(raw)
    except ValueError:
        return raw, False
    return value, isinstance(value, dict)


def invert_stop_table(
    authored: Mapping[str, str], extra: Mapping[str, StopReason] | None = None
) -> dict[str, StopReason]:
    """Wire value -> canonical from a profile's canonical -> wire table (the first canonical reason wins:
    OpenAI ``stop`` is end_turn, not stop_sequence), plus STOP-01 values the authored table never sends."""
    table: dict[str, StopReason] = {}
    for canonical, wire in authored.items():
        table.setdefault(wire, canonical)  # type: ignore[arg-type]
    for wire, canonical in (extra or {}).items():
        table.setdefault(wire, canonical)
    return table


def header(headers: Mapping[str, str], name: str) -> str:
    """A header's value whatever the case of its name ('' when absent)."""
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return ""


def json_body(body: bytes) -> Any:
    """A whole body as JSON, or None when it is not JSON."""
    try:
        return json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        return None


def short(text: str, limit: int = 60) -> str:
    """One line of at most ``limit`` characters for problem messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class SSEItem:
    """One thing in an SSE body: a dispatched event, a comment line, or a stray line that is no SSE field."""

    kind: Literal["event", "comment", "stray"]
    event: str | None = None
    data: str = ""


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_FIELDS = frozenset({"data", "event", "id", "retry"})


def read_sse(body: bytes, problems: list[str]) -> list[SSEItem]:
    """The items of an SSE body in order (WHATWG line rules); an unterminated last event is still returned,
    and invalid UTF-8 is replaced and reported."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        problems.append("the body is not valid UTF-8")
        text = body.decode("utf-8", errors="replace")
    text = text.removeprefix("\ufeff")
    items: list[SSEItem] = []
    name: str | None = None
    data: list[str] = []
    for line in _LINE_BREAK.split(text):
        if not line:
            if data:
                items.append(SSEItem("event", name, "\n".join(data)))
            name, data = None, []
            continue
        if line.startswith(":"):
            items.append(SSEItem("comment", data=line[1:].strip()))
            continue
        key, colon, value = line.partition(":")
        value = value[1:] if colon and value.startswith(" ") else value
        if key == "data":
            data.append(value)
        elif key == "event":
            name = value.strip() or None
        elif key not in _FIELDS:
            if data:  # keep the order: the open event ends before the stray line
                items.append(SSEItem("event", name, "\n".join(data)))
                name, data = None, []
            items.append(SSEItem("stray", data=line))
    if data:
        items.append(SSEItem("event", name, "\n".join(data)))
    return items


def json_object(data: str, where: str, problems: list[str]) -> dict[str, Any] | None:
    """An event's data as a JSON object, or None with a problem saying why not."""
    try:
        value = json.loads(data)
    except ValueError:
        problems.append(f"{where}: data is not JSON: {short(data)!r}")
        return None
    if not isinstance(value, dict):
        problems.append(f"{where}: data is not a JSON object: {short(data)!r}")
        return None
    return value


def http_error(status: int, body: bytes, error_type: str | None) -> ResponseSummary:
    """The summary of an HTTP error response (the profile found ``error_type`` in its body)."""
    collector = Collector(status)
    collector.error(error_type)
    if error_type is None:
        snippet = short(body.decode("utf-8", errors="replace"))
        collector.problems.append(f"HTTP {status} body is not the provider's error format: {snippet!r}")
    return collector.summary(None)


def stream_collector(status: int, headers: Mapping[str, str]) -> Collector:
    """The collector of a 2xx response, with a content type that is not an event stream noted as a problem."""
    out = Collector(status)
    content_type = header(headers, "content-type")
    if content_type and "event-stream" not in content_type.lower():
        out.problems.append(f"content-type {content_type!r} is not text/event-stream")
    return out
