"""What the gate makes of one check's outcome: its level (MUST/SHOULD, --helix-strict) and the baseline.

Kept apart from pytest so the rules read in one place and are tested as plain functions: the item only
carries out the verdict (pass, skip, xfail, fail).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .baseline import DEFAULT_PATH, Baseline, BaselineEntry
from .checks.registry import Failure
from .profiles.servers import server_name
from .reporting.applicability import NOT_APPLICABLE
from .reporting.outcomes import OutcomeLog
from .suite import CheckOutcome, PlannedCheck

Action = Literal["pass", "skip", "xfail", "fail"]


@dataclass(frozen=True)
class ItemVerdict:
    action: Action
    message: str = ""
    failure: Failure | None = None
    """The clause failure behind a fail or an xfail (its evidence goes into every report)."""
    status: Literal["baselined", "stale", "compat_failed", "not_applicable"] | None = None
    """Set when the baseline decided the outcome (``baselined``, ``stale``), when a failure goes to the
    compatibility matrix instead of the gate (``compat_failed``), or when the scenario's response is not what the
    provider sends to the adapter's request (``not_applicable``); reported through the ``helix_status`` user
    property."""
    baseline_reason: str = ""
    matrix: frozenset[str] = frozenset()
    """With ``compat_failed``: the servers whose quirk it is (the matrix's rows that show it)."""


@dataclass
class Gate:
    strict: bool = False
    baseline: Baseline | None = None
    write_baseline: bool = False
    unmatched: list[BaselineEntry] = field(default_factory=list)

    def judge(self, planned: PlannedCheck, outcome: CheckOutcome) -> ItemVerdict:
        if outcome.outcome == "not_applicable":
            return ItemVerdict("skip", NOT_APPLICABLE + outcome.reason, status="not_applicable")
        if outcome.outcome == "skipped":
            return ItemVerdict("skip", outcome.reason)
        if outcome.matrix and outcome.outcome == "failed" and outcome.failure is not None:
            # A quirk of servers the adapter does not target: the matrix shows it, whatever the baseline says.
            servers = ", ".join(server_name(planned.profile, s) for s in sorted(outcome.matrix))
            return ItemVerdict(
                "xfail",
                f"compatibility matrix only (a quirk of {servers}, which the adapter does not declare in "
                f"AdapterSpec.servers): {outcome.failure.message}",
                outcome.failure,
                status="compat_failed",
                matrix=outcome.matrix,
            )
        entry = (
            self.baseline.find(planned.profile, planned.scenario.id, planned.clause)
            if self.baseline
            else None
        )
        if outcome.outcome == "failed" and outcome.failure is not None:
            failure = outcome.failure
            fails_gate = planned.level == "MUST" or self.strict
            if entry is not None:
                return ItemVerdict(
                    "xfail",
                    f"baselined ({entry.reason}): {failure.clause}: {failure.message}",
                    failure,
                    status="baselined",
                    baseline_reason=entry.reason,
                )
            if self.write_baseline and fails_gate:
                reason = f"known failure: {_first_line(failure.message)}"
                return ItemVerdict(
                    "xfail",
                    f"written to the baseline: {failure.clause}: {failure.message}",
                    failure,
                    status="baselined",
                    baseline_reason=reason,
                )
            if not fails_gate:
                return ItemVerdict("xfail", f"SHOULD {planned.clause} not met: {failure.message}", failure)
            return ItemVerdict("fail", failure.message, failure)
        if entry is not None and not self.write_baseline:
            assert self.baseline is not None
            message = (
                f"stale baseline entry: {planned.clause} now holds on scenario {planned.scenario.id}; delete "
                f"the entry from {self.baseline.path} so the baseline shrinks (its reason was: {entry.reason})"
            )
            stale = Failure(
                planned.clause,
                planned.scenario.id,
                planned.profile,
                message,
                hint="the baseline lists only failures that still happen",
            )
            return ItemVerdict("fail", message, stale, status="stale", baseline_reason=entry.reason)
        return ItemVerdict("pass")

    def check_entries_exist(self, planned: Iterable[PlannedCheck], profile: str) -> None:
        """Entries for this profile that name no check of the full plan can never match: report them."""
        if self.baseline is None:
            return
        keys = {(p.profile, p.scenario.id, p.clause) for p in planned}
        self.unmatched = [
            entry
            for entry in self.baseline.entries
            if entry.profile in (None, profile) and (profile, entry.scenario, entry.clause) not in keys
        ]

    def unmatched_errors(self) -> list[str]:
        if not self.unmatched or self.baseline is None:
            return []
        names = ", ".join(entry.key for entry in self.unmatched)
        return [
            f"HARN-05: baseline {self.baseline.path} has {len(self.unmatched)} entr"
            f"{'y' if len(self.unmatched) == 1 else 'ies'} matching no check of this suite for this "
            f"adapter's profile (the clause is not judged on that scenario, or the scenario does not run on "
            f"this profile): {names}. Delete them, or add 'profile:' to entries meant for another adapter."
        ]


def entries_to_write(
    gate: Gate, outcomes: Iterable[tuple[str, str, str, str, str]], ran: set[tuple[str, str, str]]
) -> list[BaselineEntry]:
    """The baseline after a --helix-write-baseline run: this run's accepted failures (profile, scenario,
    clause, status, reason), plus old entries for checks that did not run (deselected or skipped)."""
    written: dict[tuple[str, str, str], BaselineEntry] = {}
    for profile, scenario, clause, status, reason in outcomes:
        if status == "baselined":
            written[(profile, scenario, clause)] = BaselineEntry(clause, scenario, reason, profile)
    if gate.baseline is not None:
        unmatched = {entry.key for entry in gate.unmatched}
        for entry in gate.baseline.entries:
            if entry.key in unmatched:
                continue
            already = [key for key in written if entry.matches(*key)]
            if already:
                for key in already:  # keep the profile-neutral spelling of the entry the user wrote
                    written[key] = entry
            elif not any(entry.matches(*key) for key in ran):
                written[(entry.profile or "*", entry.scenario, entry.clause)] = entry
    return list({entry.key: entry for entry in written.values()}.values())


def session_errors(log: OutcomeLog, capabilities: frozenset[str], *, everything_selected: bool) -> list[str]:
    """HARN-05 for a whole run: one that checked nothing, or never exercised a declared capability (judged
    only when nothing was deselected), proves nothing and must not pass."""
    if log.executed() == 0:
        return [
            "HARN-05: no conformance clause was executed (everything deselected, skipped or not applicable), "
            "so this run proves nothing"
        ]
    unexercised = log.unexercised(capabilities) if everything_selected else []
    if unexercised:
        left_out = sorted(
            {c for o in log.items.values() if o.status == "not_applicable" for c in o.requires}
            & set(unexercised)
        )
        why = (
            f" ({', '.join(left_out)}: the scenarios that need it were not applicable to this adapter's request, "
            "which never asked for what their responses need; see 'not applicable' above)"
            if left_out
            else ""
        )
        return [
            f"HARN-05: declared capabilities exercised by no executed clause: {', '.join(unexercised)}{why}"
        ]
    return []


def baseline_path(configured: str | None, invocation_dir: Path) -> Path:
    """Where --helix-write-baseline writes: the --helix-baseline file, else the default in the invocation dir."""
    return Path(configured) if configured else invocation_dir / DEFAULT_PATH


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= 200 else line[:200] + "…"
