"""The text the developer reads: coverage per file with the source of every line no check runs, then the
mutation score with the survivors, the equivalents and the stale triage entries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .coverage_run import AdapterCoverage, FileCoverage, merged, missing_ranges
from .equivalents import Triage
from .mutation_run import CRASHED, DETECTED, KILLED, NOT_COVERED, SURVIVED, TIMEOUT, UNJUDGED, Outcome
from .targets import ROOT, Package


@dataclass
class PoolResult:
    """The mutants of one pool: how many exist, which were judged, how long it took."""

    name: str
    judges: tuple[str, ...]
    total: int
    outcomes: list[Outcome]
    seconds: float


def coverage_lines(runs: Sequence[AdapterCoverage], package: Package, *, source: bool = True) -> list[str]:
    """Per adapter run: covered % per file it owns or shares, and the uncovered ranges with their source."""
    out: list[str] = []
    shared = package.shared()
    for run in runs:
        verdict = "suite passed" if run.passed else f"SUITE FAILED on the unmutated adapters: {run.tail}"
        out.append(
            f"== line coverage under `pytest --adapter={run.adapter} --helix-examples={run.examples}`"
            f" ({len(run.test_ids)} checks, {run.seconds:.0f} s under coverage; {verdict}) =="
        )
        owned = package.files_of(run.adapter)
        files = [f for f in run.files.values() if f.statements and f.file in owned]
        out.extend(_table(files))
        for cov in files:
            out.extend(_uncovered(cov, source=source))
        out.append("")
    if len(runs) > 1:
        combined = [m for m in (merged(list(runs), name) for name in shared) if m is not None]
        adapters = ", ".join(run.adapter for run in runs)
        out.append(f"== shared modules, missed only if no suite runs them ({adapters}) ==")
        out.extend(_table(combined))
        for cov in combined:
            out.extend(_uncovered(cov, source=source))
        out.append("")
    return out


def _table(files: Iterable[FileCoverage]) -> list[str]:
    rows = [
        f"  {'file':<40} {'stmts':>6} {'missed':>7} {'lines':>7} {'branches':>9} {'missed':>7} {'branch':>7}"
    ]
    for cov in files:
        rows.append(
            f"  {cov.file:<40} {len(cov.statements):>6} {len(cov.missing):>7} {cov.percent:>6.1f}%"
            f" {len(cov.branches):>9} {len(cov.missing_branches):>7} {cov.branch_percent:>6.1f}%"
        )
    return rows


def _uncovered(cov: FileCoverage, *, source: bool) -> list[str]:
    ranges = missing_ranges(cov.file, cov)
    missing = set(cov.missing)
    partial = [(a, b) for a, b in cov.missing_branches if a not in missing]
    out = []
    if partial:
        arcs = ", ".join(f"{a}->{b if b > 0 else 'exit'}" for a, b in partial)
        out.append(f"  branches never taken from a line that runs, in {cov.file}: {arcs}")
    if not ranges:
        return out
    text = (ROOT / cov.file).read_text(encoding="utf-8").splitlines()
    spans = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)
    out.append(f"  not run by any check in {cov.file}: {spans}")
    if source:
        for first, last in ranges:
            out.extend(f"    {line:>4} | {text[line - 1]}" for line in range(first, last + 1))
            out.append("")
    return out


def mutation_lines(results: Sequence[PoolResult], triage: Triage) -> list[str]:
    """Score per pool, then the survivors (real gaps first), the equivalents met, and stale entries."""
    out: list[str] = []
    equivalents_met: list[Outcome] = []
    not_equivalent: list[Outcome] = []
    for result in results:
        outcomes = result.outcomes
        counts = {status: sum(1 for o in outcomes if o.status == status) for status in _STATUSES}
        killed = sum(1 for o in outcomes if o.status in DETECTED)
        equivalent = [o for o in outcomes if o.status == SURVIVED and o.mutant.key in triage.matched]
        equivalents_met.extend(equivalent)
        not_equivalent.extend(o for o in outcomes if o.status in DETECTED and o.mutant.key in triage.matched)
        judged = len(outcomes) - len(equivalent) - counts[UNJUDGED]
        covered = judged - counts[NOT_COVERED]
        out.append(
            f"== mutation score, {result.name} (judged by --adapter={'/'.join(result.judges)}): sampled"
            f" {len(outcomes)} of {result.total} mutants, {result.seconds:.0f} s =="
        )
        out.append(
            f"  score {killed}/{judged} = {_percent(killed, judged)} (equivalent mutants excluded);"
            f" on covered lines {killed}/{covered} = {_percent(killed, covered)}"
        )
        out.append(
            "  "
            + ", ".join(f"{status} {counts[status]}" for status in _STATUSES)
            + f", equivalent {len(equivalent)}"
        )
        for outcome in (o for o in outcomes if o.status == UNJUDGED):
            out.append(
                f"  unjudged (not scored) {_where(outcome)} {outcome.mutant.mutation}: {outcome.evidence}"
            )
        timed = [o for o in outcomes if o.status != NOT_COVERED]
        if timed:
            mean = sum(o.seconds for o in timed) / len(timed)
            out.append(f"  {len(timed)} suite runs, {mean:.1f} s each on average")
        gaps = [
            o for o in outcomes if o.status in (SURVIVED, NOT_COVERED) and o.mutant.key not in triage.matched
        ]
        if gaps:
            out.append("  survivors (a clause should have failed; `not covered`: no check runs the line):")
            out.extend(_survivor(o) for o in gaps)
        out.append("")
    if equivalents_met:
        out.append("== survivors triaged as equivalent (tools/equivalent_mutants.yaml) ==")
        for outcome in equivalents_met:
            entry = triage.matched[outcome.mutant.key]
            out.append(f"  {_where(outcome)}  {outcome.mutant.mutation}: {entry.why}")
        out.append("")
    if not_equivalent or triage.stale:
        out.append("== stale triage entries (fix tools/equivalent_mutants.yaml) ==")
        for outcome in not_equivalent:
            out.append(
                f"  {_where(outcome)}  {outcome.mutant.mutation}: listed as equivalent, but {outcome.evidence}"
            )
        for entry, reason in triage.stale:
            out.append(f"  {entry.file}:{entry.line}  {entry.mutation}: {reason}")
        out.append("")
    return out


_STATUSES = (KILLED, TIMEOUT, CRASHED, SURVIVED, NOT_COVERED, UNJUDGED)


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def _where(outcome: Outcome) -> str:
    return f"{Path(outcome.mutant.file).name}:{outcome.mutant.line}"


def _survivor(outcome: Outcome) -> str:
    mutant = outcome.mutant
    label = "not covered" if outcome.status == NOT_COVERED else f"survived {outcome.adapter}"
    return f"    {_where(outcome):<22} {label:<18} [{mutant.operator}] {mutant.mutation}\n{'':26}| {mutant.source_line}"


def killed_lines(results: Sequence[PoolResult]) -> list[str]:
    """Every judged mutant and what noticed it (``--verbose``)."""
    out = ["== every sampled mutant =="]
    for result in results:
        for outcome in result.outcomes:
            checks = "all checks" if outcome.checks is None else f"{outcome.checks} checks"
            detail = (
                f"{outcome.adapter} {checks}, {outcome.seconds:.1f} s: {outcome.evidence}"
                if outcome.adapter
                else ""
            )
            out.append(f"  {outcome.status:<11} {_where(outcome):<22} {outcome.mutant.mutation}  {detail}")
    return out


def rejudged_lines(
    results: Sequence[PoolResult],
    before: dict[str, str],
    existing: set[str],
    source: Path,
    triage: Triage | None = None,
) -> list[str]:
    """``--rejudge``: what became of each survivor of the earlier run (killed now, still surviving, gone,
    or triaged as equivalent and so not judged again)."""
    out = [f"== the survivors of {source}, judged again =="]
    now = {
        f"{o.mutant.file}:{o.mutant.line} {o.mutant.mutation}": o
        for result in results
        for o in result.outcomes
    }
    counts: dict[str, int] = {}
    for key, then in before.items():
        outcome = now.get(key)
        equivalent = triage is not None and any(
            f"{f}:{line} {mutation}" == key for f, line, mutation in triage.matched
        )
        status = (
            outcome.status
            if outcome
            else "gone"
            if key not in existing
            else "equivalent"
            if equivalent
            else "not judged"
        )
        counts[status] = counts.get(status, 0) + 1
        evidence = f": {outcome.evidence}" if outcome and outcome.evidence else ""
        out.append(f"  {then} -> {status:<11} {key}{evidence}")
    out.append("  " + ", ".join(f"{status} {n}" for status, n in sorted(counts.items())))
    out.append(
        "  (gone: the mutated line changed or moved since; equivalent: triaged in the equivalents file, not "
        "judged again; not judged: outside --adapter/--file)"
    )
    return out
