"""ERR, CFG-03..05, NT and AB: failures come back classified, never raised; aborts and cancellation behave."""

from __future__ import annotations

from hypothesis import strategies as st

from ..clauses import RETRY_AFTER_BOUND_S
from ..contract import ErrorStepResult, HelixError
from ..contract.results import STEP_RESULT_TYPES
from ..language import Said
from ..profiles.base import WireProfile
from ..replay.delivery import MutatedPlan, SplitPlan
from ..replay.runner import REPLAY_API_KEY, RunOptions
from ..scenarios.model import HttpError, Scenario
from .common import (
    describe_result,
    either,
    error_message,
    expects,
    has_recorded_stream,
    named,
    run_ids,
    short,
    tagged,
)
from .context import CheckContext
from .draws import representative
from .faults import check_corpus, corpus_ahead, corpus_base, read_until_timeout, stall_base
from .properties import examples_of, falsify
from .registry import REGISTRY, Check, CheckFailed, Failure, NotApplicable, check, fail

ERROR_RESULT_OWNERS = (
    "ERR-01",
    "ERR-03",
    "ERR-04",
    "ERR-05",
    "FIN-03",
    "TOOL-05",
    "NT-04",
    "AB-01",
    "AB-02",
    "CFG-04",
)
"""The clauses that say which error a scenario gives, and so fail when the step returned no ErrorStepResult
at all. A clause about the fields of an error result (ERR-02, ERR-06, ERR-08, AB-03) leaves that to them."""


def _owned_elsewhere(ctx: CheckContext) -> None:
    """Raise NotApplicable when the step returned no ErrorStepResult and another clause planned on this
    scenario reports that (RES-01 when it is no StepResult at all): this clause judges only error results.
    With no such clause, return, and the caller fails."""
    result = ctx.result
    if not isinstance(result, STEP_RESULT_TYPES):
        owners = ["RES-01"]
    else:
        owners = [
            clause
            for clause in ERROR_RESULT_OWNERS
            if clause != ctx.clause and clause in REGISTRY and _planned(REGISTRY[clause], ctx)
        ]
    if owners:
        raise NotApplicable(
            f"not judged: the step returned {short(result)[:120]}, not an ErrorStepResult, which "
            f"{' and '.join(owners)} report{'s' if len(owners) == 1 else ''} on this scenario; {ctx.clause} "
            "judges only what an ErrorStepResult carries"
        )


def _planned(owner: Check, ctx: CheckContext) -> bool:
    """Whether ``owner`` is judged on this scenario for this adapter (applies, capabilities, profile)."""
    profile = ctx.profile
    return (
        owner.applies(ctx.scenario, profile)
        and owner.requires <= ctx.spec.capabilities
        and profile.runs_clause(owner.clause)
        and profile.clause_skip_reason(owner.clause) is None
    )


def _error(ctx: CheckContext, *, owner: bool = True) -> HelixError:
    """The returned HelixError; ``owner=False`` for a clause that judges only what an error result carries
    (see ``_owned_elsewhere``)."""
    result = ctx.result
    if not isinstance(result, ErrorStepResult):
        if not owner:
            _owned_elsewhere(ctx)
        fail(
            ctx,
            "expected an ErrorStepResult",
            expected=ctx.scenario.expect.error_codes or "error",
            actual=short(result),
        )
    if not isinstance(result.error, HelixError):
        fail(
            ctx,
            "the error must be a HelixError",
            expected="HelixError",
            actual=f"{type(result.error).__name__}: {result.error}",
        )
    return result.error


def _code_is_expected(ctx: CheckContext) -> None:
    error = _error(ctx)
    codes = ctx.scenario.expect.error_codes
    if codes and error.code not in codes:
        fail(
            ctx,
            "wrong error code",
            expected=codes[0] if len(codes) == 1 else codes,
            actual=error.code,
            details=_returned(error),
        )


def _returned(error: HelixError) -> str:
    """The error the adapter returned, with its cause: shows which exception was classified wrongly."""
    return f"returned: {error.code}, retryable={error.retryable}: {error_message(error)}"


@check("ERR-01", applies=tagged("http_error"))
def http_status_maps_to_code(ctx: CheckContext) -> None:
    _code_is_expected(ctx)


@check("ERR-02", applies=tagged("http_error"))
def helix_error_fields(ctx: CheckContext) -> None:
    error = _error(ctx, owner=False)
    expect = ctx.scenario.expect
    got = {"category": error.category, "status_code": error.status_code, "has cause": error.cause is not None}
    want = {"category": "provider", "status_code": expect.status_code, "has cause": True}
    if got != want:
        fail(ctx, "the HelixError fields are incomplete", expected=want, actual=got)
    if (
        expect.retryable is not None
        and not expect.retryable_is_should
        and error.retryable != expect.retryable
    ):
        fail(
            ctx,
            f"HTTP {expect.status_code} must be retryable={expect.retryable}",
            expected=expect.retryable,
            actual=error.retryable,
        )


@check("ERR-03", applies=either(tagged("stream_error"), corpus_base), ahead=corpus_ahead)
def stream_error_event_gives_its_code(ctx: CheckContext) -> None:
    if corpus_base(ctx.scenario, ctx.profile):  # the profile's error events inside this success stream
        check_corpus(ctx)
        return
    _code_is_expected(ctx)
    want = ctx.scenario.expect.retryable
    if want is not None and _error(ctx).retryable != want:
        fail(
            ctx,
            f"an in-stream {_error(ctx).code} is retryable={want}: the flag of the HTTP status its type "
            "stands for (ERR-02), whatever the 200 the stream came with",
            expected=want,
            actual=_error(ctx).retryable,
            details=_returned(_error(ctx)),
        )


@check("ERR-04", applies=either(tagged("partial"), corpus_base), ahead=corpus_ahead)
def dropped_stream_is_an_error_not_partial_text(ctx: CheckContext) -> None:
    if corpus_base(ctx.scenario, ctx.profile):  # this success stream truncated, reset, unterminated
        check_corpus(ctx)
        return
    _code_is_expected(ctx)
    if _error(ctx).retryable is not True:
        fail(
            ctx,
            "a dropped or truncated stream is retryable",
            expected=True,
            actual=_error(ctx).retryable,
            details=_returned(_error(ctx)),
        )


@check("ERR-05", applies=either(tagged("transport", "bad_body"), corpus_base), ahead=corpus_ahead)
def transport_failures_and_foreign_bodies_classified(ctx: CheckContext) -> None:
    if corpus_base(ctx.scenario, ctx.profile):  # read timeouts, malformed events, HTML 5xx, text/plain 200
        check_corpus(ctx)
        return
    _code_is_expected(ctx)
    want = ctx.scenario.expect.retryable
    if want is not None and _error(ctx).retryable != want:
        fail(
            ctx,
            "wrong retryable flag",
            expected=want,
            actual=_error(ctx).retryable,
            details=_returned(_error(ctx)),
        )


@check("ERR-06", applies=expects("error"))
def error_result_stops(ctx: CheckContext) -> None:
    result = ctx.result
    if not isinstance(result, ErrorStepResult):
        _owned_elsewhere(ctx)
        raise CheckFailed(
            Failure(
                ctx.clause,
                ctx.scenario.id,
                ctx.profile.name,
                "the step must end with an ErrorStepResult (should_stop=True, stop_reason='error') and "
                "returned another result",
                expected="error",
                actual=short(result),
                hint="Returning a text or partial result where the provider reported a failure: it must "
                "come back as an ErrorStepResult, which stops the loop.",
            )
        )
    if (result.should_stop, result.stop_reason) != (True, "error"):
        fail(
            ctx,
            "an ErrorStepResult must have should_stop=True and stop_reason='error'",
            expected=(True, "error"),
            actual=(result.should_stop, result.stop_reason),
        )


@check("ERR-07", applies=expects("error"))
def api_key_never_in_the_error(ctx: CheckContext) -> None:
    result = ctx.result
    if not isinstance(result, ErrorStepResult):
        return
    texts = {"str(error)": str(result.error), "error.message": str(getattr(result.error, "message", ""))}
    leaked = [where for where, text in texts.items() if REPLAY_API_KEY in text]
    if leaked:
        fail(ctx, f"the API key appears in {', '.join(leaked)}", actual=str(result.error)[:300])


@check("ERR-08", applies=named("http_429_insufficient_quota"))
def insufficient_quota_not_retryable(ctx: CheckContext) -> None:
    if _error(ctx, owner=False).retryable is not False:
        fail(
            ctx,
            "429 insufficient_quota is a quota problem, not a rate limit: retryable must be False",
            expected=False,
            actual=_error(ctx).retryable,
        )


@check("CFG-03", applies=tagged("retry"))
def max_retries_honoured(ctx: CheckContext) -> None:
    sent = len(ctx.sent())
    wanted = len([e for e in ctx.scenario.exchanges if not e.optional])
    if sent > wanted and "output_streamed" in ctx.scenario.tags:
        fail(
            ctx,
            "the step was retried after its output had reached on_text_delta: the user sees the text twice",
            expected=f"{wanted} request(s): no retry once output was streamed",
            actual=f"{sent} requests; deltas: {ctx.main.trace.text_deltas()!r:.200}",
        )
    if sent != wanted:
        fail(
            ctx,
            f"max_retries={ctx.scenario.config.get('max_retries')}: expected {wanted} request(s)",
            expected=wanted,
            actual=sent,
        )
    if ctx.scenario.expect.type != "error" and isinstance(ctx.result, ErrorStepResult):
        fail(ctx, "the retried step should have succeeded", actual=short(ctx.result))


@check("CFG-04", applies=named("retry_exhausted"), requires=("retries",))
def exhausted_retries_not_retryable(ctx: CheckContext) -> None:
    if _error(ctx).retryable is not False:
        fail(
            ctx,
            "an error that survived the adapter's own retries should be retryable=False",
            expected=False,
            actual=_error(ctx).retryable,
        )


RETRY_AFTER_SLACK_S = 0.5
"""Measured from request to request, a wait of exactly the bound also holds the 429's handling (loop turns)."""


@check(
    "CFG-05",
    applies=named("retry_429_then_success", "retry_after_too_long", "retry_after_seconds"),
    requires=("retries",),
)
def retry_after_honoured(ctx: CheckContext) -> None:
    """A hint within the bound is waited for (in the loop's seconds); a longer one is capped at the bound
    (``RETRY_AFTER_BOUND_S``), inclusive. A step still waiting at the scenario's limit (the bound plus
    ``--helix-timeout``) is reported here as its root cause (checks/root.py)."""
    requests = ctx.sent()
    first = ctx.scenario.exchanges[0].response
    hint_ms = first.retry_hint_ms if isinstance(first, HttpError) else None
    declined = (  # a hint over the bound may be declined: the 429 surfaced, as the openai SDK does
        hint_ms is not None
        and hint_ms / 1000 > RETRY_AFTER_BOUND_S
        and len(requests) == 1
        and isinstance(ctx.result, ErrorStepResult)
    )
    if declined:
        return
    if len(requests) < 2 or hint_ms is None:
        fail(ctx, "expected a retry after the 429", expected=2, actual=len(requests))
    header = (
        "retry-after-ms" if isinstance(first, HttpError) and first.retry_after_s is None else "retry-after"
    )
    waited = requests[1].at - requests[0].at
    hint = hint_ms / 1000
    if hint > RETRY_AFTER_BOUND_S:
        if waited > RETRY_AFTER_BOUND_S + RETRY_AFTER_SLACK_S:
            fail(
                ctx,
                f"the retry waited {waited:.1f} s for a retry hint of {hint:g} s: no wait between attempts may "
                f"exceed {RETRY_AFTER_BOUND_S:g} s (bounded)",
                expected=f"<= {RETRY_AFTER_BOUND_S:g} s",
                actual=f"{waited:.1f} s",
            )
        return
    if waited < hint * 0.9:
        fail(
            ctx,
            f"the retry came before the delay the provider asked for ({header})",
            expected=f">= {hint_ms} ms",
            actual=f"{waited * 1000:.0f} ms",
        )


@check("NT-01", needs_result=False, ahead=corpus_ahead)
def generate_step_never_raises(ctx: CheckContext) -> None:
    run = ctx.main
    if run.setup_error:
        fail(ctx, run.setup_error)
    if run.raised is not None:
        fail(
            ctx,
            "generate_step raised instead of returning an ErrorStepResult",
            expected="a StepResult",
            actual=f"{type(run.raised).__name__}: {run.raised}",
        )
    if run.escaped:
        fail(ctx, escaped_message(run.escaped), expected="no error escaping the step", actual=run.escaped)
    if corpus_base(ctx.scenario, ctx.profile):  # and under every generated fault of this stream
        check_corpus(ctx)


def escaped_message(escaped: list[str]) -> str:
    """NT-01's message for errors that escaped the step by another way than its return (drivers report them)."""
    more = f" (and {len(escaped) - 1} more)" if len(escaped) > 1 else ""
    return (
        f"an error escaped the step: {escaped[0]}{more}. Nothing awaited or caught it; Node ends the process on "
        "an unhandled rejection or an exception from a timer by default, so in an agent it is a crash"
    )


def _mutation_applies(scenario: Scenario, profile: WireProfile) -> bool:
    """Streams, on the representative of each delivery shape (``draws.py``): the parser a corruption reaches
    is the same for every stream of one shape (recorded streams are broken by the fault corpus, judged by
    ERR-03/04/05 and NT-01)."""
    return (
        has_recorded_stream(scenario, profile)
        and not scenario.abort
        and "retry" not in scenario.tags
        and representative(scenario, profile)
    )


Mutation = tuple[int, list[tuple[int, int]]]


def _mutations(ctx: CheckContext) -> st.SearchStrategy[Mutation]:
    """Where the body is truncated, and up to four bytes overwritten."""
    body = max((len(i.body) for i in ctx.session.interactions()), default=1)
    truncations = st.integers(min_value=0, max_value=body)
    if ctx.profile.checksummed:  # half the draws keep the whole body: flips alone, which its CRCs must catch
        truncations = st.one_of(st.just(body), truncations)
    return st.tuples(
        truncations,
        st.lists(
            st.tuples(st.integers(min_value=0, max_value=max(body - 1, 0)), st.integers(0, 255)), max_size=4
        ),
    )


def _mutated(mutation: Mutation) -> MutatedPlan:
    return MutatedPlan(truncate_at=mutation[0], flips=tuple(mutation[1]))


def _mutations_ahead(ctx: CheckContext) -> None:
    for mutation in examples_of(ctx, _mutations(ctx)):
        ctx.session.ahead(RunOptions(plan=_mutated(mutation)))
    corpus_ahead(ctx)


def _checksum_reference(ctx: CheckContext) -> dict[str, object] | None:
    """Where every message carries a checksum (``WireProfile.checksummed``), the unfaulted result a flipped
    byte must never turn into another success; None where the framing has none or the unfaulted run failed."""
    if not ctx.profile.checksummed or isinstance(ctx.result, ErrorStepResult):
        return None
    if len(ctx.session.interactions()) != 1:  # the plan mutates every body: judged where there is one
        return None
    if not isinstance(ctx.result, STEP_RESULT_TYPES):
        return None
    return describe_result(ctx.result, run_ids(ctx))


def _passes_a_changed_byte(
    ctx: CheckContext, plan: MutatedPlan, result: object, reference: dict[str, object]
) -> bool:
    """Whether ``plan`` changed a byte of an otherwise whole body and the step still returned a success other
    than the unfaulted one: data that failed its message CRC was used (truncations are ERR-04's)."""
    body = ctx.session.interactions()[0].body
    if plan.truncate_at < len(body) or not any(body[o] != v for o, v in plan.flips if o < len(body)):
        return False
    return not isinstance(result, ErrorStepResult) and describe_result(result, run_ids(ctx)) != reference


@check("NT-02", applies=_mutation_applies, ahead=_mutations_ahead)
def corrupted_streams_still_give_a_result(ctx: CheckContext) -> None:
    reference = _checksum_reference(ctx)

    def probe(mutation: Mutation) -> str | None:
        plan = _mutated(mutation)
        run = ctx.session.run(RunOptions(plan=plan), keep=False)
        if run.raised is not None or run.timed_out or not isinstance(run.result, STEP_RESULT_TYPES):
            what = (
                repr(run.raised) if run.raised else "timed out" if run.timed_out else repr(run.result)[:100]
            )
            shrunk.append(plan)
            return f"{plan}: {what}"
        if reference is not None and _passes_a_changed_byte(ctx, plan, run.result, reference):
            shrunk.append(plan)
            return f"{plan}: a success that differs from the unfaulted result ({short(run.result)[:100]})"
        return None

    shrunk: list[MutatedPlan] = []
    counterexample = falsify(ctx, _mutations(ctx), probe)
    if counterexample is not None:
        last = shrunk[-1]
        fail(
            ctx,
            "a truncated or corrupted stream made the step raise, hang or return garbage"
            + (
                " (changed bytes fail the message CRC: an error, or the unfaulted result)"
                if reference
                else ""
            ),
            actual=counterexample,
            details="minimal example after shrinking (the body truncated at truncate_at, bytes overwritten at flips)",
            replay=" ".join(
                [f"--truncate-at {last.truncate_at}", *(f"--flip {o}:{b}" for o, b in last.flips)]
            ),
        )
    if corpus_base(ctx.scenario, ctx.profile):  # the generated faults of this stream, stalls aside
        check_corpus(ctx)


CANCEL_AFTER_CHUNKS = 2
"""NT-03 cancels the task running the step once this many chunks of the response were delivered."""


CANCEL_RUN = RunOptions(cancel_after_chunks=CANCEL_AFTER_CHUNKS)


@check(
    "NT-03",
    applies=named("text_basic", "tool_call_parallel"),
    ahead=lambda ctx: ctx.session.ahead(CANCEL_RUN),
)
def cancellation_is_not_swallowed(ctx: CheckContext) -> None:
    run = ctx.session.run(CANCEL_RUN)
    if run.cancel_latency_s is None and not run.timed_out:  # the step was over before the cancel point
        raise NotApplicable(
            f"not judged on this run: the step ended before {CANCEL_AFTER_CHUNKS} chunks of the response were "
            f"delivered ({len(run.trace.of('chunk'))} were), so nothing was cancelled"
        )
    if run.cancelled is not True:
        outcome = short(run.result) if run.results else repr(run.raised) if run.raised else "still running"
        fail(
            ctx,
            Said(
                "cancelling the task running generate_step must end it with asyncio.CancelledError",
                "aborting the step's signal mid-stream (how a JavaScript step is cancelled) must settle it at "
                "once with an error result, without reading the rest of the response: it "
                + ("rejected" if run.raised else "was still running" if not run.results else "read on"),
            ),
            expected=Said("CancelledError", "an error result (request_aborted), before the last chunk"),
            actual=outcome,
            details=run.trace.describe(),
        )
    if run.cancel_latency_s is not None and run.cancel_latency_s > 1.0:
        fail(ctx, "cancellation took too long", expected="< 1 s", actual=f"{run.cancel_latency_s:.2f} s")


@check("NT-04", applies=either(tagged("stall"), stall_base), needs_result=False, ahead=corpus_ahead)
def stalled_stream_does_not_hang(ctx: CheckContext) -> None:
    """Every adapter: the stalls nothing aborts (``stall_read_timeout``) and the connections held open after
    the terminal event, judged for a hang (where the step returned is NT-05's); adapters declaring 'abort'
    also the stalls the harness aborts."""
    if stall_base(ctx.scenario, ctx.profile):  # this success stream held open, or stalled then aborted
        check_corpus(ctx)
        return
    if ctx.main.timed_out:
        ignored = ", and the abort was ignored" if ctx.scenario.abort else ""
        fail(
            ctx,
            f"a stalled stream hung the step past the timeout: no read timeout ended it{ignored}",
            expected=Said(
                f"return within {ctx.session.settings.timeout} s (read timeout: AdapterContext.timeout)",
                f"settle within {ctx.session.settings.timeout} s (read timeout: context.timeoutMs)",
            ),
            actual="timed out",
        )
    _code_is_expected(ctx)


@check("NT-05", applies=stall_base, ahead=corpus_ahead)
def returns_on_the_terminal_event(ctx: CheckContext) -> None:
    """Every adapter: a connection held open after the terminal event or an error event; the step returns on
    the event, not when its read of the open connection times out (a step that never returns is NT-04's)."""
    check_corpus(ctx)


@check("AB-01", applies=named("abort_before"), requires=("abort",))
def already_aborted_sends_nothing(ctx: CheckContext) -> None:
    if ctx.sent():
        fail(
            ctx,
            "a request was sent although the signal was already aborted",
            expected=0,
            actual=len(ctx.sent()),
        )
    _code_is_expected(ctx)


@check("AB-02", applies=named("abort_midstream", "stall_midstream"), requires=("abort",))
def abort_midstream_returns_promptly(ctx: CheckContext) -> None:
    trace = ctx.main.trace
    abort = next(iter(trace.of("abort")), None)
    returned = trace.returned_at()
    if abort is None or returned is None:
        fail(ctx, "the step did not return after the abort", details=trace.describe())
    if any(e.last for e in trace.of("chunk")):
        fail(
            ctx,
            "the step returned only after the rest of the response was delivered",
            details=trace.describe(),
        )
    if not trace.of("response_closed"):
        fail(ctx, "the aborted response was never closed", details=trace.describe())
    late = [e.name for e in trace.callbacks() if e.seq > abort.seq and e.name != "on_error"]
    if late:
        fail(ctx, "callbacks followed the abort", actual=late, details=trace.describe())
    if read_until_timeout(ctx.main):
        fail(
            ctx,
            "the abort was noticed only when the stalled read timed out, not when it fired",
            expected="return at the abort",
            details=trace.describe(),
        )
    _code_is_expected(ctx)
    if ctx.scenario.id == "abort_midstream":
        _no_callback_after_an_abort_from_a_callback(ctx)


ABORT_ON_TEXT_DELTA = 2
"""AB-02's second run aborts from inside this on_text_delta, the whole body delivered in one read."""


def _no_callback_after_an_abort_from_a_callback(ctx: CheckContext) -> None:
    """The caller aborts from inside on_text_delta while the events read with that delta's are unhandled:
    none of them may reach a callback (an adapter that checks the signal only between reads fires them all)."""
    run = ctx.session.run(RunOptions(plan=SplitPlan(cuts=()), abort_on_text_delta=ABORT_ON_TEXT_DELTA))
    abort = next(iter(run.trace.of("abort")), None)
    if abort is None:
        return  # fewer text deltas than that: STR-01/STR-02 say why
    late = [e.name for e in run.trace.callbacks() if e.seq > abort.seq and e.name != "on_error"]
    if late:
        fail(
            ctx,
            "callbacks followed an abort fired from inside on_text_delta: the events already read were "
            "still handed out (the signal is checked only between reads)",
            actual=late,
            details="the whole body was delivered in one read; the harness aborted from its "
            f"on_text_delta call #{ABORT_ON_TEXT_DELTA}\n" + run.trace.describe(),
        )


@check("AB-03", applies=tagged("abort"), requires=("abort",))
def abort_error_is_terminal(ctx: CheckContext) -> None:
    error = _error(ctx, owner=False)
    if error.code == "request_aborted" and error.retryable is not False:
        fail(ctx, "request_aborted must be retryable=False", expected=False, actual=error.retryable)
    if ctx.scenario.id == "abort_before" and error.code != "request_aborted":
        fail(
            ctx, "an abort must be reported as request_aborted", expected="request_aborted", actual=error.code
        )
    aborts = ctx.main.trace.of("abort")
    after = [r for r in ctx.main.trace.of("request") if aborts and r.seq > aborts[0].seq]
    if after:
        fail(ctx, "the adapter retried after the abort", expected=0, actual=len(after))
