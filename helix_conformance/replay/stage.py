"""One run as the judging side sees it: what the replay host serves (``StagePlan``), what it recorded
(``StageTrace``), and how that record becomes the run's trace once the adapter's own account arrives (``merge``).

The host (replay/host.py) records the provider's side: requests, chunks, faults, aborts, closings, on a clock
it owns. The adapter's side (callbacks, the return, an abort from inside a callback) happens in the adapter's
process; its link reports each such event as a mark (kind and name) at the moment the host learns of it, so the
host's record says *where* every adapter event falls among the deliveries. The events themselves, with their
arguments, come with the run's answer and take the marks' places in order (``merge``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..profiles.wire import WireRules
from .delivery import DeliveryPlan, EventPlan
from .trace import SentRequest, Trace, TraceEvent

STALL_EXPIRED = "stall_expired"
"""The trace's fault mark when a stalled read outlived most of the adapter's read timeout (NT-04, AB-02)."""
STALL_EXPIRY_SHARE = 0.9
"""A stalled connection still open after this share of ``AdapterContext.timeout`` is marked stall_expired:
the adapter was still reading when its own timeout was about to end the read."""
SLOW_AFTER_ABORT_S = 0.05
"""After the harness aborts, the rest of the response trickles in this slowly (AB-02 'promptly')."""
ADAPTER_EVENT_KINDS = frozenset({"callback", "callback_done", "returned", "abort"})
"""What the adapter's side records and reports as marks (an ``abort`` there is one fired from a callback)."""
NAMED_KINDS = frozenset({"callback", "callback_done"})
"""Marks whose name must match the event's (a callback's name, snake_case); a return's name is the result's
type, which a driver in another language cannot spell as the parent will."""


def new_token() -> str:
    """A run's token: the path prefix of its base URL and its name on the link (not a secret)."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class ServedInteraction:
    """One expected request and its response as the host serves it: plain values, so that the service, which
    unpickles one with every staged run, imports neither the scenarios (``Fault``) nor the profiles' models."""

    path: str
    status: int
    headers: dict[str, str]
    body: bytes
    fault_kind: str | None = None
    fault_after_events: int = 0
    """The fault (``scenarios.model.Fault``): what goes wrong after how many of the body's events."""
    optional: bool = False


@dataclass(frozen=True)
class StagePlan:
    """Everything the host needs to serve one run; it never reaches the adapter's process."""

    token: str
    interactions: list[ServedInteraction]
    wire: WireRules
    """The profile's endpoint and framing (profiles/wire.py)."""
    plan: DeliveryPlan = field(default_factory=EventPlan)
    read_timeout: float | None = None
    """``AdapterContext.timeout``: where a stall is marked expired (STALL_EXPIRY_SHARE of it)."""
    abort_before: bool = False
    abort_after_events: int | None = None
    cancel_after_chunks: int | None = None
    hold: dict[int, int] = field(default_factory=dict)
    """Interaction -> chunk index that waits until the adapter is idle, having reacted to every chunk before it:
    the one carrying the script's last text delta, in the runs STR-02 reads (judging.hold_points)."""
    virtual_time: bool = True
    limit_s: float = 10.0
    """The run's limit (steps x --helix-timeout) on the run's clock: the clock never jumps to it."""
    chunk_bytes: bool = False
    """Keep each chunk's bytes in the trace (``helix-conformance replay`` prints them)."""


class AdapterMark(NamedTuple):
    """Where an event of the adapter's side fell among the host's: its kind and name, at the host's time."""

    at: float
    kind: str
    name: str


@dataclass
class StageTrace:
    """What the host recorded for one run."""

    events: list[TraceEvent | AdapterMark] = field(default_factory=list)
    requests: list[SentRequest] = field(default_factory=list)
    unused: list[int] = field(default_factory=list)
    skipped_s: float = 0.0
    """Seconds the run's clock jumped (granted by the host)."""
    elapsed_s: float = 0.0
    """The run's duration on its clock, from begin to end (for the judging side's own timeout check)."""
    begun: bool = False
    ended_by_adapter: bool = False
    """The adapter's side said the run was over (else the parent ended it: a worker that hung or died)."""
    unlinked: int = 0
    """Connections served without the adapter's link (no lockstep, no virtual time for them)."""
    seen: list[str] = field(default_factory=list)
    """What the host saw of a run that recorded no request: its begin, the link's reports and answers, the
    connections and their bytes. The evidence a harness-side failure needs (HARN-02 prints it)."""

    def __getstate__(self) -> dict[str, Any]:
        """The events go to the parent by columns: pickling hundreds of named tuples one by one (a run cut
        into 564 pieces) was 2.3 ms of the service's time per run, by columns 0.24 ms (and 1.15 -> 0.44 ms
        to load them in pytest's process)."""
        state = dict(self.__dict__)
        state["events"] = _columns(self.events)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["events"] = _rows(state["events"])
        self.__dict__.update(state)


def _columns(events: list[TraceEvent | AdapterMark]) -> Any:
    """``events`` as (kinds, TraceEvent columns, AdapterMark columns); as they are if of another type."""
    kinds = bytearray()
    host: list[TraceEvent] = []
    marks: list[AdapterMark] = []
    for event in events:
        if type(event) is TraceEvent:
            kinds.append(0)
            host.append(event)
        elif type(event) is AdapterMark:
            kinds.append(1)
            marks.append(event)
        else:
            return list(events)
    return (bytes(kinds), list(zip(*host)), list(zip(*marks)))


def _rows(columns: Any) -> list[TraceEvent | AdapterMark]:
    if isinstance(columns, list):
        return columns
    kinds, host_columns, mark_columns = columns
    host = iter(list(map(TraceEvent._make, zip(*host_columns))))
    marks = iter(list(map(AdapterMark._make, zip(*mark_columns))))
    return [next(marks) if kind else next(host) for kind in kinds]


class MergeError(Exception):
    """The adapter's account of its events does not fit the marks its link reported: a garbled run."""


def merge(stage: StageTrace, adapter_events: list[Any]) -> Trace:
    """The run's trace: the host's events, each mark replaced by the adapter's event it stands for.

    ``adapter_events`` are TraceEvents from the adapter's answer, in the order they happened. Each must
    match its mark's kind and name; events after the last mark (the link was lost) go at the end.
    """
    trace = Trace()
    events = trace.events
    pending = list(adapter_events)
    taken = 0
    for event in stage.events:
        if isinstance(event, AdapterMark):
            if taken >= len(pending):
                raise MergeError(
                    f"the link reported {sum(isinstance(e, AdapterMark) for e in stage.events)} events "
                    f"of the adapter's side; its answer holds {len(pending)}"
                )
            own = pending[taken]
            taken += 1
            if own.kind != event.kind or (own.kind in NAMED_KINDS and own.name != event.name):
                raise MergeError(
                    f"event {taken} of the adapter's side is {own.kind} {own.name!r} in its answer but "
                    f"{event.kind} {event.name!r} on the link"
                )
            events.append(TraceEvent(len(events), event.at, *own[2:]))  # _replace: 4x the time, per event
        elif event.seq == len(events):  # numbered where it stands already (the host counts its marks)
            events.append(event)
        else:
            events.append(TraceEvent(len(events), *event[1:]))
    last = events[-1].at if events else 0.0
    for own in pending[taken:]:
        if own.kind not in ADAPTER_EVENT_KINDS:
            raise MergeError(f"the adapter's side reported a {own.kind!r} event")
        events.append(TraceEvent(len(events), last, *own[2:]))
    trace.requests.extend(stage.requests)
    return trace
