"""Runs sent ahead to one or more adapter workers, so the adapter runs while pytest judges (docs/speed.md).

A check that will need a run (a fault variant, a chunk split) has it *sent ahead* when its scenario starts
(``ScenarioSession.ahead``); a run a check waits for now is *urgent* and goes before them in the worker's
queue. Each worker holds at most ``AHEAD_PER_WORKER`` runs sent ahead, so a cancelled hint costs little. With
more than one worker (``--helix-workers``; two on a machine with two cores), runs of the same scenario go to
whichever worker has room. What a run's outcome means does not change: a hang is HARN-03, a process that
ended is NT-01, garbage is NT-01; the other runs the process held are sent again to a fresh one.

Each worker says ``started`` when it begins a run: the run's time limit counts from there, as it did when
runs were sent one at a time.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..adapters import AdapterNotFound
from ..replay.interactions import ReplayInteraction
from ..replay.judging import Staged, collect
from ..replay.runner import THREAD_GRACE_S, RunOptions, ScenarioRun
from ..replay.service import ReplayServiceError
from .client import (
    HANDSHAKE_TIMEOUT_S,
    WORKER_GRACE_S,
    AdapterWorker,
    DriverRedirect,
    WorkerStartError,
    ended_between_runs,
    ended_during_step,
    failed_in_process,
    garbled,
    harness_failed,
    how_it_ended,
    judged,
    lost_run,
    never_received,
    tampered,
)
from .keeper import vitals
from .payload import dumps
from .protocol import ChannelClosed, ProtocolError, header
from .run_pool import RunCall, RunPool, enqueue
from .runs import decode_run
from .snapshot import SnapshotError

AHEAD_PER_WORKER = 4
"""Runs sent ahead that one worker holds beyond the one it is running."""


def default_size(config: Any) -> int:
    """Two workers where two CPUs are free for them; one in each pytest-xdist worker, and in a session started
    from inside one (a test's pytest subprocess): xdist uses the CPUs."""
    if hasattr(config, "workerinput") or getattr(config.option, "numprocesses", None):
        return 1
    return default_workers()


def default_workers() -> int:
    """Workers where no pytest option says otherwise (``run_conformance``'s too): two where two CPUs are free
    for them, one inside a pytest-xdist worker's process or its children (xdist uses the CPUs)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return 1
    return 2 if (os.cpu_count() or 1) >= 2 else 1


TicketState = Literal["queued", "sent", "started", "done", "cancelled"]


@dataclass(eq=False)
class Ticket:
    """One run handed to the pool; ``result()`` waits for it."""

    pool: WorkerPool
    id: int
    call: tuple[Any, ...]
    """(scenario, model, profile, interactions, options, base_url, scripted): what is staged on the worker's
    host (``AdapterWorker.stage``)."""
    urgent: bool
    state: TicketState = "queued"
    run: ScenarioRun | None = None
    received: bool = False
    """The worker acknowledged the run's frame (a run sent but never received was taken off the channel)."""
    staged: Staged | None = None
    """Its stage on the host of the worker it was sent to (staged again if it is sent again)."""

    @property
    def options(self) -> RunOptions:
        return self.call[4]  # type: ignore[no-any-return]

    @property
    def interactions(self) -> list[ReplayInteraction]:
        return self.call[3]  # type: ignore[no-any-return]

    def lost(self, **outcome: Any) -> ScenarioRun:
        """The run lost with its worker (``lost_run``); its stage is ended on the host."""
        staged, self.staged = self.staged, None
        return lost_run(self.options, self.interactions, time.monotonic(), staged=staged, **outcome)

    def limit(self) -> float:
        return self.options.real_limit_s * self.options.steps + THREAD_GRACE_S + WORKER_GRACE_S

    def result(self) -> ScenarioRun:
        return self.pool.wait(self)

    def cancel(self) -> None:
        self.pool.cancel(self)


@dataclass(eq=False)
class _Slot:
    """One worker process and the runs it holds, in the order sent."""

    worker: AdapterWorker
    held: list[Ticket] = field(default_factory=list)
    current: Ticket | None = None
    since: float = 0.0
    """When the current run started, or the last sign of life while runs wait (its limit counts from here)."""
    starting_until: float | None = None
    """Set while the worker is starting: its handshake deadline."""
    broken: str = ""
    """Why this worker cannot be started (the pool goes on with the others)."""

    @property
    def live(self) -> bool:
        return self.worker.process is not None

    @property
    def ready(self) -> bool:
        return self.live and self.starting_until is None

    def deadline(self) -> float | None:
        if self.starting_until is not None:
            return self.starting_until
        if self.current is not None:
            return self.since + self.current.limit()
        if self.held:
            return self.since + self.held[0].limit()
        return None


class WorkerPool(RunPool["Ticket"]):
    """``size`` workers for one adapter; the first is the session's, already started."""

    def __init__(
        self, first: AdapterWorker, size: int = 1, spares: list[AdapterWorker] | None = None
    ) -> None:
        """``spares``: workers spawned beside ``first`` (``AdapterWorker.siblings``), their answer not read yet;
        the pool's next members (beyond ``size``, closed)."""
        spares = list(spares or [])
        for extra in spares[max(size, 1) - 1 :]:
            extra.close()
        starting = [
            _Slot(w, starting_until=time.monotonic() + HANDSHAKE_TIMEOUT_S)
            for w in spares[: max(size, 1) - 1]
        ]
        self.slots = [_Slot(first), *starting] + [
            _Slot(AdapterWorker(first.adapter, sys_path=first.sys_path, cwd=first.cwd))
            for _ in range(max(size, 1) - 1 - len(starting))
        ]
        self.backlog: list[Ticket] = []
        self.next_id = 0

    def close(self) -> None:
        for slot in self.slots:
            slot.worker.close()

    def resize(self, size: int) -> None:
        """``size`` workers from now on (``run_conformance`` called again with other ``workers``): new ones start
        when needed; the ones beyond are stopped unless a run someone waits for is in them (the first, the
        session's, always stays)."""
        size = max(size, 1)
        first = self.slots[0].worker
        while len(self.slots) < size:
            self.slots.append(_Slot(AdapterWorker(first.adapter, sys_path=first.sys_path, cwd=first.cwd)))
        for slot in self.slots[size:]:
            if any(t.state not in ("cancelled", "done") for t in slot.held):
                continue
            slot.worker.kill()  # only what no one asks for any more is in it
            self.slots.remove(slot)

    # --- what the session calls (run_scenario, submit: RunPool) ----------------------------------------

    def take(self, call: RunCall, *, urgent: bool) -> Ticket:
        self.next_id += 1
        scenario, spec, *rest = call  # the worker has its own spec; its model is staged
        ticket = Ticket(self, self.next_id, (scenario, spec.model, *rest), urgent)
        enqueue(self.backlog, ticket)
        self._dispatch()
        return ticket

    def cancel(self, ticket: Ticket) -> None:
        """Forget a run no check will ask for; one a worker already holds runs and is dropped."""
        if ticket.state == "queued":
            self.backlog.remove(ticket)
        if ticket.state != "done":
            ticket.state = "cancelled"

    def wait(self, ticket: Ticket) -> ScenarioRun:
        if ticket.state == "cancelled":
            raise RuntimeError("a cancelled run was waited for")
        if not ticket.urgent and ticket.state in ("queued", "sent"):
            ticket.urgent = True  # now awaited: it goes first among what has not been sent yet
            if ticket.state == "queued":
                self.backlog.remove(ticket)
                enqueue(self.backlog, ticket)
        while ticket.run is None:
            self._dispatch()
            if ticket.run is None:
                self._service()
        return ticket.run

    # --- dispatching -----------------------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Send queued runs to workers with room; start another worker when every started one is full."""
        self._read_starting()
        while self.backlog:
            ticket = self.backlog[0]
            slot = self._room(ticket.urgent)
            if slot is None:
                self._grow()
                if all(s.broken for s in self.slots):
                    self._fail_backlog()
                return
            self.backlog.pop(0)
            self._send(slot, ticket)

    def _read_starting(self) -> None:
        """Take the answers starting workers have sent (a ``ready``), without waiting: a worker that is ready
        gets runs now, not at the next wait."""
        for slot in self.slots:
            if slot.starting_until is not None and slot.worker.process is not None:
                self._drain(slot)

    def _drain(self, slot: _Slot) -> bool:
        """Read what the worker has written so far, without waiting, and handle it; False when its channel
        ended (handled as its end)."""
        process = slot.worker.process
        assert process is not None
        try:
            while select.select([process.reader.fd], [], [], 0)[0]:
                process.reader.pump()
        except (ChannelClosed, OSError):
            self._closed(slot, process)
            return False
        self._messages(slot)
        return True

    def _room(self, urgent: bool) -> _Slot | None:
        ready = [s for s in self.slots if s.ready]
        if not ready:
            return None
        best = min(ready, key=lambda s: len(s.held))
        if urgent and not any(t.urgent for t in best.held):
            return best  # the worker takes it next, before what it holds ahead
        return best if len(best.held) <= AHEAD_PER_WORKER else None

    def _grow(self) -> None:
        """Start the first worker that is not running (the session's own after a kill comes first)."""
        if any(s.starting_until is not None for s in self.slots):
            return
        for slot in self.slots:
            if not slot.live and not slot.broken:
                slot.worker.spawn()
                slot.starting_until = time.monotonic() + HANDSHAKE_TIMEOUT_S
                return

    def _fail_backlog(self) -> None:
        for ticket in list(self.backlog):
            why = " / ".join(dict.fromkeys(s.broken for s in self.slots))
            self._finish(
                ticket, ticket.lost(setup=f"the adapter's process could not be started again: {why}")
            )
        self.backlog.clear()

    def _send(self, slot: _Slot, ticket: Ticket) -> None:
        process = slot.worker.process
        assert process is not None
        try:
            ticket.staged = slot.worker.stage(ticket.call)
        except ReplayServiceError as exc:
            self._finish(ticket, harness_failed(ticket.options, ticket.interactions, time.monotonic(), exc))
            return
        payload = dumps(ticket.staged.job)
        frame = process.frame(header("run", id=ticket.id, encoding="pickle", urgent=ticket.urgent), payload)
        ticket.received = False
        if not slot.held and slot.current is None:
            slot.since = time.monotonic()
        slot.held.append(ticket)
        ticket.state = "sent"
        try:
            self._write(slot, process.to_worker, frame)
        except OSError:
            self._ended(slot)

    def _write(self, slot: _Slot, fd: int, data: bytes) -> None:
        """Write without blocking for good: while the channel is full, read what the workers answered (a
        worker blocked on its own full channel would never read ours), and give up on a worker whose run
        is past its limit (spinning, it reads nothing): it is killed, what it held is sent again."""
        process = slot.worker.process
        os.set_blocking(fd, False)
        view = memoryview(data)
        while view and slot.worker.process is process:  # once replaced, its fd may be another file's
            try:
                view = view[os.write(fd, view) :]
                continue
            except BlockingIOError:
                pass
            readers = {s.worker.process.reader.fd: s for s in self.slots if s.worker.process is not None}
            readable, writable, _ = select.select(list(readers), [fd], [], 1.0)
            for rfd in readable:
                with contextlib.suppress(ChannelClosed, OSError):  # seen again by _service
                    readers[rfd].worker.process.reader.pump()  # type: ignore[union-attr]
            deadline = slot.deadline()
            if not writable and deadline is not None and time.monotonic() > deadline:
                self._messages(slot)  # what it said in time counts
                if (deadline := slot.deadline()) is not None and time.monotonic() > deadline:
                    self._timed_out(slot)  # killed: the rest of this frame goes nowhere
                    return

    # --- answers -----------------------------------------------------------------------------------------

    def _service(self) -> None:
        """Wait for the next answer of any worker (or the nearest deadline) and handle what arrived."""
        readers = {s.worker.process.reader.fd: s for s in self.slots if s.worker.process is not None}
        deadlines = [d for s in self.slots if (d := s.deadline()) is not None]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else 1.0
        readable, _, _ = select.select(list(readers), [], [], timeout)
        for fd in readable:
            slot = readers[fd]
            process = slot.worker.process
            if process is None:
                continue
            try:
                process.reader.pump()
            except (ChannelClosed, OSError):
                self._closed(slot, process)
                continue
            self._messages(slot)
        now = time.monotonic()
        for slot in self.slots:
            deadline = slot.deadline()
            if deadline is None or now <= deadline or slot.worker.process is None:
                continue
            if not self._drain(slot):  # what it said in time counts, even if pytest reads it late
                continue
            if (deadline := slot.deadline()) is not None and now > deadline:
                self._timed_out(slot)

    def _closed(self, slot: _Slot, process: Any) -> None:
        """The worker's channel ended: what it said before (a ``tampered``, a result) counts first."""
        self._messages(slot)
        if slot.worker.process is process:
            self._ended(slot)

    def _messages(self, slot: _Slot) -> None:
        while slot.worker.process is not None:
            try:
                message = slot.worker.process.reader.pop()
            except ProtocolError as exc:
                self._garbled(slot, str(exc))
                return
            if message is None:
                return
            self._answer(slot, message)

    def _answer(self, slot: _Slot, message: dict[str, Any]) -> None:
        now = time.monotonic()
        if slot.starting_until is not None:
            slot.starting_until = None
            try:
                slot.worker.accept(message)
            except (AdapterNotFound, DriverRedirect, WorkerStartError) as exc:
                slot.broken = str(exc)
            slot.since = now
            return
        kind = message.get("type")
        if kind == "tampered":
            self._garbled(slot, str(message.get("what")), tampered)
            return
        ticket = next((t for t in slot.held if t.id == message.get("id")), None)
        if kind == "received":
            if ticket is not None:
                ticket.received = True
            return
        if ticket is None:
            if kind in ("started", "result", "failed"):
                return  # not a run it holds (one it ran before a restart): skipped
            self._garbled(slot, f"a {kind!r} message")
            return
        if kind == "started":
            slot.current, slot.since = ticket, now
            ticket.state = "started" if ticket.state != "cancelled" else "cancelled"
            return
        slot.held.remove(ticket)
        took, slot.current, slot.since = now - slot.since, None, now
        if kind == "failed":
            run = ticket.lost(raised=failed_in_process(message.get("message")))
        elif kind == "result":
            try:
                account = decode_run(message.get("run"), ticket.options, ticket.interactions)
            except SnapshotError as exc:
                slot.held.insert(0, ticket)
                slot.current = ticket
                self._garbled(slot, str(exc))
                return
            assert ticket.staged is not None
            staged, ticket.staged = ticket.staged, None
            run = judged(ticket.options, ticket.interactions, staged, account, now)
            run.duration_s = took
            if slot.worker.process is not None and slot.worker.process.keeper is not None:
                run.unintercepted.extend(slot.worker.process.keeper.after_run(message.get("escapes")))
            if run.timed_out:
                run.hang_note = vitals(slot.worker.process.popen.pid) if slot.worker.process else ""
            if account.timed_out:
                self._restart(slot)  # a thread of the adapter may still spin in there: start clean
        else:
            slot.held.insert(0, ticket)
            slot.current = ticket
            self._garbled(slot, f"a {kind!r} message")
            return
        self._finish(ticket, run)

    def _finish(self, ticket: Ticket, run: ScenarioRun) -> None:
        if ticket.state != "cancelled":
            ticket.state = "done"
        ticket.run = run

    # --- a worker that hung, ended or broke the protocol ---------------------------------------------

    def _victim(self, slot: _Slot) -> Ticket | None:
        """The run the worker was on when it failed: the one it started, else the next it held."""
        ticket = slot.current or (slot.held[0] if slot.held else None)
        if ticket is not None:
            slot.held.remove(ticket)
        slot.current = None
        return ticket

    def _timed_out(self, slot: _Slot) -> None:
        if slot.starting_until is not None:
            slot.broken = str(slot.worker.start_failed(TimeoutError("no answer to hello")))
            slot.starting_until = None
            self._restart(slot)
            return
        note = vitals(slot.worker.process.popen.pid) if slot.worker.process else ""
        ticket = self._victim(slot)
        self._restart(slot)
        if ticket is None:
            return
        if not ticket.received:  # it never arrived, though the channel delivered it: taken off it
            self._finish(ticket, ticket.lost(raised=never_received()))
            return
        self._finish(ticket, ticket.lost(timed_out=True, note=note))

    def _ended(self, slot: _Slot) -> None:
        code, ended = how_it_ended(slot.worker.process)
        if slot.starting_until is not None:
            slot.starting_until = None
            slot.broken = str(slot.worker.start_failed(ChannelClosed("it ended before answering")))
            self._restart(slot)
            return
        started = slot.current is not None
        ticket = self._victim(slot)
        self._restart(slot)
        if ticket is not None:
            raised = ended_during_step(code, ended) if started else ended_between_runs(code, ended)
            self._finish(ticket, ticket.lost(raised=raised))

    def _garbled(self, slot: _Slot, what: str, why: Callable[[str], Exception] = garbled) -> None:
        if slot.starting_until is not None:  # its hello was answered with garbage: not started again
            slot.broken = f"--adapter={slot.worker.adapter}: the worker answered its hello with {what[:200]}"
        ticket = self._victim(slot)
        self._restart(slot)
        if ticket is not None:
            self._finish(ticket, ticket.lost(raised=why(what)))

    def _restart(self, slot: _Slot) -> None:
        """Kill the worker; the runs it still held go back to the front of the queue, for another worker or
        this one started again."""
        slot.worker.kill()
        slot.current, slot.starting_until = None, None
        held, slot.held = slot.held, []
        for ticket in reversed(held):
            if ticket.staged is not None:  # its stage on this worker's host is over: staged again when sent
                staged, ticket.staged = ticket.staged, None
                with contextlib.suppress(ReplayServiceError):
                    collect(staged, grace_s=0.0)
            if ticket.state == "cancelled":
                continue
            ticket.state = "queued"
            self.backlog.insert(0, ticket)
