"""``helix-conformance scan PATH...``: the recorder's secret scan over existing cassettes, for pre-commit and
CI. Exit 0 when clean, 1 on any secret or unreadable cassette, 2 on a missing path or nothing to scan."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import UsageFailure

if TYPE_CHECKING:
    from ..recording.scan import SecretHit

HELP = "scan cassettes for API keys, tokens and other secrets (exit 1 on any hit)"
SUFFIXES = (".yaml", ".yml")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        metavar="PATH",
        nargs="+",
        type=Path,
        help="a cassette, or a directory searched recursively for *.yaml and *.yml",
    )
    parser.add_argument(
        "--format", "-f", choices=("text", "json"), default="text", help="output format (default: text)"
    )


def cassette_files(paths: list[Path]) -> dict[Path, bool]:
    """The files to scan, each mapped to whether it was named (else found in a directory: every YAML file
    below it, hidden directories skipped)."""
    files: dict[Path, bool] = {}
    for path in paths:
        if path.is_dir():
            found = [
                p
                for p in sorted(path.rglob("*"))
                if p.suffix in SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            ]
            for file in found:
                files.setdefault(file, False)
        elif path.exists():
            files[path] = True
        else:
            raise UsageFailure(f"{path}: no such file or directory")
    if not files:
        raise UsageFailure(f"no cassettes (*.yaml, *.yml) found in {', '.join(map(str, paths))}")
    return files


def run(args: argparse.Namespace) -> int:
    from ..recording.scan import NotACassette, scan_file
    from ..replay.cassette import CassetteError

    files = cassette_files(args.paths)
    hits: list[SecretHit] = []
    errors: list[tuple[Path, str]] = []
    skipped: list[Path] = []
    for path, named in files.items():
        try:
            hits.extend(scan_file(path))
        except NotACassette as exc:
            if named:
                errors.append((path, str(exc)))
            else:  # another YAML file beside the cassettes, e.g. cassettes/recorded/expected.yml
                skipped.append(path)
        except CassetteError as exc:
            errors.append((path, str(exc)))
    scanned = len(files) - len(skipped) - len(errors)
    if args.format == "json":
        report = {
            "scanned": scanned,
            "skipped": [str(path) for path in skipped],
            "clean": not hits and not errors,
            "hits": [
                {
                    "path": hit.where,
                    "location": hit.location,
                    "kind": hit.kind,
                    "excerpt": hit.excerpt,
                    "why": hit.why,
                }
                for hit in hits
            ],
            "errors": [{"path": str(path), "message": message} for path, message in errors],
        }
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for hit in hits:
            print(hit)
        for _, message in errors:
            print(f"error: {message}", file=sys.stderr)
        print(_summary(scanned, hits, len(errors), len(skipped)))
    return 1 if hits or errors else 0


def _summary(scanned: int, hits: list[SecretHit], errors: int, skipped: int) -> str:
    with_hits = len({hit.where for hit in hits})
    parts = [f"{scanned} cassette(s) scanned"]
    if hits:
        parts.append(f"{len(hits)} secret(s) found in {with_hits} file(s)")
    if errors:
        parts.append(f"{errors} file(s) could not be scanned")
    if not hits and not errors:
        parts.append("no secrets found")
    if skipped:
        parts.append(f"{skipped} other YAML file(s) skipped")
    return ", ".join(parts)
