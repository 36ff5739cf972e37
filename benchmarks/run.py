"""Benchmarks of helix-conformance, printed as one table: figure, value, target, ratio, met?.

    python benchmarks/run.py            # full: every reference adapter, 3 rounds (about 4 minutes)
    python benchmarks/run.py --quick    # smoke run: the mock adapter, small streams, 1 round
    python benchmarks/run.py --speed --before HEAD~5   # only the speed rows, this checkout vs a commit
    python benchmarks/run.py --drivers --rounds 1      # one driver vs a pool (minutes: real time)
    python benchmarks/run.py --runs --before REV --rounds 1   # runs per suite and wall, every Python adapter
    python benchmarks/run.py --typescript --before REV --rounds 1   # the TypeScript examples vs their references
    python benchmarks/run.py --tests --rounds 1        # the project's test command vs every test (20 min a round)
    python benchmarks/run.py --shards --rounds 1       # 2 and 4 shards merged vs one run (openai, openai-sdk)

Every compared figure is measured side by side in the same run, interleaved; values are medians of the
rounds with their spread (±), and the last line says how noisy the machine was. See benchmarks/README.md
for what each row means. Nothing here is a test: timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from driver_bench import driver_rows
from measure import Row, Samples, machine_note, render
from parsing import parsing_rows
from plugin_cost import plugin_rows
from replay_bench import replay_rows
from runs_bench import TYPESCRIPT, runs_rows
from shards_bench import shards_rows
from speed_bench import speed_rows
from suite_bench import suite_rows
from tests_bench import tests_rows

REFERENCE_ADAPTERS = ["openai", "anthropic", "gemini", "mock"]
PROVIDERS = ["openai", "anthropic", "gemini"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a fast smoke run: every row, small samples")
    parser.add_argument("--rounds", type=int, help="interleaved rounds per figure (default 3, quick 1)")
    parser.add_argument("--adapters", nargs="+", help="adapters for the suite rows (default: all four)")
    parser.add_argument("--events", type=int, help="events in the large streams (default 5000, quick 500)")
    parser.add_argument(
        "--speed",
        action="store_true",
        help="only the speed rows (SDK examples vs reference, SDK defaults, wrong profile, xdist)",
    )
    parser.add_argument(
        "--before", metavar="REV", help="also measure the speed (or runs) rows on this git commit"
    )
    parser.add_argument(
        "--runs",
        action="store_true",
        help="only the runs rows: runs per suite and wall time of every Python adapter (with --before: both)",
    )
    parser.add_argument(
        "--typescript",
        action="store_true",
        help="only the TypeScript rows: each example (npm ci in its folder first) against its profile's Python "
        "reference, runs and wall (with --before: both)",
    )
    parser.add_argument(
        "--drivers",
        nargs="?",
        const="",
        metavar="ADAPTER",
        help="only the driver rows: one driver vs a pool, for ADAPTER (node:/cmd:; default: the fake driver)",
    )
    parser.add_argument(
        "--tests",
        action="store_true",
        help="only the project's tests: the README's test command, the slow tests and every test, side by side",
    )
    parser.add_argument(
        "--shards",
        action="store_true",
        help="only the shard rows: 2 and 4 shards run one after another and merged, against one run "
        "(default adapters: openai, openai-sdk)",
    )
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    adapters = args.adapters or (["mock"] if args.quick else REFERENCE_ADAPTERS)
    events = args.events or (500 if args.quick else 5000)

    rows: list[Row] = []
    samples: list[Samples] = []
    producers = [
        lambda: suite_rows(adapters, rounds),
        lambda: plugin_rows(max(rounds, 2) if args.quick else rounds + 2),
        lambda: parsing_rows(PROVIDERS, events, rounds if args.quick else rounds + 2),
        lambda: replay_rows(events, rounds),
    ]
    if args.speed or args.drivers is not None or args.runs or args.typescript or args.tests or args.shards:
        producers = []
    if args.shards:
        producers.append(lambda: shards_rows(rounds, args.adapters))
    elif args.tests:  # minutes per round: only on request
        producers.append(lambda: tests_rows(rounds))
    elif args.runs:
        producers.append(lambda: runs_rows(rounds, args.before, args.adapters))
    elif args.typescript:
        producers.append(lambda: runs_rows(rounds, args.before, args.adapters or list(TYPESCRIPT)))
    elif args.drivers is not None:  # minutes per round, in real time: only on request
        producers.append(lambda: driver_rows(rounds, args.drivers or None))
    elif args.speed or not args.quick:  # minutes per round: not part of the smoke run
        producers.append(lambda: speed_rows(rounds, args.before))
    for produce in producers:
        new_rows, new_samples = produce()
        rows += new_rows
        samples += new_samples
        print(f"… {len(rows)} rows measured", file=sys.stderr, flush=True)
    print(render(rows))
    print()
    print(f"Machine: {machine_note(samples)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
