"""Runs sent ahead to several driver processes of one ``node:``/``cmd:`` adapter, each driven by a thread.

A foreign adapter runs in real time (virtual time is the Python worker's), so most of its suite is waiting:
for a stalled stream to time out, for a retry's backoff. Several drivers wait side by side. Each thread owns
one ``DriverWorker`` and takes the next run from a shared queue (runs a check waits for first, then runs sent
ahead, in order); what a run's outcome means does not change: a driver that hung, ended or garbled its channel
is that run's outcome, and that driver is replaced for the next run (driver.py).
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from typing import Literal

from ..replay.interactions import ReplayInteraction
from ..replay.runner import RunOptions, ScenarioRun
from .client import lost_run
from .driver import DriverWorker
from .run_pool import RunCall, RunPool, enqueue

CLOSE_WAIT_S = 5.0
"""How long ``close`` waits for a thread whose driver it killed to notice."""

DriverTicketState = Literal["queued", "running", "done", "cancelled"]


@dataclass(eq=False)
class DriverTicket:
    """One run handed to the pool; ``result()`` waits for it."""

    pool: DriverPool
    call: RunCall
    urgent: bool
    state: DriverTicketState = "queued"
    run: ScenarioRun | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    @property
    def options(self) -> RunOptions:
        return self.call[4]

    @property
    def interactions(self) -> list[ReplayInteraction]:
        return self.call[3]

    def result(self) -> ScenarioRun:
        return self.pool.wait(self)

    def cancel(self) -> None:
        self.pool.cancel(self)


class DriverPool(RunPool["DriverTicket"]):
    """``size`` driver processes for one adapter, the session's (already started) first; the others start at
    once, each on its thread, while pytest collects (not on their first run, beside the runs)."""

    def __init__(self, first: DriverWorker, size: int = 1) -> None:
        self.workers = [first]
        self.threads: dict[DriverWorker, threading.Thread] = {}
        self.busy: dict[DriverWorker, DriverTicket] = {}
        self.starting: set[DriverWorker] = set()
        self.backlog: list[DriverTicket] = []
        self.changed = threading.Condition()
        self.closing = False
        self.resize(size)

    # --- what the session calls (run_scenario, submit: RunPool) ----------------------------------------

    def take(self, call: RunCall, *, urgent: bool) -> DriverTicket:
        ticket = DriverTicket(self, call, urgent)
        with self.changed:
            if self.closing:
                raise RuntimeError("a run was sent to a closed driver pool")
            self._enqueue(ticket)
        return ticket

    def wait(self, ticket: DriverTicket) -> ScenarioRun:
        if ticket.state == "cancelled":
            raise RuntimeError("a cancelled run was waited for")
        with self.changed:
            if ticket.state == "queued" and not ticket.urgent:
                self.backlog.remove(ticket)  # now awaited: before the runs sent ahead
                ticket.urgent = True
                self._enqueue(ticket)
        ticket.finished.wait()
        assert ticket.run is not None
        return ticket.run

    def cancel(self, ticket: DriverTicket) -> None:
        """Forget a run no check will ask for; one a driver already runs finishes and is dropped."""
        with self.changed:
            if ticket.state == "queued":
                self.backlog.remove(ticket)
            if ticket.state != "done":
                ticket.state = "cancelled"

    def resize(self, size: int) -> None:
        """``size`` drivers from now on; the ones beyond stop after their current run (the first stays)."""
        size = max(size, 1)
        first = self.workers[0]
        with self.changed:
            while len(self.workers) < size:
                self.workers.append(
                    DriverWorker(first.requested, first.adapter, first.command, cwd=first.cwd)
                )
            for worker in self.workers[size:]:
                self.workers.remove(worker)
            self.changed.notify_all()
        for worker in self.workers:
            if worker not in self.threads:
                thread = threading.Thread(
                    target=self._serve, args=(worker,), name="helix-driver", daemon=True
                )
                self.threads[worker] = thread
                thread.start()

    def close(self) -> None:
        """Stop taking runs; kill the drivers still running one (only cancelled runs are left at the end of a
        session), and stop every driver."""
        with self.changed:
            self.closing = True
            for ticket in self.backlog:
                ticket.state = "cancelled"
                ticket.run = lost_run(
                    ticket.options, ticket.interactions, time.monotonic(), setup="the pool closed"
                )
                ticket.finished.set()
            self.backlog.clear()
            running = [*self.busy, *self.starting]
            self.changed.notify_all()
        for worker in running:
            process = worker.process
            if process is not None:
                with contextlib.suppress(OSError):
                    process.popen.kill()  # its thread reads the end and lets the run go
        deadline = time.monotonic() + CLOSE_WAIT_S
        threads = list(self.threads.items())
        for _, thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for worker, thread in threads:
            if not thread.is_alive():
                worker.close()

    # --- the threads -----------------------------------------------------------------------------------

    def _start(self, worker: DriverWorker) -> None:
        """Start a driver that is not started yet. A failure is not reported here: its first run starts it
        again and says why it could not (``DriverWorker.run_scenario``)."""
        with self.changed:
            if self.closing or worker.process is not None:
                return
            self.starting.add(worker)  # ``close`` kills it as it kills a driver in a run
        try:
            worker.start()
        except Exception:  # its first run starts it again and reports why it could not
            pass
        finally:
            with self.changed:
                self.starting.discard(worker)

    def _enqueue(self, ticket: DriverTicket) -> None:
        enqueue(self.backlog, ticket)
        self.changed.notify()

    def _serve(self, worker: DriverWorker) -> None:
        """One driver's loop: the next run, until the pool closes or this driver is no longer in it."""
        self._start(worker)
        while True:
            with self.changed:
                while not self.backlog and not self.closing and worker in self.workers:
                    self.changed.wait()
                if self.closing or worker not in self.workers:
                    break
                ticket = self.backlog.pop(0)
                ticket.state = "running"
                self.busy[worker] = ticket
            started = time.monotonic()
            try:
                run = worker.run_scenario(*ticket.call[:5], base_url=ticket.call[5], scripted=ticket.call[6])
            except Exception as exc:  # a harness fault must reach the check, not end the thread
                run = lost_run(
                    ticket.options,
                    ticket.interactions,
                    started,
                    setup=f"the harness failed running the driver: {type(exc).__name__}: {exc}",
                )
            with self.changed:
                del self.busy[worker]
                if ticket.state == "running":  # else cancelled meanwhile
                    ticket.state = "done"
                ticket.run = run
                ticket.finished.set()
        with self.changed:
            resized_away = not self.closing
            if resized_away:
                del self.threads[worker]
        if resized_away:
            worker.close()


__all__ = ["DriverPool", "DriverTicket"]
