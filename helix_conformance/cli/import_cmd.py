"""``helix-conformance import``: convert foreign recordings (pydantic-ai, vcrpy, Vercel) into cassettes.

The conversion lives in ``helix_conformance.importing``; this module only parses arguments, picks output
paths and reports. Bad input is a ``UsageFailure``: one line naming the file and the problem.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .._files import write_atomic
from . import UsageFailure

HELP = "import recordings of other tools (pydantic-ai, vcrpy/pytest-recording, Vercel fixtures) as cassettes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..profiles import KNOWN_PROFILES

    parser.add_argument("recordings", nargs="+", type=Path, help="recording files to import")
    parser.add_argument(
        "-o",
        "--out",
        type=Path,
        required=True,
        help="output directory (one <name>.yaml per recording), or a .yaml file for a single recording",
    )
    parser.add_argument(
        "--format",
        choices=("pydantic-ai", "vcrpy", "vercel"),
        help="the recordings' format (default: detected from name and content)",
    )
    parser.add_argument(
        "--profile",
        choices=KNOWN_PROFILES,
        help="wire profile of Vercel fixtures (default: detected from the payloads)",
    )
    parser.add_argument("--status", type=int, help="HTTP status of a Vercel .json body (it is not stored)")
    parser.add_argument(
        "--sources", type=Path, help="a SOURCES.md catalogue giving each file's repository, path and commit"
    )
    parser.add_argument("--repo", help="source repository (owner/name) recorded in the provenance")
    parser.add_argument("--commit", help="source commit recorded in the provenance")
    parser.add_argument("--source-path", help="path of the recording in --repo (default: its file name)")
    parser.add_argument("--force", action="store_true", help="overwrite existing cassettes")


def run(args: argparse.Namespace) -> int:
    from ..importing import ImportFailure, Source, import_recording
    from ..importing.common import output_name, read_sources, source_for

    single_file = args.out.suffix in (".yaml", ".yml")
    if single_file and len(args.recordings) > 1:
        raise UsageFailure(f"--out {args.out} is a file but {len(args.recordings)} recordings were given")
    if args.status is not None and not 100 <= args.status <= 599:
        raise UsageFailure(f"--status {args.status} is not an HTTP status")
    try:
        catalogue = read_sources(args.sources) if args.sources else {}
        for recording in args.recordings:
            source = (
                Source(args.repo, args.source_path, args.commit)
                if args.repo
                else source_for(recording, catalogue)
            )
            if args.sources and source is None:
                raise UsageFailure(f"{recording}: not listed in {args.sources}")
            target = args.out if single_file else args.out / output_name(recording)
            if target.exists() and not args.force:
                raise UsageFailure(f"{target} exists (pass --force to overwrite it)")
            text = import_recording(
                recording, source, fmt=args.format, profile=args.profile, status=args.status
            )
            write_atomic(target, text)  # a failed import never leaves half a cassette
            print(f"imported {recording} -> {target}")
    except ImportFailure as exc:
        raise UsageFailure(str(exc)) from None
    return 0
