"""The project's own test command, timed: the README's (the fast tests) against every test in one session.

Issue 33's target: the README's test command (quick start 2) under 5 minutes on 2 cores. Before that issue the
command was ``pytest -n auto --slow`` (every test); now it leaves the tests marked slow to ``pytest -n auto -m
slow``, which CI runs after it. Both are measured here in the same rounds, in this checkout's environment (the
install step of the command is not timed: it is pip's). Minutes per round, so only on request (``run.py
--tests``).
"""

from __future__ import annotations

import re

from measure import ROOT, Row, Samples, interleave, pytest_wall, seconds, verdict, with_noise

TARGET_S = 300.0
COMMANDS = {
    "README's test command: pytest -n auto": ["-n", "auto", "-q", "-p", "no:cacheprovider"],
    "the slow tests: pytest -n auto -m slow": ["-n", "auto", "-m", "slow", "-q", "-p", "no:cacheprovider"],
    "every test: pytest -n auto --slow": ["-n", "auto", "--slow", "-q", "-p", "no:cacheprovider"],
}
OUTCOME = re.compile(r"^=* ?((?:\d+ failed, )?\d+ passed.*) in [\d.]+s", re.M)
"""The outcome line: a failed test is reported in its row (a flaky test must not throw away a 20-minute run)."""


def tests_rows(rounds: int) -> tuple[list[Row], list[Samples]]:
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    out: dict[str, list[str]] = {name: [] for name in COMMANDS}
    figures = {
        name: pytest_wall(args, ROOT, ok=(0, 1), cpu=cpu[name], stdout=out[name])
        for name, args in COMMANDS.items()
    }
    samples = interleave(figures, rounds)
    readme, slow, every = (samples[name] for name in COMMANDS)
    rows = [Row("**the project's tests (2 cores: `os.cpu_count()` in the last line)**", "")]
    for name, got in samples.items():
        outcome = OUTCOME.search(out[name][-1])
        value = f"{with_noise(seconds(got.median), got)}, CPU {seconds(Samples(tuple(cpu[name])).median)}"
        value += f" ({outcome.group(1)})" if outcome else ""
        if got is readme:
            ratio = f"{got.median / every.median:.2f}× every test"
            rows.append(Row(name, value, f"≤ {TARGET_S:.0f} s", ratio, verdict(got.median <= TARGET_S)))
        else:
            rows.append(Row(name, value))
    together = (readme.median + slow.median) / every.median
    rows.append(Row("  fast + slow against every test in one session", "", ratio=f"{together:.2f}×"))
    return rows, list(samples.values())
