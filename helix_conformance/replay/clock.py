"""Virtual time for replay: the adapter's event loop skips the waits nothing real can end early.

While an adapter runs against the replay host, the only things it can wait for are the host's bytes and
timers: retry backoff, ``retry-after``, read timeouts on a stalled stream, ``wait_for`` limits. When the
loop would block and nothing in this process could wake it — no ready I/O, no file descriptor of the
adapter's own, no thread doing work — it reports ``idle`` on its link (replay/link.py) and the host answers:
it acts (the next chunk, the abort plan), or, when nothing is in flight either way and it has nothing to send,
it offers a jump of the clock to the nearest timer. The host keeps the run's clock, so a jump is the same on
both sides and the trace's times are the host's. The adapter still sees every timer fire in order and
``loop.time()`` advance by what it waited (a retry comes after its ``retry-after`` in the loop's seconds, which
is what the trace records and CFG-05 judges), at no wall time. A loop without a link (the loop's own tests)
jumps on its own.

``time.sleep`` is skipped the same way: on the loop's own thread (a sync sleep that blocks the loop), and in
another thread (a sync client retrying inside ``asyncio.to_thread``) when every other thread only waits.
What cannot be skipped safely is waited for really, and counted (``VirtualTimeLoop.real_wait_s``): a thread
that computes or blocks on I/O, two threads sleeping at once, a socket of the adapter's own (a loopback
server), a loop of the adapter's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import CodeType
from typing import TYPE_CHECKING, Any, SupportsIndex, TypeVar

from .link import READ_FUNCTIONS, counted_fds

if TYPE_CHECKING:
    from .link import Answer, Link

T = TypeVar("T")

SETTLE_S = 0.001
"""The real wait before a jump of the clock (see ``_VirtualSelector.select``)."""
PAST_LIMIT_MARGIN_S = 1.0
"""A timer this far beyond the harness's limit is the adapter's, not the limit's own (``timer_past_the_limit``)."""
POLL_EVERY_BUSY_TURNS = 16
"""While callbacks are ready, the loop polls its sockets once in this many turns instead of every turn."""
BUSY_BACKOFF_MAX_S = 0.02
"""While bytes are in flight or a thread is at work, the idle loop looks again after 0.25 ms, doubling to this."""
BUSY_THREAD_PATIENCE_S = 0.05
"""A thread at work this long (a background thread of the adapter's, polling or computing) no longer holds
the run up: the loop reports idle all the same, without asking for a jump (replay/host.py acts on it)."""

_IDLE_FRAMES = {
    ("threading.py", None),  # Event.wait, Condition.wait, Thread.join, Lock.acquire through threading
    ("queue.py", None),  # Queue.get: an idle pool worker (anyio's worker threads among them)
    ("selectors.py", None),  # another event loop with nothing to do
    ("thread.py", "_worker"),  # concurrent.futures: a pool thread waiting for work (busy ones are in run)
}
"""Where a thread's innermost Python frame sits when it waits for someone else: such a thread cannot wake
the loop on its own, so skipping time cannot outrun it. Anything else (a sleep, a computation, a blocking
read) counts as work in progress, and the loop waits really."""


_IDLE_CODES: set[CodeType] = set()
"""Functions of the harness's own threads that wait for someone else (``waits_for_others``)."""


def waits_for_others(code: CodeType) -> None:
    """A harness thread blocked in this function (a pipe reader) never wakes the adapter's loop."""
    _IDLE_CODES.add(code)


_TEST_RUNNER_PACKAGES = ("/execnet/", "/xdist/")
"""Threads started by these run pytest itself (pytest-xdist's channel to its controller), never the adapter:
they wait on their pipe, whatever their innermost frame (``--helix-in-process`` under ``-n``)."""


def _woken(frame: Any) -> bool:
    """Whether ``frame`` is ``threading.Condition.wait`` (under Event.wait, Thread.start, Queue.get...) of a
    thread already notified: ``notify`` took its waiter lock out of ``_waiters``, so it runs as soon as it
    gets the GIL. Its frame still shows the wait until then; counting it idle let another thread's sleep be
    skipped before it ran (a thread started just before ``return`` called back before the step returned)."""
    if frame.f_code.co_name != "wait":
        return False
    local = frame.f_locals
    waiters = getattr(local.get("self"), "_waiters", None)
    waiter = local.get("waiter")
    if waiters is None:
        return False
    return waiter is None or waiter not in waiters  # not yet waiting, or notified (or timed out)


def thread_is_idle(frame: Any) -> bool:
    """Whether a thread whose innermost frame is ``frame`` waits for someone else (``_IDLE_FRAMES``,
    ``_IDLE_CODES``) and was not woken yet (``_woken``)."""
    if frame is None or frame.f_code in _IDLE_CODES:
        return True
    name = frame.f_code.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
    if name == "threading.py" and _woken(frame):
        return False
    if (name, None) in _IDLE_FRAMES or (name, frame.f_code.co_name) in _IDLE_FRAMES:
        return True
    while frame is not None:
        if any(package in frame.f_code.co_filename.replace("\\", "/") for package in _TEST_RUNNER_PACKAGES):
            return True
        frame = frame.f_back
    return False


class _VirtualSelector(selectors.BaseSelector):
    """The loop's selector: a real poll first; then, when only timers are left, a jump of the clock."""

    def __init__(self, real: selectors.BaseSelector) -> None:
        self.real = real
        self.loop: VirtualTimeLoop | None = None
        self._busy_turns = 0

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self.real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self.real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self.real.modify(fileobj, events, data)

    def get_key(self, fileobj: Any) -> selectors.SelectorKey:
        return self.real.get_key(fileobj)

    def get_map(self) -> Any:
        return self.real.get_map()

    def close(self) -> None:
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
        if loop is None or timeout is None or timeout <= 0:
            return self.real.select(timeout)
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
        consumed = loop.consumed()
        if not consumed:  # a thread at work: the host waits for it, and so does the loop, for a while
            now = time.monotonic()
            if loop.busy_since is None:
                loop.busy_since = now
            if now - loop.busy_since < BUSY_THREAD_PATIENCE_S:
                return self._backoff(loop, timeout, timer)
        else:
            loop.busy_since = None
        # A thread at work past the patience may still end a stall: the host then offers a stall's credit only.
        jump = loop.virtual and delay is not None and loop.may_skip(quick=True)
        answer = loop.obey(link.idle(delay, jump=jump, beyond=beyond, busy=not consumed))
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
                answer = loop.obey(link.idle(delay, jump=False, beyond=beyond))
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

    def _backoff(
        self, loop: VirtualTimeLoop, timeout: float | None, timer: bool
    ) -> list[tuple[selectors.SelectorKey, int]]:
        """Bytes in flight or a thread at work: look again soon (0.25 ms, doubling)."""
        loop.backoff = min(max(loop.backoff * 2, 0.00025), BUSY_BACKOFF_MAX_S)
        wait = loop.backoff if timeout is None else min(timeout, loop.backoff)
        return self._real_wait(loop, wait, timer)


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose clock is real time plus the waits it skipped (see the module's doc)."""

    def __init__(self) -> None:
        selector = _VirtualSelector(selectors.DefaultSelector())
        super().__init__(selector)
        selector.loop = self
        self.skipped_s = 0.0
        """Virtual seconds the loop jumped over (no wall time spent)."""
        self.real_wait_s = 0.0
        """Wall seconds the loop blocked on a timer of the adapter's (not the harness's limit) because something
        real might still wake it."""
        self._owner: int | None = None
        self._own_fds: set[int] = set()
        self._in_flight = 0
        self._unfinished: set[object] = set()
        """One token per executor job handed out and not finished in its thread (sets change atomically)."""
        self._job_threads: set[int] = set()
        """Threads running one of this loop's executor jobs now."""
        self.hard_deadline = float("inf")
        """The harness's limit: the clock never jumps to a timer at or after it (replay/runner.py)."""
        self.credited_s = 0.0
        """Of ``skipped_s``, what the host credited to a stall it held: a jump to the adapter's own read
        timeout however long it is (NT-04 asks that the adapter's timeout end a stall, not that it be
        short), not counted against the harness's limit."""
        self._harness: set[asyncio.TimerHandle] = set()
        """The harness's own limit timers: never a timer to report or to jump to."""
        self.link: Link | None = None
        """The run's link to the replay host: every jump is the host's to grant (None: the loop jumps alone)."""
        self.virtual = True
        """False under --helix-real-time: the link still keeps the lockstep, the clock never jumps."""
        self.on_instruction: Callable[[str], None] | None = None
        """What the host asks of the run (``abort``, ``cancel``): called on the loop, at its next turn."""
        self.backoff = 0.0
        self.recheck = 0.0
        """The last real wait after a ``wait`` answer while a thread or job was at work (doubling)."""
        self.busy_since: float | None = None

    def time(self) -> float:
        return time.monotonic() + self.skipped_s

    def advance(self, seconds: float) -> None:
        self.skipped_s += seconds

    def next_timer(self) -> tuple[float | None, bool]:
        """Seconds to the adapter's next timer (None: none), and whether it lies at or past the step's limit
        (only a stall's credit may jump there)."""
        live = [
            h.when() for h in getattr(self, "_scheduled", ()) if not h.cancelled() and h not in self._harness
        ]
        if not live:
            return None, False
        when = min(live)
        return max(0.0, when - self.time()), when - self.credited_s >= self.hard_deadline

    async def within(self, awaitable: Awaitable[T], limit: float) -> T:
        """``asyncio.wait_for(awaitable, limit)`` on this clock less the time credited to stalls meanwhile."""
        task = asyncio.ensure_future(awaitable)
        limit_at = self.time() - self.credited_s + limit
        timed_out = False
        handles: list[asyncio.TimerHandle] = []

        def arm() -> None:
            handles.append(self.call_at(limit_at + self.credited_s, check))
            self._harness.add(handles[-1])

        def check() -> None:
            nonlocal timed_out
            self._harness.discard(handles[-1])
            if self.time() - self.credited_s >= limit_at - 1e-9:
                timed_out = True
                task.cancel()
            else:  # a stall's credit moved the limit on
                arm()

        arm()
        try:
            return await task
        except asyncio.CancelledError:
            if timed_out:
                raise asyncio.TimeoutError from None
            raise
        finally:
            handles[-1].cancel()
            self._harness.discard(handles[-1])

    def wake(self) -> None:
        """From another thread: have the loop look again (it may be waiting in real time)."""
        if threading.get_ident() != self._owner and not self.is_closed():
            with contextlib.suppress(RuntimeError):
                self.call_soon_threadsafe(_nothing)

    def obey(self, answer: Answer) -> Answer:
        """Schedule what the host asked for with its answer; the answer, for chaining."""
        for what in answer.do:
            if self.on_instruction is not None:
                with contextlib.suppress(RuntimeError):  # closed meanwhile
                    self.call_soon_threadsafe(self.on_instruction, what)
        return answer

    def grant(self, seconds: float, *, sleeping: bool) -> float:
        """Skip up to ``seconds`` of a ``time.sleep``: the host's to grant when there is a link (it may grant
        less, up to its own next timer, or nothing); the seconds skipped."""
        link = self.link
        if link is None:
            self.advance(seconds)
            return seconds
        offer = self.obey(link.idle(seconds, jump=self.virtual, sleeping=sleeping))
        if offer.kind != "quiet":
            return 0.0
        answer = self.obey(link.jump(offer, min(offer.d, seconds), sleeping=sleeping))
        if answer.kind != "advanced":
            return 0.0
        self.skipped_s += answer.d
        return answer.d

    def consumed(self) -> bool:
        """The process has nothing to do but wait: every thread but the loop's waits for someone else, for the
        host's bytes (a blocking read on a counted connection) or in a sleep of its own."""
        for ident, frame in sys._current_frames().items():
            if ident == self._owner:
                continue
            if thread_is_idle(frame) or frame.f_code in READ_FUNCTIONS or frame.f_code is _SLEEP_CODE:
                continue
            return False
        return True

    def run_forever(self) -> None:
        self._owner = threading.get_ident()
        self._own_fds = set(self._selector.get_map().keys())  # type: ignore[attr-defined]
        super().run_forever()

    def run_in_executor(self, executor: Any, func: Any, *args: Any) -> asyncio.Future[Any]:  # type: ignore[override]
        """As asyncio's, counting the jobs: while one is unfinished, the clock does not jump (but for the thread
        running it, which may sleep: ``sleep_in_a_thread``). Counted before the job can start."""
        token = object()

        def job(*job_args: Any) -> Any:
            ident = threading.get_ident()
            self._job_threads.add(ident)
            try:
                return func(*job_args)
            finally:
                self._job_threads.discard(ident)
                self._unfinished.discard(token)

        self._in_flight += 1
        self._unfinished.add(token)
        try:
            future = super().run_in_executor(executor, job, *args)
        except BaseException:
            self._in_flight -= 1
            self._unfinished.discard(token)
            raise
        future.add_done_callback(lambda _: self._job_done(token))
        return future

    def _job_done(self, token: object) -> None:
        self._in_flight -= 1
        self._unfinished.discard(token)  # a job that never ran (its executor shut down) is done too

    @property
    def jobs_in_flight(self) -> int:
        """Executor jobs handed out through ``run_in_executor`` whose results the loop has not taken yet."""
        return self._in_flight

    def may_skip(
        self, besides: int | None = None, *, loop_blocked: bool = False, quick: bool = False
    ) -> bool:
        """True when nothing but a timer can wake the loop: no executor job in flight (but the one ``besides``,
        the thread asking, runs), no file descriptor beyond the loop's own and the host's connections, and no
        thread at work but the loop's (or ``besides``). ``loop_blocked``: the loop's own thread asks from
        inside ``time.sleep``, so a job that has finished cannot reach it before the sleep ends, posted or
        not. ``quick``: jobs and file descriptors only (the threads are looked at before a jump is taken)."""
        jobs = len(self._unfinished) if loop_blocked else self._in_flight
        if jobs > (1 if besides is not None and besides in self._job_threads else 0):
            return False
        mine = set(self._selector.get_map().keys()) - self._own_fds  # type: ignore[attr-defined]
        if mine and mine - counted_fds():
            return False
        if quick:
            return True
        frames = sys._current_frames()
        asking = self._owner if besides is None else besides
        return all(thread_is_idle(frame) for ident, frame in frames.items() if ident != asking)

    def sleep_on_loop_thread(self, seconds: float) -> bool:
        """``time.sleep`` on this loop's thread: done here (True), skipped from the moment the loop may skip;
        False when this is not the loop's thread."""
        if threading.get_ident() != self._owner:
            return False
        self.real_wait_s += _sleep_until_skippable(
            seconds,
            lambda _left: self.virtual and self.may_skip(loop_blocked=True),
            lambda left: self.grant(left, sleeping=True),
        )
        return True

    def sleep_in_a_thread(self, seconds: float) -> bool:
        """``time.sleep`` in another thread (a sync client's retry in ``asyncio.to_thread``): done here (True),
        skipped from the moment every other thread, the loop's included, only waits and no timer of the loop
        is due before the sleep would end (a background thread's long sleep must not move the loop past its
        own timers); the loop is then woken to see its timers anew. False when the loop is not running."""
        if self.is_closed() or not self.is_running():
            return False
        asking = threading.get_ident()

        def skippable(left: float) -> bool:
            return (
                not self.is_closed()
                and self.virtual
                and self.may_skip(besides=asking)
                and self.time() + left <= self._next_timer()
            )

        def skip(left: float) -> float:
            got = self.grant(left, sleeping=True)
            with contextlib.suppress(RuntimeError):  # closed meanwhile: nobody to wake
                self.call_soon_threadsafe(_nothing)
            return got

        _sleep_until_skippable(seconds, skippable, skip)
        return True

    def timer_past_the_limit(self) -> bool:
        """Whether a live timer lies beyond the harness's limit (an hour's ``retry-after``, a day's idle
        timer): the loop waits for it, so only the limit can end the wait, and jumping to the limit is as safe
        as jumping to any timer (``may_skip`` still decides). The limit's own timer, set a moment after
        ``hard_deadline``, is left out by the margin."""
        if self.hard_deadline == float("inf"):
            return False
        return self._next_timer(after=self.hard_deadline + PAST_LIMIT_MARGIN_S) < float("inf")

    def _next_timer(self, after: float = float("-inf")) -> float:
        """When the loop's next live timer is due (infinity with none); read while the loop waits in select."""
        scheduled = list(getattr(self, "_scheduled", ()))
        return min(
            (h.when() for h in scheduled if not h.cancelled() and h.when() > after), default=float("inf")
        )


_active: dict[int, VirtualTimeLoop] = {}
_real_sleep = time.sleep
_patch_lock = threading.Lock()
_patch_users = 0


def _nothing() -> None:
    """Scheduled from another thread only to wake the loop."""


SLEEP_RECHECK_MAX_S = 0.05
"""A sleep that cannot be skipped yet looks again after SETTLE_S, doubling up to this."""


def _sleep_until_skippable(
    seconds: float, skippable: Callable[[float], bool], skip: Callable[[float], float]
) -> float:
    """Sleep ``seconds``: really while ``skippable(left)`` says no, then skip what is left (``skip`` says how
    much it could; the host may grant part, up to its own next timer). A thread just woken (the loop that
    handed a job out, not yet back in its selector) is busy for a moment: looking again after a short real
    wait, as the selector does, keeps that moment from costing the whole sleep. Returns the seconds really
    slept."""
    seconds = max(0.0, seconds)
    started = time.monotonic()
    skipped = 0.0
    wait = SETTLE_S
    while (left := seconds - skipped - (time.monotonic() - started)) > 0:
        if skippable(left):
            got = skip(left)
            skipped += got
            if got >= left:
                break
            if got > 0:
                wait = SETTLE_S
                continue
        _real_sleep(min(wait, left))
        wait = min(wait * 2, SLEEP_RECHECK_MAX_S)
    return min(time.monotonic() - started, seconds)


_SLEEP_CODE = _sleep_until_skippable.__code__


def _virtual_sleep(seconds: float | SupportsIndex) -> None:
    try:
        length = float(seconds)
    except (TypeError, ValueError, OverflowError):
        length = -1.0
    if not length >= 0:  # negative, NaN, not a number: time.sleep's own error, as without us
        _real_sleep(seconds)
        return
    own = _active.get(threading.get_ident())
    if own is not None and not own.virtual:
        _real_sleep(seconds)
        return
    if own is not None:
        if own.sleep_on_loop_thread(length):
            return
    elif len(_active) == 1:  # another thread of the one running loop (several: whose clock? sleep really)
        for loop in list(_active.values()):
            if loop.sleep_in_a_thread(length):
                return
    _real_sleep(seconds)


@contextmanager
def _sleep_patched(loop: VirtualTimeLoop) -> Iterator[None]:
    """``time.sleep`` skips on the loop's thread while the loop runs; every other caller sleeps really."""
    global _patch_users
    with _patch_lock:
        _active[threading.get_ident()] = loop
        _patch_users += 1
        time.sleep = _virtual_sleep
    try:
        yield
    finally:
        with _patch_lock:
            _active.pop(threading.get_ident(), None)
            _patch_users -= 1
            if _patch_users == 0:
                time.sleep = _real_sleep


_idle_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _take_executor() -> ThreadPoolExecutor:
    """The executor a finished run left idle, or a new one (asyncio's default kind)."""
    global _idle_executor
    with _executor_lock:
        executor, _idle_executor = _idle_executor, None
    return executor or ThreadPoolExecutor(thread_name_prefix="asyncio")


def _give_back(loop: VirtualTimeLoop, executor: ThreadPoolExecutor) -> bool:
    """Keep the run's executor for the next run when none of its jobs is outstanding (so a job still at work
    can never hold up another run); True when kept."""
    global _idle_executor
    if loop.jobs_in_flight or getattr(loop, "_default_executor", None) is not executor:
        return False  # a job at work, or the adapter set an executor of its own
    with _executor_lock:
        if _idle_executor is not None:
            return False
        _idle_executor = executor
    loop._default_executor = None  # type: ignore[attr-defined]  # so loop.close() leaves it running
    return True


def run_virtual(
    main: Coroutine[Any, Any, T],
    on_loop: Callable[[VirtualTimeLoop], None] | None = None,
    *,
    link: Link | None = None,
    virtual: bool = True,
) -> T:
    """``asyncio.run(main)`` on a VirtualTimeLoop; ``on_loop`` sees the loop before ``main`` starts. The
    default executor is reused from run to run while it is idle: the official SDKs hand a job to a thread in
    every client's first request, and a new pool per run started (and joined) a thread each time. ``link``:
    the run's link to the replay host (``virtual=False``: lockstep only, the clock never jumps)."""
    loop = VirtualTimeLoop()
    loop.link, loop.virtual = link, virtual
    executor = _take_executor()
    loop.set_default_executor(executor)
    if on_loop is not None:
        on_loop(loop)
    asyncio.set_event_loop(loop)
    try:
        with _sleep_patched(loop):
            return loop.run_until_complete(main)
    finally:
        try:
            _cancel_all_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            if not _give_back(loop, executor):
                loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _cancel_all_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does on the way out: cancel what is left and let it unwind."""
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception during shutdown",
                    "exception": task.exception(),
                    "task": task,
                }
            )
