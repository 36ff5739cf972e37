"""The parent's side of the worker: spawns it, resolves the adapter through it, runs scenarios in it.

One worker per pytest process (per xdist worker), reused for every run; a worker that died, hung or broke
the protocol is killed and replaced before the next run, and what happened becomes the run's outcome
(HARN-03 for a timeout, NT-01 for a process that ended), never a lost verdict.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..adapters import AdapterNotFound, DriverCommand, ResolvedAdapter, ResolvedCommand
from ..contract import AdapterContext, AdapterSpec, LLMAdapter
from ..profiles.base import WireProfile
from ..replay.interactions import ReplayInteraction
from ..replay.judging import Staged, assemble, collect, stage_run
from ..replay.runner import HARNESS_FAILED, THREAD_GRACE_S, RunOptions, ScenarioRun
from ..replay.service import HostAddress, ReplayServiceError, replay_service
from ..replay.trace import Trace
from ..scenarios.model import Scenario
from .keeper import KeeperLink, describe_memory, vitals
from .payload import dumps
from .protocol import (
    EXIT_CHANNEL_LOST,
    ChannelClosed,
    ChannelTimeout,
    LineReader,
    ProtocolError,
    encode_frame,
    header,
    write_all,
)
from .runs import decode_run
from .sandbox import memory_limit
from .snapshot import SnapshotError

WORKER_GRACE_S = 3.0
"""Beyond the runner's own limit (timeout x steps + THREAD_GRACE_S): then the worker is killed (HARN-03)."""
HANDSHAKE_TIMEOUT_S = 120.0
"""Importing an adapter (an SDK, pydantic models) can take a while on a cold, busy machine."""
STOP_GRACE_S = 1.0
HASH_SEED = os.environ.get("PYTHONHASHSEED") or "0"
"""One string-hash seed for every worker, the same every session unless the environment sets one: runs of a
scenario compared with each other (STR-10, RES-12) may come from different workers (worker/pool.py), and an
adapter's set order follows the seed, so a random one could change its verdict from one session to the next."""
PIPE_BYTES = 1 << 20
"""Pipe capacity asked for each channel (the unprivileged maximum on Linux by default)."""
KEEPER_HELLO_S = 5.0
"""The keeper says how the worker is confined before the worker starts: by ``ready`` it has, or it is stuck."""
KEEPER_GRACE_S = 0.5
"""How long the keeper gets to end the worker and what it started before it is killed itself."""
MEMORY_WORTH_SAYING = 1 << 30
"""A process that ended having used this much memory (or half its limit) is said to have: maybe why it ended."""


class AdapterProcessEnded(Exception):
    """The adapter's process ended during a run (os._exit, a crash, a signal): judged on NT-01."""


class AdapterProcessGarbled(Exception):
    """The adapter's process answered something that is not a run result: judged on NT-01."""


class AdapterChannelTampered(AdapterProcessGarbled):
    """Something in the adapter's process read or wrote the harness's request channel: judged on NT-01."""


class AdapterProcessFailed(Exception):
    """The adapter's process said the harness code in it failed. That code shares the adapter's process (the
    adapter can write such an answer, or break that code), so it is judged as the adapter's, on NT-01."""


class WorkerStartError(Exception):
    """The worker could not be started or could not resolve the adapter; the message says why."""


class DriverRedirect(Exception):
    """The name resolved, in the worker, to a ``DriverCommand``: the adapter runs in that driver instead."""

    def __init__(self, resolved: ResolvedCommand) -> None:
        super().__init__(f"{resolved.requested} names a driver command")
        self.resolved = resolved


def _redirect(adapter: str, answer: dict[str, Any]) -> DriverRedirect:
    """The worker's ``driver`` answer as a DriverRedirect; a malformed one is a start error."""
    try:
        pairs = tuple((str(c), str(why)) for c, why in answer.get("not_applicable") or ())
        command = DriverCommand(
            tuple(answer["argv"]),
            str(answer.get("adapter") or ""),
            str(answer["cwd"]) if answer.get("cwd") else None,
            pairs,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise WorkerStartError(
            f"--adapter={adapter}: the worker's driver command is malformed: {exc}"
        ) from None
    target = str(answer.get("target") or adapter)
    return DriverRedirect(ResolvedCommand(command, adapter, target, str(answer.get("origin") or "")))


def spec_from_ready(data: dict[str, Any]) -> AdapterSpec:
    """The AdapterSpec a worker or driver sent as plain data in its ``ready`` message (docs/worker-protocol.md);
    its factory only exists over there. KeyError, TypeError or ValueError when the data is not a spec."""
    return AdapterSpec(
        name=str(data["name"]),
        factory=_runs_in_the_worker,
        wire_profile=str(data["wire_profile"]),
        model=str(data["model"]),
        capabilities=frozenset(str(c) for c in data.get("capabilities") or ()),
        cassette_dir=Path(data["cassette_dir"]) if data.get("cassette_dir") else None,
        description=str(data.get("description") or ""),
        api_key_env=str(data["api_key_env"]) if data.get("api_key_env") else None,
        servers=frozenset(str(s) for s in data.get("servers") or ()),
    )


def _runs_in_the_worker(context: AdapterContext) -> LLMAdapter:
    raise RuntimeError("helix-conformance: this adapter is built in its worker process, not in pytest's")


def describe_exit(code: int | None, ended: dict[str, Any] | None = None) -> str:
    """How the worker ended, with its peak memory when that may be why (the keeper measured it)."""
    if code is None:
        words = "it closed its channel to the harness and was killed"
    elif code < 0:
        words = f"killed by signal {-code}"
        with contextlib.suppress(ValueError):
            words = f"killed by signal {signal.Signals(-code).name}"
    elif code == EXIT_CHANNEL_LOST:
        words = f"exit status {code}: its channel to the harness was closed or broken from inside it"
    else:
        words = f"exit status {code}"
    peak = int((ended or {}).get("max_rss_kb") or 0)
    limit = memory_limit()
    if peak * 1024 >= min(MEMORY_WORTH_SAYING, (limit or MEMORY_WORTH_SAYING) // 2):
        of_limit = f" of the {describe_memory(limit // 1024)} it may use" if limit else ""
        words += f"; it had used {describe_memory(peak)} of memory{of_limit}"
    return words


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]
    to_worker: int
    reader: LineReader
    keeper: KeeperLink | None = None
    """The worker's keeper (worker/sandbox.py): the process ``popen`` started, which runs no adapter code
    (None for a driver, which is started as it is)."""
    sent: int = 0
    """Frames sent so far: the next one is numbered ``sent + 1`` (protocol.RequestReader checks)."""

    def frame(self, message: dict[str, Any], payload: bytes = b"") -> bytes:
        """The next frame on the request channel, numbered."""
        self.sent += 1
        return encode_frame(message, payload, self.sent)

    def send(self, message: dict[str, Any], payload: bytes = b"") -> None:
        write_all(self.to_worker, self.frame(message, payload))


class AdapterWorker:
    """A lazily started, reused worker for one adapter name."""

    namespaces = True
    """Confine the worker in namespaces of its own where the system allows (worker/sandbox.py); tests turn it
    off to exercise the fallback."""
    namespaces_work = False
    """A worker of this process was confined already: the next keepers skip the probe (50-150 ms each)."""

    def __init__(self, adapter: str, *, sys_path: list[str] | None = None, cwd: str | None = None) -> None:
        self.adapter = adapter
        self.sys_path = list(sys_path if sys_path is not None else sys.path)
        self.cwd = cwd or os.getcwd()
        self.process: _Process | None = None
        self.ready: dict[str, Any] | None = None
        self.next_id = 0
        self.spawned = 0
        self.host: HostAddress | None = None
        """This process's replay host (replay/host.py), made on the first run and kept across restarts but for
        a confined worker's (``replay_host``)."""
        self.host_spawn: int | None = None
        """Which spawn (``spawned``) the host serves, when it listens in that worker's network namespace."""

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> dict[str, Any]:
        """Spawn the worker and resolve the adapter in it; the ``ready`` message (spec as plain data)."""
        if self.process is not None and self.ready is not None:
            return self.ready
        process = self.process or self.spawn()  # spawned already (``siblings``): its answer is read here
        try:
            answer = process.reader.read(time.monotonic() + HANDSHAKE_TIMEOUT_S)
        except (ChannelClosed, ChannelTimeout, ProtocolError, OSError) as exc:
            raise self.start_failed(exc) from None
        return self.accept(answer)

    def spawn(self) -> _Process:
        """Start the process and send it the ``hello``; its answer goes to ``accept`` (worker/pool.py reads it
        while other workers run)."""
        read_req, write_req = os.pipe()
        read_out, write_out = os.pipe()
        control, keeper_end = socket.socketpair()
        for fd in (write_req, read_out):  # room for a few results while pytest judges (Linux; else 64 KiB)
            with contextlib.suppress(OSError, AttributeError, ImportError):
                import fcntl

                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        try:
            popen = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "helix_conformance.worker",
                    "--fds",
                    f"{read_req},{write_out}",
                    "--control",
                    str(keeper_end.fileno()),
                    *(() if self.namespaces else ("--no-namespaces",)),
                    *(("--namespaces-work",) if self.namespaces and AdapterWorker.namespaces_work else ()),
                ],
                pass_fds=(read_req, write_out, keeper_end.fileno()),
                stdin=subprocess.DEVNULL,
                cwd=self.cwd,
                env={**os.environ, "PYTHONHASHSEED": HASH_SEED},
                start_new_session=True,  # nothing the adapter signals as a group reaches pytest
            )
        except BaseException:
            control.close()
            raise
        finally:
            os.close(read_req)
            os.close(write_out)
            keeper_end.close()
        self.process = _Process(popen, write_req, LineReader(read_out), KeeperLink(control, popen.pid))
        self.spawned += 1
        with contextlib.suppress(OSError):  # it ended at once: its channel says so (start_failed)
            self.process.send(header("hello", adapter=self.adapter, sys_path=self.sys_path, cwd=self.cwd))
        return self.process

    def siblings(self, count: int) -> list[AdapterWorker]:
        """Spawn this worker and ``count`` more of the same adapter, each left to import the adapter while the
        caller waits for this one's answer: pytest's process waits for the spec then, so the others start on
        a CPU that would idle, not later beside the runs (an SDK's import and pydantic builds: about a second
        of CPU each). Their answers are read by ``start`` or the pool (``pool.WorkerPool``)."""
        if self.process is None:
            self.spawn()
        if count and self.namespaces:
            self._note_confinement()  # the probe's verdict, so the others skip it
        others = [AdapterWorker(self.adapter, sys_path=self.sys_path, cwd=self.cwd) for _ in range(count)]
        try:
            for other in others:
                other.namespaces = self.namespaces
                other.spawn()
        except BaseException:
            for other in others:
                other.close()
            raise
        return others

    def _note_confinement(self) -> None:
        """Wait for the keeper's hello (sent before the worker imports anything); once a worker is confined,
        the next keepers skip the namespace probe."""
        if self.process is not None and self.process.keeper is not None:
            self.process.keeper.wait_hello(KEEPER_HELLO_S)
            if self.process.keeper.confined:
                AdapterWorker.namespaces_work = True

    def start_failed(self, exc: BaseException) -> WorkerStartError:
        """The start error for a worker that did not answer its ``hello`` (killed here)."""
        code = self.kill()
        return WorkerStartError(
            f"--adapter={self.adapter}: the adapter's worker process did not start "
            f"({type(exc).__name__}: {exc}; {describe_exit(code)})"
        )

    def accept(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The worker's answer to ``hello``: ready, or AdapterNotFound / DriverRedirect / WorkerStartError."""
        if answer.get("type") == "error":
            self.kill()
            raise AdapterNotFound(str(answer.get("message")))
        if answer.get("type") == "driver":
            self.close()
            raise _redirect(self.adapter, answer)
        if answer.get("type") != "ready" or not isinstance(answer.get("spec"), dict):
            self.kill()
            raise WorkerStartError(f"--adapter={self.adapter}: the worker answered {answer.get('type')!r}")
        self._note_confinement()
        self.ready = answer
        return answer

    def resolve(self) -> ResolvedAdapter:
        """The adapter as the worker resolved it; its factory only exists in the worker."""
        ready = self.start()
        try:
            spec = spec_from_ready(ready["spec"])
        except (KeyError, TypeError, ValueError) as exc:
            raise AdapterNotFound(f"--adapter={self.adapter}: {exc}") from None
        return ResolvedAdapter(spec, self.adapter, str(ready.get("target")), str(ready.get("origin")))

    def close(self) -> None:
        """Ask the worker to leave, then terminate, then kill it: leftover threads cannot hold pytest."""
        process, self.process, self.ready = self.process, None, None
        if self.host is not None:
            replay_service().close_host(self.host)
            self.host, self.host_spawn = None, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            process.send(header("shutdown"))
        _stop(process)

    def kill(self) -> int | None:
        """Kill the process now, if any, and reap it: its exit status."""
        process, self.process, self.ready = self.process, None, None
        return kill(process)

    # --- runs ----------------------------------------------------------------------------------------

    def stage(self, call: tuple[Any, ...]) -> Staged:
        """Stage ``call`` (scenario, model, profile, interactions, options, base_url, scripted) on this
        process's host: the job to send it."""
        scenario, model, profile, interactions, options, base_url, scripted = call
        self.host = self.replay_host()
        return stage_run(
            self.host, scenario, model, profile, interactions, options, base_url=base_url, scripted=scripted
        )

    def replay_host(self) -> HostAddress:
        """This process's replay host. A worker confined in a network namespace of its own reaches only that
        namespace's loopback, which the replay service cannot listen on: its keeper opens the host's two
        listening sockets there and the service serves them (a new host for each worker spawned). Elsewhere
        the host listens on 127.0.0.1 and is kept across restarts."""
        service = replay_service()
        keeper = self.process.keeper if self.process is not None else None
        if keeper is not None and keeper.hello is None:
            keeper.wait_hello(KEEPER_HELLO_S)
        if keeper is not None and keeper.confined:
            if self.host is not None and self.host_spawn == self.spawned:
                return service.host(self.host.id)
            try:
                listeners = (keeper.listen(), keeper.listen(), keeper.listen(listening=False))
            except OSError as exc:
                raise ReplayServiceError(
                    f"the replay host cannot listen in the worker's network namespace: {exc}"
                ) from None
            self.host_spawn = self.spawned
            return service.host(self.host.id if self.host is not None else None, listeners)
        if (
            self.host is not None and self.host_spawn is not None
        ):  # it served a namespace gone with its worker
            service.close_host(self.host)
            self.host, self.host_spawn = None, None
        return service.host(self.host.id if self.host is not None else None)

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
        """Same signature and meaning as ``replay.judging.run_scenario``, run in the worker."""
        started = time.monotonic()
        idle_death = self.process.popen.poll() if self.process is not None else None
        if idle_death is not None:  # ended after the previous run returned: a thread the adapter left
            ended = how_it_ended(self.process)[1]
            self.kill()
            return lost_run(
                options,
                interactions,
                started,
                raised=ended_between_runs(idle_death, ended),
            )
        try:
            self.start()
        except (WorkerStartError, AdapterNotFound) as exc:
            return lost_run(
                options,
                interactions,
                started,
                setup=f"the adapter's process could not be started again: {exc}",
            )
        assert self.process is not None
        try:
            staged = self.stage((scenario, spec.model, profile, interactions, options, base_url, scripted))
        except ReplayServiceError as exc:
            return harness_failed(options, interactions, started, exc)
        payload = dumps(staged.job)
        self.next_id += 1
        run_id = self.next_id
        deadline = time.monotonic() + options.real_limit_s * options.steps + THREAD_GRACE_S + WORKER_GRACE_S
        try:
            self.process.send(header("run", id=run_id, encoding="pickle"), payload)
            received = False
            answer = self.process.reader.read(deadline)
            # "started" says the run began; a result that is not this run's is skipped, within the deadline
            while answer.get("type") in ("started", "received") or (
                answer.get("id") != run_id and answer.get("type") in ("result", "failed")
            ):
                received = received or (answer.get("type") == "received" and answer.get("id") == run_id)
                answer = self.process.reader.read(deadline)
        except ChannelTimeout:
            note = vitals(self.process.popen.pid)  # before it is killed: memory, a stopped process
            self.kill()
            if not received:
                return lost_run(options, interactions, started, raised=never_received(), staged=staged)
            return lost_run(options, interactions, started, timed_out=True, note=note, staged=staged)
        except (ChannelClosed, OSError):
            code, ended = how_it_ended(self.process)
            self.kill()
            return lost_run(
                options,
                interactions,
                started,
                raised=ended_during_step(code, ended),
                staged=staged,
            )
        except ProtocolError as exc:
            self.kill()
            return lost_run(options, interactions, started, raised=garbled(str(exc)), staged=staged)
        if answer.get("type") == "tampered":
            self.kill()
            return lost_run(
                options, interactions, started, raised=tampered(str(answer.get("what"))), staged=staged
            )
        if answer.get("type") == "failed":
            return lost_run(
                options, interactions, started, raised=failed_in_process(answer.get("message")), staged=staged
            )
        if answer.get("type") != "result":
            self.kill()
            return lost_run(
                options,
                interactions,
                started,
                raised=garbled(f"a {answer.get('type')!r} message"),
                staged=staged,
            )
        try:
            account = decode_run(answer.get("run"), options, interactions)
        except SnapshotError as exc:
            self.kill()
            return lost_run(options, interactions, started, raised=garbled(str(exc)), staged=staged)
        # What the keeper saw (HARN-01) and what a hung worker looked like (HARN-03), before it is killed.
        keeper = self.process.keeper
        outside = keeper.after_run(answer.get("escapes")) if keeper is not None else []
        note = vitals(self.process.popen.pid) if account.timed_out else ""
        if account.timed_out:
            self.kill()  # a thread of the adapter may still spin in there: start the next run clean
        run = judged(options, interactions, staged, account, started)
        run.unintercepted.extend(outside)
        if run.timed_out and not note and self.process is not None:
            note = vitals(self.process.popen.pid)
        run.hang_note = note if run.timed_out else ""
        run.duration_s = time.monotonic() - started
        return run


def judged(
    options: RunOptions,
    interactions: list[ReplayInteraction],
    staged: Staged,
    account: ScenarioRun,
    started: float,
) -> ScenarioRun:
    """The run the checks read: the adapter's account of it merged with its host's record."""
    try:
        record = collect(staged)
    except ReplayServiceError as exc:
        return harness_failed(options, interactions, started, exc)
    return assemble(options, interactions, record, account, garbled)


def lost_run(
    options: RunOptions,
    interactions: list[ReplayInteraction],
    started: float,
    *,
    timed_out: bool = False,
    raised: BaseException | None = None,
    setup: str | None = None,
    note: str = "",
    staged: Staged | None = None,
) -> ScenarioRun:
    """The run of a worker that hung, ended or broke the protocol: what happened is its outcome (``note``:
    what its processes looked like when it was given up on). Its host ends the run (``staged``), and what it
    recorded is dropped: the run has no result to judge it by."""
    if staged is not None:
        with contextlib.suppress(ReplayServiceError):
            collect(staged, grace_s=0.0)
    run = ScenarioRun(options=options, trace=Trace(), interactions=interactions)
    run.timed_out, run.raised, run.setup_error, run.hang_note = timed_out, raised, setup, note
    run.duration_s = time.monotonic() - started
    return run


def ended_during_step(code: int | None, ended: dict[str, Any] | None = None) -> AdapterProcessEnded:
    return AdapterProcessEnded(
        f"the adapter's process ended during generate_step ({describe_exit(code, ended)}); "
        "failures must be returned as an ErrorStepResult, never end the process"
    )


def ended_between_runs(code: int | None, ended: dict[str, Any] | None = None) -> AdapterProcessEnded:
    return AdapterProcessEnded(
        f"the adapter's process ended between runs, after the previous scenario returned "
        f"({describe_exit(code, ended)}): something the adapter left running ended it"
    )


def tampered(what: str) -> AdapterChannelTampered:
    return AdapterChannelTampered(
        f"something in the adapter's process read or wrote the harness's request channel while this scenario "
        f"ran ({what[:300]}); the worker cannot be trusted after that and was replaced"
    )


def never_received() -> AdapterChannelTampered:
    return AdapterChannelTampered(
        "the worker never acknowledged this run's request, so it never started it: something in the adapter's "
        "process took the request off the harness's channel, or kept the worker from reading it the whole time"
    )


def failed_in_process(message: Any) -> AdapterProcessFailed:
    return AdapterProcessFailed(
        f"the adapter's process reported that the harness code running in it failed "
        f"({str(message)[:300]}); that code shares the adapter's process, so the failure is judged as the "
        "adapter's (a harness bug would show on the reference adapters too)"
    )


def harness_failed(
    options: RunOptions, interactions: list[ReplayInteraction], started: float, exc: Exception
) -> ScenarioRun:
    """The judging side's own replay failed: a harness bug, never the adapter's."""
    return lost_run(options, interactions, started, setup=f"{HARNESS_FAILED}: {exc}")


def garbled(what: str) -> AdapterProcessGarbled:
    return AdapterProcessGarbled(
        f"the adapter's process answered something that is not a run result ({what[:300]}): something in it "
        "wrote to the harness's channel"
    )


def _wait_exit(process: _Process | None, limit: float = STOP_GRACE_S) -> int | None:
    if process is None:
        return None
    with contextlib.suppress(subprocess.TimeoutExpired):
        return process.popen.wait(limit)
    return None


def how_it_ended(process: _Process | None) -> tuple[int | None, dict[str, Any] | None]:
    """The exit status of a worker whose channel closed, and what its keeper said of its end."""
    code = _wait_exit(process)
    keeper = process.keeper if process is not None else None
    return code, (keeper.wait_ended(0.2) if keeper is not None and code is not None else None)


def kill(process: _Process | None) -> int | None:
    """End the worker and everything it started now (if any), and reap it: its exit status."""
    if process is None:
        return None
    _end(process)
    return _stop(process)


def _end(process: _Process) -> None:
    """In namespaces, killing the keeper ends them all (the kernel); elsewhere the keeper kills the worker's
    group and its descendants first, and the group is killed from here in case it could not."""
    link = process.keeper
    if link is not None and not link.confined:
        link.kill()
        _wait_exit(process, KEEPER_GRACE_S)
    with contextlib.suppress(OSError):
        process.popen.kill()
    if link is not None:
        link.kill_group()


def _stop(process: _Process) -> int | None:
    code = _wait_exit(process)
    if code is None:
        _end(process)
        code = process.popen.wait()
    with contextlib.suppress(OSError):
        os.close(process.to_worker)
    with contextlib.suppress(OSError):
        os.close(process.reader.fd)
    if process.keeper is not None:
        process.keeper.close()
    return code
