"""The replay host: serves one adapter process's runs over real HTTP on loopback, from the judging side.

One host per adapter process (a Python worker, a Node driver, or pytest's own process under
``--helix-in-process``), inside the replay service (replay/service.py), whatever the adapter's HTTP client. It
owns what the provider side of a run is: which response answers which request (``match``), the delivery plan
(chunks, faults, the abort and cancel plans) and the trace of what was delivered and when, on a clock of its
own. The adapter's process never holds the plan; it gets bytes.

**Lockstep.** The adapter's side keeps a *link* to the host (a second loopback connection, replay/link.py and
the Node driver's ``replay.js``). When the adapter's process has nothing left to do but wait — every byte the
host sent has been read, its event loop would block — the link reports ``idle`` with the events of the
adapter's side since its last report (as marks), the bytes it wrote and read on each connection, and its next
timer. The host acts only then: it records the requests whose bytes the report accounts for, then sends the
next chunk of each response in progress (one event per read, with the adapter's reaction to the previous
chunk already in the trace), fires the abort or cancel plan, or ends a body. With nothing to do, it offers a
jump of the run's clock to the nearest timer (the adapter's or its own: a slow trickle after an abort, a
stall's expiry mark), never to the run's limit; bytes still in flight either way (a retry on its way, a chunk
not read yet) make the answer ``busy`` instead, so a jump can never outrun a request.

A connection the link does not account for (a client the adapter's side cannot count, a test's own client) is
served in real time, as before the link: chunks paced 1 ms apart, no jumps.
"""

from __future__ import annotations

import contextlib
import socket
import time
from typing import Any

from .host_connections import Connections
from .host_delivery import Delivery
from .host_lockstep import Lockstep
from .host_state import (
    ActiveStage,
    HttpConn,
    LinkConn,
    Reactor,
    required,
)
from .stage import STALL_EXPIRED, StagePlan, StageTrace


class Host(Connections, Delivery, Lockstep):
    """Serves the runs of one adapter process (see the module's doc): its HTTP connections
    (host_connections.py), what it sends on them (host_delivery.py) and the link (host_lockstep.py)."""

    def __init__(
        self,
        reactor: Reactor,
        host_id: str,
        listeners: tuple[socket.socket, socket.socket, socket.socket] | None = None,
    ) -> None:
        """``listeners``: listening sockets for HTTP and the link, and a socket only bound, whose port refuses
        connections (``connect_error``), opened where the adapter's process can reach them (a confined worker's
        own loopback, replay/service.py); None: on this machine's 127.0.0.1."""
        self.reactor = reactor
        self.id = host_id
        if listeners is None:
            refusing = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            refusing.bind(("127.0.0.1", 0))
            listeners = (
                socket.create_server(("127.0.0.1", 0)),
                socket.create_server(("127.0.0.1", 0)),
                refusing,
            )
        self.http, self.control, self.refusing = listeners
        for listener in (self.http, self.control):
            listener.setblocking(False)
        self.http_port = int(self.http.getsockname()[1])
        self.control_port = int(self.control.getsockname()[1])
        self.refusing_port = int(self.refusing.getsockname()[1])
        self.staged: dict[str, StagePlan] = {}
        self.active: ActiveStage | None = None
        self.ended: set[str] = set()
        self.conns: dict[int, HttpConn] = {}
        self.links: list[LinkConn] = []
        self.begin_waits: list[tuple[float, LinkConn, dict[str, Any]]] = []
        self.collect_waits: dict[str, float] = {}
        self.late_resets: list[str] = []
        """The last requests reset as a run's that is over (``StageTrace.seen``)."""
        self.gone: dict[int, int] = {}
        """Ports of connections the host has closed: a report naming one is not waiting for anything."""
        reactor.watch(self.http, self._accept_http)
        reactor.watch(self.control, self._accept_link)

    # --- the parent's side ------------------------------------------------------------------------------

    def stage(self, plan: StagePlan) -> None:
        self.staged[plan.token] = plan
        for wait in list(self.begin_waits):
            if wait[2].get("run") == plan.token:
                self.begin_waits.remove(wait)
                self._begin(wait[1], wait[2])

    def collect(self, token: str, grace_s: float) -> None:
        """End the run now if it never began, else once the adapter's side ends it or ``grace_s`` passed."""
        if token in self.staged:
            plan = self.staged.pop(token)
            self.ended.add(token)  # its begin may still be on its way over the link: not to be waited for
            self.reactor.finished(
                self.id, token, StageTrace(unused=required(plan, [False] * len(plan.interactions)))
            )
        elif self.active is not None and self.active.plan.token == token:
            self.collect_waits[token] = time.monotonic() + grace_s

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.refusing.close()
        for sock in [
            self.http,
            self.control,
            *(c.sock for c in self.conns.values()),
            *(k.sock for k in self.links),
        ]:
            self.reactor.unwatch(sock)
            with contextlib.suppress(OSError):
                sock.close()
        self.conns.clear()
        self.links.clear()

    # --- time --------------------------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """The real monotonic time of the host's next timer, if any."""
        now = time.monotonic()
        deadlines = [w[0] for w in self.begin_waits] + list(self.collect_waits.values())
        stage = self.active
        if stage is not None and stage.timers:
            due = min(t[0] for t in stage.timers)
            deadlines.append(now + max(0.0, due - stage.peek()))
        return min(deadlines, default=None)

    def fire_due(self) -> None:
        now = time.monotonic()
        for wait in [w for w in self.begin_waits if w[0] <= now]:
            self._give_up_waiting(wait[1])
        for token, deadline in list(self.collect_waits.items()):
            if deadline <= now:
                self._end(token, by_adapter=False)
        stage = self.active
        if stage is None or not self._fire_timers(stage):
            return
        link = stage.link
        if link is not None and link.waiting and self._steps(stage, at_report=False):
            link.waiting = False  # the adapter's side waited in real time: the host acted on its own timer
        self._pace_unlinked(stage)

    def _fire_timers(self, stage: ActiveStage) -> bool:
        now = stage.peek()
        due = sorted((t for t in stage.timers if t[0] <= now + 1e-9), key=lambda t: t[0])
        for timer in due:
            stage.timers.remove(timer)
            _, what, conn = timer
            response = conn.response
            if response is None or conn.closed or conn.stage != stage.plan.token:
                continue
            if what == "slow":
                response.slow_ready = True
            elif what == "expire" and response.phase == "held":
                stage.add("fault", name=STALL_EXPIRED, interaction=response.index)
            elif what == "pace":
                self._step(stage, conn)
        if due and stage.link is not None:
            stage.link.serial += 1
        return bool(due)

    # --- the end of a run ---------------------------------------------------------------------------------

    def _seen(self, stage: ActiveStage) -> list[str]:
        """What the host saw of a run that recorded no request (``StageTrace.seen``)."""
        answers = ", ".join(f"{kind} {n}" for kind, n in sorted(stage.answers.items())) or "none"
        seen = [*stage.notes, f"ended at {stage.peek() * 1000:.1f} ms; the link's answers: {answers}"]
        for conn in self.conns.values():
            seen.append(
                f"connection from port {conn.port}: {conn.received} bytes received, {conn.sent} sent, "
                f"{len(conn.requests)} request(s) not recorded, linked={conn.linked}, reports without it="
                f"{conn.unreported}, run={conn.stage or 'none'}"
            )
        if not self.conns:
            seen.append("no connection open on the host's HTTP port")
        seen.extend(
            f"a connection it closed before: port {port}, {got} bytes"
            for port, got in list(self.gone.items())[-3:]
        )
        seen.extend(f"reset as late: {reset}" for reset in self.late_resets)
        return seen

    def _end(self, token: str, *, by_adapter: bool) -> None:
        self.collect_waits.pop(token, None)
        stage = self.active
        if stage is None or stage.plan.token != token:
            return
        self.active = None
        self.ended.add(token)
        if len(self.ended) > 4096:
            self.ended.clear()
        record = stage.record
        record.ended_by_adapter = by_adapter
        record.elapsed_s = stage.now() - stage.credited
        record.skipped_s = stage.skipped
        record.unused = required(stage.plan, stage.used)
        record.unlinked = sum(1 for c in self.conns.values() if c.linked is False and c.stage == token)
        if not record.requests:
            record.seen = self._seen(stage)
        for conn in list(self.conns.values()):
            if conn.stage == token and conn.response is not None and conn.response.phase != "done":
                with contextlib.suppress(OSError):  # held or half-read: the run is over
                    conn.sock.shutdown(socket.SHUT_RDWR)
                self._drop(conn)
            elif conn.stage == token:
                conn.requests.clear()
        self.reactor.finished(self.id, token, record)
