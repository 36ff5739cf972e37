"""The report as Markdown: the verdict, the causes (each with clause, scenario, expected/actual and how to
reproduce it) and the failing clauses first; the tables and every failure folded. For pull-request comments
and job summaries (``$GITHUB_STEP_SUMMARY``).

Names and messages come from the adapter (and a report file can be edited), so nothing is pasted raw: inline
text is escaped, code spans and fences are longer than any run of backticks they hold. A failure message
cannot close its fence, and no name can open a link, an image or HTML.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote

from . import applicability, compatibility
from .safety import neutralise
from .views import (
    LEGEND,
    NOT_RUN,
    OUTCOME_WORDS,
    SYMBOL,
    area_rows,
    broken_clauses,
    causes_heading,
    failures_by_clause,
    headline,
    stale_results,
    stale_words,
    without_clause_line,
)

_INLINE = re.compile(r"([\\`*_\[\]<>&|~#$!])")
"""Characters that open inline Markdown (emphasis, code, links, images, HTML, entities, GitHub's math and
strikethrough) or split a table cell: each is backslash-escaped, which CommonMark renders as the character."""
_TICKS = re.compile(r"`+")


def _text(value: object) -> str:
    """Inline text on one line (a heading, a table cell, a list item), every Markdown construct escaped."""
    return _INLINE.sub(r"\\\1", " ".join(neutralise(str(value)).split()))


def _summary(value: object) -> str:
    """Text for a ``<summary>``: an HTML block, where Markdown escapes would show, so HTML-escaped."""
    return html.escape(" ".join(neutralise(str(value)).split()))


def _longest_ticks(text: str) -> int:
    return max((len(run) for run in _TICKS.findall(text)), default=0)


def _code(value: object) -> str:
    """An inline code span that its content cannot close."""
    text = " ".join(neutralise(str(value)).split())
    ticks = "`" * (_longest_ticks(text) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fenced(text: str) -> list[str]:
    """A fenced block that no line of ``text`` can close: the fence is longer than any backtick run inside."""
    body = neutralise(text)
    fence = "`" * max(3, _longest_ticks(body) + 1)
    return [f"{fence}text", body, fence]


def render_markdown(data: dict[str, Any]) -> str:
    """Causes first (each with its clause, scenario, expected/actual and reproduce line), then the failing
    clauses; the tables and every failure folded in ``<details>``, so a red run reads from its first line."""
    adapter = data["adapter"]
    lines = [
        f"# helix-conformance report: {_text(adapter['name'])}",
        "",
        f"**{_text(headline(data))}**",
        "",
    ]
    for error in data.get("gate_errors", []):
        lines += [f"> **Gate error:** {_text(error)}", ""]
    lines += _causes(data)
    lines += _stale(data)
    lines += _below_causes(data)
    lines += _failing_clauses(data)
    lines += [
        f"- target: {_code(adapter['target'])}; capabilities: "
        f"{_text(', '.join(adapter['capabilities']) or 'none')}",
        f"- helix-conformance {_text(data['tool']['version'])}, Python {_text(data['tool']['python'])}, "
        f"strict: {'yes' if data['strict'] else 'no'}, created {_text(data.get('created', '?'))}",
    ]
    if data.get("baseline"):
        lines.append(
            f"- baseline: {_code(data['baseline']['path'])} ({_text(data['baseline']['entries'])} entries)"
        )
    lines += [f"- {_text(note)}" for note in data.get("notes", [])]
    lines += ["", "<details><summary>Every clause, by contract area and scenario</summary>", ""]
    lines += _tables(data)
    lines += ["", "</details>"]
    lines += _every_failure(data)
    return "\n".join(lines).rstrip() + "\n"


def _causes(data: dict[str, Any]) -> list[str]:
    causes = data.get("causes") or []
    if not causes:
        return []
    lines = [f"## {causes_heading(causes)}", ""]
    for number, cause in enumerate(causes, 1):
        clauses = cause.get("clauses") or {cause["clause"]: cause["checks"]}
        on = (
            ", ".join(f"{_text(c)} ×{n}" for c, n in clauses.items())
            if len(clauses) > 1
            else _text(cause["clause"])
        )
        first = cause.get("first") or {"clause": cause["clause"], "scenario": cause["scenarios"][0]}
        clause = data["clauses"].get(first["clause"], {})
        scenarios = cause["scenarios"]
        lines += [
            f"### {number}. {on} on {cause['checks']} check{'s' if cause['checks'] != 1 else ''}",
            "",
            _text(cause["message"]),
            "",
            f"- clause: **{_text(first['clause'])}** ({_text(clause.get('level', '?'))}) {_text(clause.get('text', ''))}",
            f"- scenario: {_code(first['scenario'])}"
            + (
                f" and {len(scenarios) - 1} more: {_text(', '.join(scenarios[1:8]))}{' …' if len(scenarios) > 8 else ''}"
                if len(scenarios) > 1
                else ""
            ),
        ]
        for key in ("expected", "actual"):
            if key in cause:
                lines += _evidence(key, str(cause[key]))
        lines += [f"- reproduce: {_code(cause['reproduce'])}", ""]
    return lines


def _evidence(key: str, value: str) -> list[str]:
    """``- expected: `value` `` on one line, or a fenced block under the item for a value of several lines."""
    if "\n" not in value.strip() and len(value) <= 200:
        return [f"- {key}: {_code(value)}"]
    return [f"- {key}:", "", *("  " + line for line in _fenced(value.strip())), ""]


def _stale(data: dict[str, Any]) -> list[str]:
    stale = stale_results(data)
    if not stale:
        return []
    where = _code(data["baseline"]["path"]) if data.get("baseline") else "the baseline"
    lines = [
        f"## {stale_words(len(stale)).capitalize()}",
        "",
        f"These checks pass now, so their entries fail the gate until deleted from {where} (nothing is broken):",
        "",
    ]
    lines += [f"- {_text(r['clause'])} on {_code(r['scenario'])}" for r in stale]
    return [*lines, ""]


def _below_causes(data: dict[str, Any]) -> list[str]:
    """The slot for sections a reviewer needs right after the causes: the compatibility matrix of
    issue 29 §2 renders here, once, for every Markdown report, and after it the checks not applicable to the
    adapter's request, with their reasons; each folded under its one-line summary."""
    lines: list[str] = []
    for section, module in (
        (data.get("compatibility"), compatibility),
        (data.get("not_applicable"), applicability),
    ):
        body = module.markdown_section(section, _text)
        if body:  # folded under its one-line summary: the failing clauses stay near the top
            lines += [
                f"<details><summary>{_summary(module.headline(section))}</summary>",
                "",
                *body,
                "",
                "</details>",
                "",
            ]
    return lines


def _failing_clauses(data: dict[str, Any]) -> list[str]:
    broken = broken_clauses(data)
    if not broken:
        return []
    lines = ["## Failing clauses", "", "| clause | level | fails on | rule |", "|---|---|---|---|"]
    for clause_id in broken:
        clause = data["clauses"][clause_id]
        bad = [s for s, status in clause["scenarios"].items() if status in ("failed", "should_failed")]
        shown = ", ".join(bad[:6]) + (f" and {len(bad) - 6} more" if len(bad) > 6 else "")
        lines.append(
            f"| [{_text(clause_id)}](docs/contract.md#{quote(str(clause_id).lower())}) | "
            f"{_text(clause['level'])} | {_text(shown)} | {_text(clause['text'])} |"
        )
    return [*lines, ""]


def _tables(data: dict[str, Any]) -> list[str]:
    lines = [
        "| area | clauses | passed | failed | SHOULD not met | known | skipped | checks |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in area_rows(data):
        c = row.counts
        lines.append(
            f"| {_text(row.area)} {_text(row.title)} | {row.clauses} | {c['passed']} | {c['failed']} "
            f"| {c['should_failed']} | {c['baselined']} | {c['skipped']} | {row.checks} |"
        )
    lines += [
        "",
        LEGEND,
        "",
        "| clause | level | status | scenarios | not holding on |",
        "|---|---|:-:|--:|---|",
    ]
    for clause_id, clause in data["clauses"].items():
        bad = [s for s, status in clause["scenarios"].items() if status not in ("passed", *NOT_RUN)]
        lines.append(
            f"| [{_text(clause_id)}](docs/contract.md#{quote(str(clause_id).lower())}) | "
            f"{_text(clause['level'])} | {SYMBOL[clause['status']]} | {len(clause['scenarios'])} | "
            f"{_text(', '.join(bad))} |"
        )
    return lines


def _every_failure(data: dict[str, Any]) -> list[str]:
    grouped = failures_by_clause(data)
    if not grouped:
        return []
    count = sum(len(rows) for rows in grouped.values())
    lines = ["", f"<details><summary>Every failure ({count}), by clause</summary>", ""]
    for clause_id, rows in grouped.items():
        clause = data["clauses"].get(clause_id, {})
        lines += [
            f"### {_text(clause_id)} ({_text(clause.get('level', '?'))}): {_text(clause.get('text', ''))}",
            "",
        ]
        for result in rows:
            lines += [
                f"#### {_text(result['clause'])} on {_code(result['scenario'])} — "
                f"{OUTCOME_WORDS[result['outcome']]}",
                "",
                *_fenced(without_clause_line(result["message"])),
                "",
                f"Reproduce: {_code(result['reproduce'])}",
                "",
            ]
    return [*lines, "</details>"]
