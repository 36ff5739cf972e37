"""``helix-conformance replay --adapter NAME SCENARIO`` (or ``--cassette PATH``): run one scenario or one
cassette through an adapter and print what happened: the request, every chunk and callback in order, the
result, and which clauses hold. The first debugging tool an adapter author wants."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from . import UsageFailure

HELP = "replay one scenario (or one cassette) through an adapter: the callback trace, the result, the clauses"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter", required=True, help="as for pytest --adapter (openai, mypkg.module:spec, ...)"
    )
    parser.add_argument("scenario", nargs="?", help="a scenario id (helix-conformance list scenarios)")
    parser.add_argument("--cassette", type=Path, help="replay this cassette file instead of a scenario")
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds the adapter may take (default 10)"
    )
    parser.add_argument("--no-judge", action="store_true", help="do not run the scenario's clause checks")


def run(args: argparse.Namespace) -> int:
    from ..adapters import AdapterNotFound, resolve_adapter

    if (args.scenario is None) == (args.cassette is None):
        raise UsageFailure("give either a scenario id or --cassette PATH (one of them)")
    try:
        spec = resolve_adapter(args.adapter).spec
        requested = args.adapter
    except AdapterNotFound as exc:
        raise UsageFailure(str(exc)) from None
    if args.cassette is not None:
        return _replay_cassette(spec, args.cassette, args.timeout)
    return _replay_scenario(spec, requested, args.scenario, args.timeout, judge=not args.no_judge)


def _replay_scenario(spec: Any, requested: str, scenario_id: str, timeout: float, *, judge: bool) -> int:
    from ..checks.context import HarnessSettings, ScenarioSession
    from ..replay.cassette import CassetteError
    from ..replay.interactions import CassetteCache
    from ..scenarios import get_scenario
    from ..suite import bundled_cassettes, profile_for

    try:
        scenario = get_scenario(scenario_id)
    except KeyError:
        raise UsageFailure(
            f"unknown scenario {scenario_id!r} (list them: helix-conformance list scenarios)"
        ) from None
    profile = profile_for(spec)
    if profile.replays and not scenario.applies_to_profile(profile.name):
        raise UsageFailure(
            f"scenario {scenario_id!r} does not exist for wire profile {profile.name!r} "
            f"(helix-conformance list scenarios --profile {profile.name})"
        )
    session = ScenarioSession(
        scenario,
        profile,
        spec,
        CassetteCache(spec.cassette_dir or bundled_cassettes()),
        HarnessSettings(timeout=timeout),
        scripted=profile.scripted(scenario),
    )
    print(f"scenario {scenario.id} [{profile.name}] through adapter {spec.name!r}: {scenario.description}")
    try:
        run = session.run()
    except CassetteError as exc:
        raise UsageFailure(str(exc)) from None
    print("\ntrace (requests, chunks delivered, callbacks, in order):")
    print(run.trace.describe())
    _print_result(run)
    print(f"\nexpected: {_expected(scenario.expect)}")
    if not judge:
        return 0
    return _judge(spec, requested, scenario.id, timeout)


def _print_result(run: Any) -> None:
    if run.setup_error:
        print(f"\nresult: none — {run.setup_error}")
    elif run.timed_out:
        print("\nresult: none — generate_step did not return within the timeout (HARN-03)")
    elif run.raised is not None:
        print(f"\nresult: none — generate_step raised {type(run.raised).__name__}: {run.raised} (NT-01)")
    else:
        print(f"\nresult: {_show(run.result)}")


def _judge(spec: Any, requested: str, scenario_id: str, timeout: float) -> int:
    import logging

    from ..standalone import run_suite

    # The checks make callbacks raise on purpose (STR-11); the adapter's logging of that is not news here.
    quiet = logging.NullHandler()
    logging.getLogger().addHandler(quiet)
    try:
        report = run_suite(spec, scenarios=[scenario_id], timeout=timeout, requested=requested)
    finally:
        logging.getLogger().removeHandler(quiet)
    rows = [r for r in report["results"] if r["outcome"] != "skipped"]
    bad = [r for r in rows if r["outcome"] not in ("passed", "baselined")]
    print(f"\nclauses: {len(rows) - len(bad)} of {len(rows)} hold on this scenario")
    for row in bad:
        first = row["message"].strip().splitlines()[0] if row["message"].strip() else ""
        print(f"  ✗ {row['clause']} ({row['level']}, {row['outcome']}): {first}")
        print(f"      {row['reproduce']}")
    return 1 if any(r["outcome"] == "failed" for r in bad) else 0


def _replay_cassette(spec: Any, path: Path, timeout: float) -> int:
    from ..importing.replay import replay_interaction
    from ..replay.cassette import CassetteError, load_cassette

    try:
        cassette = load_cassette(path)
    except CassetteError as exc:
        raise UsageFailure(str(exc)) from None
    problems = 0
    for index, interaction in enumerate(cassette.interactions):
        replayed = replay_interaction(spec, interaction, f"{path.name}#{index}", timeout=timeout)
        print(f"interaction {index}: HTTP {interaction.status} from {path}")
        print(replayed.trace)
        print(f"outcome: {json.dumps(replayed.outcome, ensure_ascii=False, default=str)}")
        for problem in replayed.problems:
            print(f"  ✗ {problem}")
        problems += len(replayed.problems)
    return 1 if problems else 0


def _expected(expect: Any) -> str:
    fields = {k: v for k, v in vars(expect).items() if v not in (None, (), "", False)}
    return ", ".join(f"{k}={v!r}" for k, v in fields.items())


def _show(result: Any) -> str:
    dump = getattr(result, "model_dump", None)
    if dump is None:
        return f"{type(result).__name__}: {result!r:.500} (not a StepResult: RES-01)"
    data = (
        dump(mode="json")
        if not hasattr(result, "error")
        else {**dump(exclude={"error"}), "error": repr(result.error)}
    )
    return f"{type(result).__name__} " + json.dumps(data, ensure_ascii=False, indent=2, default=str)
