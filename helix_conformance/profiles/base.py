"""The wire-profile interface: what the harness must know about one provider protocol.

A profile decodes the adapter's request back to canonical meaning (so MSG/TOOL/CFG/CACHE checks compare
meaning, never bytes), renders neutral response scripts into the provider's exact stream format (the authored
cassettes), builds the provider's error bodies, and knows its SSE framing and schema restrictions.
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, final
from urllib.parse import urlsplit

from ..contract import Message
from ..scenarios.model import HttpError, Scenario, Stream, StreamError
from . import servers
from .summary import ResponseSummary
from .wire import WireRules


@dataclass
class DecodedTool:
    name: str
    description: str | None
    parameters: dict[str, Any] | None
    """The schema as JSON Schema (a profile with its own schema dialect translates it back)."""
    strict: bool | None = None
    sent: Any = None
    """The schema exactly as sent, where it differs from ``parameters`` (TOOL-03 judges this one)."""


@dataclass
class DecodedRequest:
    """A provider request read back as canonical messages, tools and config."""

    model: str | None
    messages: list[Message]
    tools: list[DecodedTool] | None
    """None when the request has no tools field at all (TOOL-04)."""
    tool_choice_present: bool
    config: dict[str, Any]
    """Canonical LLMConfig field names of the generation parameters present in the request (CFG-01)."""
    streaming: bool
    cache: dict[str, Any]
    """Cache markers present: e.g. ``prompt_cache_key`` (OpenAI) or ``breakpoints`` (Anthropic)."""
    extra: dict[str, Any]
    """Top-level fields the decoder did not interpret (where provider_options land, CFG-02)."""
    problems: list[str] = field(default_factory=list)
    """Ways the body departs from the provider's request format (MSG-09) or could not be decoded."""
    empty_text: list[str] = field(default_factory=list)
    """Empty text sent where the provider rejects it (MSG-06)."""
    violations: list[tuple[str, str]] = field(default_factory=list)
    """(clause id, problem): structural breaches the canonical messages cannot show, e.g. Anthropic tool
    results split across user turns (MSG-04) or two user turns in a row (MSG-05)."""
    options: frozenset[str] = frozenset()
    """The provider-specific request options that change what the provider sends (``scenarios/preconditions.
    OPTIONS``: ``include_usage``, ``thinking``, ``stream_function_call_arguments``...), as this decoder read
    them; ``request_options`` adds the ones every profile reads alike."""

    server_findings: list[tuple[str, str]] = field(default_factory=list)
    """(rule id of ``profiles.server_rejections.SERVER_REJECTIONS``, where): shapes the profile's API takes and named
    servers of it refuse; a breach only for an adapter that declares one of those servers."""

    def violations_of(self, clause: str) -> list[str]:
        return [problem for clause_id, problem in self.violations if clause_id == clause]

    def request_options(self) -> frozenset[str]:
        """Every option of ``scenarios/preconditions.OPTIONS`` this request carries (what preconditions read)."""
        common = {"tools"} if self.tools else set()
        if self.config.get("stop_sequences"):
            common.add("stop_sequences")
        return self.options | common


_SEPARATOR = re.compile(rb"(?=\n\n|\r\n|\r(?!\n))")
"""Where a blank line or CRLF starts, overlapping ones included, and every lone CR (a line ending SSE allows):
cut after it, a reader that waits for an LF must not eat the next line's first byte."""


def malformed_sse_event(event: bytes) -> bytes:
    """An SSE event with the JSON of its ``data:`` cut in half (framing and separator kept)."""
    text = event.decode("utf-8", "replace")
    body = text.rstrip("\r\n")
    separator = text[len(body) :] or "\n\n"
    start = body.find("{", body.find("data:"))
    if start < 0:
        return f'data: {{"x_helix": [1,{separator}'.encode()
    end = len(body.rstrip())
    return (body[: start + max(1, (end - start) // 2)] + separator).encode()


def sse_event_json(event: bytes) -> Any:
    """The JSON of an SSE event's ``data:`` lines, or None when it has none or is not JSON (fault corpus)."""
    lines = event.decode("utf-8", "replace").splitlines()
    data = "\n".join(line[5:].removeprefix(" ") for line in lines if line.startswith("data:"))
    try:
        return json.loads(data) if data else None
    except ValueError:
        return None


def json_content_type_problems(headers: Mapping[str, str]) -> list[str]:
    """MSG-09 for a JSON body: every provider's reference sends ``Content-Type: application/json`` (httpx sets
    none for ``content=`` bytes, so an adapter that serialises the body itself must)."""
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        return [f"Content-Type is {headers.get('content-type')!r}, not application/json"]
    return []


class WireProfile(ABC):
    """One provider protocol. Subclasses are stateless singletons registered in ``profiles.PROFILES``."""

    name: str
    provider_key: str
    """Key of ``LLMConfig.provider_options`` for this provider (CFG-02)."""
    provider_keys: tuple[str, ...] = ()
    """Every ``provider_options`` key adapters of this protocol read (CFG-02): the ecosystem's names too, e.g.
    ``google`` (the Vercel AI SDK's) beside ``gemini``. Empty means ``(provider_key,)``."""
    default_base_url: str
    endpoint_method: str = "POST"
    secret_headers: tuple[str, ...] = ()
    supported_config: frozenset[str] = frozenset()
    """Canonical config fields this provider has a request field for (CFG-01)."""
    required_config: frozenset[str] = frozenset()
    """Config fields the provider requires, so an adapter sends a default when unset (Anthropic max_tokens)."""
    null_is_unset: bool = False
    """Whether the provider documents an explicit ``null`` generation parameter as "use the default": then a
    null for an unset parameter is as good as leaving it out (CFG-01). Decoders keep a sent null visible."""
    round_trips_thinking: tuple[str, ...] = ()
    """What of ``ThinkingContent`` the provider needs back in the history (MSG-08): none by default."""
    signatures_are_bytes: bool = False
    """True where the thinking signature is a proto ``bytes`` field (Gemini): equal signatures are equal bytes,
    whichever base64 alphabet and padding carry them (MSG-08)."""
    stream_content_type: str = "text/event-stream"
    binary_stream: bool = False
    """True where the stream is binary (AWS event-stream): cassettes keep its bytes (YAML ``!!binary``)."""
    checksummed: bool = False
    """True where every message of the stream carries a checksum (AWS event-stream CRC32): a changed byte is
    detectable, so it must never give a success that differs from the unfaulted one (NT-02)."""
    replays: bool = True
    """False for the scripted profile: the adapter makes no HTTP requests at all."""
    by_regression: bool = False
    """True for the custom profile: responses cannot be read, so the expected result is the one the adapter
    returned when the cassette was recorded, and requests must equal the recorded ones (HARN-01)."""

    @functools.cached_property
    def wire(self) -> WireRules:
        """The endpoint and the framing, as data the replay host serves by (profiles/wire.py): by default the
        recorded path's tail, SSE."""
        return WireRules(self.name, self.endpoint_method)

    @final
    def matches(self, method: str, path: str, recorded_path: str) -> bool:
        """Host-agnostic matching: same method, and the path ends with the recorded endpoint (``wire``)."""
        return self.wire.matches(method, path, recorded_path)

    @final
    def endpoint_tail(self, recorded_path: str) -> str:
        return self.wire.tail if self.wire.tail is not None else recorded_path

    def server_of(self, url: str) -> str | None:
        """The server a request's URL addresses where its shape tells (Azure's deployments, Vertex's
        publishers: ``profiles/servers.py``), else None."""
        return servers.server_of(self.name, urlsplit(url).path)

    @final
    def split_events(self, body: bytes) -> list[bytes]:
        return self.wire.split_events(body)

    @abstractmethod
    def endpoint_url(self, model: str) -> str:
        """The full URL of the streaming endpoint at the default base URL."""

    @abstractmethod
    def decode_request(self, body: bytes, url: str = "") -> DecodedRequest:
        """Read a request back; ``url`` matters where the protocol puts meaning there (Gemini's model, SSE)."""

    @abstractmethod
    def render_stream(self, response: Stream | StreamError, *, seed: str, model: str) -> bytes:
        """Render a neutral script as the provider's exact streamed body (authoring cassettes)."""

    @abstractmethod
    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        """Headers and body the provider sends with this HTTP error status."""

    def closes_objects(self, tool: DecodedTool) -> bool:
        """Whether the schema dialect ``tool`` was sent in can forbid extra properties
        (``additionalProperties: false``); where it cannot, TOOL-02 leaves extra properties aside."""
        return True

    def all_required(self, tool: DecodedTool) -> bool:
        """Whether the dialect ``tool`` was sent in makes every property required (OpenAI's strict mode: an
        optional one becomes nullable); TOOL-02 then compares on instances that carry every property."""
        return bool(tool.strict)

    def inexpressible(self, tool: DecodedTool) -> Callable[[Any], Any] | None:
        """What of a JSON Schema the dialect ``tool`` was sent in cannot express (a strict mode's unsupported
        keywords), as a function that removes it; TOOL-02 then compares on the rest. None: it expresses all."""
        return None

    @abstractmethod
    def tool_problems(self, tool: DecodedTool) -> list[str]:
        """Provider restrictions a sent tool violates (TOOL-03)."""

    def expected_history(self, messages: Sequence[Message]) -> list[Message]:
        """The canonical messages a conforming request carries; providers that reject empty turns drop them."""
        return list(messages)

    def response_tool_call_id(self, neutral_id: str) -> str:
        """The tool-call id the authored stream carries for a scenario's neutral id (provider id style)."""
        return neutral_id

    def request_header_problems(self, headers: Mapping[str, str], url: str = "") -> list[str]:
        """Required request headers that are missing or wrong (MSG-09); ``headers`` have lower-case names;
        ``url`` is the request's (a provider may take the key from the query string)."""
        return []

    def runs_scenario(self, scenario: Scenario) -> bool:
        """Whether the suite runs this scenario under this profile at all (the scripted profile narrows it)."""
        return True

    def runs_clause(self, clause: str) -> bool:
        return True

    def clause_skip_reason(self, clause: str) -> str | None:
        """Why this profile cannot judge ``clause`` (the plan shows it as a skip), or None when it can."""
        return None

    def scripted(self, scenario: Scenario) -> tuple[object, ...]:
        """Responses handed to a scripted adapter (only the scripted profile has any)."""
        return ()

    def validate_event(self, event: bytes) -> None:
        """Validate one rendered event against the official SDK's types (used by the project's tests)."""
        raise NotImplementedError

    def summarise_response(self, status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
        """Read one recorded response back as a provider-neutral summary (recording: diffs, expectations)."""
        raise NotImplementedError(f"the {self.name!r} profile cannot summarise a response (no reader for it)")

    # --- the fault corpus (replay/faults.py) asks these of a recorded stream ---------------------------

    def carries_finish(self, event: bytes) -> bool:
        """Whether this event says how the response ends (a finish reason): once it is delivered the output
        is complete, so a stream broken after it may still be returned as the full result (ERR-04)."""
        return False

    def is_terminator(self, event: bytes) -> bool:
        """Whether this is the stream's terminal event, the one a 'missing terminator' fault drops."""
        return False

    def unknown_event(self) -> bytes:
        """An event of a type no adapter has seen yet, in this profile's framing (RES-12)."""
        return b'event: x_helix_future_event\ndata: {"type":"x_helix_future_event","detail":{"nested":[1,2]}}\n\n'

    def malformed_event(self, event: bytes) -> bytes:
        """``event`` with its JSON cut in half, its framing kept: an event whose data does not parse (ERR-05)."""
        return malformed_sse_event(event)

    def cut_points(self, event: bytes) -> list[tuple[str, int]]:
        """Offsets inside one event where the fault corpus truncates or resets (labelled where the framing
        has parts worth naming, e.g. an event-stream message's prelude and CRC): the middle by default."""
        return [("", max(1, len(event) // 2))]

    def corrupted_event(self, event: bytes) -> bytes | None:
        """``event`` with a byte changed that only its checksum tells (ERR-05), or None for a framing without
        checksums (SSE)."""
        return None

    def framing_cuts(self, body: bytes) -> list[tuple[str, tuple[int, ...]]]:
        """Splits of ``body`` that break naive readers of this framing, tried before the random ones (STR-10):
        inside every SSE line or event separator, and after every lone CR."""
        separators = tuple(m.start() + 1 for m in _SEPARATOR.finditer(body) if m.start() + 1 < len(body))
        return [("cut inside every line/event separator", separators)] if separators else []
