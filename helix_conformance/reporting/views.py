"""What every rendering of a report shows, computed once from the report data: the verdict line, the
per-area counts and the failures. Markdown, HTML and the badge differ only in markup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SYMBOL = {
    "passed": "✓",
    "failed": "✗",
    "stale": "✗",
    "should_failed": "!",
    "baselined": "~",
    "compat_failed": "≈",
    "skipped": "–",
    "not_applicable": "∅",
}
LEGEND = (
    "✓ holds · ✗ fails the gate · ! SHOULD not met · ~ known failure (baseline) · ≈ fails on an undeclared "
    "server's quirk (compatibility matrix) · – skipped · ∅ not applicable to the adapter's request"
)
FAILING = ("failed", "stale", "should_failed", "baselined", "compat_failed")
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
    return (
        f"{verdict}: adapter {adapter['name']} ({adapter['wire_profile']}, {adapter['model']}) — "
        f"{clauses_holding(data)} clauses hold, {executed(data)} checks executed"
    )


def clauses_holding(data: dict[str, Any]) -> str:
    statuses = [c["status"] for c in data["clauses"].values()]
    ran = [s for s in statuses if s not in NOT_RUN]
    return f"{sum(1 for s in ran if s == 'passed')}/{len(ran)}"


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
            counts["failed" if clause["status"] == "stale" else clause["status"]] += 1
        checks = sum(len(c["scenarios"]) for c in clauses.values())
        rows.append(AreaRow(area, title, len(clauses), counts, checks))
    return rows


def failures(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Results that did not hold, the ones failing the gate first."""
    order = {status: i for i, status in enumerate(FAILING)}
    chosen = [r for r in data["results"] if r["outcome"] in order]
    return sorted(chosen, key=lambda r: (order[r["outcome"]], r["clause"], r["scenario"]))


def scenarios(data: dict[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for result in data["results"]:
        seen.setdefault(result["scenario"], None)
    return list(seen)


OUTCOME_WORDS = {
    "failed": "fails the gate",
    "stale": "stale baseline entry (fails the gate)",
    "should_failed": "SHOULD not met",
    "baselined": "known failure (baseline)",
    "compat_failed": "compatibility matrix only (an undeclared server's quirk)",
}
