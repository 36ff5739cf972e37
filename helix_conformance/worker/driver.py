"""The parent's side of a foreign driver (protocol version 2): a process that runs an adapter in another
language (Node: ``drivers/node``), answering JSON lines, with the adapter's HTTP served by its replay host.

One driver per pytest process, reused for every run, as the Python worker (client.py): what a driver that
died, hung or garbled its channel did becomes the run's outcome (NT-01, HARN-03) and the driver is replaced.
The run is staged on the driver's host like a Python worker's (replay/judging.py): the driver's link reports
where each callback fell among the deliveries, its channel carries the callbacks' arguments and the results.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..adapters import AdapterNotFound, ResolvedAdapter
from ..contract import AdapterSpec
from ..profiles.base import WireProfile
from ..replay.interactions import ReplayInteraction
from ..replay.judging import Staged, assemble, collect, stage_run
from ..replay.runner import REPLAY_API_KEY, RunOptions, ScenarioRun, adapter_timeout
from ..replay.seeds import run_seed
from ..replay.service import HostAddress, ReplayServiceError, replay_service
from ..replay.trace import Trace
from ..scenarios.model import Scenario
from .client import (
    HANDSHAKE_TIMEOUT_S,
    AdapterProcessEnded,
    AdapterProcessGarbled,
    WorkerStartError,
    _Process,
    _stop,
    _wait_exit,
    describe_exit,
    garbled,
    harness_failed,
    kill,
    spec_from_ready,
)
from .helix_json import HelixDecoder, encode_input, raised, snake
from .protocol import ChannelClosed, ChannelTimeout, LineReader, ProtocolError, encode_line, write_all

PROTOCOL_VERSION = 2
RETURN_GRACE_S = 0.5
"""Beyond ``--helix-timeout`` per step, for the message to cross the pipe; then the driver is killed (HARN-03)."""
DONE_GRACE_S = 2.0
"""After the last ``returned``: the driver's late-callback wait, then ``done``."""
MAX_REPORTED = 20
"""Unhandled rejections and uncaught exceptions (NT-01), and leftover timers (HARN-04), kept per run."""
MAX_OUTPUT_CHARS = 128 * 1024
"""Of a run's captured stdout/stderr (the Node driver keeps 64 KiB: its start and its end)."""
CANCELLED_BY_HARNESS = "cancelled by the harness"
"""The ``abort_sent`` name (and the link's mark) of NT-03's abort of the signal at the host's cancel point."""


def _cancelled(run: ScenarioRun, state: _RunState) -> None:
    """NT-03 the JavaScript way: a step is cancelled by aborting its signal (there is no other way to stop a
    promise). It is not swallowed when the step settled with a StepResult before the rest of the response was
    delivered; ``cancel_latency_s`` is how long it took after the abort."""
    if state.returned_at is None:
        run.cancelled = False  # still running at the deadline (timed out) or the driver ended
        return
    if state.abort_sent_at is None or state.returned_at < state.abort_sent_at:
        return  # the step was over before the cancel point: nothing was cancelled
    run.cancel_latency_s = state.returned_at - state.abort_sent_at
    returned = run.trace.returned_at()
    read_on = any(e.last and (returned is None or e.seq < returned) for e in run.trace.of("chunk"))
    run.cancelled = run.raised is None and bool(run.results) and not read_on


def message(kind: str, **fields: Any) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "type": kind, **fields}


@dataclass
class _RunState:
    id: int
    trace: Trace
    abort_sent_at: float | None = None
    """When the driver aborted the run's signal at the host's cancel point (``time.monotonic``): NT-03 times the
    settling from here."""
    returned_at: float | None = None


class DriverWorker:
    """A lazily started, reused driver process for one ``node:`` adapter (or any protocol-v2 command)."""

    def __init__(self, requested: str, adapter: str, command: list[str], *, cwd: str | None = None) -> None:
        self.requested = requested
        """The name as passed to --adapter (``node:adapter.mjs``)."""
        self.adapter = adapter
        """What the driver imports (the part after ``node:``)."""
        self.command = command
        self.cwd = cwd or os.getcwd()
        self.process: _Process | None = None
        self.ready: dict[str, Any] | None = None
        self.next_id = 0
        self.spawned = 0
        self.write_lock = threading.Lock()
        self.host: HostAddress | None = None
        """This driver's replay host, made on its first run and kept across restarts."""

    # --- lifecycle -----------------------------------------------------------------------------------

    def send(self, data: dict[str, Any]) -> None:
        assert self.process is not None
        with self.write_lock:
            write_all(self.process.to_worker, encode_line(data))

    def start(self) -> dict[str, Any]:
        """Spawn the driver and import the adapter in it; the ``ready`` message (spec as plain data)."""
        if self.process is not None and self.ready is not None:
            return self.ready
        read_req, write_req = os.pipe()
        read_out, write_out = os.pipe()
        try:
            popen = subprocess.Popen(
                [*self.command, "--fds", f"{read_req},{write_out}"],
                pass_fds=(read_req, write_out),
                stdin=subprocess.DEVNULL,
                cwd=self.cwd,
            )
        except OSError as exc:
            for fd in (read_req, write_req, read_out, write_out):
                os.close(fd)
            raise WorkerStartError(
                f"--adapter={self.requested}: cannot start {self.command[0]!r}: {exc}"
            ) from None
        finally:
            with contextlib.suppress(OSError):
                os.close(read_req)
            with contextlib.suppress(OSError):
                os.close(write_out)
        self.process = _Process(popen, write_req, LineReader(read_out, PROTOCOL_VERSION))
        self.spawned += 1
        try:
            self.send(message("hello", adapter=self.adapter, cwd=self.cwd))
            answer = self.process.reader.read(time.monotonic() + HANDSHAKE_TIMEOUT_S)
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError) as exc:
            code = self._kill()
            raise WorkerStartError(
                f"--adapter={self.requested}: the driver process did not start "
                f"({type(exc).__name__}: {exc}; {describe_exit(code)})"
            ) from None
        if answer.get("type") == "error":
            self._kill()
            raise AdapterNotFound(f"--adapter={self.requested}: {answer.get('message')}")
        if answer.get("type") != "ready" or not isinstance(answer.get("spec"), dict):
            self._kill()
            raise WorkerStartError(f"--adapter={self.requested}: the driver answered {answer.get('type')!r}")
        self.ready = answer
        return answer

    def resolve(self) -> ResolvedAdapter:
        """The adapter as the driver loaded it; its factory only exists in the driver."""
        try:
            spec = spec_from_ready(self.start()["spec"])
        except (KeyError, TypeError, ValueError) as exc:
            raise AdapterNotFound(f"--adapter={self.requested}: the adapter's spec: {exc}") from None
        runtime = str((self.ready or {}).get("runtime") or "driver")
        target = str((self.ready or {}).get("target"))
        return ResolvedAdapter(spec, self.requested, target, runtime)

    def close(self) -> None:
        """Ask the driver to leave, then terminate, then kill it."""
        process, self.process, self.ready = self.process, None, None
        if self.host is not None:
            replay_service().close_host(self.host)
            self.host = None
        if process is None:
            return
        with contextlib.suppress(OSError), self.write_lock:
            write_all(process.to_worker, encode_line(message("shutdown")))
        _stop(process)

    def _kill(self) -> int | None:
        process, self.process, self.ready = self.process, None, None
        return kill(process)

    # --- runs ----------------------------------------------------------------------------------------

    def run_scenario(
        self,
        scenario: Scenario,
        spec: AdapterSpec,
        profile: WireProfile,
        interactions: list[ReplayInteraction],
        options: RunOptions,
        *,
        base_url: str | None = None,
        scripted: tuple[Any, ...] = (),
    ) -> ScenarioRun:
        """Same signature and meaning as ``replay.runner.run_scenario``, run in the driver."""
        started = time.monotonic()
        run = ScenarioRun(options=options, trace=Trace(), interactions=interactions)
        idle_death = self.process.popen.poll() if self.process is not None else None
        if idle_death is not None:
            self._kill()
            run.raised = AdapterProcessEnded(
                f"the driver process ended between runs, after the previous scenario returned "
                f"({describe_exit(idle_death)}): something the adapter left running ended it"
            )
            return run
        try:
            self.start()
        except (WorkerStartError, AdapterNotFound) as exc:
            run.setup_error = f"the driver process could not be started again: {exc}"
            return run
        try:
            self.host = replay_service().host(self.host.id if self.host is not None else None)
            staged = stage_run(
                self.host,
                scenario,
                spec.model,
                profile,
                interactions,
                options,
                base_url=base_url,
                scripted=scripted,
            )
        except ReplayServiceError as exc:
            return harness_failed(options, interactions, started, exc)
        started = time.monotonic()  # the run's own time, from here (the service may have had to start)
        self.next_id += 1
        state = _RunState(self.next_id, run.trace)
        abort = scenario.abort
        link = staged.job.link
        assert link is not None
        request = message(
            "run",
            id=state.id,
            input=encode_input(
                scenario.messages,
                scenario.tools,
                scenario.llm_config(spec.model, spec.wire_profile),
                options.agent_id,
                "conformance",
            ),
            context={
                "apiKey": REPLAY_API_KEY,
                "baseUrl": staged.job.base_url,
                "timeout": adapter_timeout(options.timeout),
                "scriptedResponses": [],
            },
            callbacks=options.callbacks,
            withSignal=options.with_signal,
            abortBefore=bool(abort is not None and abort.before),
            abortOnTextDelta=options.abort_on_text_delta,
            steps=options.steps,
            lateWaitMs=round(options.late_wait_s * 1000, 3),
            seed=run_seed(scenario.id),
            replay={
                "httpPort": link.http_port,
                "controlPort": link.control_port,
                "refusingPort": link.refusing_port,
                "token": link.token,
                "virtualTime": options.virtual_time,
                "limitMs": round(options.limit_s * options.steps * 1000),
            },
        )
        completed = self._converse(run, state, request)
        run.duration_s = time.monotonic() - started
        run = self._judged(options, interactions, staged, run, completed)
        if options.cancel_after_chunks is not None:
            _cancelled(run, state)
        return run

    def _judged(
        self,
        options: RunOptions,
        interactions: list[ReplayInteraction],
        staged: Staged,
        run: ScenarioRun,
        completed: bool,
    ) -> ScenarioRun:
        """The run merged with the host's record; a run the driver did not finish keeps no record."""
        try:
            record = collect(staged, grace_s=DONE_GRACE_S if completed else 0.0)
        except ReplayServiceError as exc:
            return harness_failed(options, interactions, time.monotonic(), exc)
        if not completed:
            run.trace = Trace()
            return run
        duration = run.duration_s
        run = assemble(options, interactions, record, run, garbled)
        run.duration_s = duration
        return run

    def _converse(self, run: ScenarioRun, state: _RunState, request: dict[str, Any]) -> bool:
        """Send the run and turn the driver's messages into the adapter's account of the run, until ``done``
        (True) or a broken driver (False: the run's outcome says how it broke)."""
        assert self.process is not None
        options, trace, decoder = run.options, run.trace, HelixDecoder()
        deadline = time.monotonic() + options.limit_s + RETURN_GRACE_S  # a driver's clock is real
        try:
            self.send(request)
            while True:
                got = self.process.reader.read(deadline)
                kind = got.get("type")
                if got.get("id") != state.id and kind != "error":
                    continue  # a late message of an earlier run
                if kind == "callback":
                    name = snake(str(got.get("name")))
                    trace.add("callback", name=name, args=decoder.callback_args(name, got.get("args")))
                elif kind == "callback_done":
                    trace.add("callback_done", name=snake(str(got.get("name"))))
                elif kind == "abort_sent":
                    if got.get("name") == CANCELLED_BY_HARNESS:
                        state.abort_sent_at = state.abort_sent_at or time.monotonic()
                        trace.add("abort", name=CANCELLED_BY_HARNESS)
                    else:
                        trace.add("abort", name="from on_text_delta")
                elif kind == "returned":
                    state.returned_at = state.returned_at or time.monotonic()
                    self._returned(run, decoder, got)
                    last = len(run.results) >= options.steps or run.raised is not None
                    deadline = time.monotonic() + (
                        options.late_wait_s + DONE_GRACE_S if last else options.limit_s + RETURN_GRACE_S
                    )
                elif kind == "done":
                    if got.get("setupError"):
                        run.setup_error = str(got["setupError"])[:2000]
                    run.output = str(got.get("output") or "")[:MAX_OUTPUT_CHARS]
                    run.escaped = [str(u)[:1000] for u in got.get("uncaught") or ()][:MAX_REPORTED]
                    run.pending_tasks = [str(p)[:1000] for p in got.get("pending") or ()][:MAX_REPORTED]
                    return True
                elif kind in ("failed", "error"):
                    run.setup_error = (
                        f"the driver could not run the scenario: {str(got.get('message'))[:2000]}"
                    )
                    return True
                else:
                    raise ProtocolError(f"a {kind!r} message")
        except ChannelTimeout:
            self._kill()
            if run.results and len(run.results) >= options.steps:
                return True  # every step returned; only `done` is late: the late-callback window is over
            run.timed_out = True
        except (ChannelClosed, OSError):
            code = _wait_exit(self.process)
            self._kill()
            run.raised = AdapterProcessEnded(
                f"the driver process ended during generateStep ({describe_exit(code)}); failures must be "
                "returned as an error result, never end the process"
            )
        except ProtocolError as exc:
            self._kill()
            run.raised = garbled(str(exc))
        return False

    def _returned(self, run: ScenarioRun, decoder: HelixDecoder, got: dict[str, Any]) -> None:
        if "raised" in got and got.get("raised") is not None:
            run.raised = raised(got["raised"])
            run.trace.add("returned", name="raised")
        else:
            result = decoder.result(got.get("result"))
            run.results.append(result)
            run.trace.add("returned", name=type(result).__name__)
        with contextlib.suppress(TypeError, ValueError):
            run.step_s += float(got.get("stepMs") or 0.0) / 1000
        if "inputBefore" in got and "inputAfter" in got:
            run.input_before, run.input_after = got["inputBefore"], got["inputAfter"]


__all__ = ["PROTOCOL_VERSION", "AdapterProcessEnded", "AdapterProcessGarbled", "DriverWorker"]
