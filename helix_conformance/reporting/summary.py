"""The terminal summary: a table by contract area, MUST vs SHOULD, and the verdict of the gate."""

from __future__ import annotations

from typing import Any

from ..clauses import AREAS, CLAUSES
from ..quick import QUICK_NOTE
from . import applicability, compatibility
from .causes import render_causes, stale_entries
from .outcomes import OutcomeLog, holds
from .safety import safe_text
from .views import scope_text

SESSION_CLAUSE = "HARN-05"
"""Judged once per session by the plugin, not per scenario."""


def render_summary(
    log: OutcomeLog,
    *,
    strict: bool,
    adapter: str,
    deselected: bool = False,
    requested: str | None = None,
    stopped: bool = False,
    profile: str | None = None,
    servers: frozenset[str] = frozenset(),
    selection: dict[str, Any] | None = None,
) -> list[str]:
    """``requested``: the --adapter value reproduction commands repeat; ``stopped``: the run stopped early;
    ``profile`` and ``servers``: the adapter's wire profile and declared servers (the compatibility matrix);
    ``selection``: the report's (a shard, a run narrowed by --lf: the verdict says it is not the gate's)."""
    by_clause = log.by_clause()
    header = (
        f"{'area':<24} {'clauses':>7} {'passed':>7} {'failed':>7} {'SHOULD✗':>8} {'known✗':>7} {'skipped':>8}"
        "   checks"
    )
    lines = ["", f"helix-conformance summary for adapter {adapter!r}", header, "-" * len(header)]
    totals = {
        "clauses": 0,
        "checks": 0,
        "passed": 0,
        "failed": 0,
        "should_failed": 0,
        "baselined": 0,
        "skipped": 0,
    }
    broken_must = []
    for area, title in AREAS.items():
        clauses = [c for c in CLAUSES.values() if c.area == area and c.id in by_clause]
        if not clauses:
            continue
        counts = {"passed": 0, "failed": 0, "should_failed": 0, "baselined": 0, "skipped": 0}
        for clause in clauses:
            status = log.clause_status(clause.id)
            counts["passed" if holds(status) else status] += 1
            if status == "failed":
                broken_must.append(clause.id)
        checks = sum(len(by_clause[c.id]) for c in clauses)
        lines.append(_row(area + " " + title, len(clauses), counts, checks))
        totals["clauses"] += len(clauses)
        totals["checks"] += checks
        for key in counts:
            totals[key] += counts[key]
    lines.append("-" * len(header))
    lines.append(_row("total", totals["clauses"], totals, totals["checks"]))
    not_run = [c for c in CLAUSES if c not in by_clause and c != SESSION_CLAUSE]
    if not_run and stopped:
        lines.append(f"{len(not_run)} clauses not run (the run stopped early, see below)")
    elif not_run and deselected:
        lines.append(
            f"{len(not_run)} clauses not run (deselected with -k/-m, or not applicable to this profile)"
        )
    elif not_run:
        lines.append(f"not run (not applicable to this adapter's wire profile): {', '.join(not_run)}")
    broken_should = [c for c in CLAUSES if c in by_clause and log.clause_status(c) == "should_failed"]
    if broken_should:
        lines.append(
            f"SHOULD not met ({'failing the gate: --helix-strict' if strict else 'not failing the gate'}): "
            f"{should_not_met(log, broken_should)}"
        )
    known = [o for o in log.items.values() if o.status == "baselined"]
    if known:
        lines.append(
            f"known failures (baseline, not failing the gate): {len(known)} check(s) in "
            f"{', '.join(sorted({o.clause for o in known}))}"
        )
    stale = stale_entries(log)
    if stale:
        lines.append(
            f"{stale_count(len(stale))} (the checks pass now; delete them from the baseline): "
            f"{', '.join(f'{o.scenario}::{o.clause}' for o in stale)}"
        )
    lines.extend(applicability.terminal_lines(applicability.not_applicable_data(log)))
    if profile is not None:
        lines.extend(compatibility.terminal_lines(compatibility.matrix_data(log, profile, servers)))
    lines.extend(render_causes(log, requested or adapter))
    lines.extend(time_lines(log))
    lines.extend(safe_text(line) for line in (*log.notes, *log.gate_errors))
    shard = (selection or {}).get("shard")
    if not log.gate_errors and shard:
        lines.append(
            f"{SESSION_CLAUSE} is judged on the merged report: {log.executed()} checks executed here"
        )
    elif not log.gate_errors and (selection or {}).get("quick"):
        lines.append(f"{SESSION_CLAUSE}: {log.executed()} checks executed (a quick check: not the gate)")
    elif not log.gate_errors and (selection or {}).get("last_failed"):
        lines.append(f"{SESSION_CLAUSE}: {log.executed()} checks executed (narrowed by --lf: not the gate)")
    elif not log.gate_errors:
        lines.append(f"{SESSION_CLAUSE} holds: {log.executed()} checks executed (the gate ran)")
    scope = scope_text(selection)
    failing = broken_must + (broken_should if strict else [])
    reasons = [f"{len(failing)} clause(s) broken: {', '.join(failing)}"] if failing else []
    if stale:
        reasons.append(f"{stale_count(len(stale))} (the checks pass now: delete them from the baseline)")
        if not failing and not log.gate_errors:
            reasons.append("every executed MUST clause holds")
    verdict = QUICK_NOTE if (selection or {}).get("quick") else "VERDICT"
    if reasons or log.gate_errors:
        lines.append(
            f"{verdict}: FAIL — {'; '.join(reasons) or 'see above'}" + (f" ({scope})" if scope else "")
        )
    elif verdict == QUICK_NOTE:  # never the words of a gate's pass
        lines.append(
            f"{QUICK_NOTE}: every executed MUST clause holds on the {log.executed()} checks it ran"
            + (" (and every SHOULD clause)" if strict else "")
            + f" ({scope})"
        )
    else:
        lines.append(
            "VERDICT: PASS — every executed MUST clause holds"
            + (" (and every SHOULD clause)" if strict else "")
            + (f" ({scope})" if scope else "")
        )
    return lines


def stale_count(count: int) -> str:
    return f"{count} stale baseline entr{'y' if count == 1 else 'ies'}"


def should_not_met(log: OutcomeLog, clauses: list[str]) -> str:
    """The SHOULD-level checks that failed, by clause: a MUST clause judged as SHOULD on some scenarios (the
    refusal row of STOP-01) is named with those scenarios, so the line never calls a MUST clause a SHOULD."""
    shown = []
    for clause in clauses:
        if CLAUSES[clause].level == "SHOULD":
            shown.append(clause)
            continue
        where = sorted({o.scenario for o in log.by_clause()[clause] if o.status == "should_failed"})
        shown.append(f"{clause} on {', '.join(where)} (a MUST clause, judged as SHOULD there)")
    return ", ".join(shown)


def _row(label: str, clauses: int, counts: dict[str, int], checks: int) -> str:
    return (
        f"{label:<24} {clauses:>7} {counts['passed']:>7} {counts['failed']:>7} {counts['should_failed']:>8} "
        f"{counts['baselined']:>7} {counts['skipped']:>8}   {checks}"
    )


REAL_WAIT_NOTE_S = 1.0
"""Real waiting below this is noise (a thread finishing a job); above, the summary says where it went."""


def time_lines(log: OutcomeLog) -> list[str]:
    """What virtual time saved the run, and the real waits it could not skip (docs/speed.md)."""
    if not log.runs:
        return []
    lines = []
    if log.skipped_s >= 0.1:
        lines.append(
            f"virtual time: {log.skipped_s:.1f} s of the adapter's timers (backoff, retry-after, timeouts) "
            f"skipped over {log.runs} runs"
        )
    if log.real_wait_s >= REAL_WAIT_NOTE_S:
        lines.append(
            f"real waiting: {log.real_wait_s:.1f} s on timers while a thread of the adapter's was busy "
            "(time.sleep or blocking work in a thread cannot be skipped; docs/speed.md)"
        )
    return lines
