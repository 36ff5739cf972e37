"""The report as one self-contained HTML page (inline CSS, no scripts or external assets, so it opens offline
and as a CI artifact). Above the fold: the verdict in a banner that names the failing clauses, the causes (as
in the terminal summary) and the failing clauses; below: counts by area, the clause x scenario matrix (its
headers stick while it scrolls, a "failing only" switch in plain CSS) and every failure, grouped by clause."""

from __future__ import annotations

from html import escape as _escape
from typing import Any

from . import applicability, compatibility
from .safety import neutralise
from .views import (
    LEGEND,
    OUTCOME_WORDS,
    SYMBOL,
    area_rows,
    broken_clauses,
    causes_heading,
    cell_anchor,
    failures_by_clause,
    headline,
    scenarios,
    stale_results,
    stale_words,
    without_clause_line,
)

CAUSES_OPEN = 5
"""Causes shown whole at the top; the rest are folded (a run with one bug has one, a wrong setup a few)."""

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f23}
main{padding:0 24px 24px}
h2{font-size:1.15em;margin:1.2em 0 .4em}h3{font-size:1em;margin:1em 0 .3em}
.banner{padding:14px 24px;border-bottom:4px solid}
.banner h1{font-size:1.5em;margin:0 0 4px}.banner p{margin:2px 0}
.banner.pass{background:#dafbe1;border-color:#1a7f37;color:#0f4d22}
.banner.fail{background:#ffebe9;border-color:#cf222e;color:#82071e}
.banner.stale{background:#fff1e5;border-color:#bc4c00;color:#762c00}
.banner a{color:inherit;font-weight:700}
.meta{color:#57606a;font-size:.9em;margin:.6em 0}
.gate{background:#ffebe9;border-left:4px solid #cf222e;padding:6px 10px}
ol.causes{padding-left:1.4em;margin:.2em 0}ol.causes>li{margin:0 0 .8em}
.cause-head{font-weight:600}.cause-msg{margin:2px 0}
dl.ev{display:grid;grid-template-columns:max-content 1fr;gap:1px 10px;margin:4px 0}
dl.ev dt{color:#57606a}dl.ev dd{margin:0;white-space:pre-wrap;font-family:ui-monospace,monospace;
  font-size:.92em;max-height:7.5em;overflow:auto}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:2px 6px;vertical-align:top}
th{background:#f6f8fa;text-align:left}
table.list td.rule{color:#57606a;max-width:60em}table.list th{white-space:nowrap}
code{font-family:ui-monospace,monospace;font-size:.92em;background:#f6f8fa;padding:0 3px}
.filter{margin:.3em 0}
.matrix{overflow:auto;max-height:80vh;border:1px solid #d0d7de;max-width:100%}
.matrix table{border-collapse:separate;border-spacing:0}
.matrix thead th{position:sticky;top:0;z-index:2;vertical-align:bottom;background:#f6f8fa}
.matrix th.s span{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;font-weight:normal}
.matrix th.c{position:sticky;left:0;z-index:1;white-space:nowrap;background:#f6f8fa}
.matrix thead th.c{z-index:3}
.matrix td{text-align:center;padding:0 3px;min-width:1.2em}
.matrix td a{text-decoration:none;color:inherit;display:block}
#failing-only:checked~.matrix tr.holds,#failing-only:checked~.matrix .holds-col{display:none}
.matrix .passed,.compat .passed{background:#e6ffec;color:#1a7f37}
.matrix .failed,.compat .failed{background:#ff8182;color:#82071e;font-weight:700}
.matrix .stale{background:#ffd8b5;color:#762c00}
.matrix .should_failed{background:#fff8c5;color:#7d4e00}.matrix .baselined{background:#ddf4ff;color:#0550ae}
.matrix .skipped,.matrix .not_applicable{color:#8c959f}
.matrix .compat_failed,.compat .compat_failed{background:#fbefff;color:#6639ba}
details.failure{margin:.3em 0;border:1px solid #d0d7de;border-left:5px solid #cf222e;border-radius:4px;
  padding:2px 8px}
details.should_failed{border-left-color:#bf8700}details.baselined{border-left-color:#0969da}
details.compat_failed{border-left-color:#8250df}
details.failure summary,details.section summary{cursor:pointer}
details.section>summary{font-weight:600;margin:.8em 0 .3em}
details:target,td:target{outline:3px solid #0969da}
pre{background:#f6f8fa;padding:.6em;overflow:auto;white-space:pre-wrap;margin:.3em 0}
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
        f"<title>helix-conformance: {escape(adapter['name'])} — {'PASS' if data['verdict'] == 'pass' else 'FAIL'}"
        "</title>",
        f"<style>{STYLE}</style></head><body>",
        _banner(data),
        "<main>",
        _meta(data),
        *(f'<p class="gate">Gate error: {escape(error)}</p>' for error in data.get("gate_errors", [])),
        _causes(data),
        _below_causes(data),
        _failing_clauses(data),
        _stale(data),
        _areas(data),
        _matrix(data),
        _failures(data),
        "</main></body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _banner(data: dict[str, Any]) -> str:
    adapter = data["adapter"]
    broken = broken_clauses(data)
    stale = stale_results(data)
    passed = data["verdict"] == "pass"
    kind = "pass" if passed else ("stale" if stale and not broken and not data.get("gate_errors") else "fail")
    lines = [
        f'<header class="banner {kind}" id="verdict">',
        f"<h1>{'PASS' if passed else 'FAIL'} — helix-conformance report: {escape(adapter['name'])}</h1>",
        f"<p>{escape(headline(data))}</p>",
    ]
    if broken:
        links = " · ".join(
            f'<a href="#clause-{escape(cid.lower())}">{escape(cid)}</a> '
            f"({escape(data['clauses'][cid]['level'])}, {_failing_count(data, cid)})"
            for cid in broken
        )
        lines.append(f"<p>Broken clause{'s' if len(broken) != 1 else ''}: {links}</p>")
    if stale:
        lines.append(
            f'<p><a href="#stale">{escape(stale_words(len(stale)))}</a>: the checks pass now; delete the '
            "entries from the baseline (nothing is broken by them)</p>"
        )
    should = [
        cid for cid, c in data["clauses"].items() if c["status"] == "should_failed" and cid not in broken
    ]
    if should:
        lines.append(f"<p>SHOULD not met (not failing the gate): {escape(', '.join(should))}</p>")
    lines.append("</header>")
    return "\n".join(lines)


def _failing_count(data: dict[str, Any], clause_id: str) -> str:
    count = sum(
        1 for s in data["clauses"][clause_id]["scenarios"].values() if s in ("failed", "should_failed")
    )
    return f"{count} scenario{'s' if count != 1 else ''}"


def _meta(data: dict[str, Any]) -> str:
    adapter = data["adapter"]
    parts = [
        f"target <code>{escape(adapter['target'])}</code>",
        f"capabilities: {escape(', '.join(adapter['capabilities']) or 'none')}",
        f"helix-conformance {escape(data['tool']['version'])}",
        f"strict: {'yes' if data['strict'] else 'no'}",
        f"created {escape(str(data.get('created', '?')))}",
    ]
    if data.get("baseline"):
        parts.append(f"baseline <code>{escape(data['baseline']['path'])}</code>")
    notes = "".join(f"<br>{escape(note)}" for note in data.get("notes", []))
    return f'<p class="meta">{"; ".join(parts)}{notes}</p>'


def _causes(data: dict[str, Any]) -> str:
    causes = data.get("causes") or []
    if not causes:
        return ""
    out = [f'<section id="causes"><h2>{escape(causes_heading(causes))}</h2>', '<ol class="causes">']
    for number, cause in enumerate(causes, 1):
        if number == CAUSES_OPEN + 1:
            out.append(f"</ol><details><summary>{len(causes) - CAUSES_OPEN} more causes</summary>")
            out.append(f'<ol class="causes" start="{number}">')
        out.append(_cause(data, cause))
    out.append("</ol>" + ("</details>" if len(causes) > CAUSES_OPEN else "") + "</section>")
    return "\n".join(out)


def _cause(data: dict[str, Any], cause: dict[str, Any]) -> str:
    clauses = cause.get("clauses") or {cause["clause"]: cause["checks"]}
    on = ", ".join(
        f'<a href="#clause-{escape(str(c).lower())}">{escape(c)}</a>'
        + (f" ×{escape(n)}" if len(clauses) > 1 else "")
        for c, n in clauses.items()
    )
    first = cause.get("first") or {"clause": cause["clause"], "scenario": cause["scenarios"][0]}
    more = len(cause["scenarios"]) - 1
    where = f'<a href="#{escape(cell_anchor(first["clause"], first["scenario"]))}">{escape(first["scenario"])}</a>'
    if more:
        where += f" and {more} more scenario{'s' if more != 1 else ''}"
    evidence = "".join(
        f"<dt>{key}</dt><dd>{escape(cause[key])}</dd>" for key in ("expected", "actual") if key in cause
    )
    return (
        f'<li><div class="cause-head">{on} on {escape(cause["checks"])} check'
        f"{'s' if cause['checks'] != 1 else ''} · first on {where}</div>"
        f'<div class="cause-msg">{escape(cause["message"])}</div>'
        + f'<dl class="ev">{evidence}<dt>reproduce</dt><dd>{escape(cause["reproduce"])}</dd></dl>'
        + "</li>"
    )


def _below_causes(data: dict[str, Any]) -> str:
    """The slot for sections a reviewer needs right after the causes: the compatibility matrix of
    issue 29 §2 renders here, once, for every HTML report, and after it the checks not applicable to the
    adapter's request, with their reasons; each folded under its one-line summary."""
    sections = (
        ("compatibility", data.get("compatibility"), compatibility),
        ("not-applicable", data.get("not_applicable"), applicability),
    )
    out = []
    for anchor, section, module in sections:
        body = module.html_section(section, escape)
        if body:  # folded under its one-line summary: the failing clauses stay above the fold
            out.append(
                f'<section id="{anchor}" class="compat"><details class="section"><summary>'
                f"{escape(module.headline(section))}</summary>{body}</details></section>"
            )
    return "\n".join(out)


def _failing_clauses(data: dict[str, Any]) -> str:
    broken = broken_clauses(data)
    if not broken:
        return ""
    rows = []
    for cid in broken:
        clause = data["clauses"][cid]
        bad = [s for s, status in clause["scenarios"].items() if status in ("failed", "should_failed")]
        links = ", ".join(f'<a href="#{escape(cell_anchor(cid, s))}">{escape(s)}</a>' for s in bad[:6])
        if len(bad) > 6:
            links += f' and <a href="#clause-{escape(cid.lower())}">{len(bad) - 6} more</a>'
        rows.append(
            f'<tr><th><a href="#clause-{escape(cid.lower())}">{escape(cid)}</a></th>'
            f"<td>{escape(clause['level'])}</td><td>{links}</td>"
            f'<td class="rule">{escape(clause["text"])}</td></tr>'
        )
    return (
        '<section id="failing-clauses"><h2>Failing clauses</h2><table class="list">'
        "<tr><th>clause</th><th>level</th><th>fails on</th><th>rule</th></tr>"
        + "".join(rows)
        + "</table></section>"
    )


def _stale(data: dict[str, Any]) -> str:
    stale = stale_results(data)
    if not stale:
        return ""
    where = f"<code>{escape(data['baseline']['path'])}</code>" if data.get("baseline") else "the baseline"
    items = "".join(f"<li>{escape(r['clause'])} on <code>{escape(r['scenario'])}</code></li>" for r in stale)
    return (
        f'<section id="stale"><h2>{escape(stale_words(len(stale)).capitalize())}</h2><p>These checks pass '
        f"now: their entries fail the gate until deleted from {where}. Nothing is broken.</p><ul>{items}</ul>"
        "</section>"
    )


def _areas(data: dict[str, Any]) -> str:
    rows = [
        '<section id="areas"><h2>By contract area</h2><table><tr><th>area</th><th>clauses</th><th>passed</th>'
        "<th>failed</th><th>SHOULD not met</th><th>known</th><th>skipped</th><th>checks</th></tr>"
    ]
    for row in area_rows(data):
        c = row.counts
        rows.append(
            f"<tr><td>{escape(row.area)} {escape(row.title)}</td><td>{row.clauses}</td><td>{c['passed']}</td>"
            f"<td>{c['failed']}</td><td>{c['should_failed']}</td><td>{c['baselined']}</td>"
            f"<td>{c['skipped']}</td><td>{row.checks}</td></tr>"
        )
    rows.append("</table></section>")
    return "".join(rows)


def _matrix(data: dict[str, Any]) -> str:
    columns = scenarios(data)
    messages = {(r["clause"], r["scenario"]): r["message"] for r in data["results"]}
    holding = ("passed", "skipped", "not_applicable")
    bad_columns = {
        s for c in data["clauses"].values() for s, status in c["scenarios"].items() if status not in holding
    }
    col_class = {s: "" if s in bad_columns else ' class="holds-col"' for s in columns}
    head = "".join(
        f'<th class="s{"" if s in bad_columns else " holds-col"}"><span>{escape(s)}</span></th>'
        for s in columns
    )
    out = [
        f'<section id="matrix"><h2>Clause × scenario</h2><p>{escape(LEGEND)}</p>',
        f'<input type="checkbox" id="failing-only"{" checked" if bad_columns else ""}>',
        '<label for="failing-only" class="filter">failing only (the clauses and scenarios with a cell that '
        "does not hold)</label>",
        f'<div class="matrix"><table><thead><tr><th class="c">clause</th>{head}</tr></thead><tbody>',
    ]
    for clause_id, clause in data["clauses"].items():
        cells = []
        for scenario in columns:
            status = clause["scenarios"].get(scenario)
            if status is None:
                cells.append(f"<td{col_class[scenario]}></td>")
                continue
            tip = escape(messages.get((clause_id, scenario), "") or status)
            symbol = SYMBOL[status]
            if status in OUTCOME_WORDS:
                symbol = f'<a href="#{escape(cell_anchor(clause_id, scenario))}">{symbol}</a>'
            extra = "" if scenario in bad_columns else " holds-col"
            cells.append(
                f'<td class="{escape(status)}{extra}" id="cell-{escape(cell_anchor(clause_id, scenario))}" '
                f'title="{tip}">{symbol}</td>'
            )
        title = escape(f"{clause['level']}: {clause['text']}")
        row_class = "" if any(s not in holding for s in clause["scenarios"].values()) else ' class="holds"'
        out.append(
            f'<tr{row_class}><th class="c {escape(clause["status"])}" title="{title}">{escape(clause_id)}</th>'
            f"{''.join(cells)}</tr>"
        )
    out.append("</tbody></table></div></section>")
    return "".join(out)


def _failures(data: dict[str, Any]) -> str:
    grouped = failures_by_clause(data)
    if not grouped:
        return '<section id="failures"><h2>Failures</h2><p>None.</p></section>'
    out = ['<section id="failures"><h2>Failures, by clause</h2>']
    for clause_id, rows in grouped.items():
        clause = data["clauses"].get(clause_id, {})
        out.append(
            f'<section id="clause-{escape(clause_id.lower())}"><h3>{escape(clause_id)} '
            f"({escape(clause.get('level', '?'))}): {escape(clause.get('text', ''))}</h3>"
        )
        for number, result in enumerate(rows):
            anchor = cell_anchor(result["clause"], result["scenario"])
            out.append(
                f'<details class="failure {escape(result["outcome"])}" id="{escape(anchor)}"'
                f"{' open' if number < 2 else ''}><summary><b>{escape(result['scenario'])}</b> — "
                f"{escape(OUTCOME_WORDS[result['outcome']])} · "
                f'<a href="#cell-{escape(anchor)}">in the matrix</a></summary>'
                f"<pre>{escape(without_clause_line(result['message']))}</pre>"
                f"<p>Reproduce: <code>{escape(result['reproduce'])}</code></p></details>"
            )
        out.append("</section>")
    out.append("</section>")
    return "\n".join(out)
