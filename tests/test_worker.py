"""The trust boundary (worker/): whatever the adapter does to its own process, pytest writes a verdict.

Each hostile adapter runs through pytest as users run it, with --helix-report=r.json: the run completes,
the report is written, the verdict fails on the clause the behaviour breaks, and pytest exits.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from plugin_runs import assert_no_crash, output, run

from helix_conformance.contract import ErrorStepResult, HelixError, ParsedToolCall, ToolCallsStepResult
from helix_conformance.replay.runner import RunOptions, ScenarioRun
from helix_conformance.replay.trace import Trace
from helix_conformance.worker import guard
from helix_conformance.worker.protocol import ProtocolError, encode_answer, parse_line
from helix_conformance.worker.runs import decode_run, encode_run
from helix_conformance.worker.snapshot import MAX_DEPTH, Encoder

HOSTILE = """
import asyncio, atexit, dataclasses, gc, os, socket, subprocess, threading, time
from my_adapter import spec as base
from reference_adapters.openai_chat import OpenAIChatAdapter
from helix_conformance.contract import ParsedToolCall, TextStepResult, ToolCallsStepResult


class Raising(TextStepResult):
    def __getattribute__(self, name):
        if name == "content":
            raise {error}()
        return super().__getattribute__(name)


class Opaque:
    def __getattr__(self, name):
        raise KeyboardInterrupt()

    def __repr__(self):
        raise SystemExit(7)


def deep(n):
    value = {{}}
    for _ in range(n):
        value = {{"a": value}}
    return value


def tamper():
    from helix_conformance import gate
    from helix_conformance.checks import registry
    from helix_conformance.gate import ItemVerdict

    gate.Gate.judge = lambda self, item, outcome: ItemVerdict("pass")
    registry.REGISTRY.clear()
    import pluggy

    for obj in gc.get_objects():
        if isinstance(obj, pluggy.PluginManager):
            class Forge:
                def pytest_runtest_logreport(self, report):
                    report.outcome = "passed"
            obj.register(Forge())


def reach_out():
    import _socket

    attempts = [
        lambda: socket.socket().connect_ex(("203.0.113.5", 443)),
        lambda: _socket.socket().connect(("203.0.113.6", 443)),
        lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("203.0.113.7", 53)),
        lambda: socket.getaddrinfo("127.example.com", 443),
        lambda: subprocess.run(["curl", "-s", "http://203.0.113.8/"], timeout=2),
    ]
    for attempt in attempts:
        try:
            attempt()
        except OSError:
            pass


class Hostile(OpenAIChatAdapter):
    what = None

    async def generate_step(self, input):
        what = self.what
        if what == "exit":
            os._exit(0)
        if what == "segfault":
            import ctypes
            ctypes.string_at(0)
        if what == "c_loop":
            import re
            re.match(r"(a+)+$", "a" * 64 + "b")
        if what == "tamper":
            tamper()
            return None
        if what == "leftovers":
            threading.Thread(target=time.sleep, args=(3600,)).start()
            atexit.register(time.sleep, 3600)
        if what == "raising":
            return Raising.model_construct(content="x", should_stop=True, stop_reason="end_turn")
        if what == "opaque":
            return Opaque()
        if what == "deep":
            call = ParsedToolCall.model_construct(id="call_1", name="f", arguments=deep(200_000))
            return ToolCallsStepResult.model_construct(tool_calls=[call])
        if what == "network":
            reach_out()
        return await super().generate_step(input)


def _spec(what):
    cls = type(f"Hostile_{{what}}", (Hostile,), {{"what": what}})
    return dataclasses.replace(base, name=what, factory=lambda ctx: cls(api_key=ctx.api_key, base_url=ctx.base_url))


exits, segfaults, c_loops, tampers, leftovers, raising, opaque, deep_args, network = (
    _spec(w)
    for w in ("exit", "segfault", "c_loop", "tamper", "leftovers", "raising", "opaque", "deep", "network")
)
"""
TEXT_BASIC = ("-k", "openai-chat::text_basic::")


def _run(adapters: pytest.Pytester, name: str, *args: str, error: str = "KeyboardInterrupt") -> Any:
    adapters.makepyfile(hostile=HOSTILE.format(error=error))
    started = time.monotonic()
    result = run(adapters, f"--adapter=hostile:{name}", "--helix-report=r.json", *args)
    elapsed = time.monotonic() - started
    report_path = Path(adapters.path, "r.json")
    assert report_path.exists(), output(result)
    return result, json.loads(report_path.read_text()), elapsed


def _failed(report: dict[str, Any]) -> dict[str, str]:
    return {
        f"{r['scenario']}::{r['clause']}": r.get("message") or ""
        for r in report["results"]
        if r["outcome"] in ("failed", "should_failed")
    }


@pytest.mark.slow  # a hostile adapter in a pytest run of its own: rarely changed, seconds each
@pytest.mark.parametrize(("name", "ended"), [("exits", "exit status 0"), ("segfaults", "SIGSEGV")])
def test_an_adapter_that_ends_its_process_fails_nt01_and_the_run_goes_on(
    adapters: pytest.Pytester, name: str, ended: str
) -> None:
    result, report, _ = _run(adapters, name, "-k", "text_basic or tool_call_parallel")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert report["verdict"] == "fail"
    failed = _failed(report)
    assert {"text_basic::NT-01", "tool_call_parallel::NT-01"} <= set(failed), failed
    result.stdout.fnmatch_lines(
        [f"*AdapterProcessEnded: the adapter's process ended during generate_step (*{ended})*"]
    )
    assert len(report["results"]) > 40  # every selected check has its outcome: the session went on


def test_an_adapter_spinning_in_c_is_killed_at_the_timeout(adapters: pytest.Pytester) -> None:
    """A regex backtracking holds the GIL: nothing in the worker can interrupt it, the parent kills it."""
    result, report, elapsed = _run(
        adapters, "c_loops", "-k", "text_basic and (HARN-03 or RES-01)", "--helix-timeout=0.5"
    )
    assert elapsed < 60
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert "text_basic::HARN-03" in _failed(report)
    result.stdout.fnmatch_lines(["*generate_step did not return within 0.5 s*"])


@pytest.mark.slow  # a hostile adapter in a pytest run of its own: rarely changed, seconds each
def test_tampering_with_the_gate_from_the_adapter_changes_nothing(adapters: pytest.Pytester) -> None:
    """Patching Gate.judge, clearing the registry, registering a forging pytest hook found through gc:
    all in the worker's process, so the adapter that returns None still fails RES-01."""
    result, report, _ = _run(adapters, "tampers", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert report["verdict"] == "fail"
    assert "text_basic::RES-01" in _failed(report)
    result.stdout.fnmatch_lines(["*actual:   NoneType: None*", "*VERDICT: FAIL*"])


@pytest.mark.slow  # a hostile adapter in a pytest run of its own: rarely changed, seconds each
def test_threads_and_atexit_handlers_left_behind_do_not_hold_pytest(adapters: pytest.Pytester) -> None:
    """A non-daemon thread sleeping an hour and an atexit handler sleeping an hour, left in the worker:
    the adapter conforms otherwise, so the verdict passes, and pytest still exits at once."""
    result, report, elapsed = _run(adapters, "leftovers", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.OK, output(result)
    assert report["verdict"] == "pass"
    assert elapsed < 60


@pytest.mark.slow  # a hostile adapter in a pytest run of its own: rarely changed, seconds each
@pytest.mark.parametrize("error", ["KeyboardInterrupt", "SystemExit"])
def test_a_result_whose_attribute_raises_fails_res01(adapters: pytest.Pytester, error: str) -> None:
    result, report, _ = _run(adapters, "raising", *TEXT_BASIC, error=error)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)  # not INTERRUPTED
    assert_no_crash(result)
    assert "text_basic::RES-01" in _failed(report)
    result.stdout.fnmatch_lines([f"*the result could not be read: reading it raised {error}*"])


@pytest.mark.slow  # a hostile adapter in a pytest run of its own: rarely changed, seconds each
def test_an_object_whose_every_attribute_raises_is_judged_not_read(adapters: pytest.Pytester) -> None:
    result, report, _ = _run(adapters, "opaque", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert "text_basic::RES-01" in _failed(report)
    result.stdout.fnmatch_lines(["*actual:   Opaque: <repr() raised SystemExit>*"])


@pytest.mark.slow  # a hostile adapter in a pytest run of its own: rarely changed, seconds each
def test_arguments_nested_200000_deep_fail_res01_without_aborting(adapters: pytest.Pytester) -> None:
    result, report, _ = _run(adapters, "deep_args", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert "text_basic::RES-01" in _failed(report)
    result.stdout.fnmatch_lines([f"*the result could not be read: nested deeper than {MAX_DEPTH}*"])


@pytest.mark.slow  # a hostile adapter in a pytest run of its own: rarely changed, seconds each
def test_every_way_out_to_the_network_is_refused_and_reported_on_harn01(adapters: pytest.Pytester) -> None:
    result, report, _ = _run(adapters, "network", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    failed = _failed(report)
    assert set(failed) == {"text_basic::HARN-01"}, failed  # the answer itself still conforms
    text = output(result)
    for refused in (
        "socket connect to ('203.0.113.5', 443)",
        "socket connect to ('203.0.113.6', 443)",
        "socket sendto to ('203.0.113.7', 53)",
        "DNS lookup of '127.example.com'",
        "starting a process (curl -s http://203.0.113.8/)",
    ):
        assert refused in text, refused


def test_in_process_mode_says_it_is_not_a_gate(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=my_adapter", "--helix-in-process", "--helix-report=r.json", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(
        [
            "*in-process: not a gate: the adapter runs inside pytest's process (--helix-in-process)*",
            "VERDICT: PASS*(in-process: not a gate)",
        ]
    )
    report = json.loads(Path(adapters.path, "r.json").read_text())
    assert report["settings"]["helix_in_process"] == {"value": True, "source": "cli"}
    assert any(note.startswith("in-process: not a gate") for note in report["notes"])


def test_the_adapter_module_is_not_imported_by_pytest(adapters: pytest.Pytester) -> None:
    """Its import is the worker's: module-level code cannot touch pytest's process either."""
    adapters.makepyfile(
        import_marker="""
import os, sys
from my_adapter import spec
print("imported in", "worker" if "helix_conformance.worker.child" in sys.modules else "pytest", file=sys.stderr)
"""
    )
    result = run(adapters, "--adapter=import_marker", *TEXT_BASIC)
    assert result.ret == pytest.ExitCode.OK, output(result)
    assert "imported in worker" in output(result)
    assert "imported in pytest" not in output(result)


# --- units: the guard, the snapshot, the protocol ---------------------------------------------------


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("localhost", True),
        ("127.example.com", False),
        ("api.openai.com", False),
        ("203.0.113.5", False),
        ("::ffff:203.0.113.5", False),
        (None, False),
    ],
)
def test_loopback_is_judged_on_the_address_not_its_spelling(host: Any, loopback: bool) -> None:
    assert guard.is_loopback_host(host) is loopback


def test_the_snapshot_keeps_identity_causes_and_fields() -> None:
    """STR-06 compares on_error's argument with the returned error by identity; ERR-02 reads the cause."""
    cause = ValueError("upstream said no")
    error = HelixError("bad request", code="provider_invalid_request", status_code=400, cause=cause)
    trace = Trace()
    trace.add("callback", name="on_error", args=(error,))
    call = ParsedToolCall(id="c1", name="f", arguments={"$weird": [1, (2, 3)], "x": float("nan")})
    source = ScenarioRun(options=RunOptions(), trace=trace, results=[ErrorStepResult(error=error)])
    source.trace.add("callback", name="on_tool_call", args=(call,))
    rebuilt = decode_run(json.loads(json.dumps(encode_run(source))), RunOptions(), [])
    result = rebuilt.result
    assert isinstance(result, ErrorStepResult)
    assert type(result.error) is HelixError
    assert rebuilt.trace.callbacks("on_error")[0].args[0] is result.error
    assert (result.error.code, result.error.category, result.error.status_code) == (
        "provider_invalid_request",
        "provider",
        400,
    )
    assert str(result.error) == "bad request"
    assert type(result.error.cause).__name__ == "ValueError"
    assert type(result.error.cause).__module__ == "builtins"
    assert str(result.error.cause) == "upstream said no"
    rebuilt_call = rebuilt.trace.callbacks("on_tool_call")[0].args[0]
    assert isinstance(rebuilt_call, ParsedToolCall)
    assert rebuilt_call.arguments["$weird"] == [1, (2, 3)]


def test_chunk_bytes_cross_the_channel_only_when_asked() -> None:
    """The checks read chunk positions, never their bytes; `helix-conformance replay` asks for the bytes."""
    trace = Trace()
    trace.add("chunk", args=(b"data: {}\n\n",), interaction=0, chunk_index=0, last=True)
    for options, expected in ((RunOptions(), ()), (RunOptions(chunk_bytes=True), (b"data: {}\n\n",))):
        source = ScenarioRun(options=options, trace=trace)
        rebuilt = decode_run(json.loads(json.dumps(encode_run(source))), options, [])
        (chunk,) = rebuilt.trace.of("chunk")
        assert (chunk.args, chunk.interaction, chunk.chunk_index, chunk.last) == (expected, 0, 0, True)


def test_a_result_too_deep_becomes_a_marker_not_a_crash() -> None:
    value: Any = []
    for _ in range(MAX_DEPTH + 5):
        value = [value]
    encoded = Encoder().value(ToolCallsStepResult.model_construct(tool_calls=[value]))
    assert encoded == {"$unreadable": f"nested deeper than {MAX_DEPTH}"}


@pytest.mark.parametrize(
    "line", [b"not json", b"[1, 2]", b'{"v": 99, "type": "result"}', b"[" * 100_000 + b"]" * 100_000]
)
def test_a_garbled_line_from_the_worker_is_a_protocol_error(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        parse_line(line)


@pytest.mark.parametrize(
    "value",
    ["a lone surrogate \ud83d from a bad split", {"nested": [[["x", 1.5]]]}, 2**80, "é\n\u2028"],
)
def test_an_answer_is_read_back_as_written_even_where_the_fast_json_refuses(value: Any) -> None:
    """pydantic-core writes and reads answers, json takes what it refuses (a lone surrogate): the parent must
    read exactly what the worker wrote, on one line."""
    deep: Any = value
    for _ in range(250):  # past pydantic-core's nesting limit on reading
        deep = [deep]
    for sent in (value, deep):
        line = encode_answer({"v": 1, "type": "result", "id": 1, "run": sent})
        assert line.index(b"\n") == len(line) - 1
        assert parse_line(line)["run"] == sent


@pytest.mark.parametrize(
    "text", ["17 \u00d7 3 = 51.", "\u4e2d\u6587", "\U0001f600 an emoji, a surrogate pair escaped"]
)
def test_a_driver_s_escaped_text_is_read_as_the_text_it_escapes(text: str) -> None:
    """A driver may escape what is not ASCII (Python's json does by default): the escape reads as its character.
    pydantic-core 2.18.2 and 2.18.3 read it as that character's UTF-8 bytes taken for Latin-1 (U+00C3 U+0097 for
    U+00D7), so the floor is pydantic 2.7.3, whose pydantic-core reads it right (found by tox -e oldest)."""
    line = json.dumps({"v": 2, "type": "callback", "args": [text]}, ensure_ascii=True).encode()
    assert parse_line(line, version=2)["args"] == [text]


def test_the_guard_refuses_outside_addresses_in_this_process_only_when_armed() -> None:
    """The hook is installed in the worker only; here we exercise its judge directly."""
    sock = socket.socket()
    try:
        with pytest.raises(guard.NetworkRefused):
            guard._hook("socket.connect", (sock, ("203.0.113.5", 443)))
        guard._hook("socket.connect", (sock, ("127.0.0.1", 8080)))
        with pytest.raises(guard.NetworkRefused):
            guard._hook("socket.getaddrinfo", ("127.example.com", 443, 0, 0, 0))
        with pytest.raises(guard.ProcessRefused):
            guard._hook("subprocess.Popen", ("curl", ["curl", "http://203.0.113.8/"], None, None))
    finally:
        sock.close()
    assert guard.drain() == [
        "socket connect to ('203.0.113.5', 443)",
        "DNS lookup of '127.example.com'",
        "starting a process (curl http://203.0.113.8/)",
    ]


def test_one_worker_serves_every_run_and_a_dead_one_is_replaced() -> None:
    """The cost stays low (no process per run), and a worker killed between runs is started again."""
    import os
    import signal

    from helix_conformance.checks.context import HarnessSettings, ScenarioSession
    from helix_conformance.contract import TextStepResult
    from helix_conformance.scenarios import get_scenario
    from helix_conformance.suite import SuiteRunner, profile_for
    from helix_conformance.worker.client import AdapterWorker

    worker = AdapterWorker("openai")
    try:
        spec = worker.resolve().spec
        runner = SuiteRunner(spec, HarnessSettings())
        profile = profile_for(spec)
        scenario = get_scenario("text_basic")

        def session() -> ScenarioSession:
            return ScenarioSession(
                scenario, profile, spec, runner.cassettes(), HarnessSettings(executor=worker.run_scenario)
            )

        first, second = session().run(), session().run()
        assert isinstance(first.result, TextStepResult)
        assert first.result.content == second.result.content
        assert worker.spawned == 1
        assert worker.process is not None
        os.kill(worker.process.popen.pid, signal.SIGKILL)
        worker.process.popen.wait()
        lost = session().run()
        assert type(lost.raised).__name__ == "AdapterProcessEnded"
        assert "killed by signal SIGKILL" in str(lost.raised)
        again = session().run()
        assert isinstance(again.result, TextStepResult)
        assert worker.spawned == 2
    finally:
        worker.close()
    assert worker.process is None


def _imports_of(path: Path) -> set[str]:
    """The worker modules ``path`` imports, at module level or inside functions (not under TYPE_CHECKING)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for branch in ast.walk(tree)
        if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
        for statement in branch.body
        for node in ast.walk(statement)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only or not isinstance(node, ast.ImportFrom) or node.level != 1:
            continue
        for alias in node.names:
            found.add(node.module or alias.name)
    return {name for name in found if (path.parent / f"{name}.py").exists()} - {path.stem}


def test_the_worker_package_has_no_import_circle() -> None:
    """Dependencies point one way inside worker/ (launch starts processes, client does not know launch)."""
    folder = Path(guard.__file__).parent
    graph = {path.stem: _imports_of(path) for path in folder.glob("*.py")}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import circle: {' -> '.join((*path, module))}"
        if module in done:
            return
        for imported in graph[module]:
            visit(imported, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())
