"""The compatibility matrix: which servers of its wire profile the adapter works with.

One wire protocol is spoken by several servers (``profiles/servers.py``), each with its quirks. An adapter
declares the servers it targets; their quirks are judged by the gate. The quirks of the others are run all the
same and shown here, "works with: OpenAI ✓, DeepSeek ✗ RES-03, …", without failing the gate. The matrix is
report data first (``matrix_data``, in the JSON report); each format has one function that renders that
section from it (``terminal_lines``, ``markdown_section``, ``html_section``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable
from typing import Any

from ..profiles.servers import servers_of
from .outcomes import ItemOutcome, OutcomeLog
from .safety import neutralise

NOT_HOLDING = ("failed", "stale", "baselined", "compat_failed")
"""A MUST check with one of these statuses means the adapter does not work with the server (a SHOULD
miss, or a check not run, does not)."""


def matrix_data(log: OutcomeLog, profile: str, declared: Iterable[str]) -> dict[str, Any]:
    """Per server of ``profile``: whether it is declared, its own quirk checks (run and not applicable), the
    clauses and scenarios where a MUST does not hold on them, and whether the adapter works with it: its own
    checks and the common ones (the scenarios every server sends) all hold."""
    chosen = frozenset(declared)
    outcomes = list(log.items.values())
    common = _not_holding(o for o in outcomes if not o.servers)
    rows = []
    for server in servers_of(profile):
        own = [o for o in outcomes if server.id in o.servers]
        failing = _not_holding(own)
        rows.append(
            {
                "id": server.id,
                "name": server.name,
                "declared": server.id in chosen,
                "checks": sum(1 for o in own if o.executed),
                "not_applicable": sum(1 for o in own if o.status == "not_applicable"),
                "failing": sorted({o.clause for o in failing}),
                "scenarios": sorted({o.scenario for o in failing}),
                "works": not failing and not common,
            }
        )
    return {"profile": profile, "common_failing": sorted({o.clause for o in common}), "servers": rows}


def _not_holding(outcomes: Iterable[ItemOutcome]) -> list[ItemOutcome]:
    return [o for o in outcomes if o.level == "MUST" and o.status in NOT_HOLDING]


def cell(row: dict[str, Any], common_failing: list[str]) -> str:
    """One server's verdict: ✓, or ✗ with the clauses that do not hold on its own quirks (or the common
    checks)."""
    if row["works"]:
        return "✓"
    if row["failing"]:
        return "✗ " + ", ".join(row["failing"])
    return "✗ (common checks: " + ", ".join(common_failing) + ")"


def _label(row: dict[str, Any]) -> str:
    return str(row["name"]) + (" (declared)" if row["declared"] else "")


def _intro(data: dict[str, Any]) -> str:
    return (
        f"compatibility matrix of wire profile {data['profile']}: the quirks of servers the adapter does not "
        "declare (AdapterSpec.servers) are run and shown here, and never fail the gate"
    )


SHOWN_DECLARED = 4
"""Declared servers named one by one in the matrix's one-line summary; more are counted."""


def headline(data: dict[str, Any]) -> str:
    """The matrix in one line (the summary of a report's folded section): how many servers the adapter works
    with, the declared ones' verdicts and the common checks that fail everywhere."""
    rows = data["servers"]
    text = (
        f"Compatibility matrix ({data['profile']}): works with {sum(1 for r in rows if r['works'])} of "
        f"{len(rows)} servers"
    )
    declared = [r for r in rows if r["declared"]]
    if declared and len(declared) == len(rows):
        text += ", every one declared"
    elif len(declared) > SHOWN_DECLARED:
        text += f"; {len(declared)} declared, {sum(1 for r in declared if r['works'])} of them work"
    elif declared:
        verdicts = [f"{r['name']} {'✓' if r['works'] else '✗'}" for r in declared]
        text += f"; declared: {', '.join(verdicts)}"
    if data["common_failing"]:
        text += f"; the checks every server shares fail on {', '.join(data['common_failing'])}"
    return text


# --- one section per format ----------------------------------------------------------------------------------


def terminal_lines(data: dict[str, Any] | None) -> list[str]:
    """The matrix in the terminal summary: a "works with" line, then the failing servers' scenarios."""
    if not data or not data["servers"]:
        return []
    common = data["common_failing"]
    works = ", ".join(f"{_label(row)} {cell(row, common)}" for row in data["servers"])
    lines = [_intro(data) + ":"]
    lines += textwrap.wrap("works with: " + works, 110, initial_indent="  ", subsequent_indent="    ")
    for row in data["servers"]:
        if row["failing"] and not row["declared"]:
            shown = ", ".join(row["scenarios"][:4]) + (" …" if len(row["scenarios"]) > 4 else "")
            lines.append(f"  {row['name']}: {', '.join(row['failing'])} on {shown}")
    return [neutralise(line) for line in lines]


def markdown_section(data: dict[str, Any] | None, text: Callable[[object], str]) -> list[str]:
    """The matrix as a Markdown section (a heading and a table); ``text`` escapes inline text (the Markdown
    renderer's)."""
    if not data or not data["servers"]:
        return []
    lines = [
        "## Compatibility matrix",
        "",
        text(_intro(data)) + ".",
        "",
        "| server | declared | own checks | not applicable | works | not holding |",
        "|---|:-:|--:|--:|:-:|---|",
    ]
    for row in data["servers"]:
        lines.append(
            f"| {text(row['name'])} | {'yes' if row['declared'] else ''} | {row['checks']} "
            f"| {row['not_applicable']} | {'✓' if row['works'] else '✗'} "
            f"| {text(_where(row, data['common_failing']))} |"
        )
    return lines


def html_section(data: dict[str, Any] | None, escape: Callable[[object], str]) -> str:
    """The matrix as an HTML section (a heading and a table); ``escape`` is the HTML renderer's."""
    if not data or not data["servers"]:
        return ""
    rows = [
        f"<h2>Compatibility matrix</h2><p>{escape(_intro(data))}.</p><table><tr><th>server</th><th>declared</th>"
        "<th>own checks</th><th>not applicable</th><th>works</th><th>not holding</th></tr>"
    ]
    for row in data["servers"]:
        status = "passed" if row["works"] else "failed" if row["declared"] else "compat_failed"
        rows.append(
            f"<tr><td>{escape(row['name'])}</td><td>{'yes' if row['declared'] else ''}</td>"
            f"<td>{row['checks']}</td><td>{row['not_applicable']}</td>"
            f'<td class="{status}">{"✓" if row["works"] else "✗"}</td>'
            f"<td>{escape(_where(row, data['common_failing']))}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _where(row: dict[str, Any], common_failing: list[str]) -> str:
    if row["failing"]:
        return f"{', '.join(row['failing'])} on {', '.join(row['scenarios'])}"
    return f"the common checks: {', '.join(common_failing)}" if common_failing else ""
