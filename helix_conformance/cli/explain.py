"""``helix-conformance explain CLAUSE``: the clause, why it exists, what adapters usually get wrong, and
where the suite checks it."""

from __future__ import annotations

import argparse
import difflib
import textwrap

from . import UsageFailure

HELP = "explain one contract clause: the rule, why it exists, common mistakes, the scenarios that check it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("clause", help="a clause id such as RES-06 (case-insensitive)")
    parser.add_argument(
        "--language",
        "-l",
        default="python",
        metavar="LANG",
        help="the adapter's language, whose names and SDK idioms the text uses: python (default) or ts",
    )


def run(args: argparse.Namespace) -> int:
    from ..clauses import AREAS, CLAUSES, get_clause
    from ..language import parse_language

    try:
        language = parse_language(args.language)
    except ValueError as exc:
        raise UsageFailure(f"--language: {exc}") from None
    clause_id = args.clause.strip().upper()
    if clause_id not in CLAUSES:
        close = difflib.get_close_matches(clause_id, CLAUSES, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; areas: {', '.join(AREAS)}"
        raise UsageFailure(
            f"{args.clause!r} is not a clause id of the contract{hint} (list: helix-conformance list clauses)"
        )
    clause = get_clause(clause_id, language)
    adapter = "node:adapter.ts" if language == "typescript" else "NAME"
    out = [
        f"{clause.id} — {AREAS[clause.area]} — {clause.level} ({_level_meaning(clause.level)}), source: {clause.source}",
        "",
        *_wrapped(clause.text),
        "",
        "Why it exists:",
        *_wrapped(clause.why, indent="  "),
        "",
        "What adapters usually get wrong:",
        *_wrapped(clause.common_mistakes, indent="  "),
        "",
        "Checked on:",
        *_where_checked(clause_id),
        "",
        f"Run it: pytest --adapter={adapter} -k {clause.id}     Docs: docs/contract.md#{clause.id.lower()}",
    ]
    print("\n".join(out))
    return 0


def _level_meaning(level: str) -> str:
    return "fails the gate" if level == "MUST" else "reported; fails the gate only under --helix-strict"


def _wrapped(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, 100, initial_indent=indent, subsequent_indent=indent) or [indent + "(none)"]


def _where_checked(clause_id: str) -> list[str]:
    from ..checks.registry import load_all_checks
    from ..profiles import KNOWN_PROFILES, get_profile
    from ..scenarios import scenarios_for

    check = load_all_checks().get(clause_id)
    if check is None:
        return ["  no check in this version (see the 'not run' list in the README for why)"]
    lines = []
    for name in KNOWN_PROFILES:
        profile = get_profile(name)
        if not profile.runs_clause(clause_id):
            lines.append(f"  {name}: not applicable to this profile")
            continue
        ids = [s.id for s in scenarios_for(name) if profile.runs_scenario(s) and check.applies(s, profile)]
        if check.when_undeclared:
            ids = [f"{i} (when a capability it needs is undeclared)" for i in ids]
        lines.extend(
            textwrap.wrap(f"{name}: {', '.join(ids) or 'no scenario'}", 100, subsequent_indent="    ")
        )
    from ..scenarios.fault_kinds import KINDS, kinds_of

    faults = kinds_of(clause_id)
    if faults:
        lines.append(
            "and on the faults generated from one recorded stream per delivery shape and source, and one success "
            "cassette per delivery shape:"
        )
        lines.extend(f"    {KINDS[kind][1]}" for kind in faults)
    return [line if line.startswith(" ") else "  " + line for line in lines]
