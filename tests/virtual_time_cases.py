"""The cases of tests/test_virtual_time.py, run in a process of their own (see there). Virtual time in replay (replay/clock.py): the adapter's timers are skipped, not waited out, yet observed in
order and measured in the loop's seconds; what a busy thread might still change is waited for really.

No case reads a stopwatch: the loop counts the seconds it skipped (``ScenarioRun.skipped_s``) and the
seconds it really waited (``real_wait_s``), and the scenario's limit (``timeout``) is itself measured on the
virtual clock, so a hung adapter meets it at once while a wait under it is skipped whole.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from typing import Any

import httpx
import pytest

from helix_conformance.checks.context import HarnessSettings, ScenarioSession
from helix_conformance.contract import (
    AdapterContext,
    AdapterSpec,
    LLMGenerateInput,
    StepResult,
    TextStepResult,
)
from helix_conformance.replay.clock import VirtualTimeLoop, run_virtual
from helix_conformance.replay.idle_threads import abandon, current_frames, thread_is_idle
from helix_conformance.replay.interactions import CassetteCache
from helix_conformance.replay.runner import ScenarioRun
from helix_conformance.scenarios import get_scenario
from helix_conformance.suite import bundled_cassettes, judged_form, profile_for
from reference_adapters.openai_chat import OpenAIChatAdapter
from reference_adapters.openai_chat import spec as reference

LIMIT = 5.0


class _Waiting:
    """Sends the request, then waits in the way it is told before returning the text."""

    def __init__(self, ctx: AdapterContext, wait: Any) -> None:
        self.ctx, self.wait = ctx, wait

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        async with httpx.AsyncClient(base_url=self.ctx.base_url) as client:
            await client.post("/chat/completions", json={"stream": True})
        await self.wait()
        return TextStepResult(content="done", should_stop=True, stop_reason="end_turn")


def _run(
    wait: Any, *, scenario: str = "text_basic", real_time: bool = False, limit: float = LIMIT
) -> ScenarioRun:
    spec = AdapterSpec(
        name="waiting",
        factory=lambda ctx: _Waiting(ctx, wait),
        wire_profile="openai-chat",
        model=reference.model,
    )
    return _session(spec, scenario, real_time, limit).run()


def _session(
    spec: AdapterSpec, scenario_id: str, real_time: bool = False, limit: float = LIMIT
) -> ScenarioSession:
    profile = profile_for(spec)
    cassettes = CassetteCache(bundled_cassettes())
    scenario, live = judged_form(get_scenario(scenario_id), profile, cassettes)
    settings = HarnessSettings(timeout=limit, real_time=real_time)
    return ScenarioSession(scenario, profile, spec, cassettes, settings, recorded_live=live)


def test_an_asyncio_sleep_is_skipped() -> None:
    run = _run(lambda: asyncio.sleep(1.5))
    assert not run.timed_out
    assert run.raised is None
    assert run.result.content == "done"
    assert run.skipped_s >= 1.0  # the rest of the 1.5 s passed for real, running the step
    assert run.real_wait_s < 0.5


def test_a_wait_for_timeout_fires_in_virtual_time_and_is_observed() -> None:
    async def times_out() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.Event().wait(), timeout=1.5)

    run = _run(times_out)
    assert not run.timed_out
    assert run.result.content == "done"


def test_the_harness_limit_is_never_skipped_to() -> None:
    """A hang looks like a wait on a thread about to answer; only real time tells them apart, so the clock
    never jumps to the harness's own limit (a wrong jump would be a false HARN-03)."""
    run = _run(lambda: asyncio.Event().wait(), limit=0.5)
    assert run.timed_out
    assert run.skipped_s < 0.1


def test_a_wait_past_the_limit_times_out() -> None:
    """The adapter's own 30 s sleep is longer than the limit: the limit comes first, as in real time."""
    run = _run(lambda: asyncio.sleep(30), limit=0.5)
    assert run.timed_out


def test_a_job_handed_to_a_thread_is_never_jumped_over() -> None:
    """The race a frame check alone loses: a pool thread just handed a job still shows the frame it waited
    in. Jobs in flight through run_in_executor stop the clock, whatever the frames say."""

    async def waits_on_a_quick_job() -> None:
        loop = asyncio.get_running_loop()
        for _ in range(50):
            await asyncio.wait_for(loop.run_in_executor(None, _work, 0.002), timeout=1.0)

    run = _run(waits_on_a_quick_job)
    assert run.raised is None, run.raised
    assert run.result.content == "done"


def test_time_sleep_on_the_loop_thread_is_skipped() -> None:
    async def blocks_the_loop() -> None:
        time.sleep(1.5)

    run = _run(blocks_the_loop)
    assert not run.timed_out
    assert run.result.content == "done"
    assert run.skipped_s >= 1.0  # the rest of the 1.5 s passed for real, running the step


def test_a_thread_at_work_is_waited_for_really() -> None:
    """The clock must not jump over a thread's work: the 0.3 s job finishes inside wait_for's 1.5 s, as it
    does in real time; a jump would end the wait_for first (TimeoutError, raised from the step)."""

    async def waits_on_a_thread() -> None:
        loop = asyncio.get_running_loop()
        await asyncio.wait_for(loop.run_in_executor(None, _work, 0.3), timeout=1.5)

    run = _run(waits_on_a_thread)
    assert not run.timed_out
    assert run.raised is None, run.raised
    assert run.result.content == "done"
    assert run.real_wait_s > 0  # counted as a real wait; how much of the 0.3 s depends on the machine's load


def _work(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # computing, not sleeping: the innermost frame is ours
        pass


def test_time_sleep_in_a_thread_the_loop_waits_for_is_skipped() -> None:
    """A sync client retrying with ``time.sleep`` inside ``asyncio.to_thread``: nothing else runs, so the
    sleep is skipped and the loop's clock moves with it."""

    async def sync_retry() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.to_thread(time.sleep, 1.5)
        assert loop.time() - started >= 1.5

    run = _run(sync_retry)
    assert run.raised is None, run.raised
    assert run.result.content == "done"
    assert run.skipped_s >= 1.0


def test_time_sleep_off_the_loop_thread_is_real_while_another_thread_works() -> None:
    slept: list[float] = []

    def sleeps() -> None:
        started = time.monotonic()
        time.sleep(0.05)
        slept.append(time.monotonic() - started)

    async def in_a_thread() -> None:
        thread = threading.Thread(target=sleeps)
        worker = threading.Thread(target=_work, args=(0.3,))  # busy all along: the sleep cannot be skipped
        worker.start()
        thread.start()
        await asyncio.to_thread(thread.join)
        await asyncio.to_thread(worker.join)

    run = _run(in_a_thread)
    assert run.result.content == "done"
    assert slept
    assert slept[0] >= 0.05


def test_real_time_mode_waits_really() -> None:
    run = _run(lambda: asyncio.sleep(0.05), real_time=True)
    assert run.result.content == "done"
    assert run.skipped_s == 0


def test_retry_after_is_measured_in_the_loops_seconds() -> None:
    """CFG-05 reads the gap between the 429 and the retry from the trace: on the virtual clock it is the
    delay the adapter waited (1 s asked), though no wall time was spent on it."""
    spec = AdapterSpec(
        name="reference-openai",
        factory=lambda ctx: OpenAIChatAdapter(api_key=ctx.api_key, base_url=ctx.base_url),
        wire_profile="openai-chat",
        model=reference.model,
        capabilities=reference.capabilities,
    )
    run = _session(spec, "retry_429_then_success").run()
    first, retry = run.trace.requests[:2]
    assert retry.at - first.at >= 1.0
    assert run.skipped_s > 0  # the wait was jumped over, not waited out


def test_run_virtual_finishes_like_asyncio_run() -> None:
    seen: list[VirtualTimeLoop] = []

    async def main() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.sleep(100)
        asyncio.get_running_loop().create_task(asyncio.sleep(1000))  # left behind: cancelled on the way out
        return loop.time() - started

    assert run_virtual(main(), seen.append) >= 100
    assert seen[0].is_closed()
    assert time.sleep.__name__ == "sleep"  # restored: no other loop is running in this process
    assert time.sleep.__module__ in ("time", None)


def test_the_default_executor_is_reused_from_run_to_run_while_idle() -> None:
    """The SDKs hand a job to a thread in each client's first request: the idle pool of the last run takes
    it, instead of a new pool starting and joining a thread per run."""
    executors: list[Any] = []

    async def job() -> int:
        return await asyncio.to_thread(threading.get_ident)

    run_virtual(job(), lambda loop: executors.append(loop._default_executor))
    run_virtual(job(), lambda loop: executors.append(loop._default_executor))
    assert executors[0] is executors[1]
    assert not executors[0]._shutdown


def test_a_run_that_leaves_nothing_behind_ends_without_the_late_work_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After the return, the harness waits for late work (a real millisecond at least) only when something
    could still fire: a finished executor job cannot (the executor itself outlives the run now)."""
    from helix_conformance.replay import runner

    waits: list[float] = []
    original = runner._let_late_work_run

    async def counted(tasks: Any, limit: float, *rest: Any) -> None:
        waits.append(limit)
        await original(tasks, limit, *rest)

    monkeypatch.setattr(runner, "_let_late_work_run", counted)

    async def uses_a_thread() -> None:
        await asyncio.to_thread(int)

    async def leaves_a_timer() -> None:
        asyncio.get_running_loop().call_later(0.05, int)

    for wait in (lambda: asyncio.sleep(0), uses_a_thread):
        assert _run(wait).result.content == "done"
    assert waits == []
    run = _run(leaves_a_timer)
    assert (run.result.content, run.raised) == ("done", None)  # a wrapper that no longer fits raised here
    assert len(waits) == 1


def test_an_executor_with_a_job_still_at_work_is_not_handed_to_the_next_run() -> None:
    executors: list[Any] = []
    release = threading.Event()

    async def leaves_a_job() -> None:
        asyncio.get_running_loop().run_in_executor(None, release.wait, 5)

    threading.Timer(0.2, release.set).start()
    run_virtual(leaves_a_job(), lambda loop: executors.append(loop._default_executor))
    run_virtual(asyncio.sleep(0), lambda loop: executors.append(loop._default_executor))
    assert executors[0] is not executors[1]
    assert executors[0]._shutdown


def test_a_job_sleeping_in_its_thread_is_skipped_however_fast_the_thread_starts() -> None:
    """The job's own thread may sleep through ``time.sleep``: its job being in flight must not stop the clock
    (it used to depend on whether the thread started before the job was counted)."""

    async def sleeps_in_jobs() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        for _ in range(3):  # the first on a new thread, the others on the same idle one
            await asyncio.to_thread(time.sleep, 1.5)
        return loop.time() - started

    took = time.monotonic()
    # The clock leaves the loop thread's waits for a CPU off, read every SAMPLE_EVERY_S and from both threads:
    # on a loaded machine the three sleeps came out 1.2 ms short once (4.4988 s). A sleep not taken at all would
    # be 1.5 s short; one taken in real time fails the second assert.
    assert run_virtual(sleeps_in_jobs()) >= 4.5 - 0.05
    assert time.monotonic() - took < 2.0


def _compute(seconds: float) -> None:
    """Work (not a wait): the thread's frame is busy here for ``seconds``."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_sleep_in_a_job_is_skipped_once_the_loop_that_handed_it_out_waits() -> None:
    """The job's thread may start its sleep while the loop's thread is still at work: the sleep waits really
    only until the loop waits too, then skips what is left (it used to sleep it all, at random)."""
    loops: list[VirtualTimeLoop] = []

    async def hands_out_then_computes() -> float:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(
            None, int
        )  # the pool's thread exists and waits: the next job starts at once
        started = loop.time()
        job = loop.run_in_executor(None, time.sleep, 1.5)
        _compute(0.1)  # the job's thread gets the GIL in here and starts sleeping
        await job
        return loop.time() - started

    assert run_virtual(hands_out_then_computes(), on_loop=loops.append) >= 1.5
    assert loops[0].skipped_s > 1.2


def test_a_sleep_on_the_loop_thread_is_skipped_once_the_job_it_handed_out_is_done() -> None:
    """``time.sleep`` on the loop's thread while a job computes: real while the job works, skipped from the
    moment it is done (its result cannot reach a loop that sleeps), and the real part is counted."""
    loops: list[VirtualTimeLoop] = []

    async def sleeps_beside_a_job() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        job = loop.run_in_executor(None, _compute, 0.1)
        time.sleep(1.5)
        await job
        return loop.time() - started

    assert run_virtual(sleeps_beside_a_job(), on_loop=loops.append) >= 1.5
    assert loops[0].skipped_s > 1.2
    assert 0.05 < loops[0].real_wait_s < 1.0


def test_waiting_on_the_limit_alone_is_not_counted_as_real_waiting() -> None:
    """A job at work while only the harness's limit is pending: the loop waits for the job, which virtual
    time never skips, so the summary's "real waiting" (timers left unskipped) does not count it."""
    loops: list[VirtualTimeLoop] = []

    def on_loop(loop: VirtualTimeLoop) -> None:
        loops.append(loop)
        loop.hard_deadline = loop.time() + LIMIT

    async def waits_for_a_job() -> None:
        loop = asyncio.get_running_loop()
        await asyncio.wait_for(loop.run_in_executor(None, _compute, 0.2), LIMIT)

    run_virtual(waits_for_a_job(), on_loop=on_loop)
    assert loops[0].real_wait_s == 0.0
    assert loops[0].skipped_s == 0.0


def test_a_socket_is_read_while_callbacks_keep_the_loop_busy() -> None:
    """The loop polls its sockets once in a few turns while callbacks are ready: a coroutine spinning on
    ``sleep(0)`` must still see data arrive, and a callback from another thread runs at once."""
    import socket

    async def main() -> tuple[int, bool]:
        loop = asyncio.get_running_loop()
        left, right = socket.socketpair()
        left.setblocking(False)
        got = loop.create_future()
        loop.add_reader(left, lambda: got.done() or got.set_result(left.recv(16)))
        from_thread = asyncio.Event()
        threading.Thread(target=loop.call_soon_threadsafe, args=(from_thread.set,)).start()
        right.send(b"ping")
        turns = 0
        while not got.done() and turns < 10_000:
            await asyncio.sleep(0)
            turns += 1
        loop.remove_reader(left)
        left.close()
        right.close()
        await asyncio.wait_for(from_thread.wait(), 1)
        return turns, got.result() == b"ping"

    turns, read = run_virtual(main())
    assert read
    assert turns <= 64


def test_a_thread_notified_but_not_yet_running_is_not_idle() -> None:
    """A thread in Condition.wait (Event.wait, Thread.start, Queue.get) waits for someone else until it is
    notified; from then on it runs as soon as it gets the GIL, and a sleep skipped in that moment outran it
    (a thread started just before the step's return called back before the return was marked: STR-10)."""
    condition = threading.Condition()
    waiting = threading.Event()

    def waits() -> None:
        with condition:
            waiting.set()
            condition.wait(30)

    thread = threading.Thread(target=waits, daemon=True)
    thread.start()
    assert waiting.wait(30)
    with condition:  # held: once notified, the thread cannot leave the wait, so its frame stays put
        assert thread_is_idle(sys._current_frames()[thread.ident or 0])
        condition.notify()
        assert not thread_is_idle(sys._current_frames()[thread.ident or 0])
    thread.join(30)


class _LockThatLooksBack:
    """A lock for a Condition that, on release, judges the frame releasing it (``Condition.__exit__``)."""

    def __init__(self) -> None:
        self.inner = threading.Lock()
        self.exit_frame_idle: bool | None = None
        self.acquire = self.inner.acquire
        self.release = self.inner.release

    def __enter__(self) -> bool:
        return self.inner.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.exit_frame_idle = thread_is_idle(sys._getframe(1))
        self.inner.__exit__(*exc)


def test_a_thread_running_threading_code_without_waiting_is_at_work() -> None:
    """Only a wait in threading.py is idle: a thread leaving ``with condition:``, returning through
    ``Event.wait`` or ``Thread.start``, runs. Counting any threading.py frame idle let a thread started just
    before the step's return skip its sleep and call back before the return was marked (STR-10, in CI)."""
    lock = _LockThatLooksBack()
    condition = threading.Condition(lock)  # type: ignore[arg-type]
    with condition:
        pass
    assert lock.exit_frame_idle is False


def test_a_thread_joining_is_idle_until_the_thread_it_joins_ends() -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait, args=(30,), daemon=True)
    worker.start()
    joining = threading.Thread(target=worker.join, args=(30,), daemon=True)
    joining.start()
    for _ in range(1000):
        frame = sys._current_frames().get(joining.ident or 0)
        if frame is not None and frame.f_code.co_name in ("_wait_for_tstate_lock", "join"):
            break
        time.sleep(0.001)
    assert thread_is_idle(sys._current_frames()[joining.ident or 0])
    release.set()
    joining.join(30)


def test_a_closed_loop_never_lets_a_thread_skip() -> None:
    """A thread whose sleep outlives the run asks a closed loop: it sleeps really (an AttributeError from
    the closed selector's map reached the adapter's thread through ``time.sleep`` before)."""
    loop = VirtualTimeLoop()
    loop.close()
    assert not loop.may_skip(besides=threading.get_ident())


def test_frames_are_read_with_the_collector_off_and_its_state_kept() -> None:
    """``current_frames`` turns the collector off while it reads (CPython gh-106883 deadlocked two threads
    asking at once in Python 3.11) and leaves it as it found it, off for an adapter that turned it off."""
    assert gc.isenabled()
    frames = current_frames()
    assert threading.get_ident() in frames
    assert gc.isenabled()
    gc.disable()
    try:
        current_frames()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_thread_given_up_on_does_not_hold_later_runs() -> None:
    """A run's thread the harness gave up on (an adapter's blocking sleep of an hour) belongs to a run that is
    over: it holds no later run of the process to real time. Counted at work, it made every later in-process
    run's host barriers wait out their patience past the adapter's idle timer (false "no data received")."""
    release = threading.Event()

    def computes() -> None:  # at work, as far as its frame tells
        while not release.is_set():
            sum(range(1000))

    async def may_skip() -> bool:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualTimeLoop)
        return loop.may_skip() and loop.consumed()

    thread = threading.Thread(target=computes, daemon=True)
    thread.start()
    try:
        assert not run_virtual(may_skip())
        abandon(thread)
        assert run_virtual(may_skip())
    finally:
        release.set()
        thread.join(30)


def test_a_thread_started_before_return_never_calls_back_before_it() -> None:
    """The race behind a CI failure, made likely: with a tiny switch interval, the started thread's sleep
    was skipped in about 2 % of runs while the loop's thread returned through ``Thread.start``. The sleep is
    long enough that no descheduling of the loop's thread explains a callback before the return. Two threads
    asking whether time may jump, as here, also deadlocked Python 3.11 in ``sys._current_frames``."""
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        early = 0
        for _ in range(300):
            marks: list[str] = []

            async def main(marks: list[str] = marks) -> None:
                def later() -> None:
                    time.sleep(0.2)
                    marks.append("late")

                threading.Thread(target=later, daemon=True).start()
                marks.append("returned")
                await asyncio.sleep(0.3)

            run_virtual(main())
            early += marks[0] != "returned"
    finally:
        sys.setswitchinterval(switch)
    assert early == 0


def test_a_background_threads_long_sleep_does_not_move_the_loop_past_its_timers() -> None:
    """A thread the adapter leaves sleeping past the scenario limit must not push the loop's clock past it:
    the step returns normally, the thread sleeps in real time, in the background. (Last in this module: while
    that thread sleeps, this process's later runs wait really, as they must.)"""

    async def leaves_a_sleeper() -> None:
        threading.Thread(target=time.sleep, args=(LIMIT + 1,), daemon=True).start()
        await asyncio.sleep(0.1)

    run = _run(leaves_a_sleeper)
    assert not run.timed_out
    assert run.result.content == "done"
    assert run.skipped_s < LIMIT
