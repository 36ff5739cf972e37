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
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from .idle_threads import abandoned_threads, current_frames, thread_is_idle, waits_for_the_host
from .link import counted_fds
from .starvation import SAMPLE_EVERY_S, StarvationMeter
from .virtual_selector import VirtualSelector
from .virtual_sleep import SLEEP_CODE, sleep_patched, sleep_until_skippable

if TYPE_CHECKING:
    from .link import Answer, Link

T = TypeVar("T")

PAST_LIMIT_MARGIN_S = 1.0
"""A timer this far beyond the harness's limit is the adapter's, not the limit's own (``timer_past_the_limit``)."""


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose clock is real time plus the waits it skipped (see the module's doc)."""

    def __init__(self) -> None:
        selector = VirtualSelector(selectors.DefaultSelector())
        super().__init__(selector)
        selector.loop = self
        self._virtual_selector = selector
        self.skipped_s = 0.0
        """Virtual seconds the loop jumped over (no wall time spent)."""
        self.real_wait_s = 0.0
        """Wall seconds the loop blocked on a timer of the adapter's (not the harness's limit) because something
        real might still wake it."""
        self.polling = False
        """The loop's thread is in a poll between ready callbacks (``VirtualSelector.select`` with timeout 0):
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
        abandoned = abandoned_threads()
        for ident, frame in current_frames().items():
            if ident == self._owner or ident in abandoned:
                continue
            if thread_is_idle(frame) or waits_for_the_host(frame) or frame.f_code is SLEEP_CODE:
                continue
            return False
        return True

    def run_forever(self) -> None:
        self._owner = threading.get_ident()
        self._own_fds = self._virtual_selector.fds
        if self._meter is None and self.virtual:  # --helix-real-time: the wall clock, load and all
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

    def _jobs_reading_from_the_host(self) -> int:
        """Running jobs blocked in a read of a host connection (a sync client's stream in ``to_thread``, boto3's):
        they wait for the host's bytes, and the host knows whether any are in flight, so they do not hold the
        clock (a stall then ends at the adapter's own idle timer on the loop, as for an async client)."""
        frames = current_frames()
        return sum(
            1
            for ident in tuple(self._job_threads)
            if (frame := frames.get(ident)) is not None and waits_for_the_host(frame)
        )

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
        jobs = (
            len(self._unfinished) if loop_blocked else self._in_flight
        ) - self._jobs_reading_from_the_host()
        if jobs > (1 if besides is not None and besides in self._job_threads else 0):
            return False
        selector = self._virtual_selector
        if selector.closed:  # a thread's sleep outlived the run: nothing left to skip for
            return False
        mine = selector.fds - self._own_fds
        if mine and mine - counted_fds():
            return False
        if quick:
            return True
        if besides is not None and self.polling:
            return False  # the loop's thread polls between ready callbacks (its frame says selectors.py)
        frames = current_frames()
        asking = self._owner if besides is None else besides
        abandoned = abandoned_threads()
        return all(
            thread_is_idle(frame) or waits_for_the_host(frame)
            for ident, frame in frames.items()
            if ident != asking and ident not in abandoned
        )

    def sleep_on_loop_thread(self, seconds: float) -> bool:
        """``time.sleep`` on this loop's thread: done here (True), skipped from the moment the loop may skip;
        False when this is not the loop's thread."""
        if threading.get_ident() != self._owner:
            return False
        self.real_wait_s += sleep_until_skippable(
            seconds,
            lambda _left: self.virtual and self.may_skip(loop_blocked=True),
            lambda left: self.grant(left, sleeping=True),
            self.unskipped,
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

        sleep_until_skippable(seconds, skippable, skip, self.unskipped)
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


def _nothing() -> None:
    """Scheduled from another thread only to wake the loop."""


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
    if link is not None:
        link.load = lambda: loop.starved_s
    executor = _take_executor()
    loop.set_default_executor(executor)
    if on_loop is not None:
        on_loop(loop)
    asyncio.set_event_loop(loop)
    try:
        with sleep_patched(loop):
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
