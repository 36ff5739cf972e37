"""Predicates and comparisons shared by the check modules."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..contract import (
    ErrorStepResult,
    HelixError,
    StructuredOutputStepResult,
    TextStepResult,
    ToolCallsStepResult,
)
from ..profiles.base import WireProfile
from ..replay.where import where_lines
from ..scenarios.model import Scenario, Stream, StreamError, Text
from .registry import Applies

if TYPE_CHECKING:
    from ..replay.runner import ScenarioRun
    from ..replay.trace import SentRequest
    from .context import CheckContext


def expects(*types: str) -> Applies:
    return lambda s, p: s.expect.type in types


def tagged(*tags: str) -> Applies:
    return lambda s, p: bool(s.tags & set(tags))


def named(*ids: str) -> Applies:
    return lambda s, p: s.id in ids


def both(*predicates: Applies) -> Applies:
    return lambda s, p: all(pred(s, p) for pred in predicates)


def either(*predicates: Applies) -> Applies:
    return lambda s, p: any(pred(s, p) for pred in predicates)


def not_(predicate: Applies) -> Applies:
    return lambda s, p: not predicate(s, p)


def on_profiles(*names: str) -> Applies:
    return lambda s, p: p.name in names


def streamed_parts(scenario: Scenario) -> list[Any]:
    parts: list[Any] = []
    for exchange in scenario.exchanges:
        if isinstance(exchange.response, (Stream, StreamError)):
            parts.extend(exchange.response.parts)
    return parts


def text_events(scenario: Scenario) -> int:
    return sum(len(p.chunks) for p in streamed_parts(scenario) if isinstance(p, Text))


def has_part(kind: type) -> Applies:
    return lambda s, p: any(isinstance(part, kind) for part in streamed_parts(s))


def attempts_request(scenario: Scenario, profile: WireProfile) -> bool:
    """Whether a conforming step tries to reach the provider at all (HARN-02 owns a step that does not)."""
    return any(not e.optional for e in scenario.exchanges)


def sends_request(scenario: Scenario, profile: WireProfile) -> bool:
    """Whether a request reaches the provider, to be judged by what it says: not when its connection is
    refused (``connect_error``: no request line, headers or body ever leave the adapter)."""
    return any(
        not e.optional and (e.fault is None or e.fault.kind != "connect_error") for e in scenario.exchanges
    )


def did_not_return(
    run: ScenarioRun,
    timeout: float,
    allowed_wait_s: float = 0,
    spent: str = "",
    step: str = "generate_step",
    settles: bool = False,
) -> str:
    """A hung step in words (with the wait the contract allows on top of the limit, if any, and ``spent``:
    where the time went, when the evidence says), with what the adapter's processes looked like then
    (memory, a stopped process) when its worker measured it. A JavaScript step ``settles`` (its promise)
    rather than returns."""
    allowed = f" (plus the {allowed_wait_s:g} s wait the contract allows here)" if allowed_wait_s else ""
    note = f" ({run.hang_note})" if run.hang_note else ""
    return f"{step} did not {'settle' if settles else 'return'} within {timeout} s{allowed}{spent}{note}"


def endpoint_requests(run: ScenarioRun, profile: WireProfile) -> list[SentRequest]:
    """The run's requests to the provider's endpoint (the profile's method and path, matched or not: a retry
    the recording lacks is one too). Any other request — a library fetching a price list, a HEAD elsewhere —
    is not the provider call the MSG/TOOL/CFG clauses judge: it is HARN-01's alone. A refused connection to the
    run's base URL is a provider call that never got to say anything."""
    paths = {i.path for i in run.interactions} or {urlsplit(profile.endpoint_url("model")).path}
    return [
        r
        for r in run.trace.requests
        if r.refused or r.interaction is not None or any(profile.matches(r.method, r.path, p) for p in paths)
    ]


def has_recorded_stream(scenario: Scenario, profile: WireProfile) -> bool:
    return bool(scenario.recorded_exchanges) or any(
        type(e.response).__name__ == "Reuse" and e.fault is None for e in scenario.exchanges
    )


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: strings, numbers, booleans and null stay apart (``"5"``, ``5``, ``true``), but ``5`` and
    ``5.0`` are one JSON number (RFC 8259 §6 has a single number type; JavaScript keeps no difference, so
    ``JSON.stringify(0.0)`` is ``"0"``)."""
    return json_text(a) == json_text(b)


def json_text(value: Any) -> str:
    """A canonical JSON text of ``value``: keys sorted, every number the IEEE double a JSON reader makes of
    it (RFC 8259 §6; JavaScript reads every number so), integral ones written as integers. So
    ``49388543091364910`` (how JavaScript writes the double ``4.938854309136491e16``) is that double."""
    return json.dumps(_as_json_numbers(value), sort_keys=True, default=repr)


def _as_json_numbers(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond every double: compared as written
            return value
        return int(number) if number.is_integer() else number
    if isinstance(value, dict):
        return {k: _as_json_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json_numbers(v) for v in value]
    return value


class ToolCallIds:
    """Names the tool-call ids of one run so that runs compare: an id the provider sent stays as sent; an
    id the adapter minted (the provider sent none, e.g. Gemini) is named by its order of first appearance,
    so fresh random ids per run compare equal while a duplicated or inconsistent one still differs. An
    empty id stays empty (RES-03 owns it). One instance per run: the result first, then its callbacks."""

    def __init__(self, provider_ids: Iterable[str]) -> None:
        self.provider = frozenset(i for i in provider_ids if i)
        self._minted: dict[str, str] = {}

    def __call__(self, call_id: Any) -> Any:
        if not isinstance(call_id, str) or not call_id or call_id in self.provider:
            return call_id
        return self._minted.setdefault(call_id, f"<minted id #{len(self._minted) + 1}>")


def provider_tool_call_ids(ctx: CheckContext) -> frozenset[str]:
    """The tool-call ids the provider's response carries (none on Gemini; a live recording's own ids)."""
    return frozenset(c.id for c in ctx.expected_tool_calls() if c.id)


def run_ids(ctx: CheckContext) -> ToolCallIds:
    """A fresh ``ToolCallIds`` for comparing one run of ``ctx``'s scenario with another."""
    return ToolCallIds(provider_tool_call_ids(ctx))


def describe_result(result: Any, ids: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """A comparable summary of a StepResult (STR-09/10, the fault corpus compare these across runs).

    ``ids`` names the tool-call ids (a ``ToolCallIds`` of the run); without it they are kept as returned.
    """
    name = ids or (lambda call_id: call_id)
    if isinstance(result, TextStepResult):
        return {
            "type": "text",
            "content": result.content,
            "thinking": _thinking(result.thinking),
            "stop_reason": result.stop_reason,
            "should_stop": result.should_stop,
        }
    if isinstance(result, ToolCallsStepResult):
        return {
            "type": "tool_calls",
            "content": result.content,
            "thinking": _thinking(result.thinking),
            "tool_calls": [
                (name(c.id), c.name, json.dumps(c.arguments, sort_keys=True)) for c in result.tool_calls
            ],
            "stop_reason": result.stop_reason,
            "should_stop": result.should_stop,
        }
    if isinstance(result, StructuredOutputStepResult):
        return {
            "type": "structured_output",
            "output": json.dumps(result.output, sort_keys=True, default=repr),
            "thinking": _thinking(result.thinking),
            "stop_reason": result.stop_reason,
        }
    if isinstance(result, ErrorStepResult):
        error = result.error
        return {
            "type": "error",
            "code": getattr(error, "code", None),
            "retryable": getattr(error, "retryable", None),
            "error_class": type(error).__name__,
        }
    return {"type": f"<not a StepResult: {type(result).__name__}>"}


def _thinking(thinking: Any) -> str | None:
    return getattr(thinking, "content", None)


def error_of(result: Any) -> HelixError | Exception | None:
    return result.error if isinstance(result, ErrorStepResult) else None


def short(result: Any) -> str:
    """``describe_result`` as one line for a failure message; an error result also shows its message
    (display only: ``describe_result`` leaves it out because messages may differ between runs)."""
    summary = describe_result(result)
    text = ", ".join(f"{k}={v!r}" for k, v in summary.items() if v is not None)
    if isinstance(result, ErrorStepResult):
        text += f", message={error_message(result.error)!r}"
    return text


def error_message(error: BaseException, limit: int = 300) -> str:
    """What an error says, and what it was caused by: the text an author needs to see why it was returned."""
    message = " ".join(str(error).split())
    cause = getattr(error, "cause", None) or error.__cause__
    if cause is not None:
        message += f" (cause: {type(cause).__module__}.{type(cause).__name__})"
    return message if len(message) <= limit else message[: limit - 1] + "…"


def where_raised(error: BaseException) -> str:
    """Where the innermost of ``error`` and its causes was raised (``replay/where.py``); a run from a worker
    carries the lines as text (``worker/snapshot.py``: ``_helix_where``)."""
    lines: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while isinstance(current, BaseException) and id(current) not in seen:
        seen.add(id(current))
        carried = getattr(current, "_helix_where", None)
        found = [str(line) for line in carried] if isinstance(carried, list) else where_lines(current)
        lines = found or lines
        current = getattr(current, "cause", None) or current.__cause__
    return "raised at (innermost last):\n" + "\n".join(lines) if lines else ""
