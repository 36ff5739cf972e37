"""The text of one clause failure: clause, scenario, expected vs actual, details, a hint, and how to reproduce.

This is where a check's evidence becomes text for every report (terminal, JUnit, JSON, Markdown, HTML), so it
is also where adapter text is made safe (``safety.safe_text``): nothing reaches a report another way.
"""

from __future__ import annotations

import pprint
from typing import TYPE_CHECKING

from ..adapters import language_of
from ..checks.registry import Failure
from ..clauses import get_clause
from .safety import safe_text

if TYPE_CHECKING:
    from ..gate import ItemVerdict

SHOWN_CHARS = 1500
"""Longest expected or actual value shown; the rest is cut (the details and the message are kept whole)."""


def _show(value: object) -> str:
    text = value if isinstance(value, str) else pprint.pformat(value, width=100, compact=True)
    text = safe_text(text)  # before cutting: a key cut in half would escape its redaction
    return text if len(text) < SHOWN_CHARS else text[:SHOWN_CHARS] + " …"


def format_failure(failure: Failure, level: str, adapter: str) -> str:
    """Every piece of evidence the check collected, each shown when present (``actual`` may come alone); the
    clause in the words of ``adapter``'s language."""
    clause = get_clause(failure.clause, language_of(adapter))
    lines = [
        f"{failure.clause} ({level}, {clause.source}) failed on scenario {failure.scenario} "
        f"[{failure.profile}]",
        f"  clause: {clause.text}",
        "  " + failure.message.strip().replace("\n", "\n  "),
    ]
    if failure.has_expected():
        lines.append("  expected: " + _show(failure.expected).replace("\n", "\n            "))
    if failure.has_actual():
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
    return safe_text("\n".join(lines))


def failure_line(failure: Failure) -> str:
    """The one line a summary shows (pytest's short summary, JUnit's message attribute)."""
    return safe_text(f"{failure.clause}: {_first_line(failure.message)}")


def verdict_text(verdict: ItemVerdict, level: str, adapter: str) -> str:
    """What a report says of one check: the failure with all its evidence (a baselined or SHOULD failure
    too, under the gate's one-line reason), or the reason of a skip."""
    if verdict.failure is None:
        return safe_text(verdict.message)
    text = format_failure(verdict.failure, level, adapter)
    if verdict.action == "fail":
        return text
    return safe_text(_first_line(verdict.message)) + "\n" + text


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


_EVIDENCE = {"  expected: ": "expected", "  actual:   ": "actual", "  hint: ": "hint"}
_CONTINUED = " " * 12


def evidence_of(text: str) -> dict[str, str]:
    """The expected value, the actual value and the hint of a failure as ``format_failure`` wrote it (read
    back from the text, so a saved report's failures give them too); each key only where the text has it."""
    found: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        start = next((prefix for prefix in _EVIDENCE if line.startswith(prefix)), None)
        if start is not None:
            key = _EVIDENCE[start]
            found[key] = line[len(start) :]
        elif key in ("expected", "actual") and line.startswith(_CONTINUED):
            found[key] += "\n" + line[len(_CONTINUED) :]
        else:
            key = None
    return found
