"""Virtual time for replay: the adapter's event loop skips the waits nothing real can end early.

While an adapter runs against a cassette, the only things it can wait for are the replay (in this process)
and timers: retry backoff, ``retry-after``, read timeouts on a stalled stream, ``wait_for`` limits. When the
loop would block on a timer and nothing else could wake it — no ready I/O, no file descriptor of the
adapter's own, no thread doing work — the loop's clock jumps to the timer instead of sleeping. The adapter
still sees every timer fire in order and ``loop.time()`` advance by what it waited (a retry comes after its
``retry-after`` in the loop's seconds, which is what the trace records and CFG-05 judges), at no wall time.

``time.sleep`` is skipped the same way: on the loop's own thread (a sync sleep that blocks the loop), and in
another thread (a sync client retrying inside ``asyncio.to_thread``) when every other thread only waits.
What cannot be skipped safely is waited for really, and counted (``VirtualTimeLoop.real_wait_s``): a thread
that computes or blocks on I/O, two threads sleeping at once, a socket of the adapter's own (a loopback
server), a loop of the adapter's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import selectors
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any, SupportsIndex, TypeVar

from .starvation import SAMPLE_EVERY_S, StarvationMeter

T = TypeVar("T")

SETTLE_S = 0.001
"""The real wait before a jump of the clock (see ``_VirtualSelector.select``)."""
PAST_LIMIT_MARGIN_S = 1.0
"""A timer this far beyond the harness's limit is the adapter's, not the limit's own (``timer_past_the_limit``)."""
POLL_EVERY_BUSY_TURNS = 16
"""While callbacks are ready, the loop polls its sockets once in this many turns instead of every turn."""

_IDLE_FRAMES = {
    ("queue.py", None),  # Queue.get: an idle pool worker (anyio's worker threads among them)
    ("selectors.py", None),  # another event loop with nothing to do
    ("thread.py", "_worker"),  # concurrent.futures: a pool thread waiting for work (busy ones are in run)
}
"""Where a thread's innermost Python frame sits when it waits for someone else (threading.py's waits are
told apart from its running code by ``_blocked_in_threading``): such a thread cannot wake the loop on its
own, so skipping time cannot outrun it. Anything else (a sleep, a computation, a blocking
read) counts as work in progress, and the loop waits really."""


_IDLE_CODES: set[CodeType] = set()
"""Functions of the harness's own threads that wait for someone else (``waits_for_others``)."""


def waits_for_others(code: CodeType) -> None:
    """A harness thread blocked in this function (a pipe reader) never wakes the adapter's loop."""
    _IDLE_CODES.add(code)


_TEST_RUNNER_PACKAGES = ("/execnet/", "/xdist/")
"""Threads started by these run pytest itself (pytest-xdist's channel to its controller), never the adapter:
they wait on their pipe, whatever their innermost frame (``--helix-in-process`` under ``-n``)."""


_collector_lock = threading.Lock()


@contextmanager
def _collector_off() -> Iterator[None]:
    """No garbage collection meanwhile, one thread at a time. A collection inside ``sys._current_frames``
    runs finalizers while it holds the interpreter's thread-list lock: a thread then asking for frames, or
    starting or ending, deadlocked Python 3.11 (CPython gh-106883, fixed in 3.12 only), and reading another
    thread's ``f_locals`` segfaulted it in the same stress run."""
    with _collector_lock:
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if enabled:
                gc.enable()


def current_frames() -> dict[int, FrameType]:
    """``sys._current_frames()``, safe to call from any thread (``_collector_off``)."""
    with _collector_off():
        return sys._current_frames()


def _locals(frame: Any, *names: str) -> tuple[Any, ...]:
    """Local variables of another thread's frame, read at once (``_collector_off``)."""
    with _collector_off():
        local = frame.f_locals
        return tuple(local.get(name) for name in names)


_CONDITION_WAIT = threading.Condition.wait.__code__
_JOINS = {
    method.__code__
    for method in (threading.Thread.join, getattr(threading.Thread, "_wait_for_tstate_lock", None))
    if method is not None
}


def _blocked_in_threading(frame: Any) -> bool:
    """Whether a thread whose innermost frame ``frame`` is in threading.py is blocked there: in
    ``Condition.wait`` (under Event.wait, Thread.start, Queue.get, Semaphore, Barrier) and not yet notified,
    or joining a thread that still runs. Any other frame of that module runs: a thread just woken returns
    through ``Event.wait`` and ``Thread.start``, one just started sets its ``_started`` event. Counting those
    idle let another thread's sleep be skipped before they went on (a thread started just before ``return``
    called back before the step returned: STR-10; or was not seen at work after it: STR-07)."""
    code = frame.f_code
    if code is _CONDITION_WAIT:  # f_locals only here: read on another thread's running frame, it can crash
        condition, waiter = _locals(frame, "self", "waiter")
        waiters = getattr(condition, "_waiters", None)
        # notify took the waiter lock out of _waiters: the thread runs as soon as it gets the GIL
        return waiters is not None and waiter is not None and waiter in waiters
    if code in _JOINS:
        (joined,) = _locals(frame, "self")
        handle = getattr(joined, "_handle", None)  # Python 3.13
        if handle is not None and hasattr(handle, "is_done"):
            return not handle.is_done()
        lock = getattr(joined, "_tstate_lock", None)
        return lock is not None and lock.locked()
    return False


_abandoned: list[threading.Thread] = []


def abandon(thread: threading.Thread) -> None:
    """A run's thread the harness gave up on, still alive past the run's limit (an adapter's blocking sleep
    of an hour): its run is over, so it can wake no later run's loop nor answer it. Counted at work,
    it held every later run in the process to real time."""
    _abandoned[:] = [t for t in _abandoned if t.is_alive()] + [thread]


def abandoned_threads() -> frozenset[int]:
    """The idents of the abandoned threads still alive (``abandon``)."""
    return frozenset(t.ident for t in list(_abandoned) if t.ident is not None and t.is_alive())


def thread_is_idle(frame: Any) -> bool:
    """Whether a thread whose innermost frame is ``frame`` waits for someone else (``_IDLE_FRAMES``,
    ``_IDLE_CODES``, ``_blocked_in_threading``)."""
    if frame is None or frame.f_code in _IDLE_CODES:
        return True
    name = frame.f_code.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
    if name == "threading.py":
        return _blocked_in_threading(frame) or _runs_the_test_runner(frame)
    if (name, None) in _IDLE_FRAMES or (name, frame.f_code.co_name) in _IDLE_FRAMES:
        return True
    return _runs_the_test_runner(frame)


def _runs_the_test_runner(frame: Any) -> bool:
    """Whether the thread was started by pytest's runner (``_TEST_RUNNER_PACKAGES``), never the adapter."""
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
            else:  # at work now, idle soon (a thread starting the loop's): look again, not after the whole wait
                ready = self.real.select(min(left, wait))
                wait = min(wait * 2, SLEEP_RECHECK_MAX_S)
                if ready:
                    break
        else:
            ready = []
        loop.real_wait_s += time.monotonic() - started
        return ready


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose clock is real time plus the waits it skipped (see the module's doc)."""

    def __init__(self) -> None:
        selector = _VirtualSelector(selectors.DefaultSelector())
        super().__init__(selector)
        selector.loop = self
        self._virtual_selector = selector
        self.skipped_s = 0.0
        """Virtual seconds the loop jumped over (no wall time spent)."""
        self.real_wait_s = 0.0
        """Wall seconds the loop blocked on a timer of the adapter's (not the harness's limit) because something
        real might still wake it."""
        self.polling = False
        """The loop's thread is in a poll between ready callbacks (``_VirtualSelector.select`` with timeout 0):
        at work, though its innermost frame is the selector's, so a thread's sleep is not skipped meanwhile."""
        self._owner: int | None = None
        self._own_fds: frozenset[int] = frozenset()
        self._in_flight = 0
        self._unfinished: set[object] = set()
        """One token per executor job handed out and not finished in its thread (sets change atomically)."""
        self._job_threads: set[int] = set()
        """Threads running one of this loop's executor jobs now."""
        self.hard_deadline = float("inf")
        """The harness's limit: the clock never jumps to a timer at or after it (replay/runner.py)."""
        self.starved_s = 0.0
        """Real seconds the loop's thread waited for a CPU (replay/starvation.py), left off the clock."""
        self._meter: StarvationMeter | None = None
        self._sampled_at = float("-inf")
        self._last_time = float("-inf")

    def time(self) -> float:
        """Real time, plus the seconds jumped, less the seconds the machine's load kept the thread from running;
        never less than it said before (the load is read every few milliseconds, after the fact)."""
        now = time.monotonic()
        meter = self._meter
        if meter is not None and now - self._sampled_at >= SAMPLE_EVERY_S:
            self._sampled_at = now
            self.starved_s = meter.waited_s()
        t = now + self.skipped_s - self.starved_s
        if t < self._last_time:
            return self._last_time
        self._last_time = t
        return t

    def unskipped(self) -> float:
        """The clock without its jumps: real time less the load, what a sleep that is not skipped takes."""
        return self.time() - self.skipped_s

    def advance(self, seconds: float) -> None:
        self.skipped_s += seconds

    def run_forever(self) -> None:
        self._owner = threading.get_ident()
        self._own_fds = self._virtual_selector.fds
        if self._meter is None:
            self._meter = StarvationMeter()
        super().run_forever()

    def close(self) -> None:
        super().close()
        if self._meter is not None:
            self._meter.close()

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

    def may_skip(self, besides: int | None = None, *, loop_blocked: bool = False) -> bool:
        """True when nothing but a timer can wake the loop: no executor job in flight (but the one ``besides``,
        the thread asking, runs), no file descriptor beyond the loop's own and no thread at work but the loop's
        (or ``besides``). ``loop_blocked``: the loop's own thread asks from inside ``time.sleep``, so a job
        that has finished cannot reach it before the sleep ends, posted or not."""
        jobs = len(self._unfinished) if loop_blocked else self._in_flight
        if jobs > (1 if besides is not None and besides in self._job_threads else 0):
            return False
        selector = self._virtual_selector
        if selector.closed:  # a thread's sleep outlived the run: nothing left to skip for
            return False
        if selector.fds - self._own_fds:
            return False
        if besides is not None and self.polling:
            return False  # the loop's thread polls between ready callbacks (its frame says selectors.py)
        frames = current_frames()
        asking = self._owner if besides is None else besides
        abandoned = abandoned_threads()
        return all(
            thread_is_idle(frame)
            for ident, frame in frames.items()
            if ident != asking and ident not in abandoned
        )

    def sleep_on_loop_thread(self, seconds: float) -> bool:
        """``time.sleep`` on this loop's thread: done here (True), skipped from the moment the loop may skip;
        False when this is not the loop's thread."""
        if threading.get_ident() != self._owner:
            return False
        self.real_wait_s += _sleep_until_skippable(
            seconds, lambda _left: self.may_skip(loop_blocked=True), self.advance, self.unskipped
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
                and self.may_skip(besides=asking)
                and self.time() + left <= self._next_timer()
            )

        def skip(left: float) -> None:
            self.advance(left)
            with contextlib.suppress(RuntimeError):  # closed meanwhile: nobody to wake
                self.call_soon_threadsafe(_nothing)

        _sleep_until_skippable(seconds, skippable, skip, self.unskipped)
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
    seconds: float,
    skippable: Callable[[float], bool],
    skip: Callable[[float], None],
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Sleep ``seconds``: really while ``skippable(left)`` says no, then skip what is left. A thread just
    woken (the loop that handed a job out, not yet back in its selector) is busy for a moment: looking again
    after a short real wait, as the selector does, keeps that moment from costing the whole sleep.
    ``clock``: real time as the run's clock counts it (less the machine's load, replay/starvation.py), so that
    the sleep lasts ``seconds`` there. Returns the seconds really slept, on ``clock``."""
    seconds = max(0.0, seconds)
    started = clock()
    deadline = started + seconds
    wait = SETTLE_S
    while (left := deadline - clock()) > 0:
        if skippable(left):
            skip(left)
            break
        _real_sleep(min(wait, left))
        wait = min(wait * 2, SLEEP_RECHECK_MAX_S)
    return min(clock() - started, seconds)


def _virtual_sleep(seconds: float | SupportsIndex) -> None:
    try:
        length = float(seconds)
    except (TypeError, ValueError, OverflowError):
        length = -1.0
    if not length >= 0:  # negative, NaN, not a number: time.sleep's own error, as without us
        _real_sleep(seconds)
        return
    own = _active.get(threading.get_ident())
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


def run_virtual(main: Coroutine[Any, Any, T], on_loop: Callable[[VirtualTimeLoop], None] | None = None) -> T:
    """``asyncio.run(main)`` on a VirtualTimeLoop; ``on_loop`` sees the loop before ``main`` starts. The
    default executor is reused from run to run while it is idle: the official SDKs hand a job to a thread in
    every client's first request, and a new pool per run started (and joined) a thread each time."""
    loop = VirtualTimeLoop()
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
