"""The outcome of every clause x scenario item, gathered from pytest reports (also from xdist workers)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .safety import safe_text

Status = Literal[
    "passed", "failed", "skipped", "should_failed", "baselined", "stale", "compat_failed", "not_applicable"
]
"""``baselined``: a failure listed in the baseline (does not fail the gate); ``stale``: a listed entry that
passed (fails the gate); ``compat_failed``: a failure on a quirk of servers the adapter does not declare (the
compatibility matrix shows it, the gate does not count it); ``not_applicable``: the scenario's response is not
what the provider sends to the adapter's request. Set by the item through the ``helix_status`` user
property."""

STATUS_PROPERTY = "helix_status"
REASON_PROPERTY = "helix_baseline_reason"
CAUSE_PROPERTY = "helix_cause"
HAPPENING_PROPERTY = "helix_happening"
"""A failure's ``Failure.happening``: what groups it with failures of other clauses into one cause."""
STOP_PROPERTY = "helix_stop"
"""Set on the item after which the run stopped early (checks/root.common_cause), with the reason."""
TIME_PROPERTY = "helix_time"
"""``runs,skipped_s,real_wait_s``: the adapter runs an item caused and their clock (replay/clock.py)."""


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
    baseline_reason: str = ""
    cause: str = ""
    """A failure's own message (without the clause header and evidence): what reporting/causes.py groups."""
    servers: frozenset[str] = frozenset()
    """The servers whose quirk the scenario is (empty: every server's): where the compatibility matrix puts it."""
    happening: str = ""
    """``Failure.happening``: set, it groups the failure by what happened rather than by clause."""

    @property
    def executed(self) -> bool:
        """Whether the check judged anything (not skipped, and applicable to the adapter's request)."""
        return self.status not in ("skipped", "not_applicable")


@dataclass
class OutcomeLog:
    items: dict[str, ItemOutcome] = field(default_factory=dict)
    gate_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Informational lines for the summary (e.g. where the baseline was written)."""
    runs: int = 0
    skipped_s: float = 0.0
    """The adapter's timer seconds virtual time skipped, over every run (replay/clock.py)."""
    real_wait_s: float = 0.0
    """Seconds the adapter's runs really waited on a timer while a thread of theirs was busy."""

    def add(self, report: Any) -> None:
        props = dict(report.user_properties or ())
        if "clause" not in props:
            return
        if report.when == "call" and TIME_PROPERTY in props:
            self._add_time(str(props[TIME_PROPERTY]))
        if report.when == "call" or (report.when == "setup" and not report.passed):
            status: Status
            if props.get(STATUS_PROPERTY) in ("baselined", "compat_failed"):
                status, message = props[STATUS_PROPERTY], _xfail_reason(report)
            elif props.get(STATUS_PROPERTY) == "not_applicable" and report.skipped:
                status, message = "not_applicable", _skip_reason(report).removeprefix("Skipped: ")
            elif props.get(STATUS_PROPERTY) == "stale":
                status, message = "stale", _failure_text(report)
            elif hasattr(report, "wasxfail"):
                status = "should_failed"
                message = _xfail_reason(report)
            elif report.skipped:
                status, message = "skipped", _skip_reason(report)
            elif report.failed:
                status = "should_failed" if props["level"] == "SHOULD" else "failed"
                message = _failure_text(report)
            else:
                status, message = "passed", ""
            self.items[report.nodeid] = ItemOutcome(
                report.nodeid,
                props["clause"],
                props["scenario"],
                props["profile"],
                props["level"],
                status,
                safe_text(message),
                float(report.duration),
                frozenset(filter(None, str(props.get("requires", "")).split(","))),
                str(props.get(REASON_PROPERTY, "")),
                safe_text(str(props.get(CAUSE_PROPERTY, ""))),
                frozenset(filter(None, str(props.get("servers", "")).split(","))),
                safe_text(str(props.get(HAPPENING_PROPERTY, ""))),
            )
        stop = props.get(STOP_PROPERTY)
        if stop and str(stop) not in self.gate_errors:
            self.gate_errors.append(str(stop))

    def _add_time(self, value: str) -> None:
        try:
            runs, skipped, real = value.split(",")
            self.runs += int(runs)
            self.skipped_s += float(skipped)
            self.real_wait_s += float(real)
        except ValueError:
            pass  # a property written by another version of the plugin: timing is informational

    def record(self, outcome: ItemOutcome) -> None:
        """Add an outcome computed without pytest (``run_conformance``)."""
        self.items[outcome.nodeid] = outcome

    def unexercised(self, capabilities: frozenset[str]) -> list[str]:
        """Declared capabilities that no executed check needed (HARN-05)."""
        used: set[str] = set()
        for outcome in self.items.values():
            if outcome.executed:
                used |= outcome.requires
        return sorted(capabilities - used)

    def executed(self) -> int:
        return sum(1 for o in self.items.values() if o.executed)

    def by_clause(self) -> dict[str, list[ItemOutcome]]:
        grouped: dict[str, list[ItemOutcome]] = defaultdict(list)
        for outcome in self.items.values():
            grouped[outcome.clause].append(outcome)
        return grouped

    def fails_gate(self, *, strict: bool) -> bool:
        """The verdict from the outcomes: a MUST failure, a stale baseline entry, a SHOULD failure under
        --helix-strict, or an error of the session (HARN-05, an early stop) fails the gate."""
        return bool(self.gate_errors) or any(
            o.status in ("failed", "stale") or (strict and o.status == "should_failed")
            for o in self.items.values()
        )

    def clause_status(self, clause: str) -> Status:
        """The worst outcome of the clause over its scenarios; skipped if none ran. ``stale``: the clause
        holds everywhere, but a baseline entry still lists it (that fails the gate, nothing is broken)."""
        return worst(o.status for o in self.items.values() if o.clause == clause)


def _xfail_reason(report: Any) -> str:
    """The reason ``pytest.xfail`` was given: pytest 8.0 wrote it as ``reason: ...`` in ``wasxfail``."""
    return str(report.wasxfail).removeprefix("reason: ")


def _skip_reason(report: Any) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)


def _failure_text(report: Any) -> str:
    """The failure as the item rendered it. Not ``longreprtext``: on the xdist controller that starts with
    the worker's line (``[gw0] linux -- Python 3.11 /path/to/python``), and a report must not depend on
    where the item ran."""
    return str(report.longrepr).strip()


SEVERITY: tuple[Status, ...] = ("failed", "stale", "should_failed", "baselined", "passed", "skipped")
AS_THE_GATE_SEES: dict[Status, Status] = {"compat_failed": "passed", "not_applicable": "skipped"}
"""A clause's status is the gate's view: a failure for the matrix only does not break it, a check not
applicable to the request did not run it."""


def worst(statuses: Iterable[Status]) -> Status:
    present = {AS_THE_GATE_SEES.get(status, status) for status in statuses}
    return next((status for status in SEVERITY if status in present), "skipped")


def holds(status: Status) -> bool:
    """Whether a clause with this status holds where it ran (a stale baseline entry is no breach)."""
    return status in ("passed", "stale")
