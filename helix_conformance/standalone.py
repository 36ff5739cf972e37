"""The conformance suite without pytest: the same plan, the same gate, the same report as
``pytest --adapter=NAME --helix-report=r.json``, returned as a dict (``testing.run_conformance``)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .adapters import ResolvedAdapter
from .baseline import Baseline
from .checks.context import HarnessSettings
from .contract.spec import AdapterSpec
from .gate import Gate, session_errors
from .reporting.format import verdict_text
from .reporting.json_report import build_report
from .reporting.outcomes import ItemOutcome, OutcomeLog, Status
from .reporting.safety import protect_env
from .suite import SuiteRunner, missing_cassettes_problem, plan_suite

STATUS_OF: dict[str, Status] = {
    "pass": "passed",
    "skip": "skipped",
    "fail": "failed",
    "xfail": "should_failed",
}
"""The outcome the pytest front end reports for each action of the gate."""


def run_suite(
    spec: AdapterSpec,
    *,
    clauses: Iterable[str] | None = None,
    scenarios: Iterable[str] | None = None,
    timeout: float = 10.0,
    examples: int = 5,
    seed: int | None = None,
    cassette_dir: Path | None = None,
    strict: bool = False,
    baseline: Baseline | None = None,
    requested: str | None = None,
) -> dict[str, Any]:
    """Run the suite (or the named clauses/scenarios of it) and return the report (schema of json_report).
    ``requested`` is the --adapter value the reproduction commands repeat (default: the spec's name)."""
    protect_env(spec.api_key_env)
    if cassette_dir is None:
        problem = missing_cassettes_problem(spec)
        if problem:
            raise ValueError(problem)
    wanted_clauses = set(clauses) if clauses is not None else None
    wanted_scenarios = set(scenarios) if scenarios is not None else None
    full = plan_suite(spec, cassette_dir)
    planned = [
        p
        for p in full
        if (wanted_clauses is None or p.clause in wanted_clauses)
        and (wanted_scenarios is None or p.scenario.id in wanted_scenarios)
    ]
    gate = Gate(strict, baseline)
    runner = SuiteRunner(spec, HarnessSettings(timeout=timeout, examples=examples, seed=seed), cassette_dir)
    runner.expect(planned)
    log = OutcomeLog()
    for item in planned:
        started = time.monotonic()
        verdict = gate.judge(item, runner.run(item))
        status: Status = verdict.status or STATUS_OF[verdict.action]
        log.record(
            ItemOutcome(
                f"helix-conformance::test_conformance[{item.test_id}]",
                item.clause,
                item.scenario.id,
                item.profile,
                item.level,
                status,
                verdict_text(verdict, item.level, requested or spec.name),
                time.monotonic() - started,
                item.scenario.requires | item.check.requires,
                verdict.baseline_reason,
                verdict.failure.message if verdict.action == "fail" and verdict.failure else "",
            )
        )
        stop = runner.stop_reason()
        if stop:  # the pytest front end stops here too (checks/root.common_cause)
            log.gate_errors.append(stop)
            break
    log.gate_errors.extend(
        session_errors(
            log, spec.capabilities, everything_selected=len(planned) == len(full) and not runner.stop_reason()
        )
    )
    gate.check_entries_exist(full, full[0].profile if full else spec.wire_profile)
    log.gate_errors.extend(gate.unmatched_errors())
    failing = any(
        o.status in ("failed", "stale") or (strict and o.status == "should_failed")
        for o in log.items.values()
    )
    exit_status = 1 if failing or log.gate_errors else 0
    resolved = ResolvedAdapter(spec, requested or spec.name, "(passed to run_conformance)", "python")
    options: dict[str, tuple[Any, str]] = {
        "helix_strict": (strict, "argument"),
        "helix_timeout": (timeout, "argument"),
        "helix_examples": (examples, "argument"),
        "helix_seed": (seed, "argument"),
    }
    report = build_report(log, resolved, options, strict=strict, exitstatus=exit_status, baseline=baseline)
    report["passed"] = exit_status == 0
    return report
