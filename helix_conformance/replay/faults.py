"""The fault corpus: every success cassette broken in every way CONTRACT.md names, generated at run time.

Nothing here is stored. From the body of a success scenario's recorded stream and its wire profile (event
framing, which event carries the finish, which one terminates the stream, an unknown event and the in-stream
error event of that protocol) we derive variants: truncations at event boundaries and inside events, a
connection reset after N bytes, a read timeout, a stall, a malformed JSON event, an unknown event, a missing
terminator, a mid-stream provider error, an HTML 5xx page and a 200 ``text/plain`` body. Each variant carries
the clause that judges it and the outcomes the contract allows (``Expectation``); ``checks/faults.py`` runs
and judges them.

Where the contract leaves room, these are the choices (and every outcome the contract allows is accepted):

* After the event that carries the finish (OpenAI ``finish_reason``, Anthropic ``message_delta``, Gemini's
  ``finishReason`` chunk) the output is complete: a stream that breaks there (before ``[DONE]`` or
  ``message_stop``) may give the unfaulted result *or* ``provider_error``, retryable (ERR-04's "terminal
  event" read either way). Gemini has no terminator beyond its finish chunk, so a missing Gemini terminator
  is a missing finish: an error.
* An empty 200 body (truncated before any event) is not "after output started" (ERR-04): any provider error
  is accepted, retryable or not.
* A cut inside an event leaves a fragment that is also not the provider's format (ERR-05 fixes no
  ``retryable``): ``provider_error`` is required, ``retryable`` is not judged.
* A read timeout after output started may be reported as ``provider_timeout`` or ``provider_error`` (ERR-04
  and ERR-05 both apply), as the ``read_timeout_midstream`` scenario does.
* The malformed event is a copy of the finish event cut in half: an event every adapter must parse (a cut
  ``ping`` could be skipped by name, legitimately).
* Error events, unknown events and stalls go inside the content (after the first event, up to the finish);
  the stream ends after an error event, as providers end it.
* A held-open connection serves the whole response (or an error event) and then sends nothing, never ending
  the body: a proxy or a keep-alive connection that outlives the stream. The terminal event ends the step;
  an adapter that reads on until the body ends waits for its read timeout (a hang in production).
* A profile that cannot find the finish in a cassette (``custom``) gets only the faults that need no reading
  of its format: a read timeout before the first event and the two foreign pages.

Positions: at the default ``--helix-examples`` (3) each kind is tried where bugs hide (the middle of the
content, just before the finish event, inside the finish event), three error kinds and two pages alternating;
each further 5 examples add positions, and ``FULL_SWEEP_EXAMPLES`` tries every event boundary.
"""

from __future__ import annotations

import dataclasses
import functools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..profiles.base import WireProfile
from ..scenarios.fault_kinds import DEFAULT_EXAMPLES, FULL_SWEEP_EXAMPLES, KINDS, LABELS, CorpusKind
from ..scenarios.model import Fault, StreamError
from .interactions import ReplayInteraction

STREAM_ERROR_CODES: dict[str, str] = {
    "server_error": "provider_error",
    "overloaded": "provider_overloaded",
    "rate_limit": "provider_rate_limited",
}
HTML_PAGE = "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>"
PLAIN_TEXT = "Hello from a demo endpoint, not an LLM provider."


@dataclass(frozen=True)
class Expectation:
    """What the contract allows for one variant."""

    codes: tuple[str, ...] = ()
    """Acceptable error codes of an ErrorStepResult (empty: any code)."""
    retryable: bool | None = None
    """The ``retryable`` flag required of that error (None: not judged)."""
    may_complete: bool = False
    """The unfaulted run's result is acceptable too (the finish was delivered before the fault)."""
    same_as_unfaulted: bool = False
    """Only the unfaulted run's result is acceptable (RES-12)."""


@dataclass(frozen=True)
class FaultVariant:
    """One generated fault of one success cassette: what is served, and what the contract expects."""

    kind: CorpusKind
    where: str
    """Where the fault sits, e.g. ``after event 4 of 9``."""
    interaction: ReplayInteraction
    expect: Expectation
    abort_after: int | None = None
    """Stalls: the harness aborts the step once this many events were delivered."""

    @property
    def clause(self) -> str:
        return KINDS[self.kind][0]

    @property
    def key(self) -> str:
        return f"{self.kind} {self.where}"

    def describe(self, scenario_id: str) -> str:
        """The fault in words, e.g. ``truncated after event 4 of 9 (tool_call_parallel)``."""
        return f"{LABELS[self.kind]} {self.where} ({scenario_id})".replace("  ", " ")


@dataclass(frozen=True)
class StreamShape:
    """The events of one recorded body and where its finish and terminator sit."""

    events: tuple[bytes, ...]
    finish: int
    """Index of the first event carrying the finish (the last event when the profile cannot tell)."""
    terminator: int
    known: bool = True
    """Whether the profile found the finish event: if not, it cannot tell where the content ends."""

    @classmethod
    def of(cls, profile: WireProfile, body: bytes) -> StreamShape:
        events = tuple(profile.split_events(body))
        last = len(events) - 1
        finish = next((i for i, e in enumerate(events) if profile.carries_finish(e)), None)
        terminator = next((i for i, e in enumerate(events) if profile.is_terminator(e)), last)
        known = finish is not None
        finish = last if finish is None else finish
        return cls(events, finish, max(terminator, finish), known)

    @property
    def n(self) -> int:
        return len(self.events)

    def prefix(self, k: int) -> bytes:
        return b"".join(self.events[:k])

    def complete_after(self, k: int) -> bool:
        """Whether the finish is among the first ``k`` events."""
        return k > self.finish


def spread(candidates: Sequence[int], count: int | None) -> list[int]:
    """``count`` candidates spread evenly, ends first included (all of them when ``count`` is None)."""
    items = list(dict.fromkeys(candidates))
    if count is None or count >= len(items):
        return items
    if count <= 0:
        return []
    if count == 1:
        return [items[len(items) // 2]]
    picks = {round(i * (len(items) - 1) / (count - 1)) for i in range(count)}
    return [items[i] for i in sorted(picks)]


def positions_per_kind(examples: int) -> int | None:
    """How many positions each kind is tried at: 1 per default ``--helix-examples``, None for the full sweep."""
    if examples >= FULL_SWEEP_EXAMPLES:
        return None
    return max(1, examples // DEFAULT_EXAMPLES)


@functools.lru_cache(maxsize=16)
def stream_error_event(profile: WireProfile, kind: str) -> bytes | None:
    """The profile's in-stream error event of ``kind``, cut from its own rendering of a StreamError (None
    for a profile that renders no streams, e.g. ``custom``)."""
    try:
        rendered = profile.render_stream(StreamError(parts=(), kind=kind), seed="fault-corpus", model="model")
    except NotImplementedError:
        return None
    return profile.split_events(rendered)[-1]


# --- the corpus of one recorded response -----------------------------------------------------------------

_TIMEOUT_CODES = ("provider_timeout", "provider_error")
_STALL_CODES = ("request_aborted", "provider_timeout")
_STREAM_ERROR_ORDER = ("overloaded", "rate_limit", "server_error")


def _dropped(shape: StreamShape, delivered: int, *, retryable: bool | None = True) -> Expectation:
    """ERR-04 for a body broken once ``delivered`` whole events arrived."""
    if delivered == 0:
        return Expectation(("provider_error",))
    return Expectation(("provider_error",), retryable, may_complete=shape.complete_after(delivered))


def _served(
    base: ReplayInteraction,
    body: bytes,
    fault: Fault | None = None,
    *,
    status: int | None = None,
    content_type: str | None = None,
) -> ReplayInteraction:
    headers = dict(base.headers) if content_type is None else {"content-type": content_type}
    return dataclasses.replace(
        base,
        body=body,
        fault=fault,
        status=base.status if status is None else status,
        headers=headers,
        optional=False,
        source=f"{base.source} (fault corpus)",
    )


@dataclass(frozen=True)
class _Budget:
    """Which positions each kind is tried at: a few telling ones by default, more with more examples."""

    shape: StreamShape
    per: int | None
    """Positions per kind (1 by default); None: every position."""
    profile: WireProfile
    base: ReplayInteraction

    @property
    def full(self) -> bool:
        return self.per is None

    @property
    def scaled(self) -> bool:
        return self.per is None or self.per > 1

    def pick(self, candidates: Sequence[int], default: Sequence[int] = ()) -> list[int]:
        """All candidates (full sweep), ``per`` of them spread (scaled), or ``default`` (else the middle)."""
        if self.per is not None and self.per == 1:
            return list(dict.fromkeys(default)) or spread(candidates, 1)
        return spread(candidates, self.per)

    @property
    def content(self) -> range:
        """Whole events delivered, output started, the finish not yet: ``1..finish``."""
        return range(1, self.shape.finish + 1)

    @property
    def middle(self) -> int:
        """A position in the middle of the content (the first event where there is none)."""
        return (
            spread(range(1, self.shape.finish), 1)[0] if self.shape.finish > 1 else min(1, self.shape.n - 1)
        )


def _ends(b: _Budget) -> list[FaultVariant]:
    """ERR-04: the body ends early (after an event, inside one), the connection resets, the terminator is lost."""
    shape, base, n, finish = b.shape, b.base, b.shape.n, b.shape.finish
    out = []
    everywhere = range(n) if b.full else range(b.shape.finish + 1)
    for k in sorted(
        {*b.pick(everywhere, (b.middle, finish)), *(b.pick(range(finish + 1, n)) if b.scaled else ())}
    ):
        where = f"after event {k} of {n}" if k else f"before the first of {n} events (empty body)"
        out.append(FaultVariant("truncate", where, _served(base, shape.prefix(k)), _dropped(shape, k)))
    for k in b.pick(range(n) if b.full else range(finish + 1), (finish,)):
        for label, cut in _cuts_inside(b, k):
            served = _served(base, base.body[:cut])
            where = f"inside event {k + 1} of {n}{label} (after {cut} bytes)"
            out.append(FaultVariant("truncate_inside", where, served, _dropped(shape, k, retryable=None)))
    for k in b.pick(range(n) if b.full else range(max(finish, 1)), (min(b.middle, finish),)):
        for label, cut in _cuts_inside(b, k):
            body = base.body[:cut]
            served = _served(base, body, Fault("reset", after_events=len(b.profile.split_events(body))))
            expect = Expectation(("provider_error",), True, may_complete=shape.complete_after(k))
            where = f"after {cut} bytes (inside event {k + 1} of {n}{label})"
            out.append(FaultVariant("reset", where, served, expect))
    t = shape.terminator
    served = _served(base, b"".join(shape.events[:t] + shape.events[t + 1 :]))
    out.append(FaultVariant("no_terminator", f"event {t + 1} of {n}", served, _dropped(shape, t)))
    return out


def _cuts_inside(b: _Budget, k: int) -> list[tuple[str, int]]:
    """Byte offsets of cuts inside event ``k``, labelled: the profile's cut points (its middle for SSE), by
    default only the first and the last (an event-stream message's prelude and CRC)."""
    start = len(b.shape.prefix(k))
    points = b.profile.cut_points(b.shape.events[k])
    if not b.scaled:
        points = list(dict.fromkeys([points[0], points[-1]]))
    return [(f", {label}" if label else "", start + offset) for label, offset in points]


def _checksums(b: _Budget) -> list[FaultVariant]:
    """ERR-05, where messages carry checksums: a content event whose bytes changed but not its CRC."""
    shape, base, n = b.shape, b.base, b.shape.n
    out = []
    for k in b.pick(range(n) if b.full else b.content or range(1), (b.middle,)):
        corrupted = b.profile.corrupted_event(shape.events[k])
        if corrupted is None:
            return []
        served = _served(base, shape.prefix(k) + corrupted + b"".join(shape.events[k + 1 :]))
        expect = Expectation(("provider_error",), may_complete=shape.complete_after(k))
        out.append(FaultVariant("checksum_mismatch", f"in event {k + 1} of {n}", served, expect))
    return out


def _foreign(b: _Budget, salt: str) -> list[FaultVariant]:
    """ERR-05: a read timeout, a malformed event, and one of the pages (both when scaled)."""
    shape, base, n, finish = b.shape, b.base, b.shape.n, b.shape.finish
    out = []
    for k in b.pick(range(n) if b.full else b.content or range(1), (b.middle,)):
        expect = (
            Expectation(_TIMEOUT_CODES, True, may_complete=shape.complete_after(k))
            if k
            else Expectation(("provider_timeout",), True)
        )
        served = _served(base, base.body, Fault("read_timeout", k))
        out.append(FaultVariant("read_timeout", f"after event {k} of {n}", served, expect))
    broken = b.profile.malformed_event(shape.events[finish])  # the finish event: every adapter must read it
    for k in b.pick(range(finish + 1), (b.middle,)):
        served = _served(base, shape.prefix(k) + broken + b"".join(shape.events[k:]))
        where = f"before event {k + 1} of {n}"
        out.append(FaultVariant("malformed_json", where, served, Expectation(("provider_error",))))
    pages = _pages(base)
    # Neither page depends on the stream: by default each scenario gets one of them, alternating.
    return out + (pages if b.scaled else [pages[zlib.crc32(salt.encode()) % 2]])


def _pages(base: ReplayInteraction) -> list[FaultVariant]:
    """ERR-05: a proxy's HTML 5xx page and a 200 ``text/plain`` body instead of the stream."""
    html = _served(base, HTML_PAGE.encode(), status=502, content_type="text/html")
    plain = _served(base, PLAIN_TEXT.encode(), status=200, content_type="text/plain")
    return [
        FaultVariant("html_5xx", "", html, Expectation(("provider_error",), True)),
        FaultVariant("plain_200", "", plain, Expectation(("provider_error",))),
    ]


def _inserted(b: _Budget, stalls: bool) -> list[FaultVariant]:
    """ERR-03 error events, RES-12 unknown events and NT-04 stalls, inside the content."""
    shape, base, n = b.shape, b.base, b.shape.n
    content = b.content or range(1)
    out = []
    kinds = [kind for kind in _STREAM_ERROR_ORDER if stream_error_event(b.profile, kind) is not None]
    if b.full:
        pairs = [(k, kind) for k in content for kind in kinds]
    elif kinds:  # a profile whose stream says fewer error kinds (Cohere: only a generic ERROR) gets those
        positions = b.pick(content, (b.middle, shape.finish if shape.finish else 0))
        count = len(kinds) * (b.per or 1) if b.scaled else 2
        pairs = [(positions[i % len(positions)], kinds[i % len(kinds)]) for i in range(count)]
    else:
        pairs = []
    for k, kind in dict.fromkeys(pairs):
        event = stream_error_event(b.profile, kind)
        if event is None:
            continue
        served = _served(base, shape.prefix(k) + event)
        expect = Expectation((STREAM_ERROR_CODES[kind],))
        out.append(FaultVariant("stream_error", f"{kind} after event {k} of {n}", served, expect))
    unknown = b.profile.unknown_event()
    for k in b.pick(content, (b.middle,)):
        served = _served(base, shape.prefix(k) + unknown + b"".join(shape.events[k:]))
        where = f"before event {k + 1} of {n}"
        out.append(FaultVariant("unknown_event", where, served, Expectation(same_as_unfaulted=True)))
    for k in b.pick(content, (b.middle,)) if stalls else ():
        served = _served(base, base.body, Fault("stall", k))
        out.append(FaultVariant("stall", f"after event {k} of {n}", served, Expectation(_STALL_CODES), k))
    return out


def _held_open(b: _Budget) -> list[FaultVariant]:
    """NT-04: the connection stays open after the terminal event, and after an error event (no abort: every
    adapter must return on the event itself)."""
    shape, base, n = b.shape, b.base, b.shape.n
    out = [
        FaultVariant(
            "held_open",
            f"after the terminal event (event {n} of {n})",
            _served(base, base.body, Fault("stall", n)),
            Expectation(same_as_unfaulted=True),
        )
    ]
    kind = next((kind for kind in _STREAM_ERROR_ORDER if stream_error_event(b.profile, kind)), None)
    event = stream_error_event(b.profile, kind) if kind else None
    if event is not None:
        k = b.middle
        body = shape.prefix(k) + event
        served = _served(base, body, Fault("stall", len(b.profile.split_events(body))))
        where = f"after an {kind} error event (after event {k} of {n})"
        # NT-04 asks that the step return on the error event; which code it carries is ERR-03's to judge.
        out.append(FaultVariant("held_open", where, served, Expectation()))
    return out


def corpus(
    profile: WireProfile,
    base: ReplayInteraction,
    examples: int = DEFAULT_EXAMPLES,
    *,
    stalls: bool = False,
    held_open: bool | None = None,
    salt: str = "",
) -> list[FaultVariant]:
    """Every fault variant of one recorded success response, at the positions ``examples`` pays for;
    ``salt`` (the scenario id) picks which of the stream-independent pages a default run serves.
    ``stalls``: stalls the harness aborts (adapters declaring 'abort'); ``held_open``: connections left open
    after the terminal event (by default with the stalls)."""
    shape = StreamShape.of(profile, base.body)
    budget = _Budget(shape, positions_per_kind(examples), profile, base)
    if not shape.known:  # a format the profile cannot read (``custom``): only faults that need no reading
        served = _served(base, base.body, Fault("read_timeout", 0))
        timeout = Expectation(("provider_timeout",), True)
        return [FaultVariant("read_timeout", "before the first event", served, timeout), *_pages(base)]
    held = _held_open(budget) if (stalls if held_open is None else held_open) else []
    return [*_ends(budget), *_foreign(budget, salt), *_checksums(budget), *_inserted(budget, stalls), *held]
