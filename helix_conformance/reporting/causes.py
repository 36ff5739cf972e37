"""Failures grouped by cause, so a red run reads as its few causes rather than hundreds of lines.

Two failures share a cause when the same clause failed with the same message, up to the values that vary
between scenarios (numbers, quoted literals). The root causes of checks/root.py are worded to be the same on
every scenario, so one missing dependency or a wrong wire profile is one line here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .outcomes import ItemOutcome, OutcomeLog

_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|\b\d+(?:\.\d+)?\b")
SHOWN = 10
"""Causes listed in the terminal summary; the rest are counted."""


@dataclass
class Cause:
    clause: str
    example: str
    """The first failure's message, as it was."""
    scenarios: list[str] = field(default_factory=list)
    nodeids: list[str] = field(default_factory=list)


def cause_key(clause: str, message: str) -> tuple[str, str]:
    return clause, _VARYING.sub("…", message)


def group_causes(log: OutcomeLog) -> list[Cause]:
    """The gate's failures (failed and stale checks) by cause, the most widespread first."""
    causes: dict[tuple[str, str], Cause] = {}
    for outcome in log.items.values():
        if outcome.status not in ("failed", "stale"):
            continue
        message = cause_of(outcome)
        key = cause_key(outcome.clause, message)
        cause = causes.setdefault(key, Cause(outcome.clause, message))
        cause.scenarios.append(outcome.scenario)
        cause.nodeids.append(outcome.nodeid)
    return sorted(causes.values(), key=lambda c: -len(c.scenarios))


def cause_of(outcome: ItemOutcome) -> str:
    """The failure's own message: the ``cause`` the item recorded, else the first line that says what broke."""
    if outcome.cause:
        return outcome.cause
    lines = [line.strip() for line in outcome.message.splitlines() if line.strip()]
    body = [line for line in lines[1:] if not line.startswith("clause:")]
    return body[0] if body else (lines[0] if lines else "")


def render_causes(log: OutcomeLog, adapter: str) -> list[str]:
    """The summary's "root causes" block: one line per cause with where it happened and how to see it."""
    causes = group_causes(log)
    if not causes:
        return []
    failures = sum(len(c.scenarios) for c in causes)
    lines = [
        "",
        f"{len(causes)} cause{'s' if len(causes) != 1 else ''} behind {failures} failed check"
        f"{'s' if failures != 1 else ''}, most widespread first:",
    ]
    for number, cause in enumerate(causes[:SHOWN], 1):
        where = ", ".join(dict.fromkeys(cause.scenarios))
        if len(where) > 100:
            where = where[:99] + "…"
        count = len(cause.scenarios)
        lines.append(f"  {number}. {cause.clause} on {count} check{'s' if count != 1 else ''} ({where})")
        lines.append(f"     {_one_line(cause.example)}")
        first = cause.nodeids[0].split("[", 1)[-1].rstrip("]")
        lines.append(f'     reproduce: pytest --adapter={adapter} -k "{first}"')
    if len(causes) > SHOWN:
        lines.append(f"  … and {len(causes) - SHOWN} more (every failure is in the report above)")
    return lines


def causes_data(log: OutcomeLog, adapter: str) -> list[dict[str, object]]:
    """The causes for the JSON report (every one, not only the first ``SHOWN``)."""
    return [
        {
            "clause": cause.clause,
            "message": cause.example,
            "checks": len(cause.nodeids),
            "scenarios": list(dict.fromkeys(cause.scenarios)),
            "reproduce": f'pytest --adapter={adapter} -k "{cause.nodeids[0].split("[", 1)[-1].rstrip("]")}"',
        }
        for cause in group_causes(log)
    ]


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
