"""What the replay host (replay/host.py) keeps: the connections it serves, the run being served, and the pieces of
the host that its parts (host_connections.py, host_delivery.py, host_lockstep.py) call on one another.
"""

from __future__ import annotations

import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .http11 import Request
from .stage import StagePlan, StageTrace
from .trace import TraceEvent

LIBRARY = "http"
"""``SentRequest.library`` of every request: it reached the host over HTTP, whatever the client."""
MAX_REFUSED_PER_REPORT = 1000
"""More refused connection attempts than this in one report are a loop, not retries: the trace keeps this many."""
PACE_S = 0.001
"""Between two event chunks on a connection the link does not account for: the client reads them apart."""
REDIRECTED_FROM = "x-helix-redirected-from"
"""The URL an httpx request was built for before the seam sent it here (replay/transport.py): traced as the
request's URL, and left out of its headers; matching reads only the path."""
RUN_PREFIX = "/_helix/"
"""A run's base URL path starts with ``/_helix/<token>``: a late request of an earlier run is told apart."""
READ_SIZE = 1 << 16
MAX_LINK_LINE = 4 << 20
BEGIN_WAIT_S = 10.0
"""How long a ``begin`` waits for its stage (the parent sends the stage before the run)."""
LIMIT_EPSILON_S = 1e-6
"""A jump to the run's limit shorter than this is none (the clock is there already)."""
BARRIER_PATIENCE_S = 1.0
"""How long a barrier waits, in real time, for a thread of the adapter's at work to be idle (``_held_by_work``)."""
UNLINKED_AFTER_REPORTS = 3
"""A connection with a request that this many reports in a row did not name is a client the link does not count
(served in real time). One report is not enough: a sync client in a thread (boto3) may connect and send between
the loop's composing its report and the host's reading it."""


class Reactor(Protocol):
    """What the host needs of the service's event loop."""

    def watch(self, sock: socket.socket, on_readable: Callable[[], None]) -> None: ...

    def unwatch(self, sock: socket.socket) -> None: ...

    def finished(self, host_id: str, token: str, trace: StageTrace) -> None: ...


@dataclass(eq=False)
class Response:
    """One response being delivered on a connection."""

    index: int
    chunks: list[bytes]
    status: int
    headers: dict[str, str]
    fault_kind: str | None
    head_sent: bool = False
    next_chunk: int = 0
    phase: str = "body"
    """``body`` (chunks to send), ``held`` (silent until the client leaves), ``done``."""
    slow: bool = False
    """The abort plan fired: each further chunk waits SLOW_AFTER_ABORT_S on the run's clock."""
    slow_ready: bool = False


@dataclass(eq=False)
class HttpConn:
    sock: socket.socket
    port: int
    inbuf: bytearray = field(default_factory=bytearray)
    outbuf: bytearray = field(default_factory=bytearray)
    received: int = 0
    sent: int = 0
    eof: bool = False
    closed: bool = False
    linked: bool | None = None
    """Whether the link accounts for this connection (None: not known yet)."""
    unreported: int = 0
    """Reports in a row that did not name this connection while it had a request (``UNLINKED_AFTER_REPORTS``)."""
    continued: bool = False
    requests: deque[tuple[Request, int]] = field(default_factory=deque)
    """Parsed requests not recorded yet, with the received-byte offset where each ends."""
    response: Response | None = None
    stage: str = ""
    """The token of the run whose response this connection carries."""


@dataclass(eq=False)
class LinkConn:
    """The adapter process's link: JSON lines both ways."""

    sock: socket.socket
    inbuf: bytearray = field(default_factory=bytearray)
    waiting: bool = False
    """Its last answer was ``wait``: the adapter's side waits in real time, so the host acts when its own
    timer fires instead of at the next report."""
    offered: tuple[float, bool] | None = None
    """The jump offered by the last ``quiet`` answer, until confirmed or overtaken."""
    held: list[dict[str, Any]] | None = None
    """Messages after a ``begin`` whose stage has not arrived yet: handled once it has (the link does not
    wait for the begin to be taken)."""
    serial: int = 0
    """Changes whenever the host did something: a ``jump`` confirms an offer only if nothing changed."""


@dataclass(eq=False)
class ActiveStage:
    plan: StagePlan
    started: float
    record: StageTrace = field(default_factory=StageTrace)
    used: list[bool] = field(default_factory=list)
    skipped: float = 0.0
    credited: float = 0.0
    """Of ``skipped``, the jumps to the adapter's own timer past the run's limit while a stall was held."""
    aborted: bool = False
    cancel_sent: bool = False
    busy_at_barrier_since: float | None = None
    """When a report found a thread of the adapter's at work with the next chunk a barrier (``_held_by_work``)."""
    chunks_sent: int = 0
    timers: list[tuple[float, str, HttpConn]] = field(default_factory=list)
    """(due on the run's clock, what, connection): ``slow`` (the next trickled chunk), ``expire`` (a stall's
    expiry mark), ``pace`` (the next chunk of an unaccounted connection)."""
    link: LinkConn | None = None
    instructions: list[str] = field(default_factory=list)
    """``abort``/``cancel`` for the adapter's side, sent with the next answer."""
    answers: dict[str, int] = field(default_factory=dict)
    """The link's answers by kind (``StageTrace.seen``)."""
    notes: list[str] = field(default_factory=list)
    """What happened to the run's link and connections (``StageTrace.seen``)."""
    starved: float = 0.0
    """Seconds the adapter's process waited for a CPU, as its side's clock left them off (its reports' ``st``):
    left off this clock too, so both sides keep one run clock under load (CFG-05 measures a retry's wait)."""
    stamped: float = float("-inf")
    """The latest time an event or request was stamped with (``now``)."""

    def now(self) -> float:
        """The time to stamp an event or request with: real time since the run began, plus the jumps, less the
        adapter's load; never before an earlier stamp (the load is reported after the fact)."""
        t = time.monotonic() - self.started + self.skipped - self.starved
        if t < self.stamped:
            return self.stamped
        self.stamped = t
        return t

    def peek(self) -> float:
        """``now()`` for timers and offers, which stamps nothing: looking at the clock while the adapter's
        process waits for a CPU must not hold its later stamps at that reading (the wait is reported later,
        and a retry sent at once would look as late as the load made it: CFG-05)."""
        return max(time.monotonic() - self.started + self.skipped - self.starved, self.stamped)

    def leave_off_load(self, starved: Any) -> None:
        """Take the adapter side's report of its load (seconds, since its run began): more only, and never more
        than the real time the run has taken (a side that claims more only slows its own clock)."""
        if isinstance(starved, (int, float)) and not isinstance(starved, bool) and starved > self.starved:
            self.starved = min(float(starved), time.monotonic() - self.started)

    def stalled(self, conns: dict[int, HttpConn]) -> bool:
        """A response of this run is held silent (a stall, a read timeout, a connection held open)."""
        return any(
            c.stage == self.plan.token and c.response is not None and c.response.phase == "held"
            for c in conns.values()
        )

    def add(self, kind: Any, **fields: Any) -> None:
        events = self.record.events
        events.append(TraceEvent(len(events), self.now(), kind, **fields))


class HostState:
    """The host's state, and the steps each part of it takes that another part calls (each defined once, in the
    part named beside it; ``Host`` joins the parts)."""

    reactor: Reactor
    id: str
    http: socket.socket
    control: socket.socket
    http_port: int
    control_port: int
    refusing: socket.socket
    refusing_port: int
    staged: dict[str, StagePlan]
    active: ActiveStage | None
    ended: set[str]
    conns: dict[int, HttpConn]
    links: list[LinkConn]
    begin_waits: list[tuple[float, LinkConn, dict[str, Any]]]
    collect_waits: dict[str, float]
    gone: dict[int, int]
    """Ports of connections the host closed, with the bytes it had received on each."""
    """Ports of connections the host has closed: a report naming one is not waiting for anything."""
    late_resets: list[str]

    # host_connections.py
    def _accept_http(self) -> None:
        raise NotImplementedError

    def _read(self, conn: HttpConn) -> bool:
        raise NotImplementedError

    def _write(self, conn: HttpConn, data: bytes) -> None:
        raise NotImplementedError

    def _reset(self, conn: HttpConn) -> None:
        raise NotImplementedError

    def _drop(self, conn: HttpConn) -> None:
        raise NotImplementedError

    # host_delivery.py
    def _record_requests(self, stage: ActiveStage, conn: HttpConn, accounted_to: int) -> None:
        raise NotImplementedError

    def _step(self, stage: ActiveStage, conn: HttpConn) -> bool:
        raise NotImplementedError

    def _barrier(self, stage: ActiveStage, response: Response) -> bool:
        raise NotImplementedError

    def _refused_connect(self, stage: ActiveStage) -> None:
        raise NotImplementedError

    # host_lockstep.py
    def _begin(self, link: LinkConn, message: dict[str, Any]) -> None:
        raise NotImplementedError

    def _read_links(self) -> None:
        raise NotImplementedError

    def _release(self, link: LinkConn) -> None:
        raise NotImplementedError

    def _steps(self, stage: ActiveStage, *, at_report: bool) -> bool:
        raise NotImplementedError

    def _pace_unlinked(self, stage: ActiveStage) -> None:
        raise NotImplementedError

    def _changed(self) -> None:
        raise NotImplementedError

    # host.py
    def _fire_timers(self, stage: ActiveStage) -> bool:
        raise NotImplementedError

    def _end(self, token: str, *, by_adapter: bool) -> None:
        raise NotImplementedError


def strip_run(target: str) -> tuple[str | None, str]:
    """(run token, the target without the run's prefix); no token when the adapter dropped the prefix."""
    if target.startswith(RUN_PREFIX):
        rest = target[len(RUN_PREFIX) :]
        token, slash, tail = rest.partition("/")
        return token, slash + tail if slash else "/"
    return None, target


def required(plan: StagePlan, used: list[bool]) -> list[int]:
    return [i for i, u in enumerate(used) if not u and not plan.interactions[i].optional]
