"""STR: streaming callbacks — incremental, complete, ordered, awaited, and invisible in the result."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

from ..contract import ErrorStepResult, ToolCallsStepResult
from ..contract.results import STEP_RESULT_TYPES
from ..profiles.base import WireProfile
from ..replay.callbacks import SLOW_CALLBACK_S, CallbackMode
from ..replay.delivery import SplitPlan
from ..replay.judging import last_text_event
from ..replay.runner import RunOptions, ScenarioRun
from ..replay.trace import TraceEvent
from ..scenarios.model import Text, Thinking, ToolCall
from .common import (
    ToolCallIds,
    both,
    describe_result,
    either,
    error_message,
    expects,
    has_part,
    has_recorded_stream,
    not_,
    run_ids,
    short,
    tagged,
    text_events,
    where_raised,
)
from .context import CheckContext
from .draws import broken_here, representative
from .properties import examples_of, falsify
from .registry import check, fail

_CONTENT = ("on_text_delta", "on_thinking", "on_tool_call")


def _callback_sequence(run: ScenarioRun, ids: ToolCallIds) -> list[tuple[str, tuple[Any, ...]]]:
    """The callbacks of a run, comparable with another run's: tool-call ids named by ``ids`` (the same
    instance that named the run's result, so on_tool_call's id still has to be the result's)."""
    return [(e.name, tuple(_plain(a, ids) for a in e.args)) for e in run.trace.callbacks()]


def _plain(value: Any, ids: ToolCallIds) -> Any:
    if hasattr(value, "model_dump"):
        data = value.model_dump(mode="json")
        if isinstance(data, dict) and "id" in data and "arguments" in data:  # a tool call (on_tool_call)
            data["id"] = ids(data["id"])
        return repr(data)
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def comparable_run(ctx: CheckContext, run: ScenarioRun) -> tuple[dict[str, Any], list[Any]]:
    """A run's result and callback sequence as STR-10 compares them across runs."""
    ids = run_ids(ctx)
    return describe_result(run.result, ids), _callback_sequence(run, ids)


def _successful(ctx: CheckContext) -> Any:
    return ctx.result if not isinstance(ctx.result, ErrorStepResult) else None


@check("STR-01", applies=lambda s, p: s.expect.type in ("text", "tool_calls") and text_events(s) > 0)
def text_deltas_concatenate_to_the_content(ctx: CheckContext) -> None:
    deltas = ctx.main.trace.text_deltas()
    if any(d == "" for d in deltas):
        fail(ctx, "on_text_delta was called with an empty delta", actual=deltas)
    content = getattr(ctx.result, "content", None) or ""
    if "".join(deltas) != content:
        fail(
            ctx,
            "the on_text_delta deltas do not concatenate to the returned content",
            expected=content,
            actual="".join(deltas),
            details=f"deltas: {deltas!r:.400}",
        )
    expected = ctx.scenario.expect.content
    if expected is not None and content != expected:
        fail(
            ctx,
            "the final text is not the text the provider streamed (the deltas and the content agree with each "
            "other, but both are wrong)",
            expected=expected,
            actual=content,
            details=f"deltas: {deltas!r:.400}",
        )


def _last_text_event(ctx: CheckContext) -> tuple[int, int] | None:
    """(interaction, event index) of the event that carries the last text delta of the script."""
    return last_text_event(ctx.scenario, ctx.profile, ctx.session.interactions())


@check("STR-02", applies=lambda s, p: s.expect.type in ("text", "tool_calls") and text_events(s) >= 2)
def callbacks_fire_as_data_arrives(ctx: CheckContext) -> None:
    trace = ctx.main.trace
    first = next(iter(trace.callbacks("on_text_delta")), None)
    if first is None:
        fail(ctx, "on_text_delta was never called")
    last_text = _last_text_event(ctx)
    chunks = trace.of("chunk")
    if last_text is not None:
        interaction, event_index = last_text
        boundary = next(
            (e for e in chunks if e.interaction == interaction and e.chunk_index == event_index), None
        )
        what = "the event carrying the last text delta"
    else:
        boundary = next((e for e in chunks if e.last), None)
        what = "the last chunk of the response"
    if boundary is not None and first.seq > boundary.seq:
        fail(
            ctx,
            "the first on_text_delta came only after all the text had arrived (callbacks buffered)",
            expected=f"first delta before {what}",
            actual=f"first delta at trace event #{first.seq}, {what} at #{boundary.seq}",
            details=trace.describe(),
        )


@check("STR-03", applies=lambda s, p: s.expect.thinking is not None, requires=("thinking",))
def thinking_callbacks_match_the_thinking(ctx: CheckContext) -> None:
    calls = ctx.main.trace.callbacks("on_thinking")
    partial = [str(e.args[0]) for e in calls if len(e.args) > 1 and e.args[1] is False]
    completes = [e for e in calls if len(e.args) > 1 and e.args[1] is True]
    thinking = getattr(getattr(ctx.result, "thinking", None), "content", None)
    if "".join(partial) != thinking:
        fail(
            ctx,
            "on_thinking(delta, False) calls do not concatenate to thinking.content",
            expected=thinking,
            actual="".join(partial),
        )
    if len(completes) != 1 or calls[-1] is not completes[0]:
        fail(
            ctx,
            "the thinking block must end with exactly one on_thinking(_, True), after its partial calls",
            expected="one final on_thinking(_, True)",
            actual=[(e.args[1] if len(e.args) > 1 else None) for e in calls],
        )


@check(
    "STR-04",
    applies=either(
        lambda s, p: has_part(Thinking)(s, p) and s.expect.type != "error",
        lambda s, p: has_part(Text)(s, p) and has_part(ToolCall)(s, p) and s.expect.type == "tool_calls",
    ),
)
def callbacks_follow_the_provider_order(ctx: CheckContext) -> None:
    events = [e for e in ctx.main.trace.callbacks() if e.name in _CONTENT]
    rank = {"on_thinking": 0, "on_text_delta": 1, "on_tool_call": 2}
    order = [rank[e.name] for e in events]
    if order != sorted(order):
        fail(
            ctx,
            "callbacks are out of the provider's event order (thinking, then text, then tool calls)",
            expected="thinking… text… tool calls",
            actual=[e.name for e in events],
        )


@check("STR-05", applies=expects("tool_calls"))
def on_tool_call_once_per_returned_call(ctx: CheckContext) -> None:
    result = ctx.result
    calls = result.tool_calls if isinstance(result, ToolCallsStepResult) else []
    seen = [e.args[0] for e in ctx.main.trace.callbacks("on_tool_call")]
    got = [(getattr(c, "id", None), getattr(c, "name", None), getattr(c, "arguments", None)) for c in seen]
    want = [(c.id, c.name, c.arguments) for c in calls]
    if got != want:
        fail(
            ctx,
            "on_tool_call must be called exactly once per returned tool call, same id/name/arguments, "
            "in result order",
            expected=want,
            actual=got,
        )


@check("STR-06")
def on_error_exactly_once_for_errors(ctx: CheckContext) -> None:
    errors = [e.args[0] if e.args else None for e in ctx.main.trace.callbacks("on_error")]
    result = ctx.result
    if isinstance(result, ErrorStepResult):
        if len(errors) != 1 or errors[0] is not result.error:
            fail(
                ctx,
                "on_error must be called exactly once, with the returned error",
                expected=[result.error],
                actual=errors,
            )
    elif errors:
        fail(ctx, "on_error was called although the step succeeded", expected=[], actual=errors)


@check("STR-07")
def no_callback_after_return(ctx: CheckContext) -> None:
    late = ctx.main.trace.late_callbacks()
    if late:
        fail(
            ctx,
            "callbacks were invoked after generate_step returned",
            actual=[e.name for e in late],
            details=ctx.main.trace.describe(),
        )


SLOW_CALLBACK_SCENARIOS = frozenset({"text_basic", "tool_call_parallel", "thinking_text"})
"""Where callbacks are also made slow (STR-08/09): a few scenarios, since every callback costs real time."""


def _slow_ahead(ctx: CheckContext) -> None:
    if ctx.scenario.id in SLOW_CALLBACK_SCENARIOS:
        ctx.session.ahead(RunOptions(callbacks="slow"))


@check("STR-08", ahead=_slow_ahead)
def coroutine_callbacks_are_awaited_in_turn(ctx: CheckContext) -> None:
    runs = [("", ctx.main)]
    if ctx.scenario.id in SLOW_CALLBACK_SCENARIOS:
        runs.append(
            (
                f" (with callbacks that take {SLOW_CALLBACK_S * 1000:.0f} ms)",
                ctx.session.run(RunOptions(callbacks="slow")),
            )
        )
    for how, run in runs:
        events = [e for e in run.trace.events if e.kind in ("callback", "callback_done", "returned")]
        returned = next((i for i, e in enumerate(events) if e.kind == "returned"), len(events) - 1)
        open_call: TraceEvent | None = None
        for event in events[: returned + 1]:  # a callback made after the return is STR-07's
            if event.kind == "callback_done":
                open_call = None
            elif open_call is not None:
                fail(
                    ctx,
                    f"{open_call.name} returned a coroutine that was not awaited before the next "
                    f"{'callback' if event.kind == 'callback' else 'return'}{how}",
                    details=run.trace.describe(),
                )
            elif event.kind == "callback":
                open_call = event


# Not on retry scenarios: each variant run would wait out the provider's retry delay again (a whole second
# for Anthropic) to judge callbacks that every other scenario judges too; nor on stalls, for their read timeout.
def _callback_styles(ctx: CheckContext) -> list[tuple[CallbackMode, RunOptions]]:
    modes: tuple[CallbackMode, ...] = ("sync", "none")
    if ctx.scenario.id in SLOW_CALLBACK_SCENARIOS:
        modes += ("slow",)
    return [(mode, RunOptions(callbacks=mode, with_signal=mode != "none")) for mode in modes]


def _callback_styles_ahead(ctx: CheckContext) -> None:
    for _, options in _callback_styles(ctx):
        ctx.session.ahead(options)


STYLE_WORDS: dict[str, str] = {
    "sync": "with plain (sync) callbacks",
    "none": "with callbacks=None",
    "slow": "with slow callbacks (20 ms each)",
}
STYLE_HINTS: dict[tuple[str, bool], str] = {
    ("sync", True): "It awaits what a callback returns, and a sync callback returns None: call the callback, "
    "then await its result only when inspect.isawaitable(result).",
    ("none", True): "It calls a callback without checking that input.callbacks (and that callback) is set: "
    "every callback is optional.",
    ("slow", True): "Time spent in callbacks counts against a timeout of the adapter's (a read or idle "
    "timeout), or callbacks run concurrently with the stream and see it end.",
    (
        "sync",
        False,
    ): "A sync callback's return value (None) steers the adapter (`text = await cb(d) or text`), "
    "or work is skipped when a callback is not a coroutine function.",
    ("slow", False): "Slow callbacks change what is read: a timeout counts the callbacks' time, or a race "
    "between reading and calling back drops or reorders deltas.",
}
"""What a difference under one callback style usually comes from, by (style, the step raised or hung); the
clause's common mistakes cover callbacks=None changing the result."""


@check(
    "STR-09",
    applies=both(not_(tagged("abort", "retry", "stall")), representative),
    ahead=_callback_styles_ahead,
)
def result_independent_of_callback_style(ctx: CheckContext) -> None:
    reference = describe_result(ctx.result, run_ids(ctx))
    for mode, options in _callback_styles(ctx):
        run = ctx.session.run(options)
        words = STYLE_WORDS.get(mode, f"with {mode} callbacks")
        if run.raised is not None or run.timed_out:
            what = (
                f"raised {type(run.raised).__name__}: {error_message(run.raised)}" if run.raised else "hung"
            )
            fail(
                ctx,
                f"{words} the step {what} (with coroutine callbacks it returns a StepResult)",
                expected=reference,
                actual=what,
                details=where_raised(run.raised) if run.raised is not None else run.trace.describe(),
                hint=STYLE_HINTS.get((mode, True), ""),
            )
        other = describe_result(run.result, run_ids(ctx))
        if other != reference:
            fail(
                ctx,
                f"the result changes {words}",
                expected=reference,
                actual=other,
                hint=STYLE_HINTS.get((mode, False), ""),
            )


BYTEWISE_PREFIX = 1536
_CONTINUATION_BYTE = re.compile(rb"[\x80-\xbf]")


def explicit_cuts(
    body: bytes, profile: WireProfile, *, every_byte: bool
) -> list[tuple[str, tuple[int, ...]]]:
    """The splits that break naive parsers, tried before the random ones (STR-10): the framing's own (the
    profile's: SSE separators, event-stream preludes and CRCs) and multi-byte UTF-8 characters, on every
    stream (they depend on its bytes); with ``every_byte``, one byte per chunk over the body's first events."""
    multibyte = tuple(m.start() for m in _CONTINUATION_BYTE.finditer(body, 1))
    plans = []
    if every_byte:
        # Over the first events only: a parser that breaks on one-byte chunks breaks there already, and
        # splitting whole large bodies this way costs more than the rest of the suite.
        plans.append(
            ("every byte its own chunk (first 1.5 KB)", tuple(range(1, min(len(body), BYTEWISE_PREFIX))))
        )
    plans.extend(profile.framing_cuts(body))
    if multibyte:
        plans.append(("cut inside every multi-byte UTF-8 character", multibyte))
    return plans


def cuts_argument(cuts: tuple[int, ...]) -> str:
    """``--cuts`` of ``helix-conformance replay``: the offsets, or ``every-byte:N`` for 1..N-1."""
    if len(cuts) > 24 and cuts == tuple(range(1, len(cuts) + 1)):
        return f"every-byte:{len(cuts) + 1}"
    return ",".join(map(str, cuts))


def _every_byte(ctx: CheckContext) -> bool:
    """One byte per chunk is chunk reassembly's test, which reads a stream's framing, not its content: drawn
    where the fault corpus breaks streams (draws.py), on each shape's representative and on the first
    recorded stream of each shape per server and source."""
    return broken_here(ctx.scenario, ctx.profile)


def _random_cuts(ctx: CheckContext) -> st.SearchStrategy[list[int]]:
    size = max((len(i.body) for i in ctx.session.interactions()), default=0)
    return st.lists(st.integers(min_value=1, max_value=max(size - 1, 1)), max_size=24)


def _split(cuts: list[int]) -> RunOptions:
    return RunOptions(plan=SplitPlan(tuple(sorted(set(cuts)))))


def _cuts_ahead(ctx: CheckContext) -> None:
    bodies = [i.body for i in ctx.session.interactions()]
    for _, cuts in explicit_cuts(max(bodies, key=len, default=b""), ctx.profile, every_byte=_every_byte(ctx)):
        ctx.session.ahead(RunOptions(plan=SplitPlan(cuts)))
    if representative(ctx.scenario, ctx.profile):
        for random_cuts in examples_of(ctx, _random_cuts(ctx)):
            ctx.session.ahead(_split(random_cuts))


@check(
    "STR-10",
    applies=lambda s, p: has_recorded_stream(s, p) and not s.abort and "retry" not in s.tags,
    ahead=_cuts_ahead,
)
def result_independent_of_chunk_boundaries(ctx: CheckContext) -> None:
    reference = comparable_run(ctx, ctx.main)
    bodies = [i.body for i in ctx.session.interactions()]
    for label, cuts in explicit_cuts(
        max(bodies, key=len, default=b""), ctx.profile, every_byte=_every_byte(ctx)
    ):
        run = ctx.session.run(RunOptions(plan=SplitPlan(cuts)), keep=False)
        got = comparable_run(ctx, run)
        if got != reference:
            fail(
                ctx,
                f"the result or the callback sequence changes with this split: {label}",
                expected=reference,
                actual=got,
                replay=f"--cuts {cuts_argument(cuts)}",
            )

    def probe(cuts: list[int]) -> str | None:
        options = _split(cuts)
        run = ctx.session.run(options, keep=False)
        got = comparable_run(ctx, run)
        if got == reference:
            return None
        assert isinstance(options.plan, SplitPlan)
        shrunk.append(options.plan.cuts)
        return f"with cuts at byte offsets {list(options.plan.cuts)}: {got!r:.400}"

    shrunk: list[tuple[int, ...]] = []

    # Random splits on the representative of each delivery shape (draws.py); the framing's and multi-byte cuts
    # above on every stream.
    if not representative(ctx.scenario, ctx.profile):
        return
    counterexample = falsify(ctx, _random_cuts(ctx), probe)
    if counterexample is not None:
        fail(
            ctx,
            "the result or the callback sequence changes when the response bytes are split differently",
            expected=reference,
            actual=counterexample,
            details="shrunk by Hypothesis; the byte offsets reproduce it",
            replay="--cuts " + ",".join(map(str, shrunk[-1])) if shrunk else "",
        )


RAISING_CALLBACKS = RunOptions(callbacks="raising")


ON_ERROR_RAISES = ("http_500", "midstream_error", "connect_error")
"""Error scenarios STR-11 runs with raising callbacks, one per way an error reaches ``on_error`` (an HTTP
status, an error inside the stream, a transport failure): the ``on_error`` that raises must not make the step
raise either."""


@check(
    "STR-11",
    applies=lambda s, p: (
        (s.expect.type != "error" or s.id in ON_ERROR_RAISES)
        and not s.abort
        and "retry" not in s.tags
        and representative(s, p)
    ),
    ahead=lambda ctx: ctx.session.ahead(RAISING_CALLBACKS),
)
def raising_callbacks_do_not_break_the_step(ctx: CheckContext) -> None:
    """Two answers are allowed (docs/contract.md#str-11): the result of the run whose callbacks do not raise
    (the callback's error ignored, or logged), or an ErrorStepResult that carries the callback's exception
    (NT-01 lists callback errors among the failures returned as errors). A success that differs from the
    normal run's, or an error that hides the callback's exception, is not."""
    run = ctx.session.run(RAISING_CALLBACKS)
    which = "an on_error that raises" if ctx.scenario.expect.type == "error" else "a callback that raises"
    if run.raised is not None:
        fail(ctx, f"{which} made generate_step raise", actual=repr(run.raised))
    if run.timed_out:
        fail(ctx, f"with {which} the step did not return in time")
    result = run.result
    if not isinstance(result, STEP_RESULT_TYPES):
        fail(ctx, f"with {which} the step returned no valid StepResult", actual=repr(result)[:200])
    if ctx.scenario.expect.type == "error" and not isinstance(result, ErrorStepResult):
        fail(
            ctx,
            "with an on_error that raises the step no longer returned its ErrorStepResult",
            expected="the ErrorStepResult the step returns with quiet callbacks",
            actual=short(result),
        )
    if isinstance(result, ErrorStepResult):
        if not isinstance(ctx.result, ErrorStepResult) and not _carries_the_callbacks_error(result.error):
            fail(
                ctx,
                f"with {which} the step returned an error that does not carry the callback's "
                "exception: the caller cannot tell its own bug from a provider failure",
                expected=f"the normal run's result, or an ErrorStepResult caused by {CALLBACK_RAISED}",
                actual=short(result),
            )
        return
    if describe_result(result, run_ids(ctx)) != describe_result(ctx.result, run_ids(ctx)):
        fail(
            ctx,
            f"with {which} the step returned another result than with callbacks that do not raise: the "
            "callback's exception cut the response short or changed it",
            expected=short(ctx.result),
            actual=short(result),
        )


CALLBACK_RAISED = "CallbackRaised"
"""The class of the exceptions the harness's raising callbacks raise (``replay/callbacks.py``)."""


def _carries_the_callbacks_error(error: BaseException) -> bool:
    """Whether the error, its message or a cause in its chain is the callback's own exception."""
    seen: BaseException | None = error
    for _ in range(8):
        if seen is None:
            return False
        if type(seen).__name__ == CALLBACK_RAISED or "raises on purpose (STR-11)" in str(seen):
            return True
        seen = getattr(seen, "cause", None) or seen.__cause__ or seen.__context__
    return False
