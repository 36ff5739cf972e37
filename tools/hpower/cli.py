"""``python tools/harness_power.py``: line and branch coverage of the reference adapters under the conformance suite, then
a mutation score on a deterministic sample of first-order mutants. Not part of CI: it answers, for a
developer, which adapter code no scenario reaches and which changes no clause notices."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from . import equivalents, field
from .coverage_run import AdapterCoverage, run_coverage
from .equivalents import EquivalentsError
from .mutation_run import (
    NOT_COVERED,
    SURVIVED,
    UNJUDGED,
    Outcome,
    check_canary,
    check_shadowing,
    judge,
    sample,
)
from .mutator import Mutant, MutatorError, mutants_of
from .report import PoolResult, coverage_lines, killed_lines, mutation_lines, rejudged_lines
from .targets import PACKAGE, ROOT, TOOLS, ToolError, check_installed, discover, environment, pools

DEFAULT_EQUIVALENTS = TOOLS / "equivalent_mutants.yaml"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python tools/harness_power.py", description=__doc__)
    p.add_argument("--adapter", default="all", help="a reference adapter's name, or all (default)")
    p.add_argument(
        "--sample",
        type=int,
        default=20,
        metavar="N",
        help="mutants per pool, drawn with --seed (0: every mutant)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the sample (default: a new one each run, printed, so no sample is tuned to)",
    )
    p.add_argument(
        "--jobs", type=int, default=1, help="mutants judged at once (default 1; the suite is CPU-bound)"
    )
    p.add_argument("--examples", type=int, default=2, help="--helix-examples of every suite run (default 2)")
    p.add_argument(
        "--timeout", type=float, default=300.0, help="seconds one mutant's suite may take (default 300)"
    )
    p.add_argument(
        "--file", action="append", default=[], help="only mutants of files whose path contains this"
    )
    p.add_argument("--coverage-only", action="store_true", help="stop after the coverage report")
    p.add_argument(
        "--no-source", action="store_true", help="list uncovered line numbers without their source"
    )
    p.add_argument(
        "--equivalents", type=Path, default=DEFAULT_EQUIVALENTS, help="the triaged equivalent mutants"
    )
    p.add_argument("--json", type=Path, help="also write the coverage and every outcome to this JSON file")
    p.add_argument(
        "--rejudge",
        type=Path,
        metavar="JSON",
        help="judge again the mutants a previous --json run let through (survived, not covered, unjudged) "
        "instead of a sample: the after of a before/after",
    )
    p.add_argument("--verbose", action="store_true", help="list every sampled mutant and what killed it")
    p.add_argument(
        "--field",
        action="store_true",
        help="judge the field-bug mutants of tools/field_mutants.yaml (tracker-reported bugs planted in the "
        "adapters written elsewhere) instead of AST mutants of the reference adapters",
    )
    p.add_argument("--field-id", action="append", default=[], help="only the field mutants with this id")
    p.add_argument(
        "--harness",
        type=Path,
        help="a checkout of another commit's harness (e.g. `git archive BASE helix_conformance`) put on "
        "PYTHONPATH ahead of this one, to judge the same mutants (this checkout's adapters, the same seed) "
        "with that harness: the before of a before/after. AST mutants: the directory must hold "
        "helix_conformance (and its cassettes) and no reference_adapters (the mutated copies are this "
        "checkout's)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.sample < 0 or args.jobs < 1 or args.examples < 1 or args.timeout <= 0:
        print("error: --sample >= 0, --jobs >= 1, --examples >= 1 and --timeout > 0", file=sys.stderr)
        return 2
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1_000_000)
    try:
        return _run_field(args) if args.field else _run(args)
    except (ToolError, EquivalentsError, MutatorError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    entries = equivalents.load(args.equivalents)
    again = previous_survivors(args.rejudge) if args.rejudge else None
    check_installed()
    harness = _harness(args.harness, adapters_allowed=False)
    package = discover()
    if args.adapter not in (*package.adapters, "all"):
        raise ToolError(
            f"unknown adapter {args.adapter!r}; the reference adapters: {', '.join(package.adapters)}, all"
        )
    chosen = pools(package, args.adapter)
    adapters = [a for a in package.adapters if any(a in pool.adapters for pool in chosen)]
    chosen_by = (
        f"the {len(again or {})} survivors of {args.rejudge}"
        if args.rejudge
        else f"sample {args.sample or 'all'} per pool, seed {args.seed}"
    )
    judged_by = _commit() if harness is None else f"adapters of {_commit()}, the harness in {harness}"
    _print(f"harness power at {judged_by}, --examples={args.examples}, {chosen_by}")
    _progress(f"coverage runs of {', '.join(adapters)} ({args.jobs} at a time)...")
    with ThreadPoolExecutor(max_workers=args.jobs) as executor:
        measured = executor.map(
            lambda a: run_coverage(a, args.examples, max(args.timeout, 1800.0), harness), adapters
        )
        runs = dict(zip(adapters, measured))
    for adapter in adapters:
        if package.modules[adapter] not in runs[adapter].files:
            raise ToolError(
                f"coverage saw none of {package.modules[adapter]} under --adapter={adapter}: the adapter ran "
                f"where coverage does not measure ({runs[adapter].tail})"
            )
    _print(*coverage_lines([runs[a] for a in adapters], package, source=not args.no_source))
    if args.coverage_only:
        _print(f"total {time.monotonic() - started:.0f} s")
        return 0
    if failed := [a for a in adapters if not runs[a].passed]:
        raise ToolError(
            f"the suite fails on the unmutated adapters ({', '.join(failed)}): no mutant can be judged"
        )
    check_shadowing()
    for adapter in adapters:
        check_canary(runs[adapter], package.modules[adapter], args.timeout)
    all_mutants: list[Mutant] = []
    results: list[PoolResult] = []
    triaged = {entry.key for entry in entries} if again is not None else set()  # equivalent: not judged again
    for pool in chosen:
        files = [f for f in pool.files if not args.file or any(part in f for part in args.file)]
        mutants = [m for f in files for m in mutants_of((ROOT / f).read_text(encoding="utf-8"), f)]
        all_mutants.extend(mutants)
        picked = (
            [m for m in mutants if _key(m.key) in again and m.key not in triaged]
            if again is not None
            else sample(mutants, args.sample, args.seed)
        )
        pool_started = time.monotonic()
        outcomes = _judge_all(picked, {f: [runs[a] for a in pool.judges[f]] for f in files}, args)
        seconds = time.monotonic() - pool_started
        results.append(PoolResult(pool.name, pool.adapters, len(mutants), outcomes, seconds))
    files_in_scope = {m.file for m in all_mutants}
    triage = equivalents.match(entries, all_mutants, files_in_scope)
    _print(*mutation_lines(results, triage))
    if again is not None:
        _print(*rejudged_lines(results, again, {_key(m.key) for m in all_mutants}, args.rejudge, triage))
    if args.verbose:
        _print(*killed_lines(results))
    if args.json:
        _write_json(args.json, results, [runs[a] for a in adapters])
    _print(f"total {time.monotonic() - started:.0f} s")
    return 0


def _run_field(args: argparse.Namespace) -> int:
    """The field-bug mutants: each adapter's unmutated copy first (its own failures are not credited), then
    every mutant, one suite run each."""
    started = time.monotonic()
    mutants = field.load()
    if args.field_id:
        unknown = set(args.field_id) - {m.id for m in mutants}
        if unknown:
            raise ToolError(f"unknown field mutant(s): {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m.id in args.field_id]
    harness = _harness(args.harness, adapters_allowed=True)
    _print(
        f"harness power (field) at {_commit() if harness is None else f'the harness in {harness}'}, "
        f"--examples={args.examples}, {len(mutants)} field mutants"
    )
    timeout = max(args.timeout, 900.0)
    _progress("unmutated copies ...")
    baseline = field.baselines(mutants, args.examples, timeout, harness)
    done = 0

    def one(mutant: field.FieldMutant) -> field.FieldOutcome:
        nonlocal done
        outcome = field.judge(mutant, baseline[mutant.adapter], args.examples, timeout, harness)
        done += 1
        _progress(f"[{done}/{len(mutants)}] {outcome.status:<22} {mutant.id} ({outcome.seconds:.0f} s)")
        return outcome

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(one, mutants))
    _print(*field.report_lines(outcomes, baseline))
    if args.json:
        data = {
            "field": field.as_json(outcomes),
            "baseline": {a: sorted(map(list, f)) for a, f in baseline.items()},
        }
        args.json.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    _print(f"total {time.monotonic() - started:.0f} s")
    return 0


def _harness(given: Path | None, *, adapters_allowed: bool) -> Path | None:
    """``--harness`` resolved and checked: a ``helix_conformance`` package, and for AST mutants no
    ``reference_adapters`` that would shadow this checkout's in the coverage run."""
    if given is None:
        return None
    harness = given.resolve()
    if not (harness / "helix_conformance").is_dir():
        raise ToolError(f"--harness {given}: no helix_conformance package there")
    if not adapters_allowed and (harness / PACKAGE.name).exists():
        raise ToolError(
            f"--harness {given} holds {PACKAGE.name}, which would be imported instead of this checkout's: "
            f"extract only the harness (git archive BASE helix_conformance cassettes | tar -x -C DIR)"
        )
    probe = subprocess.run(
        [sys.executable, "-c", "import helix_conformance; print(helix_conformance.__file__)"],
        env=environment(TOOLS, harness),
        cwd=TOOLS,  # not this checkout, whose helix_conformance `python -c` would put first
        capture_output=True,
        text=True,
        check=False,
    )
    if not probe.stdout.strip().startswith(str(harness)):
        raise ToolError(f"--harness {given} is not what the suite imports: {probe.stdout or probe.stderr}")
    return harness


def _judge_all(
    mutants: list[Mutant], judges: dict[str, list[AdapterCoverage]], args: argparse.Namespace
) -> list[Outcome]:
    done = 0

    def one(mutant: Mutant) -> Outcome:
        nonlocal done
        outcome = judge(mutant, judges[mutant.file], timeout=args.timeout)
        done += 1
        if outcome.status != NOT_COVERED:
            _progress(
                f"[{done}/{len(mutants)}] {outcome.status:<8} {Path(mutant.file).name}:{mutant.line} "
                f"{mutant.mutation} ({outcome.seconds:.1f} s)"
            )
        return outcome

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(one, mutants))


def _key(key: tuple[str, int, str]) -> str:
    file, line, mutation = key
    return f"{file}:{line} {mutation}"


def previous_survivors(path: Path) -> dict[str, str]:
    """The mutants a previous ``--json`` run let through or could not judge (``file:line mutation`` -> its
    status then)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ToolError(f"--rejudge {path}: not a JSON file of a previous run ({exc})") from exc
    pools_data = data["pools"] if isinstance(data, dict) else data
    found: dict[str, str] = {}
    for pool in pools_data:
        for outcome in pool["outcomes"]:
            if outcome["status"] in (SURVIVED, NOT_COVERED, UNJUDGED):
                mutant = outcome["mutant"]
                found[_key((mutant["file"], mutant["line"], mutant["mutation"]))] = outcome["status"]
    if not found:
        raise ToolError(f"--rejudge {path}: that run left no survivor to judge again")
    return found


def _write_json(path: Path, results: list[PoolResult], runs: list[AdapterCoverage]) -> None:
    pools_data = [
        {
            "pool": r.name,
            "judges": list(r.judges),
            "total": r.total,
            "seconds": r.seconds,
            "outcomes": [
                {**{k: v for k, v in asdict(o).items() if k != "mutant"}, "mutant": _mutant_dict(o.mutant)}
                for o in r.outcomes
            ],
        }
        for r in results
    ]
    coverage = {
        run.adapter: {
            "checks": len(run.test_ids),
            "files": {
                f.file: {
                    "statements": len(f.statements),
                    "missing": f.missing,
                    "branches": len(f.branches),
                    "missing_branches": f.missing_branches,
                }
                for f in run.files.values()
            },
        }
        for run in runs
    }
    data = {"coverage": coverage, "pools": pools_data}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def _mutant_dict(mutant: Mutant) -> dict[str, object]:
    return {k: v for k, v in asdict(mutant).items() if k != "mutated_source"}


def _commit() -> str:
    """The commit measured, and whether the adapters or the harness differ from it."""
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    if head.returncode != 0:
        return f"{ROOT} (not a git checkout)"
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "reference_adapters", "helix_conformance"],
        capture_output=True,
        text=True,
        check=False,
    )
    changed = " (with uncommitted changes to the adapters or the harness)" if dirty.stdout.strip() else ""
    return f"commit {head.stdout.strip()}{changed}"


def _print(*lines: str) -> None:
    print("\n".join(lines), flush=True)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
