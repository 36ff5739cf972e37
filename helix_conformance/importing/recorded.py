"""The bundled real-traffic set: ``cassettes/recorded`` and its hand-written expected outcomes.

``cassettes/recorded/expected.yml`` lists every recording of ``../shared/recordings`` and of
``tests/recordings`` (by ``<dir>/<file>``): either the outcome each replayed interaction must give, written
from reading the recording, or why it is not replayed. ``python -m helix_conformance.importing.recorded`` replays them all through the reference
adapters and prints the tally per provider; ``--regenerate`` re-imports the cassettes from the recordings.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..replay.cassette import load_cassette
from ..replay.recorded import load_catalogue
from ..scenarios.recorded import EXPECTED_FILE, CatalogueError, Recording
from ..suite import bundled_cassettes
from . import ImportFailure, import_recording
from .common import read_sources, source_for

SHARED_RECORDINGS = Path(__file__).resolve().parents[2].parent / "shared" / "recordings"
REPO_RECORDINGS = Path(__file__).resolve().parents[2] / "tests" / "recordings"
"""Recordings added beyond the shared ones (a checkout only: the sources do not ship in the wheel)."""
SOURCE_DIRS = (SHARED_RECORDINGS, REPO_RECORDINGS)

__all__ = [
    "EXPECTED_FILE",
    "REPO_RECORDINGS",
    "SHARED_RECORDINGS",
    "SOURCE_DIRS",
    "Recording",
    "load_expectations",
    "replay_recording",
]


def recorded_root() -> Path:
    return bundled_cassettes() / "recorded"


def load_expectations(path: Path | None = None) -> list[Recording]:
    """The recordings of the bundled catalogue (or of ``path``); a CatalogueError for any unusable entry."""
    recordings = load_catalogue(path or recorded_root() / EXPECTED_FILE)
    problems = [r.problem for r in recordings if r.problem]
    if problems:
        raise CatalogueError("; ".join(problems))
    return recordings


def replay_recording(recording: Recording, root: Path | None = None) -> list[str]:
    """Problems found replaying every expected interaction of one recording (empty: all as expected)."""
    from ..adapters import resolve_adapter
    from .replay import compare, replay_interaction

    if recording.adapter is None:
        return [f"{recording.key}: no wire profile is named for provider {recording.provider!r}"]
    spec = resolve_adapter(recording.adapter).spec
    cassette = load_cassette((root or recorded_root()) / recording.cassette)
    problems = []
    for index, expected in enumerate(recording.interactions):
        if expected is None:
            continue
        replayed = replay_interaction(spec, cassette.interactions[index], f"{recording.cassette}#{index}")
        found = replayed.problems + compare(replayed.outcome, expected)
        problems += [f"{recording.key} interaction {index}: {p}" for p in found]
    return problems


def tally(recordings: list[Recording], failures: dict[str, list[str]]) -> list[tuple[str, int, int, int]]:
    """(provider, recordings, replayed to the expected outcome, excluded) per provider, in key order."""
    total, passed, excluded = Counter[str](), Counter[str](), Counter[str]()
    for recording in recordings:
        total[recording.provider] += 1
        if recording.excluded:
            excluded[recording.provider] += 1
        elif not failures.get(recording.key):
            passed[recording.provider] += 1
    return [(p, total[p], passed[p], excluded[p]) for p in sorted(total)]


def format_tally(rows: list[tuple[str, int, int, int]]) -> str:
    lines = [f"{'provider':<26} {'recordings':>10} {'replayed':>9} {'as expected':>12} {'excluded':>9}"]
    for provider, total, passed, excluded in rows:
        lines.append(f"{provider:<26} {total:>10} {total - excluded:>9} {passed:>12} {excluded:>9}")
    sums = [sum(row[1] for row in rows), sum(row[2] for row in rows), sum(row[3] for row in rows)]
    lines.append(f"{'total':<26} {sums[0]:>10} {sums[0] - sums[2]:>9} {sums[1]:>12} {sums[2]:>9}")
    return "\n".join(lines)


def regenerate(source_dirs: Sequence[Path], out: Path, *, check: bool = False) -> list[str]:
    """Import every replayed recording into ``out`` from the first of ``source_dirs`` holding it (each with
    its SOURCES.md); with ``check``, list those that differ (or have no source) instead."""
    catalogues = {d: read_sources(d / "SOURCES.md") for d in source_dirs if (d / "SOURCES.md").is_file()}
    drift = []
    for recording in load_expectations(out / EXPECTED_FILE):
        if recording.excluded:
            continue
        folder = next((d for d in catalogues if (d / recording.key).is_file()), None)
        if folder is None:
            if check:
                drift.append(f"{recording.key} (no source file in {', '.join(map(str, catalogues))})")
                continue
            raise ImportFailure(f"{recording.key}: no source file in {', '.join(map(str, catalogues))}")
        path = folder / recording.key
        text = import_recording(path, source_for(path, catalogues[folder]), **recording.import_options)
        target = out / recording.cassette
        if check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                drift.append(str(target))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return drift


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m helix_conformance.importing.recorded", description=__doc__
    )
    parser.add_argument("--regenerate", action="store_true", help="re-import cassettes/recorded first")
    parser.add_argument(
        "--recordings",
        type=Path,
        action="append",
        help=f"a folder of source recordings with its SOURCES.md (default: {SHARED_RECORDINGS} and {REPO_RECORDINGS})",
    )
    args = parser.parse_args(argv)
    if args.regenerate:
        regenerate(args.recordings or SOURCE_DIRS, recorded_root())
    recordings = load_expectations()
    failures = {r.key: replay_recording(r) for r in recordings if not r.excluded}
    for problems in failures.values():
        for problem in problems:
            print(f"MISMATCH {problem}")
    print(format_tally(tally(recordings, failures)))
    return 1 if any(failures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
