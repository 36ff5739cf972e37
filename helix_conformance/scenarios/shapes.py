"""A scenario's delivery shape: what an adapter's generic code sees of its responses, whatever their content.

Fault handling, chunk reassembly and callback dispatch run the same way for every stream of one shape, so the
runs that exercise them are drawn once per shape (``checks/draws.py``), and recordings once per shape of
each source (``replay/recorded.py``).
"""

from __future__ import annotations

from collections.abc import Hashable

from .model import HttpError, Part, Refusal, Scenario, Stream, StreamError, Text, Thinking, ToolCall


def delivery_shape(scenario: Scenario) -> Hashable:
    """Per exchange, the response's kind and, for streams, the part kinds in order of first appearance,
    whether several tool calls come, whether any text is multi-byte, and whether a finish ends it (not which:
    mapping the reason is a table, judged on every scenario by STOP-01); for errors the status or error kind.
    Abort and stall plans, retries and generated inputs are shapes of their own (their tags)."""
    return (
        tuple(sorted(scenario.tags & _SHAPE_TAGS)),
        scenario.abort is not None,
        tuple((_response_shape(exchange.response), repr(exchange.fault)) for exchange in scenario.exchanges),
    )


_SHAPE_TAGS = frozenset({"abort", "retry", "stall", "generated"})


def _response_shape(response: object) -> Hashable:
    if isinstance(response, Stream):
        return ("stream", _parts_shape(response.parts), response.finish is not None)
    if isinstance(response, StreamError):
        return ("stream_error", _parts_shape(response.parts), response.kind)
    if isinstance(response, HttpError):
        return ("http", response.status, response.kind)
    return (type(response).__name__,)


def _parts_shape(parts: tuple[Part, ...]) -> Hashable:
    kinds: list[str] = []
    for part in parts:
        if type(part).__name__ not in kinds:
            kinds.append(type(part).__name__)
    calls = sum(isinstance(p, ToolCall) for p in parts)
    texts = [c for p in parts if isinstance(p, (Text, Thinking, Refusal)) for c in p.chunks]
    multibyte = any(not chunk.isascii() for chunk in texts)
    return (tuple(kinds), min(calls, 2), multibyte)


def finishes(scenario: Scenario) -> tuple[str | None, ...]:
    """The finish reason of each streamed exchange: what ``delivery_shape`` leaves out, and what a run that
    judges only the main run (``--helix-quick``) still wants one scenario of each of."""
    return tuple(
        exchange.response.finish.reason if exchange.response.finish is not None else None
        for exchange in scenario.exchanges
        if isinstance(exchange.response, Stream)
    )
