"""The kinds of fault the corpus (``replay/faults.py``) breaks every success cassette with, and what the
contract expects of each: provider-neutral data, listed in docs/scenarios.md and by ``explain``."""

from __future__ import annotations

from typing import Literal

from .preconditions import Precondition, any_request
from .served import FOREIGN_BODY, NETWORK, STREAM_ERROR

CorpusKind = Literal[
    "truncate",
    "truncate_inside",
    "reset",
    "no_terminator",
    "read_timeout",
    "malformed_json",
    "checksum_mismatch",
    "html_5xx",
    "plain_200",
    "stream_error",
    "unknown_event",
    "stall",
    "held_open",
]

KINDS: dict[CorpusKind, tuple[str, str]] = {
    "truncate": (
        "ERR-04",
        "the body ends cleanly after an event: provider_error, retryable (an empty body: any provider_error; "
        "after the finish event: the unfaulted result is accepted too)",
    ),
    "truncate_inside": ("ERR-04", "the body ends inside an event: provider_error (retryable not judged)"),
    "reset": (
        "ERR-04",
        "the connection is reset after N bytes: provider_error, retryable (or the unfaulted result after the "
        "finish event)",
    ),
    "no_terminator": (
        "ERR-04",
        "the terminal event is dropped ([DONE], message_stop, Gemini's finish chunk): the unfaulted result if "
        "the finish was delivered, else provider_error, retryable",
    ),
    "read_timeout": (
        "ERR-05",
        "reading the body times out: provider_timeout, retryable (after output started, provider_error too)",
    ),
    "malformed_json": (
        "ERR-05",
        "a copy of the finish event with its JSON cut in half, mid-stream: provider_error",
    ),
    "checksum_mismatch": (
        "ERR-05",
        "a content event with one byte changed and its checksum left (AWS event-stream message CRC; profiles "
        "whose framing has checksums only): provider_error, never the changed data as a success",
    ),
    "html_5xx": ("ERR-05", "a proxy's HTML page with status 502: provider_error, retryable"),
    "plain_200": ("ERR-05", "a 200 text/plain body that is no stream at all: provider_error"),
    "stream_error": (
        "ERR-03",
        "the profile's own error event mid-stream: the code of its type (overloaded -> provider_overloaded, "
        "rate limit -> provider_rate_limited, server error -> provider_error)",
    ),
    "unknown_event": ("RES-12", "an event of an unknown type inserted mid-stream: the unfaulted result"),
    "stall": (
        "NT-04",
        "the stream stalls forever and the step is aborted: request_aborted or provider_timeout before the "
        "timeout (adapters declaring 'abort'; one scenario per stream shape)",
    ),
    "held_open": (
        "NT-05",
        "the whole response, or an error event, then the connection stays open and sends nothing: the result of "
        "the terminal event ([DONE], message_stop, Gemini's finish chunk) or of the error event, returned without "
        "waiting for the body to end (every adapter; one scenario per stream shape). A step that returns only "
        "at its read timeout fails NT-05 (SHOULD); one that never returns fails NT-04 (MUST)",
    ),
}
"""Each fault kind: the clause that judges it and what a conforming adapter returns. Every variant is also
judged by NT-01 (never raises) and NT-02 (a valid StepResult in time), stalls and held-open connections
aside: NT-04 judges every one of those for a hang (MUST), NT-05 where a held-open step returned."""

_CUT = any_request(
    "the network cuts any response short (a dropped connection, a proxy timeout), between events or inside one",
    "../shared/CONTRACT.md ERR-04, NT-02 (truncation of recorded streams)",
    "https://www.python-httpx.org/exceptions/ (RemoteProtocolError: the peer closed the connection mid-body)",
)
PRECONDITIONS: dict[CorpusKind, Precondition] = {
    "truncate": _CUT,
    "truncate_inside": _CUT,
    "reset": NETWORK,
    "no_terminator": _CUT,
    "read_timeout": NETWORK,
    "malformed_json": any_request(
        "a body that is not the provider's format can answer any request (a proxy or server bug cutting an event)",
        "../shared/CONTRACT.md ERR-05 (invalid JSON), NT-02 (corruption of recorded streams)",
    ),
    "checksum_mismatch": any_request(
        "bytes corrupted on the way can reach any stream; the AWS event-stream framing carries a CRC per message "
        "so that a reader detects it (profiles whose framing has checksums only)",
        "https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream "
        "(prelude CRC and message CRC, CRC32)",
        "../shared/CONTRACT.md ERR-05, NT-02 (corruption of recorded streams)",
    ),
    "html_5xx": FOREIGN_BODY,
    "plain_200": FOREIGN_BODY,
    "stream_error": STREAM_ERROR,
    "unknown_event": any_request(
        "providers add event types without notice; any stream may carry one",
        'https://docs.anthropic.com/en/api/messages-streaming ("we may add new event types")',
        "../shared/CONTRACT.md RES-12",
    ),
    "stall": NETWORK,
    "held_open": any_request(
        "a keep-alive connection or a proxy in front may leave any stream open after its last event",
        "../shared/CONTRACT.md NT-04 (a stream that never ends)",
    ),
}
"""When a provider (or what stands in front of it) answers with each kind of fault: every kind can answer any
request, so a fault variant is as applicable as the scenario whose cassette it breaks."""
STALLING: frozenset[CorpusKind] = frozenset({"stall", "held_open"})
"""Kinds whose body never ends: only NT-04 judges them (a hang would otherwise be reported once per clause)."""

DEFAULT_EXAMPLES = 3
"""``--helix-examples`` at its default: each kind is tried at its few default positions."""
FULL_SWEEP_EXAMPLES = 100
"""From this many examples on, every kind is tried at every position (every event boundary)."""

LABELS: dict[CorpusKind, str] = {
    "truncate": "truncated",
    "truncate_inside": "truncated",
    "reset": "connection reset",
    "no_terminator": "terminal event dropped:",
    "read_timeout": "read timeout",
    "malformed_json": "malformed JSON event inserted",
    "checksum_mismatch": "message checksum mismatch",
    "html_5xx": "HTML 502 page instead of the stream",
    "plain_200": "200 text/plain body instead of the stream",
    "stream_error": "provider error event",
    "unknown_event": "unknown event inserted",
    "stall": "stream stalls",
    "held_open": "connection held open",
}
"""How a failure message names each kind, followed by its position."""


def kinds_of(clause: str) -> list[CorpusKind]:
    """The fault kinds ``clause`` judges (NT-01 and NT-02 judge every kind but the stalling ones, NT-04 every
    stalling one: a held-open connection nothing ends is a hang, however the step reads)."""
    if clause in ("NT-01", "NT-02"):
        return [kind for kind in KINDS if kind not in STALLING]
    if clause == "NT-04":
        return [kind for kind in KINDS if kind in STALLING]
    return [kind for kind, (judged_by, _) in KINDS.items() if judged_by == clause]
