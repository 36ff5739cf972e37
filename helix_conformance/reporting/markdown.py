"""The report as Markdown: verdict, a table by contract area, a clause table and every failure with its
reproduction. For pull-request comments and job summaries (``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

from typing import Any

from .views import LEGEND, OUTCOME_WORDS, SYMBOL, area_rows, failures, headline


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def render_markdown(data: dict[str, Any]) -> str:
    adapter = data["adapter"]
    lines = [
        f"# helix-conformance report: {adapter['name']}",
        "",
        f"**{headline(data)}**",
        "",
        f"- target: `{adapter['target']}`; capabilities: {', '.join(adapter['capabilities']) or 'none'}",
        f"- helix-conformance {data['tool']['version']}, Python {data['tool']['python']}, "
        f"strict: {'yes' if data['strict'] else 'no'}, created {data.get('created', '?')}",
    ]
    if data.get("baseline"):
        lines.append(f"- baseline: `{data['baseline']['path']}` ({data['baseline']['entries']} entries)")
    lines += ["", "## By contract area", ""]
    lines += [
        "| area | clauses | passed | failed | SHOULD not met | known | skipped | checks |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in area_rows(data):
        c = row.counts
        lines.append(
            f"| {row.area} {row.title} | {row.clauses} | {c['passed']} | {c['failed']} | {c['should_failed']} "
            f"| {c['baselined']} | {c['skipped']} | {row.checks} |"
        )
    for error in data.get("gate_errors", []):
        lines += ["", f"> **Gate error:** {_cell(error)}"]
    lines += ["", "## Clauses", "", LEGEND, "", "| clause | level | status | scenarios | not holding on |"]
    lines.append("|---|---|:-:|--:|---|")
    for clause_id, clause in data["clauses"].items():
        bad = [s for s, status in clause["scenarios"].items() if status not in ("passed", "skipped")]
        lines.append(
            f"| [{clause_id}](docs/contract.md#{clause_id.lower()}) | {clause['level']} | "
            f"{SYMBOL[clause['status']]} | {len(clause['scenarios'])} | {_cell(', '.join(bad))} |"
        )
    shown = failures(data)
    if shown:
        lines += ["", "## Failures", ""]
        for result in shown:
            lines += [
                f"### {result['clause']} on `{result['scenario']}` — {OUTCOME_WORDS[result['outcome']]}",
                "",
                "```text",
                result["message"].strip(),
                "```",
                "",
                f"Reproduce: `{result['reproduce']}`",
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"
