"""Timing plumbing shared by the benchmarks: interleaved rounds, medians, noise, and the one output table.

The machine is shared (2 cores, other people's test runs), so nothing here trusts a single timing: every
figure that is compared with another is measured in the same rounds, alternating (A, B, A, B…, with the
order rotated each round so neither side always runs second), and reported as the median of its rounds with
its spread. A ratio is a ratio of medians.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Samples:
    """Repeated measurements of one figure (seconds, or any unit), with the summary the table shows."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def spread(self) -> float:
        """(max - min) / median: how much the rounds disagreed; 0 with a single round."""
        if len(self.values) < 2 or self.median == 0:
            return 0.0
        return (max(self.values) - min(self.values)) / self.median


def interleave(runs: dict[str, Callable[[], float]], rounds: int) -> dict[str, Samples]:
    """Call every function once per round, rotating the order each round; each returns its own figure."""
    names = list(runs)
    values: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            values[name].append(runs[name]())
    return {name: Samples(tuple(v)) for name, v in values.items()}


def timed(func: Callable[[], object]) -> Callable[[], float]:
    """A function's wall time as a measurement."""

    def run() -> float:
        started = time.perf_counter()
        func()
        return time.perf_counter() - started

    return run


def pytest_wall(
    args: Sequence[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    ok: Sequence[int] = (0, 5),
    cpu: list[float] | None = None,
    stdout: list[str] | None = None,
) -> Callable[[], float]:
    """Wall time of one ``python -m pytest ARGS`` subprocess, failing loudly if pytest exits otherwise than
    ``ok`` (0, or 5: a trivial project may collect nothing). ``cpu`` collects each run's CPU seconds (user +
    system of pytest and every process it waited for: xdist's and the adapter's workers); ``stdout`` each run's
    output (the summary's figures).

    The environment is passed through, plus ``env``; with PYTHONDONTWRITEBYTECODE=1 (set on our machine) every
    subprocess recompiles what it imports, on both sides of a comparison alike.
    """
    command = [sys.executable, "-m", "pytest", *args]

    def run() -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            command, check=False, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
        )
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if cpu is not None:
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if stdout is not None:
            stdout.append(done.stdout)
        if done.returncode not in ok:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
            raise RuntimeError(f"{' '.join(command)} failed in {cwd} (exit {done.returncode}):\n{tail}")
        return elapsed

    return run


# --- the table --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One line of the output: what was measured, the measured value, the target, the ratio, verdict."""

    figure: str
    value: str
    target: str = "reported"
    ratio: str = "—"
    met: str = "—"
    """"yes", "no", or "—" when the row has no target (it is reported for information)."""


COLUMNS = ("figure", "value", "target", "ratio", "met?")


def verdict(ok: bool) -> str:
    return "yes" if ok else "no"


def seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.1f} µs"


def with_noise(text: str, samples: Samples) -> str:
    """The value with its spread across rounds, e.g. ``12.1 s ±6%`` (no suffix for a single round)."""
    return text if len(samples.values) < 2 else f"{text} ±{samples.spread * 50:.0f}%"


def render(rows: Sequence[Row]) -> str:
    """A Markdown table: one header, one line per row, columns padded to line up in a terminal."""
    cells = [COLUMNS, *((r.figure, r.value, r.target, r.ratio, r.met) for r in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    separator = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), separator, *(line(c) for c in cells[1:])])


def machine_note(all_samples: Sequence[Samples]) -> str:
    """One line saying how noisy the run was: the median and worst spread of all interleaved figures."""
    spreads = [s.spread for s in all_samples if len(s.values) > 1]
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    noise = (
        f"rounds disagreed by a median of ±{statistics.median(spreads) * 50:.0f}% "
        f"(worst ±{max(spreads) * 50:.0f}%)"
        if spreads
        else "one round per figure: no noise estimate (use the full run)"
    )
    return (
        f"{os.cpu_count()} CPUs, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the end; {noise}; "
        f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '(unset)')}"
    )
