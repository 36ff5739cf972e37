"""The checks not applicable to the adapter's request, with the reason and the counts: never a silent skip.

A scenario whose response the provider would not send to the request the adapter made (its precondition,
``scenarios/preconditions.py``) is not judged on it: Vertex's streamed ``partialArgs`` answer only a request
that asked for them. Every report says which scenarios that left out and why. Report data first
(``not_applicable_data``, in the JSON report); one rendering per format, as ``compatibility.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .outcomes import OutcomeLog
from .safety import neutralise

NOT_APPLICABLE = "not applicable to this adapter's request: "
"""How a not-applicable check's message starts (``gate.Gate.judge``); the rest is the reason."""


def not_applicable_data(log: OutcomeLog) -> dict[str, Any]:
    """The not-applicable checks grouped by reason: how many, and on which scenarios."""
    groups: dict[str, dict[str, Any]] = {}
    for outcome in log.items.values():
        if outcome.status != "not_applicable":
            continue
        reason = outcome.message.removeprefix(NOT_APPLICABLE).strip()
        group = groups.setdefault(reason, {"reason": reason, "scenarios": [], "checks": 0})
        group["checks"] += 1
        if outcome.scenario not in group["scenarios"]:
            group["scenarios"].append(outcome.scenario)
    scenarios = {s for group in groups.values() for s in group["scenarios"]}
    return {
        "checks": sum(group["checks"] for group in groups.values()),
        "scenarios": len(scenarios),
        "reasons": sorted(groups.values(), key=lambda group: (-group["checks"], group["reason"])),
    }


def headline(data: dict[str, Any]) -> str:
    """One line: how many checks on how many scenarios were not judged, and why in general (a report's
    folded section says it in its summary)."""
    return (
        f"not applicable to this adapter's request: {data['checks']} check(s) on {data['scenarios']} "
        "scenario(s), not judged (the provider would not send their response to the request this adapter made)"
    )


def terminal_lines(data: dict[str, Any] | None) -> list[str]:
    if not data or not data["checks"]:
        return []
    lines = [headline(data) + ":"]
    for group in data["reasons"]:
        lines.append(f"  - {', '.join(group['scenarios'])} ({group['checks']} checks): {group['reason']}")
    return [neutralise(line) for line in lines]


def markdown_section(data: dict[str, Any] | None, text: Callable[[object], str]) -> list[str]:
    """``text`` escapes inline text (the Markdown renderer's)."""
    if not data or not data["checks"]:
        return []
    lines = ["## Not applicable to this adapter's request", "", text(headline(data)) + ".", ""]
    for group in data["reasons"]:
        lines.append(
            f"- {text(', '.join(group['scenarios']))} ({group['checks']} checks): {text(group['reason'])}"
        )
    return lines


def html_section(data: dict[str, Any] | None, escape: Callable[[object], str]) -> str:
    """``escape`` is the HTML renderer's."""
    if not data or not data["checks"]:
        return ""
    items = "".join(
        f"<li><code>{escape(', '.join(group['scenarios']))}</code> ({group['checks']} checks): "
        f"{escape(group['reason'])}</li>"
        for group in data["reasons"]
    )
    return (
        f"<h2>Not applicable to this adapter's request</h2><p>{escape(headline(data))}.</p><ul>{items}</ul>"
    )
