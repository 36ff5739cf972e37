"""Clauses judged over generated inputs: a scenario with ``generated`` clauses is run as written, then on
inputs Hypothesis draws (random histories for MSG-01..05, random tool schemas for TOOL-02/03); each input is
run through the adapter and judged by the clause's own check. A failing input is shrunk and printed as Python
the user can paste into a test.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from ..contract import AssistantMessage, SystemMessage, Tool, ToolCallInfo, ToolMessage, UserMessage
from ..scenarios.fixtures import GET_WEATHER, SEARCH_DOCS
from ..scenarios.model import Scenario
from .context import CheckContext, ScenarioSession
from .properties import StopSearch, examples_of, falsify
from .registry import Check, CheckFailed, NotApplicable, fail, load_all_checks, own_error

TOOLS = (GET_WEATHER, SEARCH_DOCS)
GENERATED_EXAMPLES_FACTOR = 5
"""Generated inputs per clause, as a multiple of --helix-examples (default 3: 15 inputs)."""
SHRINK_RUNS = 24
"""Adapter runs one exploration may spend shrinking a failing input: each new input is a run (tens of milliseconds
through a driver), and Hypothesis may try a hundred. Then the search stops, and the smallest failing input found so
far is reported: always one the adapter failed on. A count, not a time, so a gate reports the same input on every
machine."""

# --- random histories (MSG-01..05) -----------------------------------------------------------------

_SPECIALS = (
    "\n",
    "\r\n",
    "\t",
    "  ",
    '"',
    "'",
    "\\",
    "&",
    "<",
    ">",
    "{}",
    "%s",
    "€",
    "«»",
    "—",
    "😀",
    "\u2028",
    "\u200b",
)
texts = (
    st.lists(
        st.sampled_from(_SPECIALS)
        | st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=8),
        min_size=1,
        max_size=5,
    )
    .map("".join)
    .filter(lambda t: bool(t.strip()))
)
"""Text with something besides whitespace (a blank turn is dropped on some wires), made of plain pieces and
the characters serializers get wrong: newlines, quotes, backslashes, markup, emoji, line separators."""
_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(string.ascii_letters, min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
arguments = st.dictionaries(
    st.text(string.ascii_letters + "_", min_size=1, max_size=8), json_values, max_size=3
)


@st.composite
def _round(draw: Any, number: int) -> list[Any]:
    """One user turn and, sometimes, the assistant's answer: text, tool calls with all their results, or both."""
    messages: list[Any] = [UserMessage(content=draw(texts))]
    kind = draw(st.sampled_from(("none", "text", "tools", "text+tools")))
    if kind == "none":
        return messages
    calls = []
    if "tools" in kind:
        for i in range(draw(st.integers(1, 2))):
            tool = draw(st.sampled_from(TOOLS))
            suffix = draw(st.text(string.ascii_letters + string.digits, min_size=6, max_size=6))
            calls.append(
                ToolCallInfo(id=f"call_{number}{i}{suffix}", name=tool.name, arguments=draw(arguments))
            )
    content = draw(texts) if "text" in kind else ""
    messages.append(AssistantMessage(content=content, tool_calls=calls or None))
    messages.extend(ToolMessage(tool_call_id=c.id, tool_name=c.name, content=draw(texts)) for c in calls)
    return messages


@st.composite
def histories(draw: Any, scenario: Scenario) -> Scenario:
    """A conversation the contract allows, ending where the model must answer (a user turn or tool results),
    after none, one or two system messages (a prompt and injected instructions, MSG-01)."""
    messages: list[Any] = [SystemMessage(content=text) for text in draw(st.lists(texts, max_size=2))]
    for number in range(draw(st.integers(1, 3))):
        messages.extend(draw(_round(number)))
    if isinstance(messages[-1], AssistantMessage):
        messages.append(UserMessage(content=draw(texts)))
    return replace(scenario, messages=tuple(messages), tools=TOOLS)


# --- random tool schemas (TOOL-02, TOOL-03) ---------------------------------------------------------

_names = st.text(string.ascii_lowercase + "_", min_size=1, max_size=10).filter(
    lambda n: not n.startswith("_")
)
_scalars = st.one_of(
    st.just({"type": "string"}),
    st.builds(lambda d: {"type": "string", "description": d}, texts),
    st.lists(
        st.text(string.ascii_lowercase, min_size=1, max_size=6), min_size=1, max_size=4, unique=True
    ).map(lambda values: {"type": "string", "enum": values}),
    st.builds(
        lambda lo, span: {"type": "integer", "minimum": lo, "maximum": lo + span},
        st.integers(-5, 5),
        st.integers(0, 100),
    ),
    st.just({"type": "number"}),
    st.just({"type": "boolean"}),
)


def _object(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        properties = draw(st.dictionaries(_names, inner, min_size=1, max_size=4))
        required = draw(st.lists(st.sampled_from(sorted(properties)), unique=True, max_size=len(properties)))
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if draw(st.booleans()):  # closed, as zod-to-json-schema and MCP servers write every object
            schema["additionalProperties"] = False
        return schema

    return build()


ZOD_SCHEMA_URI = "http://json-schema.org/draft-07/schema#"
"""The ``$schema`` zod-to-json-schema puts on every root (and so every MCP server written with zod)."""


schemas = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        inner.map(lambda items: {"type": "array", "items": items}),
        inner.map(lambda s: {"anyOf": [s, {"type": "null"}]}),
        _object(inner),
    ),
    max_leaves=8,
)
_input_schemas = _object(schemas)
"""A tool's input schema: an object at the root. Built once: Hypothesis reads a composite's source each time
one is made (half the cost of a draw)."""


@st.composite
def tool_schemas(draw: Any, scenario: Scenario) -> Scenario:
    """One or two tools whose input schemas are random objects, some with zod's root ``$schema``, some
    strict (OpenAI strict mode on nested objects and arrays of objects)."""
    tools = []
    for i in range(draw(st.integers(1, 2))):
        schema = draw(_input_schemas)
        if draw(st.booleans()):
            schema["$schema"] = ZOD_SCHEMA_URI
        strict = draw(st.booleans())
        tools.append(Tool(name=f"tool_{i}", description=draw(texts), input_schema=schema, strict=strict))
    return replace(scenario, tools=tuple(tools))


STRATEGIES: dict[str, Callable[[Scenario], st.SearchStrategy[Scenario]]] = {
    "random_histories": histories,
    "random_tool_schemas": tool_schemas,
}


# --- judging ----------------------------------------------------------------------------------------


def judge_generated(check: Check, ctx: CheckContext) -> None:
    """The clause on the scenario as written, then on generated inputs; a failing input is shrunk.

    One exploration judges every generated clause of the scenario on each input (drawing inputs costs more
    than judging them). When it stops on another clause's failure, this clause gets an exploration of its
    own, so a failure is never hidden behind another one.
    """
    check.func(ctx)
    reports = _explore(ctx, ctx.scenario.generated)
    if reports and ctx.clause not in reports:
        reports = _explore(ctx, (ctx.clause,))
    if ctx.clause in reports:
        message, _, given = reports[ctx.clause].partition("\ninput: ")
        fail(
            ctx,
            f"on a generated input: {message}",
            details=f"shrunk by Hypothesis (in at most {SHRINK_RUNS} runs); paste it into a test to reproduce:\n{given}",
        )


def _explore(ctx: CheckContext, clauses: tuple[str, ...]) -> dict[str, str]:
    """Failures found on generated inputs, by clause (the most shrunk input's); computed once per session."""
    base = ctx.session
    if clauses in base.generated_reports:
        return base.generated_reports[clauses]
    registry = load_all_checks()
    checks = [registry[c] for c in clauses if not base.profile.clause_skip_reason(c)]
    reports: dict[str, str] = {}
    shrink_runs = 0

    def probe(variant: Scenario) -> str | None:
        nonlocal shrink_runs
        if reports and _key(variant) not in base.variants:  # a new input after a failure: a shrinking step
            if shrink_runs >= SHRINK_RUNS:
                raise StopSearch
            shrink_runs += 1
        found = {}
        for check in checks:
            if not check.applies(variant, base.profile):
                continue
            try:
                check.func(CheckContext(check.clause, _session_of(base, variant)))
            except CheckFailed as exc:
                failure = exc.failure
                shown = f"; got {failure.actual!r:.300}" if failure.has_actual() else ""
                found[check.clause] = f"{failure.message}{shown}\ninput: {_as_python(variant)}"
            except NotApplicable:
                continue
            except Exception as exc:  # the check's own error on this input: data, never a traceback
                own = own_error(check.clause, variant.id, base.profile.name, exc)
                found[check.clause] = f"{own.message} ({own.details})\ninput: {_as_python(variant)}"
        reports.update(found)  # shrinking goes on from here: later inputs are smaller
        return "; ".join(found) or None

    falsify(_drawing(base, clauses), _strategy(base), probe, examples=_examples(base))
    base.generated_reports[clauses] = reports
    return reports


def explore_ahead(base: ScenarioSession) -> None:
    """Send the runs of the first exploration (every generated clause of the scenario) ahead: its inputs are
    drawn now (the same draws ``_explore`` will take), and each distinct input's run goes to the workers."""
    clauses = base.scenario.generated
    if clauses in base.generated_reports:
        return
    for variant in examples_of(_drawing(base, clauses), _strategy(base), examples=_examples(base)):
        _session_of(base, variant).ahead()


def _drawing(base: ScenarioSession, clauses: tuple[str, ...]) -> CheckContext:
    """The context the inputs of an exploration of ``clauses`` are drawn in: the same draws, whichever of the
    clauses' items explores first (``examples_of`` keeps them by clause)."""
    return CheckContext("+".join(clauses), base)


def _strategy(base: ScenarioSession) -> st.SearchStrategy[Scenario]:
    return STRATEGIES[base.scenario.id](base.scenario)


def _examples(base: ScenarioSession) -> int:
    return GENERATED_EXAMPLES_FACTOR * base.settings.examples


def _key(variant: Scenario) -> str:
    """What tells one generated input from another (its run is shared by the clauses judged on it)."""
    schemas = [
        t.input_schema if isinstance(t.input_schema, dict) else t.input_schema.__name__ for t in variant.tools
    ]
    return repr((variant.messages, [(t.name, t.strict) for t in variant.tools], schemas))


def _session_of(base: ScenarioSession, variant: Scenario) -> ScenarioSession:
    """One run per distinct input, shared by the clauses judged on it."""
    key = _key(variant)
    if key not in base.variants:
        base.variants[key] = ScenarioSession(variant, base.profile, base.spec, base.cassettes, base.settings)
    return base.variants[key]


def _as_python(variant: Scenario) -> str:
    if "TOOL-02" in variant.generated:
        return (
            "tools=["
            + ", ".join(
                f"Tool(name={t.name!r}, description={t.description!r}, input_schema={t.json_schema()!r}"
                + (", strict=True)" if t.strict else ")")
                for t in variant.tools
            )
            + "]"
        )
    return "messages=[" + ", ".join(repr(m) for m in variant.messages) + "]"
