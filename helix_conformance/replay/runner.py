"""The adapter's side of a run: build the adapter, call ``generate_step`` on a loop linked to the replay host, and
keep the adapter's account of it (results, what it raised, its callbacks and returns as trace events).

It runs wherever the adapter runs: in the adapter's worker process (worker/child.py), or in pytest's own
process under ``--helix-in-process``. The judging side (replay/judging.py) stages the run on the host, hands
this side an ``AdapterJob`` without the plan, and merges the two accounts.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..contract import (
    AbortController,
    AdapterContext,
    AdapterSpec,
    LLMConfig,
    LLMGenerateInput,
    Message,
    Tool,
)
from ..scenarios.model import Scenario
from . import imports
from . import link as link_module
from .callbacks import CallbackMode, recording_callbacks
from .clock import VirtualTimeLoop, run_virtual
from .delivery import DeliveryPlan, EventPlan
from .hidden_keys import provider_keys_hidden
from .idle_threads import abandon, current_frames, thread_is_idle
from .interactions import ReplayInteraction
from .link import Link, LinkAddress, counting, link_to
from .pending import adapter_work, track_task_origins
from .seeds import seeded_random
from .trace import Trace
from .transport import Redirect, Server, intercept

REPLAY_API_KEY = "sk-helix-replay-0000000000000000000000000000"
"""The dummy key adapters get in replay; ERR-07 checks it never shows up in an error."""
AGENT_ID = "helix-conformance-agent"
POST_RETURN_LOOP_TURNS = 8
"""Loop turns watched after return: callbacks fired by leftover tasks land in the trace (STR-07)."""
POST_RETURN_WAIT_S = 0.001
"""Then a short wait, so timers of leftover work fire too; skipped when nothing is left that could fire."""
LATE_WORK_WAIT_S = 0.1
"""In the main run, leftover tasks and timers due this soon are let run before they are cancelled, so a
callback fired a little after the return is seen (STR-07); conforming adapters leave nothing: no cost."""
LATE_THREAD_POLL_S = 0.005
"""How often the loop looks whether the threads left at work after the return have ended."""
THREAD_GRACE_S = 2.0
HARNESS_FAILED = "helix-conformance's replay failed (a harness bug)"
"""How a run the harness could not replay starts its ``setup_error``: never the adapter's failure."""
ADAPTER_TIMEOUT_SHARE = 0.2
"""``AdapterContext.timeout`` in replay: this share of the scenario's limit (--helix-timeout), so a stall the
adapter's own read timeout ends is over well before the harness gives up on the step (NT-04, HARN-03)."""


def adapter_timeout(limit: float) -> float:
    """The read timeout handed to the adapter for a scenario limited to ``limit`` seconds."""
    return round(limit * ADAPTER_TIMEOUT_SHARE, 3)


@dataclass(frozen=True)
class RunOptions:
    callbacks: CallbackMode = "async"
    plan: DeliveryPlan = field(default_factory=EventPlan)
    cancel_after_chunks: int | None = None
    """NT-03: cancel the task running generate_step once this many chunks were delivered."""
    with_signal: bool = True
    timeout: float = 10.0
    allowed_wait_s: float = 0.0
    """Seconds the scenario lets the step wait on top of ``timeout`` (CFG-05's bound on a retry hint): on the
    loop's clock, so with virtual time they cost no wall time and the real backstops stay at ``timeout``."""
    steps: int = 1
    """How many times generate_step is called on the same adapter (CACHE-03 stability)."""
    agent_id: str = AGENT_ID
    """The session the step belongs to; CACHE-03 runs a second session to see the cache key change."""
    late_wait_s: float = POST_RETURN_WAIT_S
    """How long leftover work may run after the return before it is cancelled (LATE_WORK_WAIT_S in the
    main run; variant runs, thousands under Hypothesis, keep the short wait)."""
    virtual_time: bool = True
    """Skip the adapter's timers instead of waiting them out (replay/clock.py); off with --helix-real-time."""
    abort_on_text_delta: int | None = None
    """AB-02: the harness aborts from inside its own ``on_text_delta`` the Nth time it is called, as a caller
    reacting to the text does; with the body in one chunk, the events read with it are still unhandled."""

    @property
    def limit_s(self) -> float:
        """The step's limit on the loop's clock (virtual seconds in replay)."""
        return self.timeout + self.allowed_wait_s

    @property
    def real_limit_s(self) -> float:
        """The step's limit in wall time: the waits the scenario allows are skipped under virtual time."""
        return self.timeout if self.virtual_time else self.limit_s

    chunk_bytes: bool = False
    """Ship each delivered chunk's bytes back from the adapter's worker with the trace (``helix-conformance
    replay`` prints them). The checks read only the chunks' order and positions, and the bytes were most of
    what a run sent over the worker's channel."""


@dataclass
class ScenarioRun:
    options: RunOptions
    trace: Trace
    results: list[Any] = field(default_factory=list)
    raised: BaseException | None = None
    timed_out: bool = False
    setup_error: str | None = None
    cancelled: bool | None = None
    """For cancel runs: True when CancelledError propagated out of the task."""
    cancel_latency_s: float | None = None
    unused_interactions: list[int] = field(default_factory=list)
    unintercepted: list[str] = field(default_factory=list)
    pending_tasks: list[str] = field(default_factory=list)
    input_before: Any = None
    input_after: Any = None
    duration_s: float = 0.0
    step_s: float = 0.0
    """Wall time spent awaiting generate_step (all steps): the adapter's share of the run, including the
    replay transport it reads from; the rest of ``duration_s`` is the harness's (benchmarks/)."""
    skipped_s: float = 0.0
    """Seconds of the adapter's timers (backoff, retry-after, timeouts) the virtual clock skipped."""
    real_wait_s: float = 0.0
    """Wall seconds the loop really waited on a timer because a thread or socket of the adapter's was busy
    (a ``time.sleep`` in a worker thread): what virtual time could not skip (replay/clock.py)."""
    interactions: list[ReplayInteraction] = field(default_factory=list)
    hang_note: str = ""
    host_seen: list[str] = field(default_factory=list)
    """What the replay host saw of a run that recorded no request (``StageTrace.seen``): HARN-02's evidence."""
    """For a run that timed out in a worker: what the adapter's processes looked like when the harness gave
    up on them (memory held, a stopped process), said with HARN-03 (worker/keeper.py)."""
    escaped: list[str] = field(default_factory=list)
    """Errors of the adapter's that reached no one during the run: unhandled rejections and exceptions thrown
    from its timers, which end a Node process by default (drivers report them; NT-01)."""
    output: str = ""
    """What the adapter wrote to stdout and stderr during the run, where its driver keeps it (Node): shown with
    the run's failures only (``replay/output.py``), never on the terminal."""
    import_s: float = 0.0
    """Wall seconds the run spent importing modules not loaded before it (``replay/imports.py``): an SDK
    imported inside the factory or ``generate_step`` on first use."""
    imported: int = 0
    """Modules looked up for import during the run (those not yet loaded)."""

    @property
    def result(self) -> Any:
        return self.results[0] if self.results else None


def snapshot_input(step_input: LLMGenerateInput) -> Any:
    """A deep, comparable picture of the input, to detect mutation (MSG-07). A dict schema is the tool's own
    object (``Tool.json_schema`` hands it out as is): it is copied, so an edit in place shows; a model's
    schema is a fresh dict already."""
    return {
        "messages": [m.model_dump(mode="json") for m in step_input.messages],
        "tools": [
            {
                "name": t.name,
                "description": t.description,
                "schema": copy.deepcopy(t.json_schema())
                if isinstance(t.input_schema, dict)
                else t.json_schema(),
                "strict": t.strict,
            }
            for t in step_input.tools
        ],
        "config": step_input.config.model_dump(mode="json"),
    }


def build_input(
    job: AdapterJob, trace: Trace, options: RunOptions, controller: AbortController | None
) -> LLMGenerateInput:
    return LLMGenerateInput(
        # Fresh copies every run: an adapter that edits its input in place must not rewrite the catalogue
        # for later runs (MSG-07 compares the input before and after).
        messages=[m.model_copy(deep=True) for m in job.messages],
        tools=[t.model_copy(deep=True) for t in job.tools],
        config=job.config.model_copy(deep=True),
        abort_signal=controller.signal if controller else None,
        callbacks=recording_callbacks(trace, options.callbacks, _abort_hook(options, controller, trace)),
        agent_id=options.agent_id,
        agent_type="conformance",
    )


def _abort_hook(
    options: RunOptions, controller: AbortController | None, trace: Trace
) -> Callable[[str], None] | None:
    """What the recording callbacks run after each call: the abort of ``abort_on_text_delta``, if planned."""
    count = options.abort_on_text_delta
    if count is None or controller is None:
        return None
    seen = [0]

    def after(name: str) -> None:
        if name != "on_text_delta":
            return
        seen[0] += 1
        if seen[0] == count:
            trace.add("abort", name="from on_text_delta")
            controller.abort("aborted by the caller from on_text_delta")

    return after


@dataclass(frozen=True)
class AdapterJob:
    """One run as the adapter's side gets it: the step's input and how to call it, the run's base URL and
    link. Never the delivery plan, the faults or the expected outcome: those stay with the host."""

    scenario_id: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...]
    config: LLMConfig
    options: RunOptions
    """The run's options without what is the host's (``adapter_options``)."""
    abort_before: bool = False
    cancel_planned: bool = False
    """The host will ask for the task to be cancelled mid-stream (NT-03)."""
    base_url: str = ""
    scripted: tuple[Any, ...] = ()
    link: LinkAddress | None = None
    """None: no replay host (recording live)."""


def adapter_options(options: RunOptions) -> RunOptions:
    """``options`` as the adapter's side may know them: no delivery plan, no cancel position."""
    return replace(options, plan=EventPlan(), cancel_after_chunks=None, chunk_bytes=False)


def run_adapter(job: AdapterJob, spec: AdapterSpec) -> ScenarioRun:
    """Run ``generate_step`` against the replay host named by ``job.link``, in a thread of its own (a hanging
    adapter cannot hang the harness): the adapter's account of the run (results, what it raised, its
    callbacks and return as trace events). The judging side merges it with the host's record."""
    assert job.link is not None
    options = job.options
    trace = Trace()
    run = ScenarioRun(options=options, trace=trace)
    controller = AbortController() if options.with_signal else None
    if job.abort_before and controller is not None:
        controller.abort("aborted before the step started")
    context = AdapterContext(
        api_key=REPLAY_API_KEY,
        base_url=job.base_url,
        scripted_responses=job.scripted,
        timeout=adapter_timeout(options.timeout),
    )
    try:
        link = link_to(job.link)
        begun = link.begin(job.link.token, trace)
        if begun.kind == "lost":  # a link the host closed since this process's last run: once more, anew
            link = link_to(job.link)
            begun = link.begin(job.link.token, trace)
    except OSError as exc:
        run.setup_error = f"{HARNESS_FAILED}: the harness could not reach its replay host: {exc}"
        return run
    if begun.kind != "begun":
        why = "never received the run's stage" if begun.kind == "over" else f"answered {begun.kind!r}"
        run.setup_error = f"{HARNESS_FAILED}: the replay host {why} when the run began"
        return run
    redirect = Redirect(job.link.refusing_port or job.link.http_port, job.link.token)
    try:
        with (
            provider_keys_hidden((spec.api_key_env,)),
            counting(job.link.http_port, job.link.refusing_port),
            seeded_random(job.scenario_id),
        ):
            _execute(run, job, spec, context, controller, redirect, link=link)
    finally:
        link.end()
    return run


def run_live(
    scenario: Scenario, spec: AdapterSpec, server: Server, context: AdapterContext, timeout: float
) -> ScenarioRun:
    """Run generate_step once with ``server`` answering its HTTP requests and the real network open: the
    recorder's pass-through forwards them to the provider (recording/)."""
    run = ScenarioRun(options=RunOptions(timeout=timeout), trace=Trace())
    job = AdapterJob(
        scenario.id,
        scenario.messages,
        scenario.tools,
        scenario.llm_config(spec.model, spec.wire_profile),
        run.options,
    )
    _execute(run, job, spec, context, AbortController(), server, link=None)
    return run


def _execute(
    run: ScenarioRun,
    job: AdapterJob,
    spec: AdapterSpec,
    context: AdapterContext,
    controller: AbortController | None,
    server: Server,
    *,
    link: Link | None,
) -> None:
    options = run.options
    imports.install()
    imports_before = imports.totals()
    started = time.monotonic()
    loops: list[VirtualTimeLoop] = []
    imports.count_jumps(lambda: sum(loop.skipped_s for loop in loops))

    def on_loop(loop: VirtualTimeLoop) -> None:
        loops.append(loop)
        run.trace.use_clock(loop.time)
        link_module.on_activity = loop.wake  # a thread's I/O with the host wakes the loop to report it

    def drive() -> None:
        step = _drive(run, job, spec, context, controller)
        try:
            if link is not None:  # replay: the host keeps the lockstep, and the clock when time is virtual
                try:
                    run_virtual(step, on_loop, link=link, virtual=options.virtual_time)
                finally:
                    link_module.on_activity = None
            else:  # recording: the provider is real, so is time
                asyncio.run(step)
        except BaseException as exc:  # raised in a loop callback (call_soon, a timer): it stopped the loop
            if not isinstance(exc, asyncio.CancelledError) and (
                run.raised is None or isinstance(run.raised, asyncio.CancelledError)
            ):
                run.raised = exc  # the cause, not the cancellation the loop's teardown gave the step

    with intercept(server, block_network=link is not None):
        worker = threading.Thread(
            target=drive,
            name=f"helix-scenario-{job.scenario_id}",
            daemon=True,
        )
        worker.start()
        worker.join(options.real_limit_s * options.steps + THREAD_GRACE_S)
        if worker.is_alive():
            run.timed_out = True
            abandon(worker)
    run.duration_s = time.monotonic() - started
    imports_after = imports.totals()
    imports.count_jumps(None)
    run.import_s = imports_after[0] - imports_before[0]
    run.imported = imports_after[1] - imports_before[1]
    run.unintercepted = list(server.unintercepted)
    if loops:
        run.skipped_s, run.real_wait_s = loops[0].skipped_s, loops[0].real_wait_s


async def _drive(
    run: ScenarioRun,
    job: AdapterJob,
    spec: AdapterSpec,
    context: AdapterContext,
    controller: AbortController | None,
) -> None:
    options, trace = run.options, run.trace
    loop = asyncio.get_running_loop()
    track_task_origins(loop)  # HARN-04 names where a task left pending was created
    cancel_now = asyncio.Event()
    if isinstance(loop, VirtualTimeLoop):
        loop.on_instruction = _instructions(controller, cancel_now)
    try:
        adapter = spec.factory(context)
    except Exception as exc:
        run.setup_error = f"the adapter factory raised {type(exc).__name__}: {exc}"
        return
    before = asyncio.all_tasks()
    threads_before = set(threading.enumerate())
    limit_at = loop.time() + options.limit_s
    for _ in range(options.steps):
        step_input = build_input(job, trace, options, controller)
        run.input_before = snapshot_input(step_input)
        step_started = time.monotonic()
        try:
            outcome = adapter.generate_step(step_input)
            if not inspect.isawaitable(outcome):
                raise TypeError(
                    f"generate_step returned {type(outcome).__name__}, not an awaitable; "
                    "it must be an `async def`"
                )
            if job.cancel_planned:
                await _run_and_cancel(run, outcome, cancel_now)
                return
            if isinstance(loop, VirtualTimeLoop):
                # The clock never jumps to the harness's own limit: a jump over a thread that was about to
                # answer would be a false HARN-03. A hang is cut off in real time; a step that skipped past
                # the limit is measured when it ends (_past_limit). Time credited to a stall is not counted.
                limit_at = loop.hard_deadline = loop.time() - loop.credited_s + options.limit_s
                result = await loop.within(_caught(_returning(outcome, trace), run), options.limit_s)
            else:
                result = await asyncio.wait_for(_caught(_returning(outcome, trace), run), options.limit_s)
            if run.raised is not None:
                raise run.raised
        except asyncio.TimeoutError:
            run.timed_out = True
            return
        except BaseException as exc:  # NT-01/NT-03 judge whatever escaped
            run.step_s += time.monotonic() - step_started
            if _past_limit(loop, limit_at):
                run.timed_out = True
                return
            if trace.returned_at() is None:
                trace.add("returned", name="raised")
            run.raised = exc
            run.input_after = snapshot_input(step_input)
            return
        run.step_s += time.monotonic() - step_started
        if _past_limit(loop, limit_at):
            run.timed_out = True
            return
        run.results.append(result)
        run.input_after = snapshot_input(step_input)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    current = asyncio.current_task()
    leftover = [t for t in asyncio.all_tasks() - before if t is not current and not t.done()]
    run.pending_tasks = adapter_work(leftover)
    for _ in range(POST_RETURN_LOOP_TURNS):
        await asyncio.sleep(0)
    started_since = [t for t in asyncio.all_tasks() - before if t is not current and not t.done()]
    threads = _busy_threads(threads_before)
    if leftover or started_since or threads or not _idle(asyncio.get_running_loop()):
        await _let_late_work_run(started_since, options.late_wait_s, threads)
    for task in leftover:
        task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.gather(*leftover, return_exceptions=True), 1.0)


def _past_limit(loop: asyncio.AbstractEventLoop, limit_at: float) -> bool:
    """On the virtual clock, a step that ended after the scenario's limit (a blocking ``time.sleep`` skipped,
    so early in real time) timed out, as it would have in real time (HARN-03)."""
    return isinstance(loop, VirtualTimeLoop) and loop.time() - loop.credited_s > limit_at


def _busy_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads the adapter started during the step that still work after it returned: one may yet call a
    callback (STR-07)."""
    frames = current_frames()
    return [
        t
        for t in threading.enumerate()
        if t not in before and t.is_alive() and not thread_is_idle(frames.get(t.ident or 0))
    ]


async def _let_late_work_run(
    tasks: list[asyncio.Task[Any]], limit: float, threads: list[threading.Thread] | None = None
) -> None:
    """Let leftover tasks and threads finish, and timers due within ``limit`` fire, so what they call lands
    in the trace. Threads are waited for by the running loop, a timer always due: a thread's sleep is skipped
    only up to it, so one sleeping past the window cannot move the loop's clock with it (a join blocked the
    loop, which then looked idle, and a thread's 6 s sleep was skipped whole)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    if tasks and limit > POST_RETURN_WAIT_S:
        await asyncio.wait(tasks, timeout=limit)
    if threads and limit > POST_RETURN_WAIT_S:
        while any(t.is_alive() for t in threads) and (left := end - loop.time()) > 0:
            await asyncio.sleep(min(LATE_THREAD_POLL_S, left))
    due = [h.when() for h in getattr(loop, "_scheduled", ()) if not h.cancelled() and h.when() <= end]
    if due:
        await asyncio.sleep(max(0.0, max(due) - loop.time()) + POST_RETURN_WAIT_S)
    else:
        await asyncio.sleep(POST_RETURN_WAIT_S)


def _idle(loop: asyncio.AbstractEventLoop) -> bool:
    """True when, after the step returned, the loop holds nothing that could still fire a callback: no
    live timer and no executor job (on another loop: no executor at all). Left-over tasks are counted apart.
    An unknown loop implementation (without asyncio's ``_scheduled`` / ``_default_executor``) is never
    considered idle: we wait, as always.
    """
    scheduled = getattr(loop, "_scheduled", None)
    if scheduled is None:
        return False
    if isinstance(loop, VirtualTimeLoop):  # its executor outlives the run (clock.run_virtual): ask for jobs
        if loop.jobs_in_flight:
            return False
    elif getattr(loop, "_default_executor", True) is not None:
        return False
    return all(handle.cancelled() for handle in scheduled)


async def _returning(awaitable: Any, trace: Trace) -> Any:
    """Await the step and mark the moment it returned, inside the same task: anything the adapter scheduled
    just before returning runs after this mark (STR-07), however many loop turns wait_for takes to wake."""
    try:
        result = await awaitable
    except BaseException:
        trace.add("returned", name="raised")
        raise
    trace.add("returned", name=type(result).__name__)
    return result


async def _caught(outcome: Any, run: ScenarioRun) -> Any:
    """Await the step, keeping what it raises as data. asyncio lets SystemExit and KeyboardInterrupt escape
    a task and tear down the event loop (and so the harness's thread); cancellation still propagates."""
    try:
        return await outcome
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        run.raised = exc
        return None


async def _run_and_cancel(run: ScenarioRun, outcome: Any, cancel_now: asyncio.Event) -> None:
    """NT-03: cancel the task mid-stream, when the host says enough chunks were delivered; it must end
    promptly with CancelledError."""
    task = asyncio.ensure_future(_caught(outcome, run))
    loop = asyncio.get_running_loop()
    asked = asyncio.ensure_future(cancel_now.wait())
    await asyncio.wait({task, asked}, timeout=run.options.timeout, return_when=asyncio.FIRST_COMPLETED)
    asked.cancel()
    if task.done():
        run.cancelled = False
        if run.raised is None:
            run.results.append(task.result())
        return
    cancelled_at = loop.time()
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=1.0)
    run.cancel_latency_s = loop.time() - cancelled_at
    if not done:
        run.cancelled = False
        return
    run.cancelled = task.cancelled()
    if not task.cancelled() and run.raised is None:
        run.results.append(task.result())


def _instructions(controller: AbortController | None, cancel_now: asyncio.Event) -> Callable[[str], None]:
    """What the host's ``do`` list does on the loop: the abort plan aborts the signal, NT-03 cancels."""

    def obey(what: str) -> None:
        if what == "abort" and controller is not None:
            controller.abort("aborted by the harness mid-stream")
        elif what == "cancel":
            cancel_now.set()

    return obey
