"""Judging one mutant: the suite runs in a subprocess that imports the mutated package instead of ours.

The mutant is written into a fresh copy of ``reference_adapters`` (no stale bytecode can be reused) in a
directory put first on ``PYTHONPATH``; pytest runs there with ``-x``, so a killed mutant stops at its first
failing check, and with only the checks of the scenarios that execute the mutated line.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .coverage_run import AdapterCoverage
from .mutator import Mutant
from .targets import PACKAGE, ROOT, ToolError, environment, prepare_run_dir, suite_args

KILLED, SURVIVED, TIMEOUT, CRASHED, NOT_COVERED = "killed", "survived", "timeout", "crashed", "not covered"
UNJUDGED = "unjudged"
DETECTED = frozenset({KILLED, TIMEOUT, CRASHED})
"""A mutant the suite noticed: a failed check, a run that never finished, or a suite that could not start."""
_SUITE_FAILED = 1

_FAILED = re.compile(r"^FAILED (\S+)")


@dataclass
class Outcome:
    """What the suite made of one mutant."""

    mutant: Mutant
    status: str
    adapter: str | None = None
    evidence: str = ""
    checks: int | None = None
    seconds: float = 0.0


def sample(mutants: Sequence[Mutant], size: int, seed: int) -> list[Mutant]:
    """``size`` mutants drawn with ``seed`` (all when ``size`` is 0 or covers them), in file order."""
    if size <= 0 or size >= len(mutants):
        return list(mutants)
    chosen = set(random.Random(seed).sample(range(len(mutants)), size))
    return [mutant for index, mutant in enumerate(mutants) if index in chosen]


def judge(
    mutant: Mutant,
    judges: Sequence[AdapterCoverage],
    *,
    timeout: float,
    run: Callable[[Mutant, AdapterCoverage, list[str] | None, float], Outcome] | None = None,
) -> Outcome:
    """Run the suites that reach the mutant, one after another, until one notices it."""
    runner = run or run_suite
    last: Outcome | None = None
    ran: list[str] = []
    spent = 0.0
    for coverage in judges:
        file = coverage.files.get(mutant.file)
        scenarios = file.reached_by(mutant.reach_lines) if file is not None else None
        if scenarios is None:
            continue
        last = runner(mutant, coverage, coverage.ids_for(scenarios), timeout)
        ran.append(coverage.adapter)
        spent += last.seconds
        if last.status in DETECTED:
            break
    if last is None:
        return Outcome(mutant, NOT_COVERED)
    if last.status not in DETECTED:
        last.adapter = "+".join(ran)  # every suite that reaches it let it through
    last.seconds = spent
    return last


def run_suite(mutant: Mutant, coverage: AdapterCoverage, ids: list[str] | None, timeout: float) -> Outcome:
    """One adapter's suite (``ids``: the checks to run; None: all) against the mutated package.

    A run that ends neither in a verdict nor a check failure (a usage or internal error) is run again on
    the unmutated package: if that fails too the problem is ours (``unjudged``), else the mutant's."""
    returncode, stdout, stderr, seconds = _suite(coverage, ids, timeout, mutant)
    if returncode is None:
        return Outcome(
            mutant, TIMEOUT, coverage.adapter, f"no verdict after {timeout:g} s", _count(ids), seconds
        )
    status, evidence = _verdict(returncode, stdout, stderr)
    if status == CRASHED and _suite(coverage, ids, timeout, None)[0] != 0:
        status, evidence = UNJUDGED, f"the unmutated package fails this run too ({evidence})"
    return Outcome(mutant, status, coverage.adapter, evidence, _count(ids), seconds)


def _suite(
    coverage: AdapterCoverage, ids: list[str] | None, timeout: float, mutant: Mutant | None
) -> tuple[int | None, str, str, float]:
    with tempfile.TemporaryDirectory(prefix="hpower-mutant-") as tmp:
        work = prepare_run_dir(Path(tmp))
        write_package(work / PACKAGE.name, mutant)
        command = [*suite_args(coverage.adapter, coverage.examples), "-x", *(ids or [])]
        started = time.monotonic()
        try:
            done = subprocess.run(
                command,
                cwd=work,
                env=environment(work, coverage.harness),
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None, "", "", timeout
        return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def _count(ids: list[str] | None) -> int | None:
    return None if ids is None else len(ids)


def _verdict(returncode: int, stdout: str, stderr: str) -> tuple[str, str]:
    if returncode == 0:
        return SURVIVED, ""
    for line in stdout.splitlines():
        found = _FAILED.match(line)
        if found:
            return KILLED, found.group(1).partition("[")[2].rstrip("]") or found.group(1)
    lines = [line for line in (stdout + "\n" + stderr).strip().splitlines() if line.strip()]
    verdict = next((line for line in lines if line.startswith(("VERDICT", "HARN-05"))), None)
    if returncode == _SUITE_FAILED and verdict:
        return KILLED, verdict.strip()
    return CRASHED, f"exit {returncode}: {lines[-1].strip() if lines else 'no output'}"[:200]


def write_package(target: Path, mutant: Mutant | None) -> None:
    """A copy of the reference adapters' sources with the mutated file in place of the original."""
    target.mkdir(parents=True)
    for source in PACKAGE.glob("*.py"):
        shutil.copyfile(source, target / source.name)
    if mutant is None:
        return
    mutated = target / Path(mutant.file).name
    if not mutated.exists():
        raise ToolError(f"{mutant.file} is not a file of {PACKAGE}")
    mutated.write_text(mutant.mutated_source, encoding="utf-8")


def check_canary(coverage: AdapterCoverage, module: str, timeout: float) -> None:
    """A copy whose adapter module cannot even be imported must fail the suite: otherwise the suite is not
    running the copies (e.g. its worker process imports the installed package) and every mutant would
    survive."""
    source = (ROOT / module).read_text(encoding="utf-8")
    broken = source + '\nraise RuntimeError("harness-power canary: this copy must not pass")\n'
    canary = Mutant(module, 1, 1, "canary", "the module raises on import", "", (1, 1), broken)
    returncode, stdout, _, _ = _suite(coverage, coverage.test_ids[:1], timeout, canary)
    if returncode == 0:
        raise ToolError(
            f"--adapter={coverage.adapter} passed on a copy of {module} that cannot be imported: the suite does "
            f"not run the mutated copies, so no mutant can be judged ({_verdict(0, stdout, '')[0]})"
        )


def check_shadowing() -> None:
    """The mutated copy must be what the suite imports, ahead of the installed package."""
    with tempfile.TemporaryDirectory(prefix="hpower-probe-") as tmp:
        work = Path(tmp)
        shutil.copytree(PACKAGE, work / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__"))
        probe = subprocess.run(
            [
                suite_args("openai", 1)[0],
                "-c",
                "import reference_adapters; print(reference_adapters.__file__)",
            ],
            cwd=work,
            env=environment(work),
            capture_output=True,
            text=True,
            check=False,
        )
        if not probe.stdout.strip().startswith(str(work)):
            raise ToolError(
                f"a mutant copy in {work} is not imported ahead of the installed package: {probe.stdout}"
            )
