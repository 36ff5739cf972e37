"""The text of one clause failure: clause, scenario, expected vs actual, a hint, and how to reproduce."""

from __future__ import annotations

import pprint

from ..checks.registry import Failure
from ..clauses import get_clause


def _show(value: object) -> str:
    text = value if isinstance(value, str) else pprint.pformat(value, width=100, compact=True)
    return text if len(text) < 1500 else text[:1500] + " …"


def format_failure(failure: Failure, level: str, adapter: str) -> str:
    clause = get_clause(failure.clause)
    lines = [
        f"{failure.clause} ({level}, {clause.source}) failed on scenario {failure.scenario} "
        f"[{failure.profile}]",
        f"  clause: {clause.text}",
        f"  {failure.message}",
    ]
    if failure.has_expected():
        lines.append("  expected: " + _show(failure.expected).replace("\n", "\n            "))
        lines.append("  actual:   " + _show(failure.actual).replace("\n", "\n            "))
    if failure.details:
        lines.append("  details:\n" + "\n".join("    " + line for line in failure.details.splitlines()))
    if failure.hint:
        lines.append(f"  hint: {failure.hint}")
    lines.append(
        f'  reproduce: pytest --adapter={adapter} -k "{failure.profile}::{failure.scenario}::{failure.clause}"'
    )
    if failure.replay:
        lines.append(
            f"  replay:    helix-conformance replay --adapter={adapter} {failure.scenario} {failure.replay}"
        )
    lines.append(f"  docs:      docs/contract.md#{failure.clause.lower()}")
    return "\n".join(lines)
