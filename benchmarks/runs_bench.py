"""Runs per suite and wall time, this checkout against a commit, for every Python adapter we can name (issue 34).

``python benchmarks/run.py --runs --before REV``: each adapter's ``pytest --adapter=NAME -q`` in an empty
directory, this checkout and REV alternating in the same rounds; the runs come from the summary's
``virtual time: ... over N runs`` line. Beside each adapter, its wall time against its profile's reference
adapter measured in the same round (target ≤ 1.5×) and the 10 s target of a quiet 2-core machine.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from measure import Row, Samples, pytest_wall, seconds, with_noise
from speed_bench import versions

REFERENCE_OF = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "openai-responses": "openai-responses",
    "bedrock": "bedrock",
    "cohere": "cohere",
    "openai-sdk": "openai",
    "anthropic-sdk": "anthropic",
    "gemini-sdk": "gemini",
    "openai-responses-sdk": "openai-responses",
    "foreign-openai-sdk": "openai",
    "foreign-anthropic-sdk": "anthropic",
    "foreign-google-genai-sdk": "gemini",
}
"""Every Python adapter the checkout can name (the foreign ones where ../shared/foreign-adapters is installed),
and the reference adapter of its wire profile."""
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TYPESCRIPT = {
    "node:fetch-template": ("fetch-template-adapter/adapter.ts", "openai"),
    "node:vercel-openai": ("vercel-ai-adapter/openai.mjs", "openai"),
    "node:vercel-anthropic": ("vercel-ai-adapter/anthropic.mjs", "anthropic"),
    "node:vercel-gemini": ("vercel-ai-adapter/gemini.mjs", "gemini"),
}
"""The TypeScript examples (``--typescript``), by a short name, with their file and their profile's reference.
Each needs its dependencies: ``npm ci`` in its folder."""
SUITE_TARGET_S = 10.0
RUNS = re.compile(r"over (\d+) runs")


@dataclass
class Suite:
    """One adapter's suite on one version of the harness, over the rounds."""

    walls: list[float] = field(default_factory=list)
    runs: int | None = None
    cpus: list[float] = field(default_factory=list)
    """CPU seconds of each round: user + system of pytest and every process it waited for (the workers)."""

    @property
    def samples(self) -> Samples:
        return Samples(tuple(self.walls))

    def cpu(self) -> str:
        return f"CPU {seconds(Samples(tuple(self.cpus)).median)}" if self.cpus else "CPU not measured"

    def describe(self) -> str:
        runs = f"{self.runs} runs" if self.runs is not None else "runs not counted (no virtual time line)"
        return f"{runs}, {with_noise(seconds(self.samples.median), self.samples)}, {self.cpu()}"


def adapter_argument(name: str) -> str:
    """What ``--adapter=`` takes for ``name``: a TypeScript example's absolute path, else the name itself."""
    if name in TYPESCRIPT:
        return f"node:{EXAMPLES / TYPESCRIPT[name][0]}"
    return name


def reference_of(name: str) -> str:
    return TYPESCRIPT[name][1] if name in TYPESCRIPT else REFERENCE_OF[name]


def run_suite(
    name: str, cwd: Path, env: dict[str, str], cpu: list[float] | None = None, *extra: str
) -> tuple[float, int | None]:
    """Wall time and runs of ``pytest --adapter=NAME -q`` (a red verdict is a measurement too); its CPU
    seconds are appended to ``cpu``; ``extra``: more pytest arguments (``--helix-quick``, ``--collect-only``)."""
    outputs: list[str] = []
    args = [f"--adapter={adapter_argument(name)}", "-q", "-p", "no:cacheprovider", *extra]
    elapsed = pytest_wall(args, cwd, env=env, ok=(0, 1), stdout=outputs, cpu=cpu)()
    found = RUNS.search(outputs[-1])
    return elapsed, int(found.group(1)) if found else None


EDIT_LOOP = {"--collect-only": "start-up and collection", "--helix-quick": "the quick check"}
"""The edit loop's figures, measured on the first reference adapter: ``pytest --adapter=NAME`` with each."""


def available(names: Sequence[str]) -> list[str]:
    """The adapters this environment can resolve (the foreign ones need their package installed, a TypeScript
    example its node_modules), each with its reference; the ones left out are said on stderr."""
    import shutil
    from importlib.util import find_spec

    foreign = find_spec("helix_foreign_adapters") is not None
    chosen = []
    for name in names:
        if name.startswith("foreign-") and not foreign:
            print(f"… {name} left out: ../shared/foreign-adapters is not installed", file=sys.stderr)
        elif (
            name in TYPESCRIPT
            and not (EXAMPLES / TYPESCRIPT[name][0]).parent.joinpath("node_modules").is_dir()
        ):
            folder = (EXAMPLES / TYPESCRIPT[name][0]).parent
            print(f"… {name} left out: run `npm ci` in {folder}", file=sys.stderr)
        elif name in TYPESCRIPT and shutil.which("node") is None:
            print(f"… {name} left out: no node on PATH", file=sys.stderr)
        else:
            chosen.append(name)
    references = [reference_of(n) for n in chosen if reference_of(n) not in chosen]
    return list(dict.fromkeys(references)) + chosen


def runs_rows(
    rounds: int, before: str | None, names: Sequence[str] | None = None
) -> tuple[list[Row], list[Samples]]:
    names = available(names or list(REFERENCE_OF))
    suites: dict[tuple[str, str], Suite] = {}
    with tempfile.TemporaryDirectory(prefix="helix-runs-") as tmp, versions(before) as codes:
        labels = [code.label for code in codes]
        for round_ in range(rounds):
            for name in names:
                order = codes if round_ % 2 == 0 else list(reversed(codes))
                for code in order:
                    suite = suites.setdefault((code.label, name), Suite())
                    wall, runs = run_suite(name, Path(tmp), code.env, suite.cpus)
                    suite.walls.append(wall)
                    suite.runs = runs
                print(f"… {name} round {round_ + 1}", file=sys.stderr, flush=True)
            for option in EDIT_LOOP:
                for code in codes if round_ % 2 == 0 else list(reversed(codes)):
                    suite = suites.setdefault((code.label, option), Suite())
                    try:
                        wall, runs = run_suite(names[0], Path(tmp), code.env, suite.cpus, option)
                    except RuntimeError as exc:  # a commit from before the option (--helix-quick)
                        if "unrecognized arguments" not in str(exc):
                            raise
                        continue
                    suite.walls.append(wall)
                    suite.runs = runs if option != "--collect-only" else 0
    rows: list[Row] = []
    samples: list[Samples] = []
    now = labels[0]
    for option, what in EDIT_LOOP.items():
        current = suites[(now, option)]
        value = current.describe()
        ratio = "—"
        if len(labels) > 1:
            old = suites[(labels[1], option)]
            if old.walls:
                value += f" (before: {old.describe()})"
                ratio = f"wall {current.samples.median / old.samples.median:.2f}×"
            else:
                value += " (before: no such option)"
        rows.append(Row(f"{names[0]} {option} ({what}): runs, wall", value, "reported", ratio))
        samples.append(current.samples)
    for name in names:
        current = suites[(now, name)]
        value = current.describe()
        ratio, met, target = "—", "—", f"≤ {SUITE_TARGET_S:.0f} s"
        if len(labels) > 1:
            old = suites[(labels[1], name)]
            value += f" (before: {old.describe()})"
            if current.runs and old.runs:
                wall = current.samples.median / old.samples.median
                ratio = f"runs {current.runs / old.runs:.2f}×, wall {wall:.2f}×"
        reference = reference_of(name)
        if reference != name and (now, reference) in suites:
            against = current.samples.median / suites[(now, reference)].samples.median
            ratio += f"; {against:.2f}× {reference}"
            target += ", ≤ 1.5× reference"
            met = "yes" if against <= 1.5 and current.samples.median <= SUITE_TARGET_S else "no"
        else:
            met = "yes" if current.samples.median <= SUITE_TARGET_S else "no"
        rows.append(Row(f"suite {name}: runs, wall", value, target, ratio, met))
        samples.append(current.samples)
    return rows, samples
