"""The outcome of every clause x scenario item, gathered from pytest reports (also from xdist workers)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["passed", "failed", "skipped", "should_failed"]


@dataclass(frozen=True)
class ItemOutcome:
    nodeid: str
    clause: str
    scenario: str
    profile: str
    level: str
    status: Status
    message: str
    duration_s: float
    requires: frozenset[str] = frozenset()
    """Capabilities the check exercises (HARN-05)."""


@dataclass
class OutcomeLog:
    items: dict[str, ItemOutcome] = field(default_factory=dict)
    gate_errors: list[str] = field(default_factory=list)

    def add(self, report: Any) -> None:
        props = dict(report.user_properties or ())
        if "clause" not in props:
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if hasattr(report, "wasxfail"):
                status: Status = "should_failed"
                message = str(report.wasxfail)
            elif report.skipped:
                status = "skipped"
                longrepr = report.longrepr
                message = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
            elif report.failed:
                status = "should_failed" if props["level"] == "SHOULD" else "failed"
                message = str(report.longreprtext)
            else:
                status, message = "passed", ""
            self.items[report.nodeid] = ItemOutcome(
                report.nodeid,
                props["clause"],
                props["scenario"],
                props["profile"],
                props["level"],
                status,
                message,
                float(report.duration),
                frozenset(filter(None, str(props.get("requires", "")).split(","))),
            )

    def unexercised(self, capabilities: frozenset[str]) -> list[str]:
        """Declared capabilities that no executed check needed (HARN-05)."""
        used: set[str] = set()
        for outcome in self.items.values():
            if outcome.status != "skipped":
                used |= outcome.requires
        return sorted(capabilities - used)

    def executed(self) -> int:
        return sum(1 for o in self.items.values() if o.status != "skipped")

    def by_clause(self) -> dict[str, list[ItemOutcome]]:
        grouped: dict[str, list[ItemOutcome]] = defaultdict(list)
        for outcome in self.items.values():
            grouped[outcome.clause].append(outcome)
        return grouped

    def clause_status(self, clause: str) -> Status:
        """A clause fails if any scenario fails it, passes if at least one passes, else it is skipped."""
        statuses = {o.status for o in self.by_clause()[clause]}
        for status in ("failed", "should_failed", "passed"):
            if status in statuses:
                return status
        return "skipped"
