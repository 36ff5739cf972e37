"""The report as Markdown: verdict, a table by contract area, a clause table and every failure with its
reproduction. For pull-request comments and job summaries (``$GITHUB_STEP_SUMMARY``).

Names and messages come from the adapter (and a report file can be edited), so nothing is pasted raw: inline
text is escaped, code spans and fences are longer than any run of backticks they hold. A failure message
cannot close its fence, and no name can open a link, an image or HTML.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from . import applicability, compatibility
from .safety import neutralise
from .views import LEGEND, NOT_RUN, OUTCOME_WORDS, SYMBOL, area_rows, failures, headline

_INLINE = re.compile(r"([\\`*_\[\]<>&|~#$!])")
"""Characters that open inline Markdown (emphasis, code, links, images, HTML, entities, GitHub's math and
strikethrough) or split a table cell: each is backslash-escaped, which CommonMark renders as the character."""
_TICKS = re.compile(r"`+")


def _text(value: object) -> str:
    """Inline text on one line (a heading, a table cell, a list item), every Markdown construct escaped."""
    return _INLINE.sub(r"\\\1", " ".join(neutralise(str(value)).split()))


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
    adapter = data["adapter"]
    lines = [
        f"# helix-conformance report: {_text(adapter['name'])}",
        "",
        f"**{_text(headline(data))}**",
        "",
        f"- target: {_code(adapter['target'])}; capabilities: "
        f"{_text(', '.join(adapter['capabilities']) or 'none')}",
        f"- helix-conformance {_text(data['tool']['version'])}, Python {_text(data['tool']['python'])}, "
        f"strict: {'yes' if data['strict'] else 'no'}, created {_text(data.get('created', '?'))}",
    ]
    if data.get("baseline"):
        lines.append(
            f"- baseline: {_code(data['baseline']['path'])} ({_text(data['baseline']['entries'])} entries)"
        )
    lines += ["", "## By contract area", ""]
    lines += [
        "| area | clauses | passed | failed | SHOULD not met | known | skipped | checks |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in area_rows(data):
        c = row.counts
        lines.append(
            f"| {_text(row.area)} {_text(row.title)} | {row.clauses} | {c['passed']} | {c['failed']} "
            f"| {c['should_failed']} | {c['baselined']} | {c['skipped']} | {row.checks} |"
        )
    for error in data.get("gate_errors", []):
        lines += ["", f"> **Gate error:** {_text(error)}"]
    lines += ["", "## Clauses", "", LEGEND, "", "| clause | level | status | scenarios | not holding on |"]
    lines.append("|---|---|:-:|--:|---|")
    for clause_id, clause in data["clauses"].items():
        bad = [s for s, status in clause["scenarios"].items() if status not in ("passed", *NOT_RUN)]
        lines.append(
            f"| [{_text(clause_id)}](docs/contract.md#{quote(str(clause_id).lower())}) | "
            f"{_text(clause['level'])} | {SYMBOL[clause['status']]} | {len(clause['scenarios'])} | "
            f"{_text(', '.join(bad))} |"
        )
    for section in (
        applicability.markdown_section(data.get("not_applicable"), _text),
        compatibility.markdown_section(data.get("compatibility"), _text),
    ):
        lines += ["", *section] if section else []
    shown = failures(data)
    if shown:
        lines += ["", "## Failures", ""]
        for result in shown:
            lines += [
                f"### {_text(result['clause'])} on {_code(result['scenario'])} — {OUTCOME_WORDS[result['outcome']]}",
                "",
                *_fenced(result["message"].strip()),
                "",
                f"Reproduce: {_code(result['reproduce'])}",
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"
