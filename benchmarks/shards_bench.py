"""A sharded gate against one run (issue 34): N shards as separate processes, merged, against the unsharded run.

``python benchmarks/run.py --shards [--adapters NAME ...]``: per adapter and round, one ``pytest --adapter=NAME
--helix-report=one.json``, then for 2 and for 4 shards each ``--helix-shard=I/N --helix-report=shard-I.json``
one after another (as the machines of a CI matrix run them: no shard competes with another for the cores), and
``helix-conformance report merge``. Rows: whether the merged verdict and every clause x scenario outcome are the
one run's, and the slowest shard's wall time against the one run's (what a matrix waits for).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from measure import Row, Samples, pytest_wall, seconds, with_noise
from runs_bench import REFERENCE_OF, TYPESCRIPT, adapter_argument, available

SHARD_COUNTS = (2, 4)
DEFAULT_ADAPTERS = ("openai", "openai-sdk")


def _outcomes(report: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    return {(r["clause"], r["scenario"], str(r.get("profile"))): r["outcome"] for r in report["results"]}


def _suite(name: str, cwd: Path, report: Path, *extra: str) -> float:
    args = [f"--adapter={adapter_argument(name)}", "-q", "-p", "no:cacheprovider", f"--helix-report={report}"]
    return pytest_wall([*args, *extra], cwd, ok=(0, 1))()


def _merge(out: Path, shards: Sequence[Path], cwd: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "helix_conformance", "report", "merge", str(out), *map(str, shards)]
    done = subprocess.run(command, check=False, cwd=cwd, capture_output=True, text=True)
    if done.returncode not in (0, 1) or not out.exists():
        raise RuntimeError(
            f"{' '.join(command)} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return dict(json.loads(out.read_text()))


def _differences(one: dict[str, Any], merged: dict[str, Any]) -> list[str]:
    """What the merged report says otherwise than the one run: its verdict, then each outcome that differs."""
    found = (
        []
        if one["verdict"] == merged["verdict"]
        else [f"verdict {merged['verdict']} (one run: {one['verdict']})"]
    )
    a, b = _outcomes(one), _outcomes(merged)
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            found.append(f"{'::'.join(key)}: {b.get(key)} (one run: {a.get(key)})")
    return found


def shards_rows(rounds: int, names: Sequence[str] | None = None) -> tuple[list[Row], list[Samples]]:
    wanted = list(names or DEFAULT_ADAPTERS)
    # Only the names runs_bench knows may need something installed; others (mock, a module) are run as given.
    known = [n for n in wanted if n in REFERENCE_OF or n in TYPESCRIPT]
    resolvable = set(available(known)) if known else set()
    chosen = [n for n in wanted if n not in known or n in resolvable]
    rows: list[Row] = []
    samples: list[Samples] = []
    with tempfile.TemporaryDirectory(prefix="helix-shards-") as tmp:
        cwd = Path(tmp)
        for name in chosen:
            walls: list[float] = []
            slowest: dict[int, list[float]] = {n: [] for n in SHARD_COUNTS}
            differences: dict[int, list[str]] = {n: [] for n in SHARD_COUNTS}
            results = 0
            for _ in range(rounds):
                walls.append(_suite(name, cwd, cwd / "one.json"))
                one = json.loads((cwd / "one.json").read_text())
                results = len(one["results"])
                for count in SHARD_COUNTS:
                    reports = [cwd / f"shard-{i}-of-{count}.json" for i in range(1, count + 1)]
                    shard_walls = [
                        _suite(name, cwd, report, f"--helix-shard={i}/{count}")
                        for i, report in enumerate(reports, start=1)
                    ]
                    slowest[count].append(max(shard_walls))
                    merged = _merge(cwd / f"merged-{count}.json", reports, cwd)
                    differences[count] = _differences(one, merged) or differences[count]
                print(f"… {name} sharded", file=sys.stderr, flush=True)
            whole = Samples(tuple(walls))
            rows.append(
                Row(
                    f"{name}: one run (wall)",
                    f"{with_noise(seconds(whole.median), whole)}, {results} results",
                )
            )
            samples.append(whole)
            for count in SHARD_COUNTS:
                shard = Samples(tuple(slowest[count]))
                same = differences[count]
                verdict = (
                    "same verdict and outcomes" if not same else f"{len(same)} differ: {'; '.join(same[:3])}"
                )
                rows.append(
                    Row(
                        f"{name}: {count} shards merged, slowest shard (wall)",
                        f"{with_noise(seconds(shard.median), shard)}; {verdict}",
                        "the one run's verdict",
                        f"{shard.median / whole.median:.2f}× one run",
                        "yes" if not same else "no",
                    )
                )
                samples.append(shard)
    return rows, samples
