"""``helix-conformance report REPORT.json --format html -o report.html``: render a saved JSON report again,
in another format, without re-running the suite (e.g. in a later CI step, or for a badge)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import UsageFailure

HELP = "render a JSON report (from --helix-report=*.json) as md, html, json or a badge"
CHOICES = ("md", "html", "json", "badge")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "report", type=Path, help="a report written by pytest --adapter=... --helix-report=X.json"
    )
    parser.add_argument(
        "--format",
        "-f",
        choices=CHOICES,
        help="output format (default: from the extension of --output, else md)",
    )
    parser.add_argument("--output", "-o", type=Path, help="write here instead of standard output")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when the report's verdict is fail (use the report as a gate in a later step)",
    )


def run(args: argparse.Namespace) -> int:
    from ..reporting.json_report import ReportError, load_report
    from ..reporting.writers import format_of, renderer

    fmt = args.format
    if fmt is None:
        fmt = (format_of(args.output) if args.output else None) or "md"
    try:
        data = load_report(args.report)
        text = renderer(fmt)(data)
    except ReportError as exc:
        raise UsageFailure(str(exc)) from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageFailure(
            f"{args.report} is not a complete helix-conformance report (missing or malformed {exc})"
        ) from None
    if args.output:
        from .._files import write_atomic

        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 1 if args.check and data["verdict"] != "pass" else 0
