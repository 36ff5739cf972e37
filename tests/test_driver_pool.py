"""Several drivers of one foreign adapter, each driven by a thread (worker/driver_pool.py): runs overlap in
separate processes, a broken driver is still its run's outcome, the verdicts are those of one driver, and
nothing is left running when the pool closes. Against the Python driver of tests/fake_driver.py."""

from __future__ import annotations

import ast
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from test_driver_protocol import FAKE, ROOT, outcomes

from helix_conformance.adapters import resolve_adapter
from helix_conformance.checks.context import HarnessSettings
from helix_conformance.contract import ToolCallsStepResult
from helix_conformance.replay.runner import RunOptions
from helix_conformance.suite import SuiteRunner, plan_suite, profile_for
from helix_conformance.worker.client import AdapterProcessEnded
from helix_conformance.worker.driver import DriverWorker
from helix_conformance.worker.driver_pool import DriverPool
from helix_conformance.worker.helix_json import HelixDecoder


def pool(mode: str = "", size: int = 2) -> DriverPool:
    name = f"openai#{mode}" if mode else "openai"
    first = DriverWorker(f"node:{name}", name, [sys.executable, str(FAKE)], cwd=str(ROOT))
    first.start()
    return DriverPool(first, size)


def run_call(scenario: str = "text_basic", **options: Any) -> tuple[Any, ...]:
    spec = resolve_adapter("openai").spec
    session = SuiteRunner(spec, HarnessSettings()).session(
        next(p for p in plan_suite(spec) if p.scenario.id == scenario)
    )
    return session.scenario, spec, profile_for(spec), session.interactions(), RunOptions(**options)


def test_runs_sent_ahead_overlap_in_two_drivers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELIX_FAKE_MEETING", str(tmp_path))
    drivers = pool("meets")
    try:
        tickets = [drivers.submit(*run_call()) for _ in range(2)]
        runs = [t.result() for t in tickets]
    finally:
        drivers.close()
    assert all(r.raised is None and r.setup_error is None and len(r.results) == 1 for r in runs)
    met = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".met"))
    assert len(met) == 2, "each run waited for a run in the other driver"


@pytest.mark.slow  # Node drivers end to end: the Node toolchain
def test_the_verdicts_are_those_of_one_driver() -> None:
    scenarios = {"text_basic", "tool_call_parallel", "abort_midstream", "http_500"}
    single = DriverWorker("node:openai", "openai", [sys.executable, str(FAKE)], cwd=str(ROOT))
    try:
        expected = outcomes(single.run_scenario, scenarios)
    finally:
        single.close()
    drivers = pool()
    try:
        got = outcomes(drivers.run_scenario, scenarios, submit=drivers.submit)
        spawned = [w.spawned for w in drivers.workers]
        ran = [w.next_id for w in drivers.workers]
    finally:
        drivers.close()
    assert got == expected
    assert spawned == [1, 1]
    assert all(ran), "the runs sent ahead went to the second driver too"


def test_the_other_drivers_start_before_their_first_run_and_a_pool_closed_meanwhile_leaves_none() -> None:
    """The others start as the pool is made (pytest collects meanwhile), not on their first run beside the
    runs; a pool closed while they start ends them all."""
    drivers = pool(size=2)
    try:
        _wait_until(lambda: drivers.workers[1].ready is not None)
        assert [w.spawned for w in drivers.workers] == [1, 1]
        assert drivers.workers[1].next_id == 0, "started, not by a run"
    finally:
        drivers.close()
    assert all(w.process is None for w in drivers.workers)
    closed_at_once = pool(size=3)
    closed_at_once.close()
    assert all(w.process is None for w in closed_at_once.workers)


def test_a_driver_that_dies_is_its_runs_outcome_and_the_pool_goes_on() -> None:
    drivers = pool("dies")
    try:
        runs = [t.result() for t in [drivers.submit(*run_call()) for _ in range(3)]]
        spawned = sum(w.spawned for w in drivers.workers)
    finally:
        drivers.close()
    assert all(isinstance(r.raised, AdapterProcessEnded) for r in runs)
    assert all("exit status 7" in str(r.raised) for r in runs)
    assert spawned >= 3, "each dead driver was started again for the next run"


def test_urgent_runs_go_before_runs_sent_ahead_and_cancelled_ones_never_run() -> None:
    drivers = pool("hangs", size=1)
    try:
        hung = drivers.submit(*run_call(timeout=60.0))
        _wait_until(lambda: hung.state == "running")
        first, second, dropped = (drivers.submit(*run_call()) for _ in range(3))
        urgent = drivers.submit(*run_call(), urgent=True)
        assert drivers.backlog == [urgent, first, second, dropped]
        dropped.cancel()
        assert drivers.backlog == [urgent, first, second]
        assert dropped.state == "cancelled"
        waiter = threading.Thread(target=second.result, daemon=True)
        waiter.start()
        _wait_until(lambda: second.urgent)
        assert drivers.backlog == [urgent, second, first], "awaited: after the urgent ones, before the rest"
    finally:
        drivers.close()
    waiter.join(5)
    assert not waiter.is_alive(), "close() answers whoever waits"
    assert second.run is not None
    assert second.run.setup_error == "the pool closed"


def test_close_kills_a_driver_still_running_and_stops_its_thread() -> None:
    drivers = pool("hangs")
    ticket = drivers.submit(*run_call(timeout=60.0))
    _wait_until(lambda: ticket.state == "running")
    ticket.cancel()
    drivers.close()
    assert not any(t.is_alive() for t in drivers.threads.values())
    assert all(w.process is None for w in drivers.workers)


def test_resize_stops_the_drivers_beyond_and_keeps_the_first() -> None:
    drivers = pool(size=3)
    try:
        first = drivers.workers[0]
        for ticket in [drivers.submit(*run_call()) for _ in range(3)]:
            ticket.result()
        drivers.resize(1)
        assert drivers.workers == [first]
        _wait_until(lambda: len(drivers.threads) == 1)
        assert drivers.run_scenario(*run_call()).results
    finally:
        drivers.close()


def test_decoding_in_a_driver_thread_never_parses_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """CPython 3.11 keeps its AST state per interpreter: an ``ast.parse`` in a driver's thread while pytest
    formats a failure in the main thread ended the session (INTERNALERROR, "AST constructor recursion depth
    mismatch"). Filling absent defaults once asked pydantic for the factory's signature, which parses."""

    parsed: list[object] = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *args, **kwargs: parsed.append(args) or real(*args, **kwargs))
    result = HelixDecoder().result(
        {"type": "tool_calls", "toolCalls": [], "thinking": {"content": "hm"}, "shouldStop": False}
    )
    monkeypatch.undo()  # pytest parses to show a failure
    assert parsed == []
    assert isinstance(result, ToolCallsStepResult)
    assert result.thinking is not None
    assert result.thinking.redacted == []
    assert result.sub_agent_calls == []


def _wait_until(condition: Any, limit: float = 20.0) -> None:
    done = threading.Event()
    for _ in range(int(limit / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("the pool never got there")
