"""The virtual-time loop's selector: a real poll first; then, when only timers are left, the host is told the
adapter's side is idle (replay/link.py) and its answer is done: the next bytes, a jump of the clock, or a real
wait. A loop without a link (the loop's own tests) jumps on its own.
"""

from __future__ import annotations

import selectors
import time
from typing import TYPE_CHECKING, Any

from .link import connections
from .virtual_sleep import SETTLE_S, SLEEP_RECHECK_MAX_S

if TYPE_CHECKING:
    from .clock import VirtualTimeLoop

POLL_EVERY_BUSY_TURNS = 16
"""While callbacks are ready, the loop polls its sockets once in this many turns instead of every turn."""
BUSY_BACKOFF_MAX_S = 0.02
"""While bytes are in flight or a thread is at work, the idle loop looks again after 0.25 ms, doubling to this."""
BUSY_THREAD_PATIENCE_S = 0.05
"""A thread at work this long (a background thread of the adapter's, polling or computing) no longer holds
the run up: the loop reports idle all the same, without asking for a jump (replay/host.py acts on it)."""


class VirtualSelector(selectors.BaseSelector):
    """The loop's selector: a real poll first; then, when only timers are left, a jump of the clock."""

    def __init__(self, real: selectors.BaseSelector) -> None:
        self.real = real
        self.loop: VirtualTimeLoop | None = None
        self.fds: frozenset[int] = frozenset()
        """The registered file descriptors, replaced whole on each change: another thread reads them at any
        moment (``VirtualTimeLoop.may_skip``), and iterating the selector's own map there raised."""
        self.closed = False
        self._busy_turns = 0

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        key = self.real.register(fileobj, events, data)
        self.fds = self.fds | {key.fd}
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        key = self.real.unregister(fileobj)
        self.fds = self.fds - {key.fd}
        return key

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self.real.modify(fileobj, events, data)

    def get_key(self, fileobj: Any) -> selectors.SelectorKey:
        return self.real.get_key(fileobj)

    def get_map(self) -> Any:
        return self.real.get_map()

    def close(self) -> None:
        self.closed = True
        self.real.close()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        loop = self.loop
        if loop is not None and timeout is not None and timeout <= 0:
            # Callbacks are ready: asyncio polls anyway, a system call per turn. A callback from another
            # thread is queued already (the pipe only wakes a sleeping loop), so only sockets wait, a few turns.
            self._busy_turns += 1
            if self._busy_turns < POLL_EVERY_BUSY_TURNS:
                return []
            self._busy_turns = 0
        if loop is not None and loop.link is not None and (timeout is None or timeout > 0):
            return self._linked(loop, timeout)
        if loop is None or timeout is None:
            return self.real.select(timeout)
        if timeout <= 0:  # callbacks are ready: the loop is at work, whatever frame this poll shows
            loop.polling = True
            try:
                return self.real.select(timeout)
            finally:
                loop.polling = False
        ready = self.real.select(0)
        if ready:
            return ready
        timer = loop.time() + timeout < loop.hard_deadline  # else the harness's limit, never jumped to...
        if not timer and loop.timer_past_the_limit():
            timer = True  # ...unless a timer of the adapter's lies beyond it: the limit comes first in real time too
        if not timer:  # a wait on the limit alone (a job at work, a hang) is never jumped, nor counted
            return self.real.select(timeout)
        if not loop.virtual:  # --helix-real-time: every timer waited out, and counted
            return self._real_wait(loop, timeout, timer)
        return self._settle(loop, timeout)

    def _settle(self, loop: VirtualTimeLoop, timeout: float) -> list[tuple[selectors.SelectorKey, int]]:
        """Wait for a timer of the adapter's, jumping to it from the moment nothing real can wake the loop
        first. A thread at work now may be idle soon (a thread starting the loop's): look again after a short
        real wait (doubling), not after the whole wait."""
        started = time.monotonic()
        deadline, wait = started + timeout, SETTLE_S
        while (left := deadline - time.monotonic()) > 0:
            if loop.may_skip():
                # A thread just woken (a job handed to a pool) still shows the frame it waited in until it
                # gets the GIL: a short real wait lets it start (or post its result) before the check is trusted.
                idle_from = time.monotonic()
                ready = self.real.select(min(left, SETTLE_S))
                if ready:
                    break
                if loop.may_skip():
                    loop.real_wait_s += idle_from - started  # the settling is the jump's, as before
                    loop.advance(max(0.0, deadline - time.monotonic()))
                    return []
            else:
                ready = self.real.select(min(left, wait))
                wait = min(wait * 2, SLEEP_RECHECK_MAX_S)
                if ready:
                    break
        else:
            ready = []
        loop.real_wait_s += time.monotonic() - started
        return ready

    def _real_wait(
        self, loop: VirtualTimeLoop, timeout: float | None, timer: bool
    ) -> list[tuple[selectors.SelectorKey, int]]:
        started = time.monotonic()
        ready = self.real.select(timeout)
        if timer:  # a wait on the limit alone (a job at work, a hang) is not a timer virtual time left out
            loop.real_wait_s += time.monotonic() - started
        return ready

    def _linked(
        self, loop: VirtualTimeLoop, timeout: float | None
    ) -> list[tuple[selectors.SelectorKey, int]]:
        """The loop would block: tell the host, and do what it answers (replay/host.py)."""
        ready = self.real.select(0)
        if ready:
            loop.backoff = 0.0
            return ready
        link = loop.link
        assert link is not None
        timer = timeout is not None and loop.time() - loop.credited_s + timeout < loop.hard_deadline
        delay, beyond = loop.next_timer()
        conns, consumed = self._counts_then_threads(loop)
        if not consumed:  # a thread at work: the host waits for it, and so does the loop, for a while
            now = time.monotonic()
            if loop.busy_since is None:
                loop.busy_since = now
            if now - loop.busy_since < BUSY_THREAD_PATIENCE_S:
                return self._backoff(loop, timeout, timer)
        else:
            loop.busy_since = None
            # A thread may have posted to the loop and gone back to wait between the poll above and the look at
            # the threads (boto3's reader thread hands a chunk over, then reads the host again): look once more.
            ready = self.real.select(0)
            if ready:
                loop.backoff = 0.0
                return ready
        # A thread at work past the patience may still end a stall: the host then offers a stall's credit only.
        jump = loop.virtual and delay is not None and loop.may_skip(quick=True)
        answer = loop.obey(link.idle(delay, jump=jump, beyond=beyond, busy=not consumed, conns=conns))
        if answer.kind == "quiet":
            # A thread just woken (a job handed to a pool) still shows the frame it waited in until it gets
            # the GIL: a short real wait lets it start (or post its result) before the idle check is trusted.
            ready = self.real.select(SETTLE_S)
            if ready:
                return ready
            # A stall's credit ends the stall at the adapter's own read timeout, as the provider's silence
            # would, whatever its other threads do (they are looked at for every other jump).
            if loop.may_skip(quick=answer.credit):
                answer = loop.obey(link.jump(answer, answer.d))
            else:
                conns, consumed = self._counts_then_threads(loop)
                answer = loop.obey(
                    link.idle(delay, jump=False, beyond=beyond, busy=not consumed, conns=conns)
                )
        kind = answer.kind
        if kind == "advanced":
            loop.skipped_s += answer.d
            if answer.credit:
                loop.credited_s += answer.d
        if kind in ("acted", "advanced"):
            loop.backoff = loop.recheck = 0.0
            return self.real.select(0)
        if kind == "busy":
            return self._backoff(loop, timeout, timer)
        if kind != "wait":  # the link is gone, or the run is not the host's any more: real time from now on
            loop.link = None
        elif loop.jobs_in_flight or not consumed:
            # A job or a thread at work may be idle soon (or write to the host): look again after a short real
            # wait, doubling, not after the whole timer (a thread just started, a stall the host may credit).
            loop.recheck = min(max(loop.recheck * 2, SETTLE_S), SLEEP_RECHECK_MAX_S)
            return self._real_wait(
                loop, loop.recheck if timeout is None else min(timeout, loop.recheck), timer
            )
        return self._real_wait(loop, timeout, timer)

    @staticmethod
    def _counts_then_threads(loop: VirtualTimeLoop) -> tuple[list[list[Any]], bool]:
        """The byte counts of the host's connections, then whether every thread waits (``consumed``), in that
        order. A reader thread whose read has returned but not been counted yet still shows the read's frame
        (boto3's, under load): looked at first and counted after, it was reported idle with every byte read,
        and the host passed STR-02's hold before it parsed them (a false "callbacks buffered" in CI)."""
        conns = connections()
        return conns, loop.consumed()

    def _backoff(
        self, loop: VirtualTimeLoop, timeout: float | None, timer: bool
    ) -> list[tuple[selectors.SelectorKey, int]]:
        """Bytes in flight or a thread at work: look again soon (0.25 ms, doubling)."""
        loop.backoff = min(max(loop.backoff * 2, 0.00025), BUSY_BACKOFF_MAX_S)
        wait = loop.backoff if timeout is None else min(timeout, loop.backoff)
        return self._real_wait(loop, wait, timer)
