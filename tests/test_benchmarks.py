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
