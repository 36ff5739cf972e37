"""Failures grouped by cause, so a red run reads as its few causes rather than hundreds of lines.

What actually happened comes first: failures that carry the same ``happening`` (the same exception, an error
result for a success response: ``checks/root.py``) are one cause, whatever clause each was reported on. The
others share a cause when the same clause failed with the same message, up to the values that vary between
scenarios (numbers, quoted literals). Stale baseline entries are not causes of a broken clause: the summary
lists them apart (``stale_entries``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .format import evidence_of
from .outcomes import ItemOutcome, OutcomeLog

_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|\b\d+(?:\.\d+)?\b")
SHOWN = 10
"""Causes listed in the terminal summary; the rest are counted."""


@dataclass
class Cause:
    example: str
    """The first failure's message, as it was."""
    outcomes: list[ItemOutcome] = field(default_factory=list)

    @property
    def clauses(self) -> list[tuple[str, int]]:
        """The clauses it was reported on, with their checks, the most frequent first."""
        return Counter(o.clause for o in self.outcomes).most_common()

    @property
    def clause(self) -> str:
        return self.clauses[0][0]

    @property
    def scenarios(self) -> list[str]:
        return list(dict.fromkeys(o.scenario for o in self.outcomes))

    @property
    def first(self) -> ItemOutcome:
        return self.outcomes[0]

    def clause_text(self) -> str:
        """``RES-02`` or ``RES-02 ×38, FIN-01 ×3``."""
        if len(self.clauses) == 1:
            return self.clause
        return ", ".join(f"{clause} ×{count}" for clause, count in self.clauses)


def cause_key(outcome: ItemOutcome) -> tuple[str, str]:
    if outcome.happening:
        return "", _VARYING.sub("…", outcome.happening)
    return outcome.clause, _VARYING.sub("…", cause_of(outcome))


def group_causes(log: OutcomeLog) -> list[Cause]:
    """The gate's failures by cause, the most widespread first."""
    causes: dict[tuple[str, str], Cause] = {}
    for outcome in log.items.values():
        if outcome.status != "failed":
            continue
        cause = causes.setdefault(cause_key(outcome), Cause(outcome.happening or cause_of(outcome)))
        cause.outcomes.append(outcome)
    return sorted(causes.values(), key=lambda c: -len(c.outcomes))


def stale_entries(log: OutcomeLog) -> list[ItemOutcome]:
    """Baseline entries whose check passes now: they fail the gate until deleted, but nothing is broken."""
    return [o for o in log.items.values() if o.status == "stale"]


def cause_of(outcome: ItemOutcome) -> str:
    """The failure's own message: the ``cause`` the item recorded, else the first line that says what broke."""
    if outcome.cause:
        return outcome.cause
    lines = [line.strip() for line in outcome.message.splitlines() if line.strip()]
    body = [line for line in lines[1:] if not line.startswith("clause:")]
    return body[0] if body else (lines[0] if lines else "")


def check_id(outcome: ItemOutcome) -> str:
    """``profile::scenario::clause``: what ``-k`` selects."""
    return outcome.nodeid.split("[", 1)[-1].rstrip("]")


def reproduce(outcome: ItemOutcome, adapter: str) -> str:
    return f'pytest --adapter={adapter} -k "{check_id(outcome)}"'


def render_causes(log: OutcomeLog, adapter: str) -> list[str]:
    """The summary's "root causes" block: one line per cause with where it happened and how to see it."""
    causes = group_causes(log)
    if not causes:
        return []
    failures = sum(len(c.outcomes) for c in causes)
    lines = [
        "",
        f"{len(causes)} cause{'s' if len(causes) != 1 else ''} behind {failures} failed check"
        f"{'s' if failures != 1 else ''}, most widespread first:",
    ]
    for number, cause in enumerate(causes[:SHOWN], 1):
        where = ", ".join(cause.scenarios)
        if len(where) > 100:
            where = where[:99] + "…"
        count = len(cause.outcomes)
        lines.append(
            f"  {number}. {cause.clause_text()} on {count} check{'s' if count != 1 else ''} ({where})"
        )
        lines.append(f"     {one_line(cause.example)}")
        lines.append(f"     reproduce: {reproduce(cause.first, adapter)}")
    if len(causes) > SHOWN:
        lines.append(f"  … and {len(causes) - SHOWN} more (every failure is in the report above)")
    return lines


def causes_data(log: OutcomeLog, adapter: str) -> list[dict[str, object]]:
    """The causes for the JSON report (every one, not only the first ``SHOWN``), each with the evidence of
    its first failure (expected, actual, hint) for the reports that put causes first."""
    data: list[dict[str, object]] = []
    for cause in group_causes(log):
        first = cause.first
        data.append(
            {
                "clause": cause.clause,
                "clauses": dict(cause.clauses),
                "message": cause.example,
                "checks": len(cause.outcomes),
                "scenarios": cause.scenarios,
                "first": {"clause": first.clause, "scenario": first.scenario, "level": first.level},
                **evidence_of(first.message),
                "reproduce": reproduce(first, adapter),
            }
        )
    return data


def one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
