"""Field-bug mutants: bugs adapter authors shipped, planted one at a time in adapters written elsewhere.

The AST mutants of ``mutator.py`` change the reference adapters, which this project wrote against its own
suite. Field-bug mutants measure where that generalises: each is one bug from a public tracker report
(``tools/field_mutants.yaml``, the report cited per mutant), planted in a fresh copy of the adapters written
outside this project (``tools/hpower/field/helix_foreign_adapters``, a verbatim copy of
``../shared/foreign-adapters``). The adapter's whole suite runs on the copy, as its author would run it; the
mutant is **caught** when a check fails that passes on the unmutated copy (the foreign adapters have known
failures of their own), and **caught on its clause** when the clause the class of bug breaks is among them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .targets import ROOT, TOOLS, ToolError, prepare_run_dir

FIXTURE = TOOLS / "hpower" / "field" / "helix_foreign_adapters"
MUTANTS = TOOLS / "field_mutants.yaml"
_FIELDS = ("id", "adapter", "file", "old", "new", "clause", "issue", "what")
FAILED = frozenset({"failed", "should_failed"})

CAUGHT, ON_CLAUSE, MISSED, ERROR = "caught", "caught on its clause", "missed", "error"


@dataclass(frozen=True)
class FieldMutant:
    """One tracker-reported bug as a text change of one file of the foreign adapters."""

    id: str
    adapter: str
    file: str
    old: str
    new: str
    clause: str
    issue: str
    what: str


@dataclass
class FieldOutcome:
    """What the adapter's suite made of one field mutant."""

    mutant: FieldMutant
    status: str
    new_failures: list[str] = field(default_factory=list)
    """``clause on scenario`` of every check that fails on the mutant and passes on the unmutated copy."""
    seconds: float = 0.0
    detail: str = ""


def load(path: Path = MUTANTS) -> list[FieldMutant]:
    """The field mutants of ``path``, each checked to apply to the fixture exactly once."""
    try:
        entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    except (OSError, yaml.YAMLError) as exc:
        raise ToolError(f"{path}: not a readable YAML list of field mutants ({exc})") from exc
    mutants: list[FieldMutant] = []
    for n, entry in enumerate(entries):
        missing = [name for name in _FIELDS if not isinstance(entry, dict) or not entry.get(name)]
        if missing:
            raise ToolError(f"{path}: entry {n} lacks {', '.join(missing)}")
        mutant = FieldMutant(**{name: str(entry[name]) for name in _FIELDS})
        source = (FIXTURE / mutant.file).read_text(encoding="utf-8")
        apply(source, mutant)  # raises when the text is not there exactly once
        mutants.append(mutant)
    ids = [m.id for m in mutants]
    if len(ids) != len(set(ids)):
        raise ToolError(f"{path}: duplicate mutant ids")
    return mutants


def apply(source: str, mutant: FieldMutant) -> str:
    """``source`` with ``mutant.old`` replaced by ``mutant.new``. A one-line ``old`` is found as written; a
    block is found at whatever indentation it sits in the file and ``new`` is indented the same way."""
    old, new = textwrap.dedent(mutant.old), textwrap.dedent(mutant.new)
    if "\n" not in old:
        if source.count(old) != 1:
            raise ToolError(
                f"field mutant {mutant.id}: {old!r} occurs {source.count(old)} times in {mutant.file}"
            )
        return source.replace(old, new)
    lines, wanted = source.split("\n"), old.split("\n")
    found: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        indent = line[: len(line) - len(line.lstrip())]
        block = lines[i : i + len(wanted)]
        if line.strip() and [indent + w if w else w for w in wanted] == block:
            found.append((i, indent))
    if len(found) != 1:
        raise ToolError(f"field mutant {mutant.id}: its block occurs {len(found)} times in {mutant.file}")
    at, indent = found[0]
    replaced = [indent + n if n else n for n in new.split("\n")]
    return "\n".join([*lines[:at], *replaced, *lines[at + len(wanted) :]])


def failing_checks(report: dict[str, Any]) -> set[tuple[str, str]]:
    """(clause, scenario) of every check a ``--helix-report`` JSON report says failed."""
    return {(r["clause"], r["scenario"]) for r in report.get("results", []) if r.get("outcome") in FAILED}


def run_suite(
    adapter: str, package: Path | None, examples: int, timeout: float, harness: Path | None
) -> tuple[set[tuple[str, str]] | None, float, str]:
    """Run the adapter's suite with ``package`` (a copy of the foreign adapters) first on ``PYTHONPATH`` (and
    ``harness``, an older checkout, before this one); the failing checks, or None with why."""
    with tempfile.TemporaryDirectory(prefix="hpower-field-") as tmp:
        run_dir = prepare_run_dir(Path(tmp) / "run")
        report = Path(tmp) / "report.json"
        env = dict(os.environ)
        first = [str(p) for p in (package, harness) if p is not None]
        env["PYTHONPATH"] = os.pathsep.join([*first, *filter(None, [env.get("PYTHONPATH")])])
        env.pop("COVERAGE_PROCESS_START", None)
        command = [
            sys.executable,
            "-m",
            "pytest",
            f"--adapter={adapter}",
            "--helix-strict",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--helix-examples={examples}",
            f"--helix-report={report}",
        ]
        started = time.monotonic()
        try:
            done = subprocess.run(
                command, cwd=run_dir, env=env, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - started, f"the suite did not finish within {timeout:g} s"
        seconds = time.monotonic() - started
        if not report.is_file():
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            return None, seconds, f"no report (exit {done.returncode}): {' / '.join(tail)}"
        return failing_checks(json.loads(report.read_text(encoding="utf-8"))), seconds, ""


def judge(
    mutant: FieldMutant,
    baseline: set[tuple[str, str]],
    examples: int,
    timeout: float,
    harness: Path | None,
) -> FieldOutcome:
    """Plant ``mutant`` in a fresh copy of the fixture and compare the suite's failures with ``baseline``."""
    with tempfile.TemporaryDirectory(prefix="hpower-fieldmutant-") as tmp:
        package = Path(tmp) / FIXTURE.name
        shutil.copytree(FIXTURE, package, ignore=shutil.ignore_patterns("__pycache__"))
        target = package / mutant.file
        target.write_text(apply(target.read_text(encoding="utf-8"), mutant), encoding="utf-8")
        failures, seconds, problem = run_suite(mutant.adapter, Path(tmp), examples, timeout, harness)
    if failures is None:
        return FieldOutcome(mutant, ERROR, seconds=seconds, detail=problem)
    new = sorted(failures - baseline)
    status = ON_CLAUSE if any(c == mutant.clause for c, _ in new) else CAUGHT if new else MISSED
    return FieldOutcome(mutant, status, [f"{c} on {s}" for c, s in new], seconds)


def baselines(
    mutants: list[FieldMutant], examples: int, timeout: float, harness: Path | None
) -> dict[str, set[tuple[str, str]]]:
    """The failing checks of each adapter's unmutated copy: failures the mutants must not be credited with."""
    found: dict[str, set[tuple[str, str]]] = {}
    for adapter in dict.fromkeys(m.adapter for m in mutants):
        with tempfile.TemporaryDirectory(prefix="hpower-fieldbase-") as tmp:
            shutil.copytree(FIXTURE, Path(tmp) / FIXTURE.name, ignore=shutil.ignore_patterns("__pycache__"))
            failures, _, problem = run_suite(adapter, Path(tmp), examples, timeout, harness)
        if failures is None:
            raise ToolError(f"the unmutated {adapter} could not be judged: {problem}")
        found[adapter] = failures
    return found


def report_lines(outcomes: list[FieldOutcome], baseline: dict[str, set[tuple[str, str]]]) -> list[str]:
    """The two rates, then every mutant with what caught it."""
    judged = [o for o in outcomes if o.status != ERROR]
    caught = [o for o in judged if o.status in (CAUGHT, ON_CLAUSE)]
    on_clause = [o for o in judged if o.status == ON_CLAUSE]
    lines = [
        f"field-bug mutants ({MUTANTS.relative_to(ROOT)}, planted in {FIXTURE.relative_to(ROOT)}):",
        "  unmutated copies fail "
        + ", ".join(f"{adapter}: {len(failures)} checks" for adapter, failures in baseline.items())
        + " (not credited to any mutant)",
        f"  caught {len(caught)}/{len(judged)} = {_pct(len(caught), len(judged))}; "
        f"on the intended clause {len(on_clause)}/{len(judged)} = {_pct(len(on_clause), len(judged))}"
        + (f"; {len(outcomes) - len(judged)} could not be judged" if len(judged) < len(outcomes) else ""),
    ]
    for outcome in outcomes:
        m = outcome.mutant
        evidence = ", ".join(outcome.new_failures[:4]) + (" ..." if len(outcome.new_failures) > 4 else "")
        lines.append(
            f"  {outcome.status:<22} {m.id} ({m.adapter}, wants {m.clause}; {m.issue})"
            + (f": {evidence or outcome.detail}" if outcome.status != ON_CLAUSE else "")
        )
    return lines


def as_json(outcomes: list[FieldOutcome]) -> list[dict[str, Any]]:
    return [
        {
            "id": o.mutant.id,
            "adapter": o.mutant.adapter,
            "clause": o.mutant.clause,
            "issue": o.mutant.issue,
            "status": o.status,
            "new_failures": o.new_failures,
            "seconds": round(o.seconds, 1),
            "detail": o.detail,
        }
        for o in outcomes
    ]


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"
