"""MSG, TOOL, CFG-01/02 and CACHE: what the adapter sent, read back through the wire profile's decoder."""

from __future__ import annotations

import math
import re
from typing import Any

from ..contract import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from ..profiles.base import DecodedRequest, DecodedTool, WireProfile
from ..profiles.server_rejections import rejected_by, rejecting
from ..profiles.servers import declared_servers
from ..replay.runner import RunOptions, ScenarioRun
from .common import error_of, json_text, named, on_profiles, sends_request, short
from .context import CheckContext
from .registry import NotApplicable, check, fail
from .schema_equivalence import NotComparable, differences


def _first_request(ctx: CheckContext) -> DecodedRequest:
    decoded = ctx.requests()
    if not decoded:
        fail(
            ctx,
            "the adapter sent no request",
            expected="one request",
            actual="none",
            details=f"result: {short(ctx.result)}",
        )
    return decoded[0]


def _canonical(message: Any) -> tuple[Any, ...]:
    if isinstance(message, SystemMessage):
        return ("system", message.content)
    if isinstance(message, UserMessage):
        return ("user", message.content)
    if isinstance(message, AssistantMessage):
        calls = tuple((c.id, c.name, json_text(c.arguments)) for c in message.tool_calls or [])
        return ("assistant", message.content, calls)
    if isinstance(message, ToolMessage):
        return ("tool", message.tool_call_id, message.content)
    return ("?", repr(message))


def _having(*kinds: type) -> Any:
    return lambda s, p: sends_request(s, p) and any(isinstance(m, kinds) for m in s.messages)


def _expected_history(ctx: CheckContext) -> list[Any]:
    return ctx.profile.expected_history(ctx.scenario.messages)


def _sent_history(ctx: CheckContext, given: list[Any]) -> list[Any]:
    """The first request's conversation in canonical form, read against ``given``. Where MSG-06 judges the
    scenario and the request carries empty text the provider rejects, an empty message sent is MSG-06's failure
    alone: the clauses that compare the conversation read it without that message, so one cause is one failure.
    (An empty assistant turn, ``system_multiturn``'s, stays MSG-05's: MSG-06 is not widened to it, as Gemini's
    evidence on blank text parts is mixed and LangChain and pydantic-ai send one there.)"""
    request = _first_request(ctx)
    messages = request.messages
    if request.empty_text and _has_empty_text(ctx.scenario, ctx.profile):
        messages = [m for m in messages if not _empty(m)]
    return _joined_systems_split(given, [_canonical(m) for m in messages])


def _empty(message: Any) -> bool:
    """A user message of empty text, or an assistant one with nothing else (no tool calls, no thinking)."""
    if isinstance(message, UserMessage):
        return message.content == ""
    return isinstance(message, AssistantMessage) and not (
        message.content or message.tool_calls or message.thinking
    )


def _messages_of(ctx: CheckContext, kind: type) -> tuple[list[Any], list[Any]]:
    given_all = [_canonical(m) for m in _expected_history(ctx)]
    sent_all = _sent_history(ctx, given_all)
    given = [m for m, raw in zip(given_all, _expected_history(ctx)) if isinstance(raw, kind)]
    sent = [m for m in sent_all if m[0] == _canonical_kind(kind)]
    return given, sent


_CANONICAL_KIND: dict[type, str] = {
    SystemMessage: "system",
    UserMessage: "user",
    AssistantMessage: "assistant",
    ToolMessage: "tool",
}


def _canonical_kind(kind: type) -> str:
    return _CANONICAL_KIND[kind]


def _joined_systems_split(given: list[Any], sent: list[Any]) -> list[Any]:
    """``sent`` with one system message that joins consecutive given system messages, in order, each exact,
    separated by whitespace only (``"\n\n"`` as pydantic-ai and others join them), read as those messages: the
    system slot holds the same instructions (docs/contract.md#msg-01). Anything else is left as sent."""
    out: list[Any] = []
    i = 0
    for message in sent:
        run = _system_run(given, i)
        if message[0] == "system" and len(run) > 1 and _joins(message[1], [m[1] for m in run]):
            out.extend(run)
            i += len(run)
            continue
        out.append(message)
        i += 1
    return out


def _system_run(given: list[Any], start: int) -> list[Any]:
    run = []
    for message in given[start:]:
        if message[0] != "system":
            break
        run.append(message)
    return run


def _joins(text: Any, parts: list[Any]) -> bool:
    if not isinstance(text, str) or not all(isinstance(p, str) and p for p in parts):
        return False
    pattern = r"\s+".join(re.escape(p) for p in parts)
    return re.fullmatch(pattern, text) is not None


@check("MSG-01", applies=_having(SystemMessage))
def system_reaches_the_system_slot(ctx: CheckContext) -> None:
    given, sent = _messages_of(ctx, SystemMessage)
    if given != sent:
        fail(
            ctx,
            "system messages did not reach the provider's system slot exactly",
            expected=given,
            actual=sent,
        )
    _no_shape_a_declared_server_rejects(ctx)


def _no_shape_a_declared_server_rejects(ctx: CheckContext) -> None:
    """Fail on a request shape that a server the adapter targets answers with 400 (profiles/server_rejections.py):
    the servers its spec declares, else its profile's own provider, which takes every shape the profile does.
    A shape only servers it does not target reject is a failure for the compatibility matrix (``matrix``)."""
    findings = [finding for r in ctx.requests() for finding in r.server_findings]
    rejecting_servers = rejecting(findings, ctx.clause)
    if not rejecting_servers:
        return
    servers = declared_servers(ctx.spec, ctx.profile.name)
    if rejecting_servers & servers:
        fail(
            ctx,
            f"the request has a shape a server this adapter declares ({', '.join(sorted(servers))}) rejects",
            actual=rejected_by(findings, ctx.clause, servers),
        )
    fail(
        ctx,
        "the request has a shape servers this adapter does not declare reject",
        actual=rejected_by(findings, ctx.clause, rejecting_servers),
        matrix=rejecting_servers,
    )


@check("MSG-02", applies=_having(UserMessage, AssistantMessage))
def user_and_assistant_text_exact(ctx: CheckContext) -> None:
    for kind in (UserMessage, AssistantMessage):
        given, sent = _messages_of(ctx, kind)
        given_text, sent_text = [m[1] for m in given], [m[1] for m in sent]
        if given_text != sent_text:
            fail(ctx, f"{kind.__name__} text was not sent exactly", expected=given_text, actual=sent_text)


@check(
    "MSG-03",
    applies=lambda s, p: (
        sends_request(s, p) and any(isinstance(m, AssistantMessage) and m.tool_calls for m in s.messages)
    ),
)
def history_tool_calls_keep_ids_names_arguments(ctx: CheckContext) -> None:
    breaches = _first_request(ctx).violations_of("MSG-03")
    if breaches:
        fail(ctx, "history tool calls are not sent in the form the provider takes", actual=breaches)
    given, sent = _messages_of(ctx, AssistantMessage)
    if [m[2] for m in given] != [m[2] for m in sent]:
        fail(
            ctx,
            "assistant tool calls in the history changed (ids, names or arguments)",
            expected=[m[2] for m in given],
            actual=[m[2] for m in sent],
        )


@check("MSG-04", applies=_having(ToolMessage))
def tool_results_linked_by_id(ctx: CheckContext) -> None:
    given, sent = _messages_of(ctx, ToolMessage)
    if given != sent:
        fail(
            ctx,
            "tool results were not sent as the provider's tool results, linked by id",
            expected=given,
            actual=sent,
        )
    breaches = _first_request(ctx).violations_of("MSG-04")
    if breaches:
        fail(ctx, "tool results are not laid out the way the provider requires", actual=breaches)


@check("MSG-05", applies=lambda s, p: sends_request(s, p) and len(s.messages) >= 2)
def order_preserved_nothing_dropped(ctx: CheckContext) -> None:
    given = [_canonical(m) for m in _expected_history(ctx)]
    request = _first_request(ctx)
    sent = _sent_history(ctx, given)
    if given != sent:
        fail(
            ctx,
            "the conversation changed on the way: order, drops or duplicates",
            expected=given,
            actual=sent,
        )
    breaches = request.violations_of("MSG-05")
    if breaches:
        fail(ctx, "the turns break the provider's role alternation (merge same-role turns)", actual=breaches)


def _has_empty_text(scenario: Any, profile: Any) -> bool:
    """An assistant turn of tool calls alone, or an empty user message: where adapters send empty text."""
    return sends_request(scenario, profile) and any(
        (isinstance(m, AssistantMessage) and m.tool_calls and not m.content)
        or (isinstance(m, UserMessage) and m.content == "")
        for m in scenario.messages
    )


@check("MSG-06", applies=_has_empty_text)
def no_empty_text_blocks(ctx: CheckContext) -> None:
    empty = _first_request(ctx).empty_text
    if empty:
        fail(ctx, "empty text was sent where the provider rejects it", actual=empty)
    _no_shape_a_declared_server_rejects(ctx)


@check("MSG-07")
def input_not_mutated(ctx: CheckContext) -> None:
    run = ctx.main
    if run.input_after is not None and run.input_before != run.input_after:
        fail(
            ctx,
            "generate_step mutated its input (messages, tools or config)",
            expected=run.input_before,
            actual=run.input_after,
        )


@check("MSG-09", applies=sends_request)
def request_matches_the_provider_format(ctx: CheckContext) -> None:
    problems = [p for r in ctx.requests() for p in r.problems]
    problems += [
        f"header: {p}"
        for sent in ctx.sent()[:1]
        for p in ctx.profile.request_header_problems(sent.headers, sent.url)
    ]
    if problems:
        fail(ctx, "the request body departs from the provider's request format", actual=problems)


@check("MSG-10", applies=sends_request)
def streaming_is_requested(ctx: CheckContext) -> None:
    if not all(r.streaming for r in ctx.requests()) or not ctx.requests():
        fail(
            ctx,
            "the request did not ask for a streamed response",
            expected=True,
            actual=[r.streaming for r in ctx.requests()],
        )


def _has_tools(s: Any, p: Any) -> bool:
    return sends_request(s, p) and bool(s.tools) and "invalid_tool" not in s.tags


@check("TOOL-01", applies=_has_tools)
def tools_sent_with_name_and_description(ctx: CheckContext) -> None:
    sent = [(t.name, t.description) for t in _first_request(ctx).tools or []]
    given = [(t.name, t.description) for t in ctx.scenario.tools]
    if sorted(sent, key=str) != sorted(given, key=str):
        fail(
            ctx,
            "every tool must be sent with its name and description unchanged",
            expected=given,
            actual=sent,
        )


def sent_schema_differences(profile: WireProfile, given: dict[str, Any], decoded: DecodedTool) -> list[str]:
    """TOOL-02's comparison of a tool's input schema with the schema sent, in the dialect it was sent in: what a
    strict mode cannot express left aside (TOOL-03 judges it), every property present where the dialect requires
    all, extra properties aside where it cannot close an object. ``NotComparable`` as ``differences``."""
    if not isinstance(decoded.parameters, dict):
        raise NotComparable("sent", "no parameters schema was sent")
    relax = profile.inexpressible(decoded)
    return differences(
        relax(given) if relax is not None else given,
        decoded.parameters,
        complete_only=profile.all_required(decoded),
        closed_objects=profile.closes_objects(decoded),
    )


@check("TOOL-02", applies=_has_tools)
def parameters_equivalent_to_the_input_schema(ctx: CheckContext) -> None:
    sent = {t.name: t for t in _first_request(ctx).tools or []}
    for tool in ctx.scenario.tools:
        decoded = sent.get(tool.name)
        if decoded is None or not isinstance(decoded.parameters, dict):
            fail(ctx, f"tool {tool.name} was sent without a parameters schema", actual=decoded)
        try:
            diffs = sent_schema_differences(ctx.profile, tool.json_schema(), decoded)
        except NotComparable as exc:
            if exc.side == "given":  # the tool's own schema: nothing the adapter did, nothing to judge it on
                raise NotApplicable(
                    f"not judged: the input schema of {tool.name} cannot be compared on instances: {exc}"
                ) from exc
            fail(
                ctx,
                f"the schema sent for {tool.name} cannot stand for its input schema: {exc}",
                details=f"schema sent: {decoded.parameters!r:.800}",
            )
        if diffs:
            fail(
                ctx,
                f"the schema sent for {tool.name} is not equivalent to its input schema",
                actual=diffs[:5],
                details=f"schema sent: {decoded.parameters!r:.800}",
            )


@check("TOOL-03", applies=_has_tools)
def provider_schema_restrictions_hold(ctx: CheckContext) -> None:
    problems = [p for t in _first_request(ctx).tools or [] for p in ctx.profile.tool_problems(t)]
    if problems:
        fail(ctx, "the tools break the provider's schema restrictions", actual=problems)


@check("TOOL-04", applies=lambda s, p: sends_request(s, p) and not s.tools)
def no_tools_means_no_tools_field(ctx: CheckContext) -> None:
    request = _first_request(ctx)
    if request.tools is not None or request.tool_choice_present:
        fail(
            ctx,
            "with no tools the request must have neither a tools field nor a tool choice",
            actual={"tools": request.tools, "tool_choice present": request.tool_choice_present},
        )


@check("TOOL-05", applies=named("invalid_tool_name", "tool_schema_dangling_ref"))
def invalid_tool_rejected_before_sending(ctx: CheckContext) -> None:
    error = error_of(ctx.result)
    if ctx.sent() and not ("sent_as_written_ok" in ctx.scenario.tags and _tools_sent_as_written(ctx)):
        fail(
            ctx,
            "a tool the provider cannot accept was sent anyway"
            if "sent_as_written_ok" not in ctx.scenario.tags
            else "a tool schema that cannot be resolved was sent weakened, not refused nor as written",
            expected="no request"
            if "sent_as_written_ok" not in ctx.scenario.tags
            else "no request, or the schema exactly as the tool has it",
            actual=f"{len(ctx.sent())} request(s)",
        )
    if getattr(error, "code", None) != "provider_invalid_request":
        fail(ctx, "expected an ErrorStepResult with provider_invalid_request", actual=short(ctx.result))


def _tools_sent_as_written(ctx: CheckContext) -> bool:
    """Every tool of the scenario went out with its schema as the tool has it (JSON-equal): the provider, not
    the adapter, then decides what the schema means."""
    sent = {t.name: t.parameters for t in _first_request(ctx).tools or []}
    return all(json_text(sent.get(t.name)) == json_text(t.json_schema()) for t in ctx.scenario.tools)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b)
    return bool(a == b)


@check("CFG-01", applies=named("config_passthrough", "text_basic"))
def generation_parameters_reach_the_request(ctx: CheckContext) -> None:
    request = _first_request(ctx)
    config = ctx.scenario.llm_config(ctx.spec.model, ctx.profile.name).model_dump()
    for name in sorted(ctx.profile.supported_config):
        value = config.get(name)
        unset_as_null = request.config.get(name, 0) is None and ctx.profile.null_is_unset
        if value is None and name in request.config and name not in ctx.profile.required_config:
            if unset_as_null:
                continue  # the provider documents null as its default: as good as absent
            fail(
                ctx,
                f"{name} is unset but the request sets it",
                expected="absent",
                actual=request.config[name],
            )
        if value is not None and not _same(request.config.get(name), value):
            fail(
                ctx,
                f"{name} did not reach the provider's field",
                expected=value,
                actual=request.config.get(name),
            )


@check("CFG-02", applies=named("config_passthrough"))
def headers_and_provider_options_sent(ctx: CheckContext) -> None:
    headers = ctx.sent()[0].headers if ctx.sent() else {}
    for key, value in (ctx.scenario.config.get("headers") or {}).items():
        if headers.get(key.lower()) != value:
            fail(
                ctx, f"config.headers[{key!r}] was not sent", expected=value, actual=headers.get(key.lower())
            )
    keys = ctx.profile.provider_keys or (ctx.profile.provider_key,)
    given = ctx.scenario.config.get("provider_options") or {}
    extra = _first_request(ctx).extra
    unmerged = {
        key: {name: value for name, value in given[key].items() if extra.get(name) != value}
        for key in keys
        if key in given
    }
    if unmerged and all(unmerged.values()):  # the options of one of the keys this profile reads suffice
        key = next(iter(unmerged))
        fail(
            ctx,
            f"provider_options[{key!r}] was not merged into the request (this profile's adapters may read "
            f"it under any of {list(keys)})",
            expected=given[key],
            actual={name: extra.get(name) for name in given[key]},
        )


CACHING_SCENARIOS = ("caching_auto", "caching_auto_long")
"""The scenarios with caching='auto': a short history, and one with more tools and turns than breakpoints."""


@check(
    "CACHE-01",
    applies=lambda s, p: (
        sends_request(s, p)
        and s.config.get("caching") is None
        and s.id in ("text_basic", "tool_call", "system_multiturn")
    ),
)
def no_cache_markers_by_default(ctx: CheckContext) -> None:
    cache = _first_request(ctx).cache
    if cache:
        fail(ctx, "caching is off but cache markers were sent", expected={}, actual=cache)


@check(
    "CACHE-03",
    applies=lambda s, p: named("caching_auto")(s, p) and on_profiles("openai-chat", "openai-responses")(s, p),
    requires=("caching",),
)
def prompt_cache_key_derived_from_the_session(ctx: CheckContext) -> None:
    def keys(run: ScenarioRun) -> list[Any]:
        return [
            ctx.profile.decode_request(r.body, r.url).cache.get("prompt_cache_key")
            for r in ctx.session.endpoint_requests(run)
        ]

    same_session = keys(ctx.session.run(RunOptions(steps=2)))
    if len(same_session) != 2 or not same_session[0] or same_session[0] != same_session[1]:
        fail(
            ctx,
            "with caching='auto' a prompt_cache_key must be sent, the same on every step of a session",
            expected="the same non-empty key on both steps",
            actual=same_session,
        )
    other_session = keys(ctx.session.run(RunOptions(agent_id="helix-conformance-other-agent")))
    if other_session and other_session[0] == same_session[0]:
        fail(
            ctx,
            "the prompt_cache_key does not depend on the session (agent id): every session would share "
            "one cache key",
            expected="a different key for another agent id",
            actual=other_session[0],
        )


@check(
    "CACHE-02",
    applies=lambda s, p: named(*CACHING_SCENARIOS)(s, p) and on_profiles("anthropic-messages")(s, p),
    requires=("caching",),
)
def cache_breakpoints_on_system_last_tool_and_last_message(ctx: CheckContext) -> None:
    misplaced = _first_request(ctx).violations_of("CACHE-02")
    if misplaced:
        fail(ctx, "a cache breakpoint sits on a block the provider refuses to mark", actual=misplaced)
    cache = _first_request(ctx).cache
    breakpoints = cache.get("breakpoints") or []
    if not breakpoints:
        fail(
            ctx,
            "with caching='auto' cache_control breakpoints must be sent",
            expected="cache_control on the system prompt, the last tool and the last message",
            actual="no cache_control anywhere",
        )
    if cache.get("unmarked"):
        fail(
            ctx,
            "with caching='auto' the system prompt, the last tool and the last message each need a breakpoint",
            expected="a breakpoint on each",
            actual={"missing": cache["unmarked"], "sent": breakpoints},
        )
    if len(breakpoints) > 4:
        fail(ctx, "the provider accepts at most 4 cache breakpoints", expected="<= 4", actual=breakpoints)


@check(
    "CACHE-04",
    applies=lambda s, p: named(*CACHING_SCENARIOS)(s, p) and on_profiles("gemini")(s, p),
    requires=("caching",),
)
def caching_auto_changes_nothing(ctx: CheckContext) -> None:
    request = _first_request(ctx)
    if request.cache:
        fail(
            ctx,
            "with caching='auto' the request must not change (no cachedContent that was never created)",
            expected={},
            actual=request.cache,
        )
