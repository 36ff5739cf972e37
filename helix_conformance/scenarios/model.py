"""Provider-neutral scenarios: canonical input, a neutral response script, and the expected outcome.

A wire profile renders the script into its provider's exact format (the authored cassettes) and builds the
error bodies; the replay engine serves them; the checks compare what the adapter did with ``expect``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..contract import LLMConfig, Message, ParsedToolCall, StopReason, Tool
from .preconditions import Precondition, choose

ResultType = Literal["text", "tool_calls", "structured_output", "error"]


# --- the neutral response script ------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """Visible text, split into the deltas the provider sends."""

    chunks: tuple[str, ...]


@dataclass(frozen=True)
class Thinking:
    """Reasoning text, split into deltas; ``signature`` is the provider's opaque proof, where it sends one."""

    chunks: tuple[str, ...]
    signature: str | None = None


@dataclass(frozen=True)
class RedactedThinking:
    """Reasoning the provider returns encrypted (Anthropic ``redacted_thinking``): opaque, no deltas."""

    data: str


@dataclass(frozen=True)
class Refusal:
    """A refusal message (OpenAI ``delta.refusal``)."""

    chunks: tuple[str, ...]


@dataclass(frozen=True)
class ToolCall:
    """One tool call; ``arguments`` are the raw JSON fragments as streamed (split mid-token on purpose)."""

    id: str | None
    name: str
    arguments: tuple[str, ...]


Part = Text | Thinking | RedactedThinking | Refusal | ToolCall


@dataclass(frozen=True)
class Finish:
    """How the response ends: a canonical stop reason, or the provider's exact value per profile."""

    reason: StopReason
    wire: tuple[tuple[str, str], ...] = ()
    """(profile, provider value) overrides, e.g. (("openai-chat", "function_call"),)."""
    sequence: str | None = None
    """The stop sequence that matched, for providers that report it (Anthropic ``stop_sequence``)."""

    def wire_value(self, profile: str) -> str | None:
        return dict(self.wire).get(profile)


@dataclass(frozen=True)
class Stream:
    """A 200 streamed response: parts in provider order, then the finish (None: no finish event)."""

    parts: tuple[Part, ...]
    finish: Finish | None
    quirks: frozenset[str] = frozenset()
    """Profile-interpreted wire oddities: ``call_ids`` (the provider sends its own tool-call ids where it
    usually sends none: the expected calls keep the script's ids), ``empty_chunk_first`` (a chunk with no choices before the content),
    ``unknown_fields`` (fields the adapter has never seen; RES-12), ``unknown_events`` (event and content-block
    types the adapter has never seen; RES-12); the OpenAI-compatible servers' ones are listed in
    ``profiles/openai_chat_stream.py``. A profile ignores the quirks it has no rendering for."""


@dataclass(frozen=True)
class StreamError:
    """A 200 stream that carries a provider error event after ``parts`` (ERR-03)."""

    parts: tuple[Part, ...]
    kind: str
    """Neutral error kind: ``server_error``, ``rate_limit``, ``overloaded``."""
    quirks: frozenset[str] = frozenset()
    """Profile-interpreted wire oddities, as on ``Stream`` (``after_finish``: the error follows a finish)."""


@dataclass(frozen=True)
class HttpError:
    """An HTTP error status with the profile's own error body; ``kind`` picks a variant of the body."""

    status: int
    kind: str | None = None
    retry_after_ms: int | None = None
    retry_after_s: int | None = None
    """A ``retry-after`` header in seconds alone, with no ``retry-after-ms`` (profiles that send headers)."""

    @property
    def retry_hint_ms(self) -> int | None:
        """The wait the response asks for, in milliseconds, whichever header carries it."""
        return self.retry_after_ms if self.retry_after_s is None else self.retry_after_s * 1000


@dataclass(frozen=True)
class Raw:
    """A body that is not the provider's format at all (HTML error page, text/plain)."""

    status: int
    content_type: str
    body: str


@dataclass(frozen=True)
class Reuse:
    """Serve the recorded response of another scenario (faults are generated, not stored)."""

    scenario: str


ResponseSpec = Stream | StreamError | HttpError | Raw | Reuse

CALL_IDS = "call_ids"
"""The quirk of a stream whose provider sends its own tool-call ids (Gemini 3's ``functionCall.id``)."""


FaultKind = Literal["truncate", "reset", "read_timeout", "stall", "connect_error", "connect_timeout"]


@dataclass(frozen=True)
class Fault:
    """Delivery fault: after ``after_events`` events, do ``kind`` (raised as the client library's error)."""

    kind: FaultKind
    after_events: int = 0


@dataclass(frozen=True)
class Exchange:
    """One expected request and what the replayed provider answers."""

    response: ResponseSpec
    fault: Fault | None = None
    optional: bool = False
    """A conforming adapter may never send this request (e.g. it rejects an invalid tool first)."""


# --- expectations ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """The canonical outcome a conforming adapter returns for this scenario."""

    type: ResultType
    stop_reason: StopReason | None = None
    content: str | None = None
    thinking: str | None = None
    tool_calls: tuple[ParsedToolCall, ...] = ()
    output: Any = None
    error_codes: tuple[str, ...] = ()
    """Acceptable error codes (first is the canonical one)."""
    retryable: bool | None = None
    status_code: int | None = None
    retryable_is_should: bool = False
    """True where the expected ``retryable`` comes from a SHOULD clause (CFG-04, ERR-08)."""
    stop_by_profile: tuple[tuple[str, StopReason], ...] = ()
    """Where a profile's STOP-01 table maps differently (OpenAI reports a stop sequence as ``stop``)."""

    def stop_for(self, profile: str) -> StopReason | None:
        return dict(self.stop_by_profile).get(profile, self.stop_reason)


@dataclass(frozen=True)
class AbortPlan:
    """``before``: the signal is aborted before the call; otherwise abort after that many events."""

    before: bool = False
    after_events: int = 0


@dataclass(frozen=True)
class Scenario:
    id: str
    description: str
    messages: tuple[Message, ...]
    exchanges: tuple[Exchange, ...]
    expect: Expected
    tools: tuple[Tool, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)
    requires: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    abort: AbortPlan | None = None
    profiles: frozenset[str] | None = None
    """Wire profiles this scenario exists for; None means every profile."""
    should: frozenset[str] = frozenset()
    """Clauses that are only SHOULD for this scenario (e.g. the refusal row of the STOP-01 table)."""
    not_live: str | None = None
    """Why this scenario cannot be provoked from the live provider, so recording keeps it authored (beyond the
    general rules in ``recording/live.py``: errors, faults, wire quirks)."""
    generated: tuple[str, ...] = ()
    """The clauses judged over inputs Hypothesis generates from this scenario (``checks/generated.py``): the
    scenario as written is the first example, and only these clauses run on it."""
    live_token: str | None = None
    """A token only present in the input (a tool result) that a live answer must repeat: recording checks it,
    which proves the adapter sent the tool result in a form the model read."""
    preconditions: tuple[Precondition, ...] = ()
    """When a provider sends this scenario's response (``scenarios/preconditions.py``), per wire profile: the
    first that applies to the profile is its. Every scenario states one (a test fails otherwise)."""
    profile_config: tuple[tuple[str, dict[str, Any]], ...] = ()
    """(profile, config) merged over ``config`` for that wire profile: the provider_options by which a caller
    asks that provider for what the response needs (reasoning, server tools), where the key is shared by two
    profiles (``openai``: Chat and Responses) or means nothing to the others."""

    def llm_config(self, model: str, profile: str | None = None) -> LLMConfig:
        return LLMConfig(model=model, **self.config_for(profile))

    def config_for(self, profile: str | None) -> dict[str, Any]:
        """The scenario's config as the adapter of ``profile`` is given it."""
        return {**self.config, **dict(self.profile_config).get(profile or "", {})}

    def precondition(self, profile: str) -> Precondition | None:
        """When a provider of ``profile`` sends this response (None: not stated)."""
        return choose(self.preconditions, profile)

    def applies_to_profile(self, profile: str) -> bool:
        return self.profiles is None or profile in self.profiles

    @property
    def sends_call_ids(self) -> bool:
        """Whether a stream of this scenario carries the provider's own tool-call ids (``CALL_IDS``)."""
        return any(isinstance(e.response, Stream) and CALL_IDS in e.response.quirks for e in self.exchanges)

    @property
    def recorded_exchanges(self) -> tuple[Exchange, ...]:
        """Exchanges whose response is rendered into this scenario's cassette."""
        return tuple(e for e in self.exchanges if isinstance(e.response, (Stream, StreamError)))
