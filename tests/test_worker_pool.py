"""Runs sent ahead to the adapter's workers (worker/pool.py): the same runs, whatever happens to a worker.

A run sent ahead must come back as the run waited for would have; a worker that hangs, ends or cannot start
costs its one run (HARN-03, NT-01), never the runs queued behind it; a run waited for goes before the runs
sent ahead; a cancelled hint is not run; full channels in both directions do not deadlock.
"""

from __future__ import annotations

import signal
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from helix_conformance.checks.context import HarnessSettings
from helix_conformance.contract import TextStepResult
from helix_conformance.replay.interactions import CassetteCache, build_interactions
from helix_conformance.replay.runner import RunOptions
from helix_conformance.scenarios import get_scenario
from helix_conformance.suite import bundled_cassettes, profile_for
from helix_conformance.worker.client import AdapterWorker
from helix_conformance.worker.pool import AHEAD_PER_WORKER, WorkerPool

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no worker process on Windows")

ADAPTER = """
import asyncio, dataclasses, os, time
from reference_adapters.openai_chat import OpenAIChatAdapter, spec as base


class PoolAdapter(OpenAIChatAdapter):
    what = ""

    async def generate_step(self, input):
        if self.what == "slow":  # real CPU time: the virtual clock skips sleeps
            started = time.perf_counter()
            while time.perf_counter() - started < 0.2:
                pass
        if input.tools and self.what == "hang":
            await asyncio.get_running_loop().create_future()
        if input.tools and self.what == "exit":
            os._exit(3)
        if input.tools and self.what == "spin":  # catastrophic backtracking holds the GIL: nothing else runs
            import re
            re.match(r"(a+)+$", "a" * 64 + "b")
        result = await super().generate_step(input)
        if self.what == "big":
            return result.model_copy(update={"content": "x" * 700_000})
        return result


def _spec(what):
    cls = type(f"Pool_{what or 'plain'}", (PoolAdapter,), {"what": what})
    return dataclasses.replace(base, name=what or "plain", factory=lambda ctx: cls(api_key=ctx.api_key, base_url=ctx.base_url))


plain, slow, hang, exits, big, spin = (_spec(w) for w in ("", "slow", "hang", "exit", "big", "spin"))
"""


@pytest.fixture
def module(tmp_path: Path) -> Path:
    (tmp_path / "pool_adapter.py").write_text(textwrap.dedent(ADAPTER))
    return tmp_path


def _pool(module: Path, name: str, size: int) -> WorkerPool:
    first = AdapterWorker(f"pool_adapter:{name}", sys_path=[str(module), *sys.path], cwd=str(module))
    first.start()
    return WorkerPool(first, size)


@pytest.fixture
def pools(module: Path) -> Iterator[Any]:
    made: list[WorkerPool] = []

    def make(name: str, size: int = 1) -> WorkerPool:
        made.append(_pool(module, name, size))
        return made[-1]

    yield make
    for pool in made:
        pool.close()


def _call(scenario_id: str, options: RunOptions | None = None, pad: int = 0) -> tuple[Any, ...]:
    """The arguments of run_scenario for a bundled scenario (``pad``: an SSE comment of that many bytes in
    front of its body, which every SSE parser skips)."""
    from reference_adapters.openai_chat import spec

    scenario = get_scenario(scenario_id)
    profile = profile_for(spec)
    interactions = build_interactions(scenario, profile, CassetteCache(bundled_cassettes()))
    if pad:
        interactions = [replace(i, body=b": " + b"p" * pad + b"\n\n" + i.body) for i in interactions]
    return scenario, spec, profile, interactions, options or RunOptions(timeout=1.0)


def test_runs_sent_ahead_are_the_runs_waited_for_and_a_second_worker_takes_the_overflow(pools: Any) -> None:
    pool = pools("plain", 2)
    waited = pool.run_scenario(*_call("text_basic"))
    tickets = [pool.submit(*_call("text_basic")) for _ in range(2 * (AHEAD_PER_WORKER + 1) + 2)]
    runs = [t.result() for t in tickets]
    assert isinstance(waited.result, TextStepResult)
    assert {r.result.content for r in runs} == {waited.result.content}
    assert all(not r.timed_out and r.raised is None for r in runs)
    assert [s.worker.spawned for s in pool.slots] == [1, 1]


def test_workers_started_together_are_the_pool_s_own_and_none_is_started_again(module: Path) -> None:
    """``siblings`` spawns the others while the first imports the adapter: the pool reads their ``ready``
    and sends them runs; it starts no process beyond them, and one more than the pool's size is closed."""
    first = AdapterWorker("pool_adapter:slow", sys_path=[str(module), *sys.path], cwd=str(module))
    spares = first.siblings(2)
    assert [w.spawned for w in (first, *spares)] == [1, 1, 1]
    first.start()
    assert all(w.ready is None for w in spares), "their answers are the pool's to read"
    pool = WorkerPool(first, 2, spares)
    try:
        assert spares[1].process is None, "beyond the pool's size: closed"
        assert [s.worker for s in pool.slots] == [first, spares[0]]
        tickets = [pool.submit(*_call("text_basic")) for _ in range(AHEAD_PER_WORKER + 3)]
        assert all(isinstance(t.result().result, TextStepResult) for t in tickets)
        assert spares[0].ready is not None
        assert not pool.slots[1].broken
        assert spares[0].host is not None, "runs were staged on the second worker's host"
        assert [s.worker.spawned for s in pool.slots] == [1, 1]
    finally:
        pool.close()


def test_workers_started_for_a_name_that_does_not_resolve_are_closed(
    module: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helix_conformance.adapters import AdapterNotFound
    from helix_conformance.worker import launch

    started: list[AdapterWorker] = []
    siblings = AdapterWorker.siblings

    def recorded(self: AdapterWorker, count: int) -> list[AdapterWorker]:
        started.extend([self, *siblings(self, count)])
        return started[1:]

    monkeypatch.setattr(AdapterWorker, "siblings", recorded)
    monkeypatch.syspath_prepend(str(module))
    with pytest.raises(AdapterNotFound, match="no_such_spec"):
        launch.open_adapter("pool_adapter:no_such_spec", cwd=str(module), workers=3)
    assert len(started) == 3
    assert all(w.process is None for w in started), "no process of a name that failed is left running"


def test_a_hang_is_its_runs_timeout_and_the_runs_behind_it_are_sent_again(pools: Any) -> None:
    pool = pools("hang")
    hung = pool.submit(*_call("tool_call_parallel"))
    behind = [pool.submit(*_call("text_basic")) for _ in range(AHEAD_PER_WORKER)]
    assert hung.result().timed_out
    assert all(isinstance(t.result().result, TextStepResult) for t in behind)
    assert pool.slots[0].worker.spawned == 2


def test_a_process_that_ends_fails_its_own_run_only(pools: Any) -> None:
    pool = pools("exits")
    ended = pool.submit(*_call("tool_call_parallel"))
    behind = [pool.submit(*_call("text_basic")) for _ in range(AHEAD_PER_WORKER)]
    raised = ended.result().raised
    assert type(raised).__name__ == "AdapterProcessEnded"
    assert "ended during generate_step (exit status 3)" in str(raised)
    assert all(isinstance(t.result().result, TextStepResult) for t in behind)


def test_a_run_waited_for_goes_before_the_runs_sent_ahead(pools: Any) -> None:
    pool = pools("slow")
    ahead = [pool.submit(*_call("text_basic")) for _ in range(AHEAD_PER_WORKER + 1)]
    urgent = pool.run_scenario(*_call("text_basic"))
    assert isinstance(urgent.result, TextStepResult)
    assert ahead[-1].run is None, "the last run sent ahead ran before the run waited for"
    assert all(isinstance(t.result().result, TextStepResult) for t in ahead)


def test_a_cancelled_run_is_not_run(pools: Any) -> None:
    pool = pools("slow")
    tickets = [pool.submit(*_call("text_basic")) for _ in range(2 * (AHEAD_PER_WORKER + 1))]
    unsent = [t for t in tickets if t.state == "queued"]
    assert unsent
    for ticket in unsent:
        ticket.cancel()
    assert all(isinstance(t.result().result, TextStepResult) for t in tickets if t not in unsent)
    assert all(t.run is None and t.state == "cancelled" for t in unsent)


def test_a_worker_that_cannot_start_leaves_the_runs_to_the_others(pools: Any) -> None:
    pool = pools("slow", 2)  # 0.2 s a run: the second worker answers its hello before the runs are over
    pool.slots[1].worker = AdapterWorker("pool_adapter:no_such_spec", sys_path=pool.slots[0].worker.sys_path)
    runs = [pool.submit(*_call("text_basic")) for _ in range(3 * (AHEAD_PER_WORKER + 1))]
    assert all(isinstance(t.result().result, TextStepResult) for t in runs)
    assert "no_such_spec" in pool.slots[1].broken


def test_full_channels_both_ways_do_not_deadlock(pools: Any) -> None:
    """Requests of 1.5 MB each into the worker while its 700 KB results fill the channel back."""
    pool = pools("big")
    previous = signal.signal(signal.SIGALRM, signal.default_int_handler)
    signal.alarm(60)
    try:
        tickets = [pool.submit(*_call("text_basic", pad=1_500_000)) for _ in range(6)]
        runs = [t.result() for t in tickets]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert [len(r.result.content) for r in runs] == [700_000] * 6


def test_the_session_takes_the_run_sent_ahead_instead_of_running_it_again(pools: Any) -> None:
    from helix_conformance.checks.context import ScenarioSession

    pool = pools("plain")
    scenario, spec, profile, _, _ = _call("text_basic")
    executed: list[Any] = []

    def executor(*args: Any, **kwargs: Any) -> Any:
        executed.append(args)
        return pool.run_scenario(*args, **kwargs)

    settings = HarnessSettings(executor=executor, submit=pool.submit)
    session = ScenarioSession(scenario, profile, spec, CassetteCache(bundled_cassettes()), settings)
    session.ahead(RunOptions(callbacks="sync"))
    run = session.run(RunOptions(callbacks="sync"))
    assert isinstance(run.result, TextStepResult)
    assert executed == []
    assert settings.totals.runs == 1
    session.run(RunOptions(callbacks="none"))
    assert len(executed) == 1


def test_a_worker_spinning_in_c_while_a_large_run_waits_to_be_sent_is_killed_at_its_limit(pools: Any) -> None:
    """The spinning worker reads nothing, so a run too large for the channel cannot be sent: pytest must not
    wait on the write for good, but kill the worker at the spinning run's limit and send the rest again."""
    pool = pools("spin")
    previous = signal.signal(signal.SIGALRM, signal.default_int_handler)
    signal.alarm(60)
    try:
        spinning = pool.submit(*_call("tool_call_parallel"))
        behind = [pool.submit(*_call("text_basic", pad=1_500_000)) for _ in range(3)]
        assert spinning.result().timed_out
        assert all(isinstance(t.result().result, TextStepResult) for t in behind)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
