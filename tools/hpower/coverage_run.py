"""Line coverage of the reference adapters under one adapter's conformance suite, per check.

The suite runs once under ``coverage run`` with a context per check (``context_plugin``) and the adapter
in pytest's own process (``--helix-in-process``: by default it runs in a worker process coverage does not
see), so each line knows the scenarios that execute it: a mutant's run selects only those, and a mutant on a line no check
executes is "not covered" without running. Lines run outside any check (at import: module constants,
default arguments, the spec) are reachable by every scenario.
"""

from __future__ import annotations

import ast
import json
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .mutator import statement_span
from .targets import PACKAGE, ROOT, TOOLS, ToolError, environment, prepare_run_dir, suite_args

if TYPE_CHECKING:
    import coverage

EVERYWHERE = ""
"""The context of lines run outside any check: every scenario reaches them."""


@dataclass
class FileCoverage:
    """One file under one adapter's suite: its statements, those never run, its branches (arcs from a
    line with two or more exits) and those never taken, and who runs each line."""

    file: str
    statements: list[int]
    missing: list[int]
    scenarios_by_line: dict[int, frozenset[str]] = field(repr=False)
    branches: list[tuple[int, int]] = field(default_factory=list)
    missing_branches: list[tuple[int, int]] = field(default_factory=list)

    @property
    def branch_percent(self) -> float:
        taken = len(self.branches) - len(self.missing_branches)
        return 100.0 * taken / len(self.branches) if self.branches else 100.0

    @property
    def percent(self) -> float:
        return (
            100.0 * (len(self.statements) - len(self.missing)) / len(self.statements)
            if self.statements
            else 100.0
        )

    def reached_by(self, lines: range) -> frozenset[str] | None:
        """The scenarios that run any of ``lines`` (EVERYWHERE among them: all of them); None: no check."""
        found: set[str] = set()
        for line in lines:
            found |= self.scenarios_by_line.get(line, frozenset())
        return frozenset(found) if found else None


@dataclass
class AdapterCoverage:
    """The coverage run of one adapter's suite."""

    adapter: str
    examples: int
    files: dict[str, FileCoverage]
    test_ids: list[str]
    seconds: float
    passed: bool
    tail: str
    harness: Path | None = None
    """The harness the suite ran with (None: this checkout's); every mutant of this adapter is judged by it."""

    def ids_for(self, scenarios: frozenset[str]) -> list[str] | None:
        """The checks of ``scenarios``, in suite order; None when that is the whole suite."""
        if EVERYWHERE in scenarios:
            return None
        chosen = [test_id for test_id in self.test_ids if scenario_of(test_id) in scenarios]
        return None if len(chosen) == len(self.test_ids) else chosen


def scenario_of(test_id: str) -> str:
    """``helix-conformance::test_conformance[openai-chat::text_basic::RES-01]`` -> ``text_basic``."""
    inside = test_id.partition("[")[2].rstrip("]")
    parts = inside.split("::")
    return parts[1] if len(parts) == 3 else inside


def run_coverage(adapter: str, examples: int, timeout: float, harness: Path | None = None) -> AdapterCoverage:
    """Run ``pytest --adapter=ADAPTER`` under coverage (per-check contexts) and read the result; with
    ``harness``, that checkout's ``helix_conformance`` judges (its own runs decide which scenarios reach a line)."""
    with tempfile.TemporaryDirectory(prefix="hpower-cov-") as tmp:
        work = prepare_run_dir(Path(tmp) / "run")
        data_file, ids_file = Path(tmp) / "coverage.db", Path(tmp) / "ids.json"
        python, *suite = suite_args(adapter, examples)
        command = [
            python,
            "-m",
            "coverage",
            "run",
            "--branch",
            f"--data-file={data_file}",
            f"--include={PACKAGE}/*",
            *suite,
            "--helix-in-process",  # the adapter runs in a thread of this process, where coverage sees it
            "-p",
            "hpower.context_plugin",
        ]
        env = environment(TOOLS, harness)
        env["HPOWER_IDS_FILE"] = str(ids_file)
        started = time.monotonic()
        try:
            done = subprocess.run(
                command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise ToolError(f"the coverage run of --adapter={adapter} took over {timeout:g} s") from exc
        seconds = time.monotonic() - started
        if not data_file.exists() or not ids_file.exists():
            raise ToolError(
                f"the coverage run of --adapter={adapter} failed: {_tail(done.stdout + done.stderr)}"
            )
        files = _read(data_file)
        test_ids = json.loads(ids_file.read_text(encoding="utf-8"))
    return AdapterCoverage(
        adapter,
        examples,
        files,
        test_ids,
        seconds,
        done.returncode == 0,
        _tail(done.stdout + done.stderr),
        harness,
    )


def _tail(output: str, lines: int = 3) -> str:
    return " | ".join(line for line in output.strip().splitlines()[-lines:])


def _read(data_file: Path) -> dict[str, FileCoverage]:
    import coverage  # the dev extra; imported here so the tool's own tests run without it

    cov = coverage.Coverage(data_file=str(data_file))
    cov.load()
    data = cov.get_data()
    files: dict[str, FileCoverage] = {}
    for measured in sorted(data.measured_files()):
        path = Path(measured).resolve()
        name = path.relative_to(ROOT).as_posix()
        _, statements, _, missing, _ = cov.analysis2(measured)
        by_line: dict[int, frozenset[str]] = {}
        for line, contexts in data.contexts_by_lineno(measured).items():
            by_line[line] = frozenset(scenario_of(c) if c else EVERYWHERE for c in contexts)
        branches, missed = _branches(cov, measured)
        files[name] = FileCoverage(name, list(statements), list(missing), by_line, branches, missed)
    return files


def _branches(cov: coverage.Coverage, measured: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Every branch arc of ``measured`` and those no check took, through coverage's JSON report (its
    public view of branch data)."""
    with tempfile.TemporaryDirectory(prefix="hpower-json-") as tmp:
        out = Path(tmp) / "report.json"
        cov.json_report(morfs=[measured], outfile=str(out))
        report = json.loads(out.read_text(encoding="utf-8"))
    (entry,) = report["files"].values()
    executed = [tuple(arc) for arc in entry.get("executed_branches", [])]
    missed = [tuple(arc) for arc in entry.get("missing_branches", [])]
    return sorted({*executed, *missed}), sorted(set(missed))  # type: ignore[arg-type]


def merged(runs: list[AdapterCoverage], file: str) -> FileCoverage | None:
    """One file's coverage under several suites: a statement is missed only if every suite misses it."""
    found = [run.files[file] for run in runs if file in run.files]
    if not found:
        return None
    missing = sorted(set.intersection(*(set(f.missing) for f in found)))
    missed_arcs = sorted(set.intersection(*(set(f.missing_branches) for f in found)))
    return FileCoverage(file, found[0].statements, missing, {}, found[0].branches, missed_arcs)


def missing_ranges(file: str, cov: FileCoverage) -> list[tuple[int, int]]:
    """Runs of consecutive missed statements as (first line, last line), multi-line statements whole."""
    source = (ROOT / file).read_text(encoding="utf-8")
    ends = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            first, last = statement_span(node)
            ends[node.lineno] = last
            ends.setdefault(first, last)
    missing = set(cov.missing)
    ranges: list[tuple[int, int]] = []
    run: list[int] = []
    for line in [*cov.statements, None]:
        if line is not None and line in missing:
            run.append(line)
            continue
        if run:
            ranges.append((run[0], max(ends.get(run[-1], run[-1]), run[-1])))
            run = []
    return ranges
