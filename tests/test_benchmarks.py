"""The benchmark script runs and prints its one table, every row with a value.

Shape only: no timing is asserted here (a shared CI machine would make any threshold flaky); the figures
are read by people, from ``python benchmarks/run.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from once import once_per_session

pytestmark = [pytest.mark.exhaustive, pytest.mark.long]  # one run of benchmarks/run.py --quick: a minute

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ["figure", "value", "target", "ratio", "met?"]


def _table(output: str) -> list[list[str]]:
    lines = [line for line in output.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One run for both tests, whichever xdist workers they are on (it takes a minute)."""
    return once_per_session(tmp_path_factory, "bench", _quick_run)[1]


def _quick_run(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"],
        check=False,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_quick_run_prints_one_table(quick_run: subprocess.CompletedProcess[str]) -> None:
    assert quick_run.returncode == 0, quick_run.stderr[-3000:]
    table = _table(quick_run.stdout)
    assert table[0] == COLUMNS
    assert set(table[1][0]) <= {"-"}, "the second line separates the header"
    rows = table[2:]
    assert all(len(row) == len(COLUMNS) for row in rows), rows
    assert all(row[0] and row[1] for row in rows), "every row has a figure and a value"
    assert all(row[4] in ("yes", "no", "—") for row in rows)
    assert "Machine:" in quick_run.stdout


def test_every_area_is_measured(quick_run: subprocess.CompletedProcess[str]) -> None:
    figures = " / ".join(row[0] for row in _table(quick_run.stdout)[2:])
    for area in (
        "suite wall",
        "harness overhead per scenario",
        "plugin cost: pytest --version",
        "plugin cost: trivial collection",
        "reference vs SDK",
        "reference vs floor",
        "peak memory",
        "re-stream",
        "cassette load",
    ):
        assert area in figures, f"no row for {area!r}"
    for provider in ("openai", "anthropic", "gemini"):
        assert f"parse {provider}" in figures


def test_shards_merged_give_the_one_runs_verdict_and_the_slowest_shards_time(tmp_path: Path) -> None:
    """``--shards``: the mock adapter's one run against 2 and 4 shards, each a pytest of its own, merged."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--shards",
            "--rounds",
            "1",
            "--adapters",
            "mock",
        ],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {row[0]: row for row in _table(done.stdout)[2:]}
    assert "mock: one run (wall)" in rows, rows
    for count in (2, 4):
        row = rows[f"mock: {count} shards merged, slowest shard (wall)"]
        assert "same verdict and outcomes" in row[1], row
        assert row[4] == "yes", row


def test_a_merged_report_that_differs_from_the_one_run_is_said_outcome_by_outcome() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from shards_bench import _differences
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))

    def report(verdict: str, outcome: str) -> dict[str, object]:
        result = {
            "clause": "STOP-01",
            "scenario": "stop_max_tokens",
            "profile": "openai-chat",
            "outcome": outcome,
        }
        return {"verdict": verdict, "results": [result]}

    assert _differences(report("pass", "passed"), report("pass", "passed")) == []
    assert _differences(report("fail", "failed"), report("pass", "passed")) == [
        "verdict pass (one run: fail)",
        "STOP-01::stop_max_tokens::openai-chat: passed (one run: failed)",
    ]
