"""The report as one self-contained HTML page (inline CSS, no scripts or external assets, so it opens
offline and as a CI artifact): verdict, counts by area, the clause x scenario matrix, and every failure."""

from __future__ import annotations

from html import escape as _escape
from typing import Any

from . import applicability, compatibility
from .safety import neutralise
from .views import LEGEND, OUTCOME_WORDS, SYMBOL, area_rows, failures, headline, scenarios

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1f23}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
.verdict{padding:.5em .8em;border-radius:4px;font-weight:600;display:inline-block}
.pass{background:#dcffe4}.fail{background:#ffdce0}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:2px 6px}
th{background:#f6f8fa}
.matrix{overflow:auto;max-height:80vh}
.matrix th.s{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;white-space:nowrap;
  position:sticky;top:0}
.matrix th.c{position:sticky;left:0;text-align:left;white-space:nowrap}
.matrix td{text-align:center;padding:0 3px}
.matrix td a{text-decoration:none;color:inherit;display:block}
.passed{background:#e6ffec;color:#1a7f37}.failed,.stale{background:#ff818266;color:#82071e;font-weight:700}
.should_failed{background:#fff8c5;color:#7d4e00}.baselined{background:#ddf4ff;color:#0550ae}
.skipped,.not_applicable{color:#8c959f}.compat_failed{background:#fbefff;color:#6639ba}
pre{background:#f6f8fa;padding:.6em;overflow:auto;white-space:pre-wrap}
"""


def escape(value: object) -> str:
    """Text of the report (adapter names and messages included) as HTML text or attribute value, with
    control characters shown as escapes (a report file can be edited: nothing in it is trusted)."""
    return _escape(neutralise(str(value)), quote=True)


def render_html(data: dict[str, Any]) -> str:
    adapter = data["adapter"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>helix-conformance: {escape(adapter['name'])}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>helix-conformance report: {escape(adapter['name'])}</h1>",
        f'<p class="verdict {escape(data["verdict"])}">{escape(headline(data))}</p>',
        f"<p>target <code>{escape(adapter['target'])}</code>; capabilities: "
        f"{escape(', '.join(adapter['capabilities']) or 'none')}; helix-conformance "
        f"{escape(data['tool']['version'])}; strict: {'yes' if data['strict'] else 'no'}; created "
        f"{escape(str(data.get('created', '?')))}</p>",
    ]
    for error in data.get("gate_errors", []):
        parts.append(f'<p class="verdict fail">Gate error: {escape(error)}</p>')
    parts.append(_areas(data))
    parts.append(applicability.html_section(data.get("not_applicable"), escape))
    parts.append(compatibility.html_section(data.get("compatibility"), escape))
    parts.append(_matrix(data))
    parts.append(_failures(data))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _areas(data: dict[str, Any]) -> str:
    rows = [
        "<h2>By contract area</h2><table><tr><th>area</th><th>clauses</th><th>passed</th><th>failed</th>"
        "<th>SHOULD not met</th><th>known</th><th>skipped</th><th>checks</th></tr>"
    ]
    for row in area_rows(data):
        c = row.counts
        rows.append(
            f"<tr><td>{escape(row.area)} {escape(row.title)}</td><td>{row.clauses}</td><td>{c['passed']}</td>"
            f"<td>{c['failed']}</td><td>{c['should_failed']}</td><td>{c['baselined']}</td>"
            f"<td>{c['skipped']}</td><td>{row.checks}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _matrix(data: dict[str, Any]) -> str:
    columns = scenarios(data)
    messages = {(r["clause"], r["scenario"]): r["message"] for r in data["results"]}
    head = "".join(f'<th class="s">{escape(s)}</th>' for s in columns)
    out = [
        f"<h2>Clause × scenario</h2><p>{escape(LEGEND)}</p>",
        f'<div class="matrix"><table><tr><th class="c">clause</th>{head}</tr>',
    ]
    for clause_id, clause in data["clauses"].items():
        cells = []
        for scenario in columns:
            status = clause["scenarios"].get(scenario)
            if status is None:
                cells.append("<td></td>")
                continue
            tip = escape(messages.get((clause_id, scenario), "") or status)
            symbol = SYMBOL[status]
            if status in OUTCOME_WORDS:
                symbol = f'<a href="#{_anchor(clause_id, scenario)}">{symbol}</a>'
            cells.append(f'<td class="{escape(status)}" title="{tip}">{symbol}</td>')
        title = escape(f"{clause['level']}: {clause['text']}")
        out.append(
            f'<tr><th class="c {escape(clause["status"])}" title="{title}">{escape(clause_id)}</th>'
            f"{''.join(cells)}</tr>"
        )
    out.append("</table></div>")
    return "".join(out)


def _failures(data: dict[str, Any]) -> str:
    shown = failures(data)
    if not shown:
        return "<h2>Failures</h2><p>None.</p>"
    out = ["<h2>Failures</h2>"]
    for result in shown:
        out.append(
            f'<h3 id="{_anchor(result["clause"], result["scenario"])}" class="{escape(result["outcome"])}">'
            f"{escape(result['clause'])} on {escape(result['scenario'])} — "
            f"{escape(OUTCOME_WORDS[result['outcome']])}</h3>"
            f"<pre>{escape(result['message'].strip())}</pre>"
            f"<p>Reproduce: <code>{escape(result['reproduce'])}</code></p>"
        )
    return "".join(out)


def _anchor(clause: str, scenario: str) -> str:
    return escape(f"{clause}--{scenario}".lower())
