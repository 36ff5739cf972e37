"""``run_conformance`` runs the adapter's runs ahead on a pool of worker processes, as ``pytest --adapter`` does
(worker/pool.py), keeps the pool for the next call with the same adapter, and leaves nothing of one call
queued for the next."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helix_conformance.standalone import ConformanceUsageError
from helix_conformance.testing import run_conformance
from helix_conformance.worker import launch
from helix_conformance.worker.pool import WorkerPool, default_workers

NEEDS_AN_SDK = """
import dataclasses
from reference_adapters.openai_chat import spec as base


def _factory(ctx):
    import helix_no_such_sdk  # every scenario fails the same way: the run stops early


spec = dataclasses.replace(base, name="needs-an-sdk", factory=_factory)
"""

SCENARIOS = ["text_basic", "tool_call", "text_unicode"]


def _pool(requested: str) -> WorkerPool:
    opened = next(o for o in launch._POOL.values() if o.resolved.requested == requested)
    assert opened._pool is not None, "run_conformance did not use a pool"
    return opened._pool


def _pids(pool: WorkerPool) -> list[int | None]:
    return [s.worker.process.popen.pid if s.worker.process is not None else None for s in pool.slots]


def _left_over(pool: WorkerPool) -> list[str]:
    """Runs of an earlier call the pool would still run for someone."""
    held = [t for s in pool.slots for t in s.held if t.state not in ("cancelled", "done")]
    return [f"{t.id}:{t.state}" for t in [*pool.backlog, *held]]


@pytest.fixture
def needs_an_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    (tmp_path / "needs_an_sdk_adapter.py").write_text(NEEDS_AN_SDK)
    monkeypatch.syspath_prepend(str(tmp_path))
    import needs_an_sdk_adapter

    yield needs_an_sdk_adapter
    sys.modules.pop("needs_an_sdk_adapter", None)


def _failures(report: dict[str, Any]) -> list[str]:
    """What a red call failed on, for the assertion's message."""
    return [
        f"{r['clause']} on {r['scenario']}: {r['message']}"
        for r in report["results"]
        if r["outcome"] not in ("passed", "skipped", "not_applicable")
    ]


def test_the_runs_go_to_a_pool_of_the_workers_asked_for_and_it_is_kept() -> None:
    first = run_conformance("openai", scenarios=SCENARIOS, workers=2)
    assert first["passed"] is True, "\n\n".join([*first["gate_errors"], *_failures(first)])
    assert first["settings"]["helix_workers"] == {"value": 2, "source": "argument"}
    pool = _pool("openai")
    assert len(pool.slots) == 2
    started = _pids(pool)
    assert all(started), "the second worker never started: nothing was sent ahead"

    again = run_conformance("openai", scenarios=SCENARIOS, workers=2)
    assert _pids(_pool("openai")) == started, "the kept workers were not reused"
    assert [(r["clause"], r["scenario"], r["outcome"]) for r in again["results"]] == [
        (r["clause"], r["scenario"], r["outcome"]) for r in first["results"]
    ]
    assert _left_over(pool) == []


def test_the_pool_is_resized_by_a_later_call() -> None:
    run_conformance("openai", scenarios=["text_basic"], clauses=["RES-01"], workers=1)
    assert len(_pool("openai").slots) == 1
    report = run_conformance("openai", scenarios=SCENARIOS, workers=3)
    assert report["passed"] is True
    assert len(_pool("openai").slots) == 3
    run_conformance("openai", scenarios=["text_basic"], clauses=["RES-01"], workers=1)
    assert len(_pool("openai").slots) == 1


def test_the_default_is_two_workers_and_one_inside_a_pytest_xdist_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert default_workers() == 2
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert default_workers() == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert default_workers() == 1
    report = run_conformance("openai", scenarios=["text_basic"], clauses=["RES-01"])
    assert report["settings"]["helix_workers"] == {"value": 1, "source": "default"}


def test_a_run_that_stops_early_leaves_nothing_queued_for_the_next_call(needs_an_sdk: Any) -> None:
    stopped = run_conformance(needs_an_sdk.spec, workers=2)
    assert stopped["isolation"]["mode"] == "worker"
    assert stopped["passed"] is False
    assert any("stopped" in error for error in stopped["gate_errors"]), stopped["gate_errors"]
    assert len(stopped["results"]) < 500, "the run did not stop early"
    pool = _pool("needs_an_sdk_adapter:spec")
    assert _left_over(pool) == []

    again = run_conformance(needs_an_sdk.spec, workers=2)
    assert [(r["clause"], r["scenario"], r["outcome"]) for r in again["results"]] == [
        (r["clause"], r["scenario"], r["outcome"]) for r in stopped["results"]
    ]


@pytest.mark.parametrize("workers", [0, -1, True, "2", 1.5])
def test_workers_must_be_a_positive_integer(workers: Any) -> None:
    with pytest.raises(ConformanceUsageError, match="workers must be a positive integer"):
        run_conformance("openai", scenarios=["text_basic"], workers=workers)
