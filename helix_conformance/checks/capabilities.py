"""HARN-05, the other way round: a capability the adapter does not declare must fail predictably.

The scenario still runs. Acceptable: a typed ErrorStepResult (a HelixError), the full behaviour (every MUST
clause of the scenario holds: it works, it is just not declared), or a clean omission (the capability's own
clauses aside, every MUST clause holds and nothing of the capability leaks out). Anything else is the silent
wrong output this clause exists to catch: thinking glued onto the answer, the second of two tool calls lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from ..clauses import get_clause
from ..contract import ErrorStepResult, HelixError
from ..contract.results import STEP_RESULT_TYPES
from ..language import Said
from .context import CheckContext
from .registry import CheckFailed, Failure, NotApplicable, check, fail, load_all_checks


def _thinking_omitted(ctx: CheckContext) -> str | None:
    thinking = getattr(ctx.result, "thinking", None)
    if thinking is not None and (thinking.content or thinking.redacted):
        return "the result carries thinking"
    if ctx.main.trace.callbacks("on_thinking"):
        return "on_thinking was called"
    return None


def _caching_omitted(ctx: CheckContext) -> str | None:
    marked = [request.cache for request in ctx.requests() if request.cache]
    return f"cache markers were sent: {marked[0]}" if marked else None


def _abort_ignored(ctx: CheckContext) -> str | None:
    return None  # the signal ignored and the response read to its end is a clean omission


OMISSIONS: dict[str, Callable[[CheckContext], str | None]] = {
    "thinking": _thinking_omitted,
    "caching": _caching_omitted,
    "abort": _abort_ignored,
}
"""How each capability may be cleanly left out; one without an entry (parallel_tool_calls: dropping a call
is losing data; retries: not retrying is a typed error already) must be refused or fully supported."""


OUTCOME_CLAUSES = frozenset(
    {
        "RES-01", "RES-02", "RES-03", "RES-04", "RES-05", "RES-06", "RES-07", "RES-09", "RES-11",
        "FIN-01", "FIN-02", "FIN-05", "STOP-01", "STOP-02", "STR-01", "STR-05",
    }
)  # fmt: skip
"""What the step returns and streams: where an unsupported capability shows up as silent wrong output."""

CHANGED_BY: dict[str, frozenset[str]] = {
    "thinking": frozenset({"RES-08", "STR-03", "STR-04", "MSG-08", "FIN-04"}),
    "caching": frozenset({"CACHE-01", "CACHE-02", "CACHE-03", "CACHE-04"}),
    "abort": frozenset({"AB-01", "AB-02", "AB-03"}),
    "parallel_tool_calls": frozenset(),
    "retries": frozenset({"CFG-03", "CFG-04", "CFG-05", "ERR-01", "ERR-02"}),
}
"""The clauses each capability changes, beside the outcome. Everything else (error mapping, the fault corpus,
request conversion, timing) is judged by its own clause on scenarios that need no capability: re-counting it
here would blame an undeclared capability for an unrelated failure."""


def judged_for(missing: list[str]) -> frozenset[str]:
    """The clauses HARN-05 re-runs on a scenario whose capabilities ``missing`` are not declared."""
    return OUTCOME_CLAUSES.union(*(CHANGED_BY.get(m, frozenset()) for m in missing))


def _must_failures(ctx: CheckContext, judged: frozenset[str]) -> list[Failure]:
    """Run the scenario's own MUST checks among ``judged`` (its capability gate skipped them) on this session."""
    failures = []
    for other in load_all_checks().values():
        if other.when_undeclared or other.clause not in judged:
            continue
        if not (ctx.profile.runs_clause(other.clause) and other.applies(ctx.scenario, ctx.profile)):
            continue
        if ctx.profile.clause_skip_reason(other.clause):
            continue
        if other.clause in ctx.scenario.should or get_clause(other.clause).level != "MUST":
            continue
        try:
            other.func(CheckContext(other.clause, ctx.session))
        except CheckFailed as exc:
            failures.append(exc.failure)
        except NotApplicable:
            continue
    return failures


@check("HARN-05", applies=lambda s, p: bool(s.requires), needs_result=False, when_undeclared=True)
def undeclared_capability_fails_predictably(ctx: CheckContext) -> None:
    missing = sorted(ctx.scenario.requires - ctx.spec.capabilities)
    if not missing:
        raise NotApplicable("every capability this scenario needs is declared")
    named = ", ".join(repr(m) for m in missing)
    run = ctx.main
    if run.timed_out and missing == ["abort"] and "stall" in ctx.scenario.tags:
        # The signal ignored is a clean omission (docs/ci.md): the step then waits on the stalled stream for
        # the adapter's own read timeout, which may be longer than the scenario's limit. Stalls are NT-04's.
        return
    if run.setup_error or run.timed_out or run.raised is not None:
        what = run.setup_error or (
            f"did not return within {ctx.session.settings.timeout} s"
            if run.timed_out
            else f"raised {type(run.raised).__name__}: {run.raised}"
        )
        _fail(
            ctx, f"with capability {named} not declared, generate_step {what}", details=run.trace.describe()
        )
    result = run.result
    if not isinstance(result, STEP_RESULT_TYPES):
        _fail(ctx, f"with capability {named} not declared, generate_step returned {type(result).__name__}")
    if isinstance(result, ErrorStepResult):
        if isinstance(result.error, HelixError):
            return
        _fail(
            ctx,
            f"capability {named} is not declared and the adapter refused with an ErrorStepResult, but its "
            f"error is a {type(result.error).__name__}, not a HelixError with a code",
        )
    failures = _must_failures(ctx, judged_for(missing))
    if not failures:
        return  # the whole behaviour works; declaring it would run its clauses
    omissions = [OMISSIONS.get(m) for m in missing]
    if all(omissions):
        registry = load_all_checks()
        broken = [f for f in failures if not registry[f.clause].requires & set(missing)]
        leaked = [why for why in (omit(ctx) for omit in omissions if omit) if why]
        if not broken and not leaked:
            return
        reasons = leaked + [f"{f.clause}: {f.message}" for f in broken]
    else:
        reasons = [f"{f.clause}: {f.message}" for f in failures]
    way = "left it out cleanly" if all(omissions) else "handled it fully"
    _fail(
        ctx,
        f"capability {named} is not declared, and the adapter neither refused it (a typed ErrorStepResult) "
        f"nor {way}: it produced wrong output",
        expected="a HelixError result, the full behaviour, or a clean omission",
        actual=reasons[:6],
        details=run.trace.describe(),
    )


def _fail(ctx: CheckContext, message: str, **evidence: Any) -> NoReturn:
    """Like ``fail``, with a hint about capabilities rather than HARN-05's hint about empty selections."""
    fail(ctx, message, hint=HINT, **evidence)


HINT = Said(
    "Either declare the capability in AdapterSpec.capabilities and meet its clauses, or, where the request "
    "or response needs it, return an ErrorStepResult with a HelixError, or leave it out entirely (no "
    "thinking glued onto the text, no cache markers, never a dropped tool call).",
    "Either declare the capability in `spec.capabilities` and meet its clauses, or, where the request or "
    "response needs it, return an error result with a HelixError, or leave it out entirely (no thinking glued "
    "onto the text, no cache markers, never a dropped tool call).",
)
