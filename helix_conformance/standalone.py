"""The conformance suite without pytest: the same plan, the same gate, the same report as
``pytest --adapter=NAME --helix-report=r.json``, returned as a dict (``testing.run_conformance``).

The adapter runs in a worker process of its own (a gate, as under pytest) whenever it can be named for the
worker to import; a spec built at run time cannot, and runs in the calling process, marked "not a gate".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .adapters import AdapterNotFound, ResolvedAdapter, language_of, name_of, resolve_adapter
from .baseline import Baseline
from .checks.context import HarnessSettings, RunTicket
from .contract.spec import AdapterSpec
from .gate import Gate, session_errors
from .profiles.servers import unknown_servers
from .replay.runner import ScenarioRun
from .reporting.format import verdict_text
from .reporting.json_report import build_report
from .reporting.outcomes import ItemOutcome, OutcomeLog, Status
from .reporting.safety import protect_env
from .scenarios.fault_kinds import DEFAULT_EXAMPLES
from .suite import PlannedCheck, SuiteRunner, missing_cassettes_problem, plan_suite, profile_for

if TYPE_CHECKING:
    from .worker.launch import Opened

IN_PROCESS_NOTE = "in-process: not a gate"
"""The words of pytest's ``--helix-in-process`` (``pytest_suite.IN_PROCESS_NOTE``, pinned equal by a test)."""
FOREIGN_PREFIXES = ("node:", "cmd:")


class ConformanceUsageError(ValueError):
    """``run_conformance`` was given something it cannot run: the message says what and what to do."""


@dataclass(frozen=True)
class Isolation:
    """Where the adapter runs: its own worker or driver process (a gate), or the calling process (not one)."""

    resolved: ResolvedAdapter
    mode: Literal["worker", "driver", "in-process"]
    note: str
    """One line for the report's notes: the mode and why."""
    executor: Callable[..., ScenarioRun] | None = None
    explicit: bool = False
    """The caller chose the mode (``in_process=``, a name) rather than the fallback rule."""
    submit: Callable[..., RunTicket] | None = None
    """Sends a run ahead (worker/pool.py): set when the adapter's runs go to a pool of workers."""
    workers: tuple[int, str] | None = None
    """The pool's size and where it came from (``argument``, ``default``), as the report's settings show it."""

    @property
    def gate(self) -> bool:
        return self.mode != "in-process"


def isolate(
    subject: AdapterSpec | str,
    *,
    adapter: str | None = None,
    in_process: bool | None = None,
    workers: int | None = None,
) -> Isolation:
    """Decide where ``subject`` runs. A name (``"openai"``, ``"pkg.mod:spec"``, ``"node:a.mjs"``, ``"cmd:..."``)
    or a spec found by identity in its factory's module (or named by ``adapter``) runs in a worker; any other
    spec in-process, with the note saying why. ``in_process=True`` forces the calling process, ``False``
    refuses the fallback."""
    spec: AdapterSpec | None
    name: str | None
    if isinstance(subject, str):
        spec, name = None, subject
    elif isinstance(subject, AdapterSpec):
        spec, name = subject, adapter
    else:
        raise ConformanceUsageError(
            f"run_conformance: expected an AdapterSpec or an adapter name (as for pytest --adapter), "
            f"not {type(subject).__name__}"
        )
    if in_process:
        return in_process_isolation(spec, name, "asked for with in_process=True", explicit=True)
    named = name is not None
    if spec is not None and name is None:
        name = name_of(spec)
        if name is None:
            if in_process is False:
                raise ConformanceUsageError(
                    f"run_conformance(in_process=False): the spec {spec.name!r} was built at run time, so no "
                    "worker can import it; expose it as a module attribute and pass adapter='pkg.module:attr'"
                )
            why = (
                "its spec was built at run time (a closure, dataclasses.replace, a lambda), so no worker can "
                "import it; a module-level spec, or adapter='pkg.module:attr', runs isolated"
            )
            return in_process_isolation(spec, None, why)
    assert name is not None
    from .worker.launch import shared
    from .worker.pool import default_workers

    try:
        opened = shared(name, workers or default_workers())
    except AdapterNotFound as exc:
        if named or in_process is False:
            raise ConformanceUsageError(f"run_conformance: {exc}") from None
        return in_process_isolation(spec, None, f"the worker could not import {name}: {exc}")
    if spec is not None and (differs := _difference(spec, opened.resolved.spec)):
        if named or in_process is False:
            raise ConformanceUsageError(
                f"run_conformance: adapter={name!r} imports, in the worker, a spec that differs from the one "
                f"passed ({differs})"
            )
        return in_process_isolation(
            spec, None, f"{name} differs in a fresh import ({differs}): it was changed at run time"
        )
    return isolated(
        opened, explicit=named, workers=(workers, "argument") if workers else (default_workers(), "default")
    )


def isolated(opened: Opened, *, explicit: bool = True, workers: tuple[int, str] | None = None) -> Isolation:
    """The isolation of an adapter started by ``worker.launch``: its runs go to that process or, given
    ``workers`` (a size and its source), to a pool of that many processes of the adapter (Python workers or
    drivers) that runs them ahead while the checks judge."""
    note = f"isolated: the adapter runs in {opened.describe()}"
    pool = opened.pool(workers[0]) if workers else None
    if pool is None:
        return Isolation(opened.resolved, opened.mode, note, opened.worker.run_scenario, explicit)
    return Isolation(opened.resolved, opened.mode, note, pool.run_scenario, explicit, pool.submit, workers)


def in_process_isolation(
    spec: AdapterSpec | None, name: str | None, why: str, *, explicit: bool = False
) -> Isolation:
    """Run in this process (not a gate): ``spec`` as given, or ``name`` resolved here."""
    if spec is None:
        assert name is not None
        if name.startswith(FOREIGN_PREFIXES):
            raise ConformanceUsageError(
                f"run_conformance: {name!r} runs in its driver process; in_process=True is for Python adapters"
            )
        try:
            resolved = resolve_adapter(name)
        except AdapterNotFound as exc:
            raise ConformanceUsageError(f"run_conformance: {exc}") from None
    else:
        resolved = ResolvedAdapter(spec, name or spec.name, "(passed to run_conformance)", "python")
    note = f"{IN_PROCESS_NOTE}: the adapter runs inside the calling process; {why}"
    return Isolation(resolved, "in-process", note, None, explicit)


def _difference(passed: AdapterSpec, imported: AdapterSpec) -> str:
    """The first field the worker's spec disagrees on (its factory aside, which only exists there)."""
    for field in ("name", "wire_profile", "model", "capabilities", "cassette_dir", "api_key_env"):
        mine, theirs = getattr(passed, field), getattr(imported, field)
        if (str(mine) if field == "cassette_dir" else mine) != (
            str(theirs) if field == "cassette_dir" else theirs
        ):
            return f"{field}: {mine!r} here, {theirs!r} there"
    return ""


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
    examples: int = DEFAULT_EXAMPLES,
    seed: int | None = None,
    cassette_dir: Path | None = None,
    strict: bool = False,
    baseline: Baseline | None = None,
    requested: str | None = None,
    isolation: Isolation | None = None,
) -> dict[str, Any]:
    """Run the suite (or the named clauses/scenarios of it) and return the report (schema of json_report).
    ``requested`` is the --adapter value the reproduction commands repeat (default: the spec's name).
    ``isolation`` says where the adapter runs (``isolate``); without it, in this process."""
    if isolation is None:
        isolation = in_process_isolation(spec, requested, "run_suite was given no isolation")
    spec = isolation.resolved.spec
    requested = requested or isolation.resolved.requested
    protect_env(spec.api_key_env)
    unknown = unknown_servers(spec.wire_profile, spec.servers)
    if unknown:
        raise ValueError(unknown)
    if cassette_dir is None:
        problem = missing_cassettes_problem(spec)
        if problem:
            raise ValueError(problem)
    wanted_clauses = set(clauses) if clauses is not None else None
    wanted_scenarios = set(scenarios) if scenarios is not None else None
    full = plan_suite(spec, cassette_dir, dict(isolation.resolved.not_applicable))
    planned = [
        p
        for p in full
        if (wanted_clauses is None or p.clause in wanted_clauses)
        and (wanted_scenarios is None or p.scenario.id in wanted_scenarios)
    ]
    gate = Gate(strict, baseline)
    warning = None
    if baseline is not None:
        error, warning = baseline.mismatch(requested or spec.name, profile_for(spec).name)
        if error:
            raise ConformanceUsageError(f"run_conformance: {error}")
    settings = HarnessSettings(
        timeout=timeout,
        examples=examples,
        seed=seed,
        executor=isolation.executor,
        submit=isolation.submit,
        language=language_of(requested or spec.name),
    )
    runner = SuiteRunner(spec, settings, cassette_dir, look_ahead=True)
    runner.expect(full)  # the whole plan says which clause owns a root cause; the selection what runs
    runner.select(planned)
    log = OutcomeLog()
    log.notes.append(isolation.note)
    if warning:
        log.notes.append(warning)
    try:
        _judge(planned, runner, gate, log, requested or spec.name)
    finally:
        runner.close()  # what was sent ahead and not asked for: a kept worker starts the next call clean
    log.gate_errors.extend(
        session_errors(
            log, spec.capabilities, everything_selected=len(planned) == len(full) and not runner.stop_reason()
        )
    )
    gate.check_entries_exist(full, full[0].profile if full else spec.wire_profile)
    log.gate_errors.extend(gate.unmatched_errors())
    exit_status = 1 if log.fails_gate(strict=strict) else 0
    resolved = isolation.resolved
    if resolved.requested != requested:
        resolved = ResolvedAdapter(spec, requested, resolved.target, resolved.origin, resolved.not_applicable)
    options: dict[str, tuple[Any, str]] = {
        "helix_strict": (strict, "argument"),
        "helix_timeout": (timeout, "argument"),
        "helix_examples": (examples, "argument"),
        "helix_seed": (seed, "argument"),
        "helix_in_process": (not isolation.gate, _source(isolation)),
    }
    if isolation.workers is not None:
        options["helix_workers"] = isolation.workers
    report = build_report(log, resolved, options, strict=strict, exitstatus=exit_status, baseline=baseline)
    report["passed"] = exit_status == 0
    report["isolation"] = {"mode": isolation.mode, "gate": isolation.gate, "note": isolation.note}
    word = "PASS" if report["passed"] else "FAIL"
    report["verdict_text"] = word if isolation.gate else f"{word} ({IN_PROCESS_NOTE})"
    return report


def _judge(planned: list[PlannedCheck], runner: SuiteRunner, gate: Gate, log: OutcomeLog, name: str) -> None:
    """Run and judge the planned checks in order, into ``log``; stop where the pytest front end stops too
    (checks/root.common_cause)."""
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
                verdict_text(verdict, item.level, name),
                time.monotonic() - started,
                item.scenario.requires | item.check.requires,
                verdict.baseline_reason,
                verdict.failure.message if verdict.action == "fail" and verdict.failure else "",
                verdict.matrix or item.servers,
                verdict.failure.happening if verdict.action == "fail" and verdict.failure else "",
            )
        )
        stop = runner.stop_reason()
        if stop:
            log.gate_errors.append(stop)
            return


def _source(isolation: Isolation) -> str:
    if isolation.explicit:
        return "argument"
    return "default" if isolation.gate else "fallback: the spec cannot be named for a worker"
