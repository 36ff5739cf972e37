"""``helix-conformance report REPORT.json --format html -o report.html``: render a saved JSON report again,
in another format, without re-running the suite (e.g. in a later CI step, or for a badge).

``helix-conformance report merge OUT SHARD.json...``: join the JSON reports of the shards of one suite
(``--helix-shard=I/N``) into OUT, in the format of its extension, and exit as the gate does (0 pass, 1 fail)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import UsageFailure

HELP = (
    "render a JSON report (from --helix-report=*.json) as md, html, json or a badge; "
    "'report merge OUT SHARD.json...' joins the reports of --helix-shard runs into one and gates on it"
)
MERGE = "merge"
MERGE_USAGE = "helix-conformance report merge OUT.json|OUT.md|OUT.html SHARD1.json SHARD2.json ..."
CHOICES = ("md", "html", "json", "badge")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "report",
        type=Path,
        help="a report written by pytest --adapter=... --helix-report=X.json, or 'merge' (then OUT and the shards)",
    )
    parser.add_argument(
        "paths", type=Path, nargs="*", help="after 'merge': OUT, then every shard's JSON report"
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
        help="exit 1 when the report's verdict is fail, or the report is a quick check's (--helix-quick: "
        "not a gate); use the report as a gate in a later step",
    )


def run(args: argparse.Namespace) -> int:
    if str(args.report) == MERGE:
        return merge(args)
    if args.paths:
        raise UsageFailure(
            f"one report at a time (got {len(args.paths) + 1}); to join shards' reports: {MERGE_USAGE}"
        )
    from ..quick import QUICK_NOTE
    from ..reporting.json_report import load_report
    from ..reporting.writers import format_of, renderer

    fmt = args.format
    if fmt is None:
        fmt = (format_of(args.output) if args.output else None) or "md"
    with _refused(str(args.report)):
        data = load_report(args.report)
        text = renderer(fmt)(data)
    if args.output:
        from .._files import write_atomic

        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    if args.check and (data.get("selection") or {}).get("quick"):
        print(
            f"{args.report}: {QUICK_NOTE}: written by a run with --helix-quick, which judged part of the suite; "
            "--check gates on the report of a full run",
            file=sys.stderr,
        )
        return 1
    return 1 if args.check and data["verdict"] != "pass" else 0


def merge(args: argparse.Namespace) -> int:
    """Join the shards' reports into OUT; the exit status is the merged verdict's (0 pass, 1 fail)."""
    from ..reporting.merge import merge_reports
    from ..reporting.views import headline
    from ..reporting.writers import format_of, renderer

    if len(args.paths) < 2:
        raise UsageFailure(f"give OUT and the JSON report of every shard: {MERGE_USAGE}")
    if args.output is not None:
        raise UsageFailure(f"merge writes OUT, its first path (drop --output): {MERGE_USAGE}")
    out, inputs = args.paths[0], args.paths[1:]
    fmt = args.format or format_of(out)
    if fmt is None:
        raise UsageFailure(
            f"cannot tell the format of {str(out)!r} from its extension: name it .json, .md or .html, or give "
            f"--format ({', '.join(CHOICES)})"
        )
    if out.suffix.lower() == ".json" and out in inputs:
        raise UsageFailure(f"OUT {out} is also a shard's report: write the merged report elsewhere")
    with _refused("a shard's report"):
        data = merge_reports(inputs)
    from .._files import write_atomic

    write_atomic(out, renderer(fmt)(data))
    print(f"merged {len(inputs)} shards into {out}: {headline(data)}")
    return 0 if data["verdict"] == "pass" else 1


@contextmanager
def _refused(what: str) -> Iterator[None]:
    """A report that cannot be read or rendered becomes one line (exit 2), never a traceback."""
    from ..reporting.json_report import ReportError

    try:
        yield
    except ReportError as exc:
        raise UsageFailure(str(exc)) from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageFailure(
            f"{what} is not a complete helix-conformance report (missing or malformed {exc})"
        ) from None
