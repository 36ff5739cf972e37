"""The fault corpus, judged: run a success scenario's generated faults (replay/faults.py) for one clause.

Every success scenario with a recorded stream is faulted; each clause family judges its own fault kinds
(ERR-03 error events, ERR-04 drops, ERR-05 timeouts and foreign bodies, NT-04 stalls and connections held
open, RES-12 unknown events)
and NT-01 / NT-02 judge every variant for raising, hanging or returning garbage. A clause fails on the first
variant that breaks it; the message names the fault, its position and the base scenario.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Collection
from typing import Any

from ..contract import ErrorStepResult, HelixError
from ..contract.results import STEP_RESULT_TYPES
from ..profiles.base import WireProfile
from ..replay.faults import FaultVariant, corpus
from ..replay.interactions import ReplayInteraction
from ..replay.runner import ScenarioRun
from ..replay.stage import STALL_EXPIRED
from ..scenarios.fault_kinds import FULL_SWEEP_EXAMPLES, KINDS, PRECONDITIONS, kinds_of
from ..scenarios.model import AbortPlan, Scenario, Stream
from .common import ToolCallIds, describe_result, did_not_return, error_message, provider_tool_call_ids, short
from .context import CheckContext
from .draws import broken_here
from .registry import NotApplicable, fail

TRACE_LINES = 14
"""How much of the faulted run's trace a failure shows (its end: where the fault hit)."""


def corpus_base(scenario: Scenario, profile: WireProfile) -> bool:
    """A success scenario with one recorded, unfaulted stream that ends with a finish, the representative of its
    delivery shape (``draws.py``): the corpus faults it."""
    if not profile.replays or scenario.expect.type == "error" or scenario.abort is not None:
        return False
    if len(scenario.exchanges) != 1:
        return False
    exchange = scenario.exchanges[0]
    return (
        isinstance(exchange.response, Stream)
        and exchange.response.finish is not None
        and not exchange.fault
        and broken_here(scenario, profile)
    )


def stall_base(scenario: Scenario, profile: WireProfile) -> bool:
    """Stalls and held-open connections cost a real wait when an adapter ignores the abort or reads on past
    the terminal event, so they are few: the first scenario of each stream kind (with or without tool calls,
    with or without thinking)."""
    return scenario.id in _stall_bases(profile)


@functools.lru_cache(maxsize=8)
def _stall_bases(profile: WireProfile) -> frozenset[str]:
    from ..scenarios import scenarios_for
    from ..scenarios.model import Thinking, ToolCall

    chosen: dict[tuple[bool, bool], str] = {}
    for scenario in scenarios_for(profile.name):
        if corpus_base(scenario, profile):
            stream = scenario.exchanges[0].response
            assert isinstance(stream, Stream)
            kinds = {type(part) for part in stream.parts}
            chosen.setdefault((ToolCall in kinds, Thinking in kinds), scenario.id)
    return frozenset(chosen.values())


def variants(ctx: CheckContext, *clauses: str) -> list[FaultVariant]:
    """The corpus of this scenario at the positions ``--helix-examples`` pays for, for these clauses. Built
    once per scenario: six clauses and their ``ahead`` hooks ask for it."""
    session = ctx.session
    if session.fault_corpus is None:
        held_open = stall_base(ctx.scenario, ctx.profile)
        session.fault_corpus = corpus(
            ctx.profile,
            session.interactions()[0],
            session.settings.examples,
            stalls=held_open and "abort" in ctx.spec.capabilities,
            held_open=held_open,
            salt=ctx.scenario.id,
        )
    return [v for v in session.fault_corpus if not clauses or v.clause in clauses]


def run_variant(ctx: CheckContext, variant: FaultVariant) -> ScenarioRun:
    """Run one variant: no retries (every fault is served once), aborted at the stall for stalls."""
    return ctx.session.run_variant(*_variant_call(ctx, variant))


def _variant_call(ctx: CheckContext, variant: FaultVariant) -> tuple[str, Scenario, list[ReplayInteraction]]:
    scenario = dataclasses.replace(
        ctx.scenario,
        config={**ctx.scenario.config, "max_retries": 0},
        abort=AbortPlan(after_events=variant.abort_after) if variant.abort_after is not None else None,
    )
    return variant.key, scenario, [variant.interaction]


HANG_CLAUSE = "NT-04"
"""Judges every stalling variant (stalls, held-open connections) for a hang: the step never returned (MUST)."""
HELD_OPEN_CLAUSE = "NT-05"
"""Judges where a step returned on a held-open connection: on the event, or only at its read timeout (SHOULD)."""


def corpus_ahead(ctx: CheckContext) -> None:
    """The ``ahead`` hook of the clauses judged on the fault corpus: their variants, sent ahead."""
    base = stall_base if ctx.clause in (HANG_CLAUSE, HELD_OPEN_CLAUSE) else corpus_base
    if base(ctx.scenario, ctx.profile):
        for variant in _chosen(ctx, ctx.clause):
            ctx.session.ahead_variant(*_variant_call(ctx, variant))


def _unusable(run: ScenarioRun, timeout: float) -> str | None:
    """Why the run gave no StepResult at all (NT-01, NT-02), or None."""
    if run.setup_error:
        return run.setup_error
    if run.timed_out:
        return did_not_return(run, timeout)
    if run.raised is not None:
        return f"generate_step raised {type(run.raised).__name__}: {run.raised}"
    if not isinstance(run.result, STEP_RESULT_TYPES):
        return f"generate_step returned {type(run.result).__name__}, not a StepResult"
    return None


def _wanted(variant: FaultVariant) -> str:
    expect = variant.expect
    if expect.same_as_unfaulted:
        return "the unfaulted run's result"
    wanted = "an ErrorStepResult" + (f" with code {' or '.join(expect.codes)}" if expect.codes else "")
    if expect.retryable is not None:
        wanted += f", retryable={expect.retryable}"
    return wanted + (", or the unfaulted run's result" if expect.may_complete else "")


def judge(
    variant: FaultVariant,
    run: ScenarioRun,
    unfaulted: Any,
    timeout: float,
    provider_ids: Collection[str] | None = None,
) -> str | None:
    """What is wrong with the run of ``variant`` under its clause, or None when the contract allows it.
    ``provider_ids``: the tool-call ids the provider sent; the others were minted by the adapter and need
    not repeat across runs (None: every id must)."""
    problem = _unusable(run, timeout)
    if problem:
        return problem
    if variant.kind == "held_open" and read_until_timeout(run):
        event = "terminal" if variant.expect.same_as_unfaulted else "error"
        return (
            "the step returned only when the read of the held-open connection timed out: it reads on after "
            f"the {event} event instead of returning on it (with no read timeout, it would hang)"
        )
    result, expect = run.result, variant.expect
    if provider_ids is None:
        same = describe_result(result) == describe_result(unfaulted)
    else:
        same = describe_result(result, ToolCallIds(provider_ids)) == describe_result(
            unfaulted, ToolCallIds(provider_ids)
        )
    if expect.same_as_unfaulted:
        return None if same else "the result differs from the unfaulted run's"
    if expect.may_complete and same:
        return None
    if not isinstance(result, ErrorStepResult):
        return "a success was returned for a broken response"
    error = result.error
    if not isinstance(error, HelixError):
        return f"the error is a {type(error).__name__}, not a HelixError"
    if expect.codes and error.code not in expect.codes:
        return f"wrong error code {error.code}"
    if expect.retryable is not None and error.retryable != expect.retryable:
        return f"retryable={error.retryable}"
    return None


def read_until_timeout(run: ScenarioRun) -> bool:
    """Whether a stalled read of the run waited out the client's read timeout before the step returned."""
    returned = run.trace.returned_at()
    expired = run.trace.of("fault", STALL_EXPIRED)
    return bool(expired) and (returned is None or expired[0].seq < returned)


def check_corpus(ctx: CheckContext, clause: str | None = None) -> None:
    """Fail ``ctx.clause`` on the first variant of its fault kinds (of every kind for NT-01, NT-02) that
    breaks it. NT-01 judges only raising, NT-02 only a missing or late StepResult."""
    clause = clause or ctx.clause
    chosen = _served(ctx, _chosen(ctx, clause))
    timeout = ctx.session.settings.timeout
    failed_base = _failed_base(ctx)
    if failed_base and chosen and all(v.kind == "unknown_event" for v in chosen):
        raise NotApplicable(failed_base)
    masked = 0
    for variant in chosen:
        if failed_base and variant.kind == "unknown_event":
            continue
        run = run_variant(ctx, variant)
        if clause == "NT-01":
            problem = f"raised {type(run.raised).__name__}: {run.raised}" if run.raised is not None else None
            if problem is None and run.escaped:
                problem = f"an error escaped the step: {run.escaped[0]}"
        elif clause == "NT-02" or (clause == HANG_CLAUSE and variant.kind == "held_open"):
            problem = _unusable(run, timeout) if run.raised is None else None
            if problem and variant.kind == "held_open":
                problem += ": it reads on after the event, and no read timeout ends the wait"
        elif clause == HELD_OPEN_CLAUSE and _unusable(run, timeout):
            continue  # no return to judge: the hang (or the raise) is NT-04's (or NT-01's), reported once there
        else:
            problem = judge(variant, run, ctx.result, timeout, provider_tool_call_ids(ctx))
            if problem is not None and failed_base and variant.expect.same_as_unfaulted:
                problem = _unusable(run, timeout)  # only a hang is judged against a failed base run
            if problem is not None and failed_base and _same_error(run.result, ctx.result):
                masked += 1  # the fault changed nothing: the step fails the same way without it
                continue
        if problem is not None:
            _fail(ctx, variant, run, problem)
    if masked:
        raise NotApplicable(
            f"{failed_base}; {masked} fault run(s) returned that same error, so they show nothing about the "
            "fault"
        )


def _same_error(result: Any, unfaulted: Any) -> bool:
    """Both are error results with the same code: the faulted run failed as the unfaulted one did."""
    if not isinstance(result, ErrorStepResult) or not isinstance(unfaulted, ErrorStepResult):
        return False
    return getattr(result.error, "code", None) == getattr(unfaulted.error, "code", None)


def _chosen(ctx: CheckContext, clause: str) -> list[FaultVariant]:
    """The variants ``clause`` is judged on (``fault_kinds.kinds_of``): of every kind but stalls for NT-01 and
    NT-02, every stalling one for NT-04, else its own."""
    kinds = kinds_of(clause)
    return [v for v in variants(ctx) if v.kind in kinds]


def _served(ctx: CheckContext, chosen: list[FaultVariant]) -> list[FaultVariant]:
    """The variants whose fault kind could answer the adapter's request (``fault_kinds.PRECONDITIONS``)."""
    sent = ctx.requests()
    options = sent[0].request_options() if sent else frozenset()
    return [v for v in chosen if not sent or PRECONDITIONS[v.kind].unmet_by(options) is None]


def _failed_base(ctx: CheckContext) -> str:
    """Why the unfaulted run cannot stand as the reference of "the unfaulted result" (empty when it can): it
    returned an error where the scenario expects a success. That failure is the unfaulted run's clauses' to
    report; a faulted run compared with it would repeat it (and differ in ``retryable``, which follows the
    ``max_retries=0`` of fault runs)."""
    result = ctx.result
    if not isinstance(result, ErrorStepResult) or ctx.scenario.expect.type == "error":
        return ""
    return (
        f"not judged: the unfaulted run already returned an error ({short(result)[:160]}) where the scenario "
        f"expects {ctx.scenario.expect.type}, which the scenario's own clauses report; the fault runs are "
        "compared with the unfaulted result"
    )


def _judges_the_result(clause: str, variant: FaultVariant) -> bool:
    """Whether ``clause`` judged what the variant's run returned, not only that it returned."""
    return clause not in ("NT-01", "NT-02") and not (clause == HANG_CLAUSE and variant.kind == "held_open")


def _fail(ctx: CheckContext, variant: FaultVariant, run: ScenarioRun, problem: str) -> None:
    actual = short(run.result) if run.results else problem
    examples = ctx.session.settings.examples
    trace = run.trace.describe().splitlines()
    details = "\n".join(
        [
            f"fault: {KINDS[variant.kind][1]} ({variant.clause})",
            f"served: HTTP {variant.interaction.status}, {len(variant.interaction.body)} bytes"
            + (f", then {variant.interaction.fault.kind}" if variant.interaction.fault else ""),
            "the faulted run's trace (end):",
            *trace[-TRACE_LINES:],
            f"This fault is generated from the scenario's cassette, not stored; it is tried with "
            f"--helix-examples={examples} (more examples try more positions; {FULL_SWEEP_EXAMPLES} or more "
            "try every event boundary).",
        ]
    )
    if run.raised is not None:
        details += f"\nraised: {error_message(run.raised)}"
    fail(
        ctx,
        f"{variant.describe(ctx.scenario.id)}: {problem}",
        expected=_wanted(variant) if _judges_the_result(ctx.clause, variant) else "a StepResult, in time",
        actual=actual,
        details=details,
        hint=_hint(variant, run, problem),
    )


HELD_OPEN_HINT = (
    "The adapter has a read timeout (it returned when the read timed out) but reads on after the stream's "
    "last event ([DONE], message_stop, the finish chunk, an error event): stop reading and close the response "
    "on it. An official SDK's stream iterator reads to the end of the body; break out of the loop instead."
)


def _hint(variant: FaultVariant, run: ScenarioRun, problem: str) -> str:
    """A hint from what happened, where the clause's usual suspects would contradict the message (a read
    timeout blamed on an adapter that timed out, a hang blamed on one that returned); empty: those."""
    if variant.kind == "held_open" and read_until_timeout(run):
        return HELD_OPEN_HINT
    error = getattr(run.result, "error", None)
    if problem.startswith("wrong error code") and isinstance(error, HelixError):
        return (
            f"The failure came back as an ErrorStepResult, as it must, but with code {error.code} where this "
            f"fault wants {' or '.join(variant.expect.codes)} ({KINDS[variant.kind][1]}): map the client "
            "library's exception for it to that code."
        )
    if problem.startswith("retryable=") and isinstance(error, HelixError):
        return (
            f"The code is right but retryable={error.retryable} where this fault wants "
            f"retryable={variant.expect.retryable} ({KINDS[variant.kind][1]})."
        )
    return ""
