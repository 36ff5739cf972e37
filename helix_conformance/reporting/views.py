"""What every rendering of a report shows, computed once from the report data: the verdict line, the
per-area counts and the failures. Markdown, HTML and the badge differ only in markup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..quick import QUICK_HINT, QUICK_NOTE

SYMBOL = {
    "passed": "✓",
    "failed": "✗",
    "stale": "⊘",
    "should_failed": "!",
    "baselined": "~",
    "compat_failed": "≈",
    "skipped": "–",
    "not_applicable": "∅",
}
LEGEND = (
    "✓ holds · ✗ fails the gate · ! SHOULD not met · ~ known failure (baseline) · ⊘ holds, but a stale "
    "baseline entry lists it (fails the gate until deleted) · ≈ fails on an undeclared server's quirk "
    "(compatibility matrix) · – skipped · ∅ not applicable to the adapter's request"
)
NOT_HOLDING = ("failed", "should_failed", "baselined", "compat_failed")
HOLDING = ("passed", "stale")
"""A clause whose only blemish is a stale baseline entry holds: it is the entry that is wrong."""
NOT_RUN = ("skipped", "not_applicable")


@dataclass(frozen=True)
class AreaRow:
    area: str
    title: str
    clauses: int
    counts: dict[str, int]
    checks: int


def headline(data: dict[str, Any]) -> str:
    adapter = data["adapter"]
    verdict = "PASS" if data["verdict"] == "pass" else "FAIL"
    if (data.get("selection") or {}).get("quick"):
        verdict = f"{QUICK_NOTE} ({verdict})"
    stale = stale_results(data)
    tail = f"; {stale_words(len(stale))} fail the gate" if stale else ""
    scope = scope_text(data.get("selection"))
    return (
        f"{verdict}: adapter {adapter['name']} ({adapter['wire_profile']}, {adapter['model']}) — "
        f"{clauses_holding(data)} clauses hold, {executed(data)} checks executed{tail}"
        + (f" ({scope})" if scope else "")
    )


def scope_text(selection: dict[str, Any] | None) -> str | None:
    """Why a verdict is not the gate's, or None: it judged one shard (``--helix-shard``), a run narrowed
    to what failed last time (``--lf``), or a quick check (``--helix-quick``). Said beside the verdict in the
    summary and every report."""
    if not selection:
        return None
    parts = []
    if selection.get("quick"):
        parts.append(f"--helix-quick judged part of the suite; {QUICK_HINT}")
    shard = selection.get("shard")
    if shard:
        parts.append(
            f"shard {shard['index']}/{shard['count']} of the suite: judges this shard, not the gate; join the "
            "shards' JSON reports with helix-conformance report merge"
        )
    if selection.get("last_failed"):
        parts.append(
            "narrowed by --lf to what failed last time: not a gate; run without --lf for the verdict"
        )
    return "; ".join(parts) or None


def causes_heading(causes: list[dict[str, Any]]) -> str:
    """``2 causes behind 7 failed checks``: the heading of the causes, as the terminal says it."""
    checks = sum(int(c["checks"]) for c in causes)
    return (
        f"{len(causes)} cause{'s' if len(causes) != 1 else ''} behind {checks} failed "
        f"check{'s' if checks != 1 else ''}"
    )


def stale_words(count: int) -> str:
    return f"{count} stale baseline entr{'y' if count == 1 else 'ies'}"


def clauses_holding(data: dict[str, Any]) -> str:
    statuses = [c["status"] for c in data["clauses"].values()]
    ran = [s for s in statuses if s not in NOT_RUN]
    return f"{sum(1 for s in ran if s in HOLDING)}/{len(ran)}"


def broken_clauses(data: dict[str, Any]) -> list[str]:
    """The clauses that fail the gate: MUST failures (and SHOULD ones under --helix-strict)."""
    bad = ("failed", "should_failed") if data.get("strict") else ("failed",)
    return [cid for cid, clause in data["clauses"].items() if clause["status"] in bad]


def stale_results(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Baseline entries whose check passes now: they fail the gate, but no clause is broken."""
    return [r for r in data["results"] if r["outcome"] == "stale"]


def executed(data: dict[str, Any]) -> int:
    return sum(1 for r in data["results"] if r["outcome"] not in NOT_RUN)


def area_rows(data: dict[str, Any]) -> list[AreaRow]:
    rows = []
    for area, title in data["areas"].items():
        clauses = {cid: c for cid, c in data["clauses"].items() if c["area"] == area}
        if not clauses:
            continue
        counts = dict.fromkeys(("passed", "failed", "should_failed", "baselined", "skipped"), 0)
        for clause in clauses.values():
            counts["passed" if clause["status"] in HOLDING else clause["status"]] += 1
        checks = sum(len(c["scenarios"]) for c in clauses.values())
        rows.append(AreaRow(area, title, len(clauses), counts, checks))
    return rows


def failures(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Results that did not hold (stale baseline entries aside: ``stale_results``), the ones failing the gate
    first."""
    order = {status: i for i, status in enumerate(NOT_HOLDING)}
    chosen = [r for r in data["results"] if r["outcome"] in order]
    return sorted(chosen, key=lambda r: (order[r["outcome"]], r["clause"]))  # scenarios in the run's order


def failures_by_clause(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``failures`` grouped by clause, in the order of the catalogue, so a clause's text is shown once."""
    grouped: dict[str, list[dict[str, Any]]] = {cid: [] for cid in data["clauses"]}
    for result in failures(data):
        grouped.setdefault(result["clause"], []).append(result)
    return {cid: rows for cid, rows in grouped.items() if rows}


def without_clause_line(message: str) -> str:
    """A failure's text without its ``clause:`` line, where the clause text is already shown above it."""
    return "\n".join(line for line in message.strip().splitlines() if not line.startswith("  clause: "))


def cell_anchor(clause: str, scenario: str) -> str:
    """The id of the failure block of (clause, scenario); the matrix cell links there."""
    return f"{clause}--{scenario}".lower()


def scenarios(data: dict[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for result in data["results"]:
        seen.setdefault(result["scenario"], None)
    return list(seen)


OUTCOME_WORDS = {
    "failed": "fails the gate",
    "stale": "stale baseline entry: the check passes now (fails the gate until deleted)",
    "should_failed": "SHOULD not met",
    "baselined": "known failure (baseline)",
    "compat_failed": "compatibility matrix only (an undeclared server's quirk)",
}
