"""``helix-conformance replay --adapter NAME SCENARIO`` (or ``--cassette PATH``): run one scenario or one
cassette through an adapter and print what happened: each request (headers and body), every chunk (its bytes)
and callback in order, the result, and which clauses hold. The first debugging tool an adapter author wants.

The adapter runs where ``pytest --adapter`` runs it: a worker process of its own, or the driver of a ``node:`` /
``cmd:`` adapter; ``--in-process`` runs a Python adapter in this process (for ``pdb``; not a gate). The first
line says which.

What the adapter sent is shown as a cassette would keep it: credential and account headers, key parameters
and token fields scrubbed with the recorder's lists (``recording.scrub``), provider key values redacted and
control characters escaped (``reporting.safety``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from . import UsageFailure

HELP = "replay one scenario (or one cassette) through an adapter: the callback trace, the result, the clauses"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter",
        required=True,
        help="as for pytest --adapter (openai, mypkg.module:spec, node:adapter.mjs, 'cmd:COMMAND ARGS', ...)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run a Python adapter in this process (for pdb) instead of its worker process; not a gate",
    )
    parser.add_argument("scenario", nargs="?", help="a scenario id (helix-conformance list scenarios)")
    parser.add_argument("--cassette", type=Path, help="replay this cassette file instead of a scenario")
    parser.add_argument("--timeout", default="10", help="seconds the adapter may take (default 10)")
    parser.add_argument("--no-judge", action="store_true", help="do not run the scenario's clause checks")
    parser.add_argument(
        "--cuts",
        metavar="OFFSETS",
        help="deliver the body cut at these byte offsets (comma-separated, or every-byte:N), as STR-10 does; "
        "compares the result and callbacks with the default delivery",
    )
    parser.add_argument(
        "--truncate-at",
        type=int,
        metavar="N",
        help="deliver only the first N bytes of the body, as NT-02 does",
    )
    parser.add_argument(
        "--flip",
        action="append",
        default=[],
        metavar="OFFSET:BYTE",
        help="with --truncate-at: overwrite the byte at OFFSET with BYTE (0-255); repeatable",
    )


def run(args: argparse.Namespace) -> int:
    if (args.scenario is None) == (args.cassette is None):
        raise UsageFailure("give either a scenario id or --cassette PATH (one of them)")
    from ..reporting.safety import protect_env
    from ..settings import parse_timeout

    try:
        args.timeout = parse_timeout(str(args.timeout))
    except ValueError as exc:
        raise UsageFailure(f"--timeout: {exc}") from None

    plan = None if args.cassette is not None else _plan(args)
    opened, isolation = _isolation(args.adapter, args.in_process)
    try:
        spec = isolation.resolved.spec
        protect_env(spec.api_key_env)
        _say(f"adapter {args.adapter}: {isolation.note}")
        if args.cassette is not None:
            return _replay_cassette(spec, args.cassette, args.timeout, isolation)
        return _replay_scenario(
            spec,
            args.adapter,
            args.scenario,
            args.timeout,
            judge=not args.no_judge,
            plan=plan,
            isolation=isolation,
        )
    finally:
        if opened is not None:
            opened.close()


def _isolation(name: str, in_process: bool) -> tuple[Any, Any]:
    """The adapter's worker or driver (started here, closed by the caller) and its isolation; or, with
    --in-process, the adapter resolved in this process."""
    from ..adapters import AdapterNotFound
    from ..standalone import ConformanceUsageError, in_process_isolation, isolated

    if in_process:
        try:
            return None, in_process_isolation(None, name, "asked for with --in-process", explicit=True)
        except ConformanceUsageError as exc:
            raise UsageFailure(str(exc).removeprefix("run_conformance: ")) from None
    from ..worker.launch import open_adapter

    try:
        opened = open_adapter(name)
    except AdapterNotFound as exc:
        raise UsageFailure(str(exc)) from None
    return opened, isolated(opened)


def _plan(args: argparse.Namespace) -> Any:
    """The delivery plan of --cuts or --truncate-at/--flip (a property's shrunk example), or None."""
    from ..replay.delivery import MutatedPlan, SplitPlan

    if args.cuts and args.truncate_at is not None:
        raise UsageFailure("give --cuts or --truncate-at, not both")
    if args.flip and args.truncate_at is None:
        raise UsageFailure("--flip needs --truncate-at (NT-02 truncates, then overwrites bytes)")
    try:
        if args.cuts:
            text = args.cuts.strip()
            if text.startswith("every-byte:"):
                return SplitPlan(tuple(range(1, int(text.split(":", 1)[1]))))
            return SplitPlan(tuple(sorted({int(part) for part in text.split(",") if part.strip()})))
        if args.truncate_at is not None:
            flips = tuple((int(o), int(b)) for o, b in (flip.split(":", 1) for flip in args.flip))
            if any(not 0 <= b <= 255 for _, b in flips):
                raise ValueError("a byte is 0-255")
            return MutatedPlan(truncate_at=args.truncate_at, flips=flips)
    except ValueError as exc:
        raise UsageFailure(f"cannot read the delivery plan: {exc}") from None
    return None


def _replay_scenario(
    spec: Any,
    requested: str,
    scenario_id: str,
    timeout: float,
    *,
    judge: bool,
    plan: Any = None,
    isolation: Any = None,
) -> int:
    """Replay one scenario; ``isolation`` (standalone.Isolation) says where the adapter runs (default: here)."""
    from dataclasses import replace

    from ..adapters import language_of
    from ..checks.context import HarnessSettings, ScenarioSession
    from ..replay.cassette import CassetteError
    from ..replay.interactions import CassetteCache
    from ..replay.recorded import ServedRecording
    from ..replay.runner import LATE_WORK_WAIT_S, RunOptions
    from ..scenarios import get_scenario
    from ..scenarios.recorded import RecordedScenario
    from ..standalone import in_process_isolation
    from ..suite import bundled_cassettes, profile_for, recorded_for

    if isolation is None:
        isolation = in_process_isolation(spec, requested, "called with a spec object", explicit=True)
    profile = profile_for(spec)
    recorded = {s.id: s for s in recorded_for(spec, profile, None)}  # recorded/... ids: real traffic
    try:
        scenario = recorded[scenario_id] if scenario_id in recorded else get_scenario(scenario_id)
    except KeyError:
        raise UsageFailure(
            f"unknown scenario {scenario_id!r} (list them: helix-conformance list scenarios)"
        ) from None
    if profile.replays and not scenario.applies_to_profile(profile.name):
        raise UsageFailure(
            f"scenario {scenario_id!r} does not exist for wire profile {profile.name!r} "
            f"(helix-conformance list scenarios --profile {profile.name})"
        )
    session = ScenarioSession(
        scenario,
        profile,
        spec,
        ServedRecording(scenario, profile, spec.model)
        if isinstance(scenario, RecordedScenario)
        else CassetteCache(spec.cassette_dir or bundled_cassettes()),
        HarnessSettings(
            timeout=timeout, executor=isolation.executor, language=language_of(isolation.resolved.requested)
        ),
        scripted=profile.scripted(scenario),
        recorded_live=isinstance(scenario, RecordedScenario),  # its outcome is written, ids as sent
    )
    _say(f"scenario {scenario.id} [{profile.name}] through adapter {spec.name!r}: {scenario.description}")
    try:
        options = RunOptions(late_wait_s=LATE_WORK_WAIT_S) if plan is None else RunOptions(plan=plan)
        run = session.run(replace(options, chunk_bytes=True))  # the trace below shows every chunk's bytes
    except CassetteError as exc:
        raise UsageFailure(str(exc)) from None
    if plan is not None:
        print(f"delivery: {plan}")
    print("\ntrace (requests with headers and body, chunks with the bytes delivered, callbacks, in order):")
    _say("\n".join(_trace_lines(run, profile.secret_headers)))
    _print_result(run)
    print(f"\nexpected: {_expected(scenario.expect)}")
    if plan is not None:
        return _compare_with_default(session, run)
    if not judge:
        return 0
    return _judge(spec, requested, scenario.id, timeout, isolation)


def _compare_with_default(session: Any, run: Any) -> int:
    """Under a plan of a property clause: does the result (and, for cuts, the callback sequence) change?"""
    from ..checks.common import describe_result, run_ids
    from ..checks.context import CheckContext
    from ..checks.streaming import comparable_run
    from ..contract.results import STEP_RESULT_TYPES
    from ..replay.delivery import SplitPlan

    if not isinstance(run.options.plan, SplitPlan):
        valid = run.raised is None and not run.timed_out and isinstance(run.result, STEP_RESULT_TYPES)
        print(
            f"\nNT-02: {'a valid StepResult came back in time' if valid else 'no valid StepResult (NT-02 fails)'}"
        )
        return 0 if valid else 1
    default = session.run()
    # As STR-10 compares them: ids the adapter minted (the provider sent none) may differ between runs.
    ctx = CheckContext("STR-10", session)
    same = comparable_run(ctx, run) == comparable_run(ctx, default)
    print(
        f"\nSTR-10: {'same result and callbacks as the default delivery' if same else 'DIFFERENT from the default delivery (STR-10 fails)'}"
    )
    if not same:
        _say(f"  default result: {describe_result(default.result, run_ids(ctx))!r:.300}")
        _say(f"  this result:    {describe_result(run.result, run_ids(ctx))!r:.300}")
    return 0 if same else 1


def _say(text: str) -> None:
    """Print text that holds adapter output: keys redacted, control characters escaped."""
    from ..reporting.safety import safe_text

    print(safe_text(text))


def _trace_lines(run: Any, secret_headers: tuple[str, ...]) -> list[str]:
    """Every event of the run in order, each request with its headers and body, each chunk with its bytes."""
    requests = iter(run.trace.requests)
    lines = []
    for event in run.trace.events:
        detail = event.name
        if event.kind == "chunk":
            last = " (last)" if event.last else ""
            detail = f"interaction {event.interaction} chunk {event.chunk_index}{last}"
            if event.args:
                detail += f": {event.args[0]!r}"
        elif event.kind in ("callback", "callback_done") and event.args:
            detail += "(" + ", ".join(f"{arg!r:.500}" for arg in event.args) + ")"
        lines.append(f"  #{event.seq:<3} {event.at * 1000:7.1f} ms  {event.kind:<16} {detail}")
        if event.kind == "request":
            sent = next(requests, None)
            if sent is not None:
                lines += ["        " + line for line in _request_lines(sent, run, secret_headers)]
    return lines


def _request_lines(sent: Any, run: Any, secret_headers: tuple[str, ...]) -> list[str]:
    """One request as a cassette would keep it: scrubbed with the recorder's header, parameter and field lists."""
    from ..recording.scrub import scrub_interaction
    from ..reporting.safety import key_values

    if sent.refused:
        answer = (
            "no recorded interaction (HARN-01)"
            if sent.interaction is None
            else f"interaction {sent.interaction}"
        )
        return [f"{sent.url}: the connection was refused, no request sent ({answer}: connect_error)"]
    text = sent.body.decode("utf-8", errors="replace")
    request = {"method": sent.method, "uri": sent.url, "headers": dict(sent.headers), "body": text}
    secrets = [value for _, value in key_values()]
    interaction = scrub_interaction({"request": request}, extra_headers=secret_headers, secrets=secrets)
    scrubbed = interaction["request"]
    if sent.interaction is None:
        answer = "no recorded interaction matched (HARN-01)"
    else:
        answer = f"interaction {sent.interaction}, HTTP {run.interactions[sent.interaction].status}"
    lines = [f"{scrubbed['method']} {scrubbed['uri']} via {sent.library}: {answer}", "headers:"]
    lines += [f"  {name}: {value}" for name, value in scrubbed["headers"].items()]
    body = scrubbed["body"]
    try:
        shown = json.dumps(json.loads(body), ensure_ascii=False, indent=2)
        lines.append(f"body ({len(sent.body)} bytes; JSON, re-indented):")
    except ValueError:
        shown = body
        lines.append(f"body ({len(sent.body)} bytes):")
    lines += ["  " + line for line in shown.splitlines()]
    return lines


def _print_result(run: Any) -> None:
    if run.setup_error:
        _say(f"\nresult: none — {run.setup_error}")
    elif run.timed_out:
        print("\nresult: none — generate_step did not return within the timeout (HARN-03)")
    elif run.raised is not None:
        _say(f"\nresult: none — generate_step raised {type(run.raised).__name__}: {run.raised} (NT-01)")
    else:
        _say(f"\nresult: {_show(run.result)}")


def _judge(spec: Any, requested: str, scenario_id: str, timeout: float, isolation: Any) -> int:
    import logging

    from ..standalone import run_suite

    # The checks make callbacks raise on purpose (STR-11); the adapter's logging of that is not news here.
    quiet = logging.NullHandler()
    logging.getLogger().addHandler(quiet)
    try:
        report = run_suite(
            spec, scenarios=[scenario_id], timeout=timeout, requested=requested, isolation=isolation
        )
    finally:
        logging.getLogger().removeHandler(quiet)
    rows = [r for r in report["results"] if r["outcome"] not in ("skipped", "not_applicable")]
    bad = [r for r in rows if r["outcome"] not in ("passed", "baselined")]
    print(f"\nclauses: {len(rows) - len(bad)} of {len(rows)} hold on this scenario")
    if (unjudged := report.get("not_applicable")) and unjudged["checks"]:
        for group in unjudged["reasons"]:
            print(
                f"  ∅ {group['checks']} clause(s) not applicable to this adapter's request: {group['reason']}"
            )
    for row in bad:  # the whole failure, as pytest prints it (already made safe by the report)
        print(f"  ✗ {row['clause']} ({row['level']}, {row['outcome']})")
        print("\n".join("      " + line for line in row["message"].strip().splitlines()))
    return 1 if any(r["outcome"] == "failed" for r in bad) else 0


def _replay_cassette(spec: Any, path: Path, timeout: float, isolation: Any) -> int:
    from ..importing.replay import replay_interaction
    from ..replay.cassette import CassetteError, load_cassette

    try:
        cassette = load_cassette(path)
    except CassetteError as exc:
        raise UsageFailure(str(exc)) from None
    problems = 0
    for index, interaction in enumerate(cassette.interactions):
        replayed = replay_interaction(
            spec,
            interaction,
            f"{path.name}#{index}",
            timeout=timeout,
            **({"executor": isolation.executor} if isolation.executor else {}),
        )
        print(f"interaction {index}: HTTP {interaction.status} from {path}")
        _say(replayed.trace)
        _say(f"outcome: {json.dumps(replayed.outcome, ensure_ascii=False, default=str)}")
        for problem in replayed.problems:
            _say(f"  ✗ {problem}")
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
