"""The worker's confinement (worker/sandbox.py, worker/keeper.py) against adapters that set out to escape it:
fork a process that rewrites the report after pytest exits, connect out from native code, take or write the
harness's channels, stop their own process. Each runs through pytest as users run it; each case failed (a
forged green report, a PASS, a hang, a traceback) before the sandbox."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from plugin_runs import assert_no_crash, output, run

# slow: attacks on the sandbox, each in a pytest run of its own: rarely changed, seconds each
pytestmark = pytest.mark.slow


def _why_no_namespaces() -> str | None:
    """The keeper's probe (``sandbox.probe_namespaces``), run where the keeper runs it: in a process of its own
    with one thread. Forking pytest's (an xdist worker has threads) to probe was unsafe, as Python 3.12+ warns."""
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "from helix_conformance.worker.sandbox import probe_namespaces as p; print(p() or '')",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        return f"the probe failed: {probe.stderr.strip()[-500:]}"
    return probe.stdout.strip() or None


WHY_NO_NAMESPACES = _why_no_namespaces()
NAMESPACES = WHY_NO_NAMESPACES is None
needs_namespaces = pytest.mark.skipif(not NAMESPACES, reason=f"no user namespaces here: {WHY_NO_NAMESPACES}")

HOSTILE = r'''
import ctypes, dataclasses, json, os, select, signal, socket, struct, sys, threading, time
from my_adapter import spec as base
from reference_adapters.openai_chat import OpenAIChatAdapter

REPORT = os.path.abspath("r.json")
MARK = os.path.abspath("forged.mark")


def native(name, restype, *argtypes):
    """A libc function found without ctypes' named lookup (which the audit hook refuses): as native code
    (a compiled HTTP client, a C extension) calls it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.dlsym.restype = ctypes.c_void_p
    libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return ctypes.CFUNCTYPE(restype, *argtypes, use_errno=True)(libc.dlsym(None, name.encode()))


FORGER = f"""
import json, os, time
for _ in range(1200):  # wait (in real time) for pytest to write the report, then forge a green one
    if os.path.exists({REPORT!r}):
        break
    time.sleep(0.05)
time.sleep(0.5)
data = json.load(open({REPORT!r}))
data["verdict"] = "pass"
open({REPORT!r}, "w").write(json.dumps(data))
open({MARK!r}, "w").write("forged")
"""


def start_the_forger():
    """A daemon in its own session, started by system(), which forks and execs in C: no copy of this
    interpreter runs in a child (after a raw fork the copy can wait forever to hand the GIL to a thread that
    asked for it and did not come along, and the forger would then never run)."""
    with open("forger.py", "w") as handle:
        handle.write(FORGER)
    command = f"(setsid {sys.executable} {os.path.abspath('forger.py')} >/dev/null 2>&1 &)"
    native("system", ctypes.c_int, ctypes.c_char_p)(command.encode())


def channel_fds():
    argv = open("/proc/self/cmdline", "rb").read().split(b"\0")
    read, write = argv[argv.index(b"--fds") + 1].decode().split(",")
    return int(read), int(write)


class Hostile(OpenAIChatAdapter):
    what = None
    done = False

    async def generate_step(self, input):
        what = self.what
        if what == "native_fork" and not Hostile.done:
            Hostile.done = True
            start_the_forger()
        if what == "os_fork":
            os.fork()
        if what == "native_connect":
            sock = socket.socket()
            address = struct.pack("=H", socket.AF_INET) + struct.pack("!H", 443) + socket.inet_aton("203.0.113.5")
            native("connect", ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)(
                sock.fileno(), address + bytes(8), 16
            )
            sock.close()
        if what == "named_connect":
            ctypes.CDLL(None).connect
        if what == "steals_requests" and not Hostile.done:
            Hostile.done = True
            read = channel_fds()[0]

            def steal():
                while True:
                    os.read(read, 1 << 16)

            threading.Thread(target=steal, daemon=True).start()
        if what == "injects_requests":
            with open(f"/proc/self/fd/{channel_fds()[0]}", "wb", buffering=0) as channel:
                channel.write(b'{"v": 1, "type": "run", "id": 1}\n')
        if what == "writes_answers":
            os.write(channel_fds()[1], b"not a message\n")
        if what == "closes_answers":
            os.close(channel_fds()[1])
        if what == "stops_itself":
            os.kill(os.getpid(), signal.SIGSTOP)
        if what == "stops_pytest":
            try:
                os.kill(os.getppid(), signal.SIGSTOP)
            except OSError:
                pass
            if os.getpid() != 2:  # not the worker of a PID namespace: kill(-1) would reach the user's processes
                raise RuntimeError("not confined: the attack is not run")
            kill = native("kill", ctypes.c_int, ctypes.c_int, ctypes.c_int)
            kill(os.getppid(), signal.SIGSTOP)  # its parent, as native code sees it
            kill(-1, signal.SIGSTOP)  # every process it may signal
        if what == "hogs_memory":
            Hostile.kept = [bytearray(64 << 20) for _ in range(5)]
            select.select([], [], [], 60)  # real time: virtual time does not skip a select
        return await super().generate_step(input)


def _spec(what):
    cls = type(f"Hostile_{what}", (Hostile,), {"what": what})
    return dataclasses.replace(base, name=what, factory=lambda ctx: cls(api_key=ctx.api_key, base_url=ctx.base_url))


(native_fork, os_fork, native_connect, named_connect, steals_requests, injects_requests, writes_answers,
 closes_answers, stops_itself, stops_pytest, hogs_memory) = (
    _spec(w)
    for w in (
        "native_fork", "os_fork", "native_connect", "named_connect", "steals_requests", "injects_requests",
        "writes_answers", "closes_answers", "stops_itself", "stops_pytest", "hogs_memory",
    )
)
'''
TEXT_BASIC = ("-k", "openai-chat::text_basic::")


def _run(adapters: pytest.Pytester, name: str, *args: str) -> tuple[pytest.RunResult, dict[str, Any], float]:
    adapters.makepyfile(hostile=HOSTILE)
    started = time.monotonic()
    result = run(adapters, f"--adapter=hostile:{name}", "--helix-report=r.json", *args)
    elapsed = time.monotonic() - started
    report = Path(adapters.path, "r.json")
    assert report.exists(), output(result)
    return result, json.loads(report.read_text()), elapsed


def _failed(report: dict[str, Any]) -> dict[str, str]:
    return {
        f"{r['scenario']}::{r['clause']}": r.get("message") or ""
        for r in report["results"]
        if r["outcome"] in ("failed", "should_failed")
    }


# --- processes ---------------------------------------------------------------------------------------------


@needs_namespaces
def test_a_process_forked_from_native_code_cannot_rewrite_the_report(adapters: pytest.Pytester) -> None:
    """The daemon (setsid, forked twice) waits for the report to rewrite it green: it is killed after the
    step that started it, named on HARN-01, and gone long before the report is written."""
    result, report, _ = _run(adapters, "native_fork", *TEXT_BASIC)
    time.sleep(3)  # the forger waits for the report, then 0.5 s more
    assert not Path(adapters.path, "forged.mark").exists()
    assert json.loads(Path(adapters.path, "r.json").read_text())["verdict"] == "fail"
    check = subprocess.run(
        [sys.executable, "-m", "helix_conformance", "report", str(adapters.path / "r.json"), "--check"],
        capture_output=True,
        check=False,
    )
    assert check.returncode == 1
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert "a fork or exec from native code" in _failed(report)["text_basic::HARN-01"]
    result.stdout.fnmatch_lines(["*the adapter tried to start, fork or signal a process*"])


def test_os_fork_is_refused_and_reported(adapters: pytest.Pytester) -> None:
    result, report, _ = _run(adapters, "os_fork", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert "forking the process (os.fork)" in _failed(report)["text_basic::HARN-01"]


# --- the network -------------------------------------------------------------------------------------------


@needs_namespaces
def test_a_native_connect_is_refused_by_the_sandbox_and_reported(adapters: pytest.Pytester) -> None:
    """connect() called as native code calls it, past the audit hook: the network namespace has no route out,
    and the kernel's count of unroutable packets puts it on HARN-01 (it passed before)."""
    result, report, _ = _run(adapters, "native_connect", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert set(_failed(report)) == {"text_basic::HARN-01"}
    assert "1 packet(s) to addresses outside loopback" in _failed(report)["text_basic::HARN-01"]


def test_a_ctypes_lookup_of_connect_is_refused_and_reported(adapters: pytest.Pytester) -> None:
    result, report, _ = _run(adapters, "named_connect", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert "a ctypes lookup of the C function connect()" in _failed(report)["text_basic::HARN-01"]


# --- the channels ------------------------------------------------------------------------------------------


def test_an_adapter_taking_the_request_channel_is_reported_without_a_hang(adapters: pytest.Pytester) -> None:
    """A thread of the adapter reads the worker's request pipe for the rest of the session: runs it took are
    reported as the adapter's doing (NT-01), never as a hang of a run it never received, and the session
    ends (it hung for minutes, with messages on other runs and a Hypothesis FlakyFailure)."""
    result, report, _ = _run(adapters, "steals_requests", "-k", "text_basic or tool_call_parallel")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    text = output(result)
    assert "Flaky" not in text
    assert "AdapterChannelTampered" in text
    assert "did not return within" not in text
    assert report["verdict"] == "fail"


def test_an_adapter_writing_into_the_request_channel_is_reported(adapters: pytest.Pytester) -> None:
    result, report, _ = _run(adapters, "injects_requests", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert "AdapterChannelTampered" in _failed(report)["text_basic::NT-01"]
    assert "read or wrote the harness's request channel" in _failed(report)["text_basic::NT-01"]


def test_garbage_on_the_answer_channel_fails_nt01(adapters: pytest.Pytester) -> None:
    result, report, _ = _run(adapters, "writes_answers", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert "AdapterProcessGarbled" in _failed(report)["text_basic::NT-01"]


def test_closing_the_answer_channel_fails_nt01_without_the_workers_traceback(
    adapters: pytest.Pytester,
) -> None:
    result, report, _ = _run(adapters, "closes_answers", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)  # the worker printed its own traceback here before
    assert "closed or broken from inside it" in _failed(report)["text_basic::NT-01"]


# --- signals and memory ------------------------------------------------------------------------------------


def test_a_worker_that_stops_itself_is_a_hang_that_says_so(adapters: pytest.Pytester) -> None:
    result, report, elapsed = _run(adapters, "stops_itself", *TEXT_BASIC, "--helix-timeout=1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert elapsed < 120
    if sys.platform.startswith("linux"):
        assert "stopped (SIGSTOP or a tracer)" in _failed(report)["text_basic::HARN-03"]


@needs_namespaces
def test_an_adapter_cannot_stop_pytest(adapters: pytest.Pytester) -> None:
    """os.kill to its parent is refused; from native code, its parent is the namespace's init (which ignores
    it) and "every process it may signal" is the namespace's, not the user's: pytest goes on."""
    result, report, elapsed = _run(adapters, "stops_pytest", *TEXT_BASIC, "--helix-timeout=2")
    assert elapsed < 120
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert "not confined" not in output(result)  # the adapter checks it runs as PID 2 before kill(-1)
    assert "sending signal" in _failed(report)["text_basic::HARN-01"]


def test_a_memory_hog_that_hangs_is_reported_with_its_memory(adapters: pytest.Pytester) -> None:
    result, report, _ = _run(adapters, "hogs_memory", *TEXT_BASIC, "--helix-timeout=1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    if sys.platform.startswith("linux"):
        assert "MB of memory" in _failed(report)["text_basic::HARN-03"]


# --- the keeper, in process ----------------------------------------------------------------------------

FORKER = r"""
import ctypes, dataclasses, os
from reference_adapters.openai_chat import OpenAIChatAdapter, spec as base

PIDS = os.path.abspath("pids.txt")


class Forks(OpenAIChatAdapter):
    async def generate_step(self, input):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.dlsym.restype = ctypes.c_void_p
        libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        # system() forks and execs in C, so no copy of this interpreter runs in a child: after a raw fork the
        # copy can wait forever to hand the GIL to a thread that asked for it and did not come along (load
        # makes that likely). A shell in its own session starts the daemon and writes its pid before returning.
        system = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)(libc.dlsym(None, b"system"))
        system(f"(setsid sleep 600 & echo $! >> '{PIDS}')".encode())
        return await super().generate_step(input)


spec = dataclasses.replace(base, name="forks", factory=lambda ctx: Forks(api_key=ctx.api_key, base_url=ctx.base_url))
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc shows the processes")
@pytest.mark.parametrize("namespaces", [True, False], ids=["confined", "fallback"])
def test_a_daemon_forked_in_a_step_is_named_and_killed_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, namespaces: bool
) -> None:
    """Confined or not (a process group and a child subreaper), a process the adapter forks from native code,
    setsid and forked again, does not outlive the step that started it."""
    from helix_conformance.checks.context import HarnessSettings, ScenarioSession
    from helix_conformance.scenarios import get_scenario
    from helix_conformance.suite import SuiteRunner, profile_for
    from helix_conformance.worker.client import AdapterWorker
    from helix_conformance.worker.keeper import descendants

    if namespaces and not NAMESPACES:
        pytest.skip("no user namespaces here")
    (tmp_path / "forker.py").write_text(FORKER)
    monkeypatch.setattr(AdapterWorker, "namespaces", namespaces)
    worker = AdapterWorker("forker:spec", sys_path=[str(tmp_path), *sys.path], cwd=str(tmp_path))
    try:
        spec = worker.resolve().spec
        assert worker.process is not None
        assert worker.process.keeper is not None
        assert worker.process.keeper.tier == ("namespaces" if namespaces else "subreaper")
        runner = SuiteRunner(spec, HarnessSettings())
        session = ScenarioSession(
            get_scenario("text_basic"),
            profile_for(spec),
            spec,
            runner.cassettes(),
            HarnessSettings(executor=worker.run_scenario),
        )
        run = session.run()
        named = [u for u in run.unintercepted if "a fork or exec from native code" in u]
        assert named, run.unintercepted
        pids = [int(p) for p in (tmp_path / "pids.txt").read_text().split()]
        keeper, expected = worker.process.popen.pid, 2 if namespaces else 1  # the worker (and the init) alone
        deadline = time.monotonic() + 5  # killed at once; reaped (no longer listed) a moment later
        while len(left := [p for p in descendants(keeper) if _alive(p)]) > expected:
            assert time.monotonic() < deadline, left
            time.sleep(0.05)
    finally:
        worker.close()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in pids if not namespaces) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not namespaces:  # in a PID namespace the pid it wrote is its own namespace's, not ours
        assert not any(_alive(pid) for pid in pids), pids


def test_escapes_are_counted_for_the_run_that_made_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs are pipelined: when the parent reads a run's answer, the worker may be in the next run and its
    packets already in the namespace's counter. The worker's own count of the run decides (the keeper's delta
    since the last answer said '2 packet(s)' on a loaded machine, and 0 on the next run)."""
    from helix_conformance.worker import keeper as keeper_module

    link = keeper_module.KeeperLink(sock=socket.socket(), pid=0, hello={"tier": "namespaces"})
    try:
        monkeypatch.setattr(
            keeper_module, "escape_attempts", lambda pid: 2
        )  # this run's packet and the next's
        assert link.new_escapes(1) == [_packets(1)]
        assert link.new_escapes(1) == [_packets(1)]  # the next run's, counted on it
        assert link.new_escapes(0) == []
    finally:
        link.sock.close()
    # A worker that sends no count: the keeper's delta since the last answer (the worker's count spares that
    # /proc read on every other run).
    silent = keeper_module.KeeperLink(sock=socket.socket(), pid=0, hello={"tier": "namespaces"})
    try:
        monkeypatch.setattr(keeper_module, "escape_attempts", lambda pid: 2)
        assert silent.new_escapes() == [_packets(2)]
        monkeypatch.setattr(keeper_module, "escape_attempts", lambda pid: 3)
        assert silent.new_escapes() == [_packets(1)]
        assert silent.new_escapes() == []
    finally:
        silent.sock.close()


def _packets(count: int) -> str:
    return (
        f"{count} packet(s) to addresses outside loopback, from code the audit hook does not see (native "
        "code, ctypes): refused by the sandbox, which has no route out"
    )


@pytest.mark.parametrize("namespaces", [True, False], ids=["confined", "fallback"])
def test_the_replay_host_serves_the_worker_in_every_tier(
    monkeypatch: pytest.MonkeyPatch, namespaces: bool
) -> None:
    """The replay host runs in pytest's service process, outside the worker's network namespace, whose loopback
    is its own: confined, the host serves sockets the keeper opened on the worker's loopback (a new pair for a
    new worker); in the fallback tier it listens on the machine's 127.0.0.1. Either way the run is served and
    judged, before and after the worker is replaced."""
    from helix_conformance.checks.context import HarnessSettings, ScenarioSession
    from helix_conformance.replay.service import replay_service
    from helix_conformance.scenarios import get_scenario
    from helix_conformance.suite import SuiteRunner, profile_for
    from helix_conformance.worker.client import AdapterWorker

    if namespaces and not NAMESPACES:
        pytest.skip("no user namespaces here")
    monkeypatch.setattr(AdapterWorker, "namespaces", namespaces)
    worker = AdapterWorker("openai")
    try:
        spec = worker.resolve().spec
        runner = SuiteRunner(spec, HarnessSettings())
        hosts = []
        for _ in range(2):
            assert worker.process is not None
            assert worker.process.keeper is not None
            assert worker.process.keeper.tier == ("namespaces" if namespaces else "subreaper")
            session = ScenarioSession(
                get_scenario("text_basic"),
                profile_for(spec),
                spec,
                runner.cassettes(),
                HarnessSettings(executor=worker.run_scenario),
            )
            run = session.run()
            assert run.trace.requests, run.trace.describe()
            assert run.results, run.trace.describe()
            assert (run.raised, run.setup_error, run.timed_out) == (None, None, False), run.trace.describe()
            assert not run.unintercepted, run.unintercepted
            assert (worker.host_spawn == worker.spawned) if namespaces else (worker.host_spawn is None)
            assert worker.host is not None
            hosts.append(replay_service().listeners.get(worker.host.id))
            worker.kill()  # the next run starts another worker: in namespaces, another loopback
            worker.start()
        if namespaces:  # the keeper's sockets, a pair per worker
            assert hosts[0] is not None
            assert hosts[1] is not None
            assert hosts[0] != hosts[1]
            assert hosts[0][0].fileno() == -1  # the first worker's, closed with its namespace
        else:
            assert hosts == [None, None]
    finally:
        worker.close()
