"""RES, FIN and STOP: the shape and meaning of the returned StepResult."""

from __future__ import annotations

from pydantic import TypeAdapter, ValidationError

from ..contract import (
    STOP_REASONS,
    ErrorStepResult,
    StepResult,
    StructuredOutputStepResult,
    TextStepResult,
    ToolCallsStepResult,
)
from ..contract.results import STEP_RESULT_TYPES
from ..scenarios.model import RedactedThinking, Refusal, Scenario
from .common import (
    both,
    describe_result,
    either,
    expects,
    has_part,
    json_equal,
    named,
    not_,
    short,
    streamed_parts,
    tagged,
)
from .context import CheckContext
from .faults import check_corpus, corpus_ahead, corpus_base
from .registry import check, fail

_STEP_RESULT = TypeAdapter(StepResult)


def _calls(ctx: CheckContext) -> ToolCallsStepResult:
    result = ctx.result
    if not isinstance(result, ToolCallsStepResult):
        fail(ctx, "expected a ToolCallsStepResult", expected=ctx.scenario.expect.type, actual=short(result))
    return result


@check("RES-01")
def result_is_a_step_result(ctx: CheckContext) -> None:
    result = ctx.result
    if not isinstance(result, STEP_RESULT_TYPES):
        fail(
            ctx,
            "generate_step returned something that is not one of the four StepResult types",
            expected="TextStepResult | ToolCallsStepResult | StructuredOutputStepResult | ErrorStepResult",
            actual=f"{type(result).__name__}: {result!r:.200}",
        )
    try:
        _STEP_RESULT.validate_python(dict(result), strict=False)
    except ValidationError as exc:
        fail(
            ctx,
            f"the {type(result).__name__} does not validate (built with model_construct?)",
            actual=str(exc)[:500],
        )


@check("RES-02", applies=expects("text", "tool_calls"))
def should_stop_and_stop_reason_fit_the_type(ctx: CheckContext) -> None:
    result = ctx.result
    if isinstance(result, TextStepResult) and result.should_stop is not True:
        fail(ctx, "a text result must have should_stop=True", expected=True, actual=result.should_stop)
    if isinstance(result, ToolCallsStepResult) and (result.should_stop, result.stop_reason) != (
        False,
        "tool_use",
    ):
        fail(
            ctx,
            "a tool-calls result must have should_stop=False and stop_reason='tool_use'",
            expected=(False, "tool_use"),
            actual=(result.should_stop, result.stop_reason),
        )
    if not isinstance(result, (TextStepResult, ToolCallsStepResult)):
        fail(
            ctx,
            "expected a text or tool-calls result",
            expected=ctx.scenario.expect.type,
            actual=short(result),
        )


@check("RES-03", applies=expects("tool_calls"))
def tool_call_ids_present_unique_and_the_providers(ctx: CheckContext) -> None:
    calls = _calls(ctx).tool_calls
    if not calls:
        fail(ctx, "tool_calls is empty", expected="at least one call", actual=[])
    ids = [c.id for c in calls]
    if any(not i for i in ids) or len(set(ids)) != len(ids):
        fail(ctx, "every tool call needs a non-empty id, unique within the step", actual=ids)
    provider_ids = [c.id for c in ctx.expected_tool_calls()]
    if all(provider_ids) and ids != provider_ids:
        fail(ctx, "tool call ids must be the provider's ids", expected=provider_ids, actual=ids)


@check("RES-04", applies=expects("tool_calls", "structured_output"))
def arguments_are_parsed_json_objects(ctx: CheckContext) -> None:
    result = ctx.result
    expect = ctx.scenario.expect
    if isinstance(result, StructuredOutputStepResult):
        if not json_equal(result.output, expect.output):
            fail(
                ctx,
                "the structured output is not the parsed arguments, JSON types kept",
                expected=expect.output,
                actual=result.output,
            )
        return
    calls = _calls(ctx).tool_calls
    for got, want in zip(calls, expect.tool_calls):
        if not isinstance(got.arguments, dict):
            fail(ctx, f"arguments of {got.name} are not a dict", actual=got.arguments)
        if not json_equal(got.arguments, want.arguments):
            fail(
                ctx,
                f"arguments of {got.name} differ (types must be kept: numbers, booleans, null)",
                expected=want.arguments,
                actual=got.arguments,
            )


@check("RES-05", applies=named("tool_call_no_arguments", "tool_call_empty_object"))
def empty_arguments_parse_to_empty_object(ctx: CheckContext) -> None:
    calls = _calls(ctx).tool_calls
    if [c.arguments for c in calls] != [{}] * len(calls) or not calls:
        fail(
            ctx,
            'an empty argument string ("" or "{}") must parse to {}',
            expected=[{}],
            actual=[c.arguments for c in calls],
        )


@check("RES-06", applies=lambda s, p: s.expect.type == "tool_calls" and bool(s.expect.tool_calls))
def parallel_tool_calls_all_returned_in_order(ctx: CheckContext) -> None:
    calls = _calls(ctx).tool_calls
    expected = ctx.expected_tool_calls()
    if len(expected) == 1:  # "all returned": the one call, under its name (its arguments: RES-04, id: RES-03)
        if [c.name for c in calls] != [expected[0].name]:
            fail(
                ctx,
                "the provider's tool call must be returned, once, under the name the provider sent",
                expected=[expected[0].name],
                actual=[c.name for c in calls],
            )
        return
    with_ids = all(c.id for c in expected)  # providers that send no ids (Gemini): the adapter makes them up
    got = [(c.id if with_ids else "", c.name, c.arguments) for c in calls]
    want = [(c.id, c.name, c.arguments) for c in expected]
    if len(got) != len(want) or not json_equal(got, want):
        fail(
            ctx,
            f"{len(want)} parallel tool calls expected, in the provider's order, none merged",
            expected=want,
            actual=got,
        )


@check("RES-07", applies=lambda s, p: s.expect.type == "tool_calls" and bool(s.expect.content))
def text_beside_tool_calls_is_kept(ctx: CheckContext) -> None:
    result = _calls(ctx)
    if result.content != ctx.scenario.expect.content:
        fail(
            ctx,
            "text that accompanies tool calls must be kept in `content`",
            expected=ctx.scenario.expect.content,
            actual=result.content,
        )


def _redacted_streamed(scenario: Scenario) -> list[str]:
    """The data of the redacted reasoning blocks the scenario streams, in order."""
    return [p.data for p in streamed_parts(scenario) if isinstance(p, RedactedThinking)]


@check(
    "RES-08",
    applies=lambda s, p: (
        s.expect.type != "error" and (s.expect.thinking is not None or bool(_redacted_streamed(s)))
    ),
    requires=("thinking",),
)
def thinking_is_returned(ctx: CheckContext) -> None:
    thinking = getattr(ctx.result, "thinking", None)
    got = getattr(thinking, "content", None)
    if ctx.scenario.expect.thinking is not None and got != ctx.scenario.expect.thinking:
        fail(
            ctx,
            f"reasoning must be returned in `thinking` on the {ctx.scenario.expect.type} result",
            expected=ctx.scenario.expect.thinking,
            actual=got,
        )
    redacted = _redacted_streamed(ctx.scenario)
    kept = list(getattr(thinking, "redacted", None) or [])
    if redacted and kept != redacted:
        fail(
            ctx,
            "redacted reasoning is reasoning too: its blocks must be returned in `thinking.redacted`, as "
            "streamed, or the next request cannot send them back",
            expected=redacted,
            actual=kept,
        )


@check("RES-09", applies=both(expects("tool_calls", "structured_output"), not_(tagged("cut_off"))))
def tool_calls_win_over_the_finish_reason(ctx: CheckContext) -> None:
    wanted = ctx.scenario.expect.type
    if describe_result(ctx.result)["type"] != wanted:
        fail(
            ctx,
            "the response carries tool calls, so the result must carry them whatever the finish reason",
            expected=wanted,
            actual=short(ctx.result),
        )


@check("RES-10", applies=tagged("cut_off"))
def cut_off_tool_calls_are_not_executable(ctx: CheckContext) -> None:
    result = ctx.result
    if isinstance(result, (ToolCallsStepResult, StructuredOutputStepResult)):
        fail(
            ctx,
            "tool calls cut off by the token limit were returned as executable calls",
            expected="a text (max_tokens) or error result",
            actual=short(result),
        )


@check("RES-11", applies=expects("tool_calls"))
def sub_agent_calls_is_a_list(ctx: CheckContext) -> None:
    if not isinstance(_calls(ctx).sub_agent_calls, list):
        fail(ctx, "sub_agent_calls must be a list", actual=_calls(ctx).sub_agent_calls)


_UNKNOWN_WIRE = either(named("text_quirks"), tagged("unknown_wire"))
"""Scenarios whose stream carries what the adapter has never seen: unknown fields, event, delta and block
types, and SSE framing the standard allows (``unknown_wire``: a BOM, lone CRs, ``id:``/``retry:`` lines)."""


@check("RES-12", applies=either(_UNKNOWN_WIRE, corpus_base), ahead=corpus_ahead)
def unknown_wire_elements_are_ignored(ctx: CheckContext) -> None:
    expect = ctx.scenario.expect
    result = ctx.result
    if _UNKNOWN_WIRE(ctx.scenario, ctx.profile) and not _is_expected_outcome(ctx):
        fail(
            ctx,
            "unknown fields, events, blocks or SSE framing changed the outcome",
            expected=expect.content if expect.type == "text" else [c.name for c in expect.tool_calls],
            actual=short(result),
        )
    if corpus_base(ctx.scenario, ctx.profile):  # an unknown event inserted into this success stream
        check_corpus(ctx)


def _is_expected_outcome(ctx: CheckContext) -> bool:
    """The result is the scenario's: its type, its text, and its tool calls' names and arguments."""
    expect, result = ctx.scenario.expect, ctx.result
    if isinstance(result, TextStepResult):
        return expect.type == "text" and result.content == expect.content
    if isinstance(result, ToolCallsStepResult):
        got = [(c.name, c.arguments) for c in result.tool_calls]
        return expect.type == "tool_calls" and json_equal(
            got, [(c.name, c.arguments) for c in expect.tool_calls]
        )
    return False


@check("FIN-01", applies=expects("structured_output"))
def finish_tool_gives_structured_output(ctx: CheckContext) -> None:
    result = ctx.result
    expect = ctx.scenario.expect
    if not isinstance(result, StructuredOutputStepResult):
        fail(
            ctx,
            "a __finish__ call must give a StructuredOutputStepResult",
            expected="structured_output",
            actual=short(result),
        )
    if (result.should_stop, result.stop_reason) != (True, "tool_use") or not json_equal(
        result.output, expect.output
    ):
        fail(
            ctx,
            "structured output must carry the parsed arguments, should_stop=True, stop_reason='tool_use'",
            expected=(expect.output, True, "tool_use"),
            actual=(result.output, result.should_stop, result.stop_reason),
        )


@check("FIN-02", applies=named("finish_tool_with_sibling"))
def finish_tool_wins_over_siblings(ctx: CheckContext) -> None:
    if not isinstance(ctx.result, StructuredOutputStepResult):
        fail(
            ctx,
            "__finish__ beside another tool call must still give the structured result",
            expected="structured_output",
            actual=short(ctx.result),
        )


@check("FIN-03", applies=named("finish_tool_invalid_json"))
def invalid_finish_arguments_give_an_error(ctx: CheckContext) -> None:
    if not isinstance(ctx.result, ErrorStepResult):
        fail(
            ctx,
            "__finish__ arguments that are not valid JSON must give an ErrorStepResult",
            expected="error",
            actual=short(ctx.result),
        )


@check("FIN-04", applies=named("thinking_finish_tool"), requires=("thinking",))
def finishing_step_keeps_thinking(ctx: CheckContext) -> None:
    got = getattr(getattr(ctx.result, "thinking", None), "content", None)
    if got != ctx.scenario.expect.thinking:
        fail(
            ctx, "thinking of the finishing step was lost", expected=ctx.scenario.expect.thinking, actual=got
        )


@check("FIN-05", applies=named("finish_tool_lookalike"))
def finish_lookalike_is_an_ordinary_tool(ctx: CheckContext) -> None:
    names = [c.name for c in _calls(ctx).tool_calls]
    if names != ["finish"]:
        fail(
            ctx,
            "a tool named like the finish tool is an ordinary tool call",
            expected=["finish"],
            actual=names,
        )


@check("STOP-01", applies=lambda s, p: s.expect.type != "error" and s.expect.stop_for(p.name) is not None)
def finish_reason_maps_to_the_canonical_stop_reason(ctx: CheckContext) -> None:
    result = ctx.result
    got = getattr(result, "stop_reason", None)
    if got not in STOP_REASONS:
        fail(ctx, "a provider string leaked into stop_reason", expected=f"one of {STOP_REASONS}", actual=got)
    want = ctx.scenario.expect.stop_for(ctx.profile.name)
    if got != want:
        fail(
            ctx,
            "the provider's finish reason was mapped to the wrong stop reason",
            expected=want,
            actual=got,
            happening=wrong_stop_reason(result, want),
        )


def wrong_stop_reason(result: object, want: str | None) -> str:
    """What STOP-01 and STOP-02 both see when a text result carries the wrong stop reason: one cause."""
    if not isinstance(result, TextStepResult):
        return ""
    return (
        f"a text result with stop_reason={result.stop_reason!r} where the provider's finish reason maps to "
        f"{want!r}"
    )


_TRUNCATING = ("max_tokens", "content_filter", "refusal")


@check(
    "STOP-02",
    applies=either(
        lambda s, p: s.expect.type == "text" and s.expect.stop_for(p.name) in _TRUNCATING, has_part(Refusal)
    ),
)
def truncated_text_is_a_text_result_with_that_reason(ctx: CheckContext) -> None:
    result = ctx.result
    want = ctx.scenario.expect.stop_for(ctx.profile.name)
    if not isinstance(result, TextStepResult) or result.stop_reason != want:
        fail(
            ctx,
            f"a {want} step must be a TextStepResult carrying stop_reason={want!r}, never end_turn",
            expected=("text", want),
            actual=short(result),
            happening=wrong_stop_reason(result, want),
        )
