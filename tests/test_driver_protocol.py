"""The driver protocol, version 2 (worker/driver.py), against a driver written in Python (tests/fake_driver.py):
the same verdicts as in-process, and a driver that dies, hangs, garbles, returns garbage or buffers its callbacks
judged exactly as a Python worker would be. Node is not needed here (H2's tests run the real Node driver)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from plugin_runs import HELIX_ENV

from helix_conformance.adapters import AdapterNotFound, resolve_adapter
from helix_conformance.checks.context import HarnessSettings
from helix_conformance.contract import HelixError, TextStepResult, ToolCallsStepResult
from helix_conformance.replay.runner import RunOptions
from helix_conformance.scenarios import get_scenario
from helix_conformance.suite import SuiteRunner, plan_suite, profile_for
from helix_conformance.worker import node
from helix_conformance.worker.client import AdapterProcessEnded, AdapterProcessGarbled
from helix_conformance.worker.driver import DriverWorker
from helix_conformance.worker.helix_json import HelixDecoder, encode_input, snake

FAKE = Path(__file__).with_name("fake_driver.py")
ROOT = Path(__file__).resolve().parents[1]


def driver(mode: str = "", adapter: str = "openai") -> DriverWorker:
    name = f"{adapter}#{mode}" if mode else adapter
    return DriverWorker(f"node:{name}", name, [sys.executable, str(FAKE)], cwd=str(ROOT))


@pytest.fixture
def openai_driver() -> Iterator[DriverWorker]:
    worker = driver()
    yield worker
    worker.close()


def outcomes(
    executor: Any,
    scenarios: set[str],
    clauses: set[str] | None = None,
    adapter: str = "openai",
    submit: Any = None,
) -> dict[str, str]:
    spec = resolve_adapter(adapter).spec
    planned = [
        p
        for p in plan_suite(spec, None)
        if p.scenario.id in scenarios and (clauses is None or p.clause in clauses)
    ]
    runner = SuiteRunner(spec, HarnessSettings(timeout=6.0, examples=1, executor=executor, submit=submit))
    runner.expect(planned)
    return {p.test_id: runner.run(p).outcome for p in planned}


def one_run(worker: DriverWorker, scenario: str = "text_basic", **options: Any) -> Any:
    spec = resolve_adapter("openai").spec
    session = SuiteRunner(spec, HarnessSettings()).session(
        next(p for p in plan_suite(spec) if p.scenario.id == scenario)
    )
    return worker.run_scenario(
        session.scenario, spec, profile_for(spec), session.interactions(), RunOptions(**options)
    )


# --- the protocol, end to end ---------------------------------------------------------------------------


def test_ready_spec_resolves_as_the_adapter(openai_driver: DriverWorker) -> None:
    resolved = openai_driver.resolve()
    assert (resolved.spec.name, resolved.spec.wire_profile) == ("openai", "openai-chat")
    assert resolved.requested == "node:openai"
    assert resolved.origin.startswith("python ")


def test_a_driver_run_is_judged_as_the_in_process_run(openai_driver: DriverWorker) -> None:
    scenarios = {
        "text_basic",
        "tool_call_parallel",
        "abort_midstream",
        "http_500",
        "thinking_text",
        "connect_error",
    }
    in_process = outcomes(None, scenarios)
    via_driver = outcomes(openai_driver.run_scenario, scenarios)
    assert len(in_process) > 40
    assert via_driver == in_process
    assert openai_driver.spawned == 1  # one driver for every run


def test_callbacks_are_traced_between_chunks_and_errors_keep_their_identity(
    openai_driver: DriverWorker,
) -> None:
    run = one_run(openai_driver)
    assert isinstance(run.result, TextStepResult)
    assert run.result.content == "".join(run.trace.text_deltas())
    kinds = [e.kind for e in run.trace.events]
    assert kinds.index("callback") < max(i for i, k in enumerate(kinds) if k == "chunk")
    assert len(run.trace.text_deltas()) >= 2
    assert run.trace.of("callback_done")
    assert run.input_before == run.input_after
    assert run.input_before["messages"]
    error_run = one_run(openai_driver, "http_401")
    error = error_run.result.error
    assert isinstance(error, HelixError)
    assert error.code == "provider_auth_error"
    assert error_run.trace.callbacks("on_error")[0].args[0] is error  # STR-06 compares with `is`


def test_an_abort_from_inside_on_text_delta_is_placed_by_the_driver(openai_driver: DriverWorker) -> None:
    from helix_conformance.replay.delivery import SplitPlan

    run = one_run(openai_driver, "text_basic", plan=SplitPlan(()), abort_on_text_delta=1)
    names = [(e.kind, e.name) for e in run.trace.events if e.kind in ("callback", "abort")]
    assert names[:2] == [("callback", "on_text_delta"), ("abort", "from on_text_delta")]


# --- broken drivers ---------------------------------------------------------------------------------------


def test_a_driver_that_dies_mid_run_is_nt_01_and_is_replaced() -> None:
    worker = driver("dies")
    try:
        run = one_run(worker)
        assert isinstance(run.raised, AdapterProcessEnded)
        assert "exit status 7" in str(run.raised)
        again = one_run(worker)
        assert isinstance(again.raised, AdapterProcessEnded)
        assert worker.spawned == 2
    finally:
        worker.close()


def test_a_driver_that_hangs_times_out_and_is_killed() -> None:
    worker = driver("hangs")
    try:
        run = one_run(worker, timeout=1.0)
        assert run.timed_out
        assert worker.process is None
        assert run.duration_s < 4
    finally:
        worker.close()


def test_a_driver_that_writes_garbage_is_garbled() -> None:
    worker = driver("garbage")
    try:
        run = one_run(worker)
        assert isinstance(run.raised, AdapterProcessGarbled)
        assert "not JSON" in str(run.raised)
    finally:
        worker.close()


def test_an_invalid_result_is_a_res_01_failure_not_an_exception() -> None:
    worker = driver("invalid")
    try:
        got = outcomes(worker.run_scenario, {"text_basic"}, {"RES-01", "RES-02", "STOP-01"})
    finally:
        worker.close()
    assert got["openai-chat::text_basic::RES-01"] == "failed"
    assert set(got.values()) <= {"failed", "skipped"}


def test_a_driver_that_buffers_callbacks_fails_str_02_only() -> None:
    worker = driver("buffers")
    try:
        got = outcomes(worker.run_scenario, {"text_basic"}, {"STR-01", "STR-02", "RES-01"})
    finally:
        worker.close()
    assert got == {
        "openai-chat::text_basic::RES-01": "passed",
        "openai-chat::text_basic::STR-01": "passed",
        "openai-chat::text_basic::STR-02": "failed",
    }


def test_a_driver_that_cannot_load_the_adapter_is_a_usage_error() -> None:
    worker = driver("loadfail")
    with pytest.raises(AdapterNotFound, match="broken on purpose"):
        worker.resolve()
    assert worker.process is None


class _Resolves:
    """A driver that resolved ``spec`` (launch._driver reads only that)."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec

    def resolve(self) -> Any:
        from helix_conformance.adapters import ResolvedAdapter

        return ResolvedAdapter(self.spec, "node:a.mjs", "a.mjs", "node v20")

    def close(self) -> None:
        pass


def test_what_a_driver_cannot_judge_is_planned_as_not_applicable_with_why() -> None:
    """NT-03 cancels a driver's step through its AbortSignal: not applicable without 'abort'; HARN-04 only
    for cmd: drivers, which report no leftover work (the Node driver does)."""
    from dataclasses import replace

    from helix_conformance.worker import launch

    spec = resolve_adapter("openai").spec
    node_adapter = launch._driver(_Resolves(spec), {})  # type: ignore[arg-type]
    assert node_adapter.resolved.not_applicable == ()
    without_abort = replace(spec, capabilities=spec.capabilities - {"abort"})
    opened = launch._driver(_Resolves(without_abort), dict(launch.DRIVER_NOT_APPLICABLE))  # type: ignore[arg-type]
    skipped = {
        p.clause: p.skip_reason for p in plan_suite(without_abort, None, dict(opened.resolved.not_applicable))
    }
    assert "AbortSignal" in str(skipped["NT-03"])
    assert "'abort'" in str(skipped["NT-03"])
    assert "only the Node driver" in str(skipped["HARN-04"])


# --- Helix JSON ------------------------------------------------------------------------------------------


def test_results_are_rebuilt_by_alias_and_invalid_ones_stay_invalid() -> None:
    dec = HelixDecoder()
    calls = dec.result(
        {
            "type": "tool_calls",
            "toolCalls": [{"id": "c1", "name": "f", "arguments": {"a": 1}}],
            "subAgentCalls": [],
        }
    )
    assert isinstance(calls, ToolCallsStepResult)
    assert calls.tool_calls[0].arguments == {"a": 1}
    assert calls.should_stop is False
    assert calls.stop_reason == "tool_use"
    odd = dec.result({"type": "text", "content": "x", "shouldStop": True, "stopReason": "end_turn", "foo": 1})
    with pytest.raises(ValueError):
        TextStepResult.model_validate(dict(odd))
    assert dec.result({"type": "nope"}) == {"type": "nope"}
    assert "could not be read" in repr(dec.result({"$unreadable": "a cycle"}))
    first = dec.error(
        {"name": "HelixError", "message": "m", "code": "provider_error", "retryable": True, "ref": 3}
    )
    assert dec.error({"name": "HelixError", "message": "m", "code": "provider_error", "ref": 3}) is first
    plain = dec.error(
        {"name": "TypeError", "message": "x is undefined", "cause": {"name": "Error", "message": "c"}}
    )
    assert type(plain).__name__ == "TypeError"
    assert not isinstance(plain, HelixError)
    assert str(plain.__cause__) == "c"
    assert snake("onTextDelta") == "on_text_delta"


def test_the_input_is_sent_as_helix_json() -> None:
    scenario = get_scenario("tool_result_roundtrip")
    data = encode_input(scenario.messages, scenario.tools, scenario.llm_config("m"), "agent", "conformance")
    assert {"toolCallId", "toolName"} <= set(next(m for m in data["messages"] if m["role"] == "tool"))
    assert data["tools"][0]["inputSchema"]["type"] == "object"
    assert data["config"]["maxRetries"] == 3


# --- node: resolution and the plugin ---------------------------------------------------------------------


def fake_node(tmp_path: Path, version: str) -> Path:
    """A `node` that reports ``version`` and runs the Python fake driver (the driver script is HELIX_DRIVER)."""
    script = tmp_path / "node"
    script.write_text(
        f'#!/bin/sh\nif [ "$1" = --version ]; then echo {version}; exit 0; fi\nexec {sys.executable} "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_missing_or_old_node_is_a_one_line_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HELIX_NODE", "")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AdapterNotFound, match=r"install Node\.js"):
        node.node_binary()
    monkeypatch.setenv("HELIX_NODE", str(fake_node(tmp_path, "v18.19.0")))
    with pytest.raises(AdapterNotFound, match=r">= 20\.6; .* is v18\.19\.0"):
        node.node_binary()


def test_the_driver_is_this_installation_s_unless_helix_driver_names_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No npm step: the driver shipped with the package is found; HELIX_DRIVER overrides it, and one whose
    dependencies were never installed says to npm install them."""
    monkeypatch.delenv("HELIX_DRIVER", raising=False)
    assert node.driver_script() == node.bundled_driver() / "bin" / "helix-driver.mjs"
    assert node.driver_script().is_file()
    package = tmp_path / "driver"
    (package / "bin").mkdir(parents=True)
    (package / "bin" / "helix-driver.mjs").write_text("")
    (package / "package.json").write_text('{"dependencies": {"left-pad": "1.0.0"}}')
    monkeypatch.setenv("HELIX_DRIVER", str(package))
    with pytest.raises(AdapterNotFound, match="run `npm install` in"):
        node.driver_script()
    (package / "node_modules" / "left-pad").mkdir(parents=True)
    assert node.driver_script() == package / "bin" / "helix-driver.mjs"
    monkeypatch.setenv("HELIX_DRIVER", str(tmp_path / "nowhere"))
    with pytest.raises(AdapterNotFound, match=r"is not the driver's bin/helix-driver\.mjs"):
        node.driver_script()


def run_pytest(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in HELIX_ENV}
    clean["PYTHONPATH"] = os.pathsep.join([str(ROOT), clean.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--assert=plain", *args],
        cwd=tmp_path, env={**clean, **env}, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


@pytest.mark.slow  # the Node driver end to end: the Node toolchain
def test_pytest_adapter_node_runs_the_suite_through_the_driver(tmp_path: Path) -> None:
    env = {"HELIX_NODE": str(fake_node(tmp_path, "v20.11.1")), "HELIX_DRIVER": str(FAKE)}
    done = run_pytest(
        tmp_path, "--adapter=node:openai", "-k", "text_basic and (STR-02 or NT-03 or RES-01)", "-rs", env=env
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert (
        "3 passed" in done.stdout
    )  # NT-03 too: the reference adapter settles at once when its signal aborts


def test_pytest_adapter_node_without_node_is_exit_4(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "--adapter=node:./adapter.mjs", env={"HELIX_NODE": "", "PATH": str(tmp_path)})
    assert done.returncode == 4
    assert "install Node.js" in done.stderr
    assert "Traceback" not in done.stderr
