"""Where the runs that exercise an adapter's generic machinery are drawn: one scenario per delivery shape.

Fault handling, chunk reassembly and callback dispatch are code an adapter runs the same way for every stream of
one shape: the same part kinds (text, thinking, tool calls, refusals), one tool call or several, the same finish,
ASCII or multi-byte text, the same error response. Faulting, re-splitting or re-calling every scenario of a shape
judges that code again on the same paths (issue 34: without those runs, no field-bug mutant and none of the
broken adapters of tests/ changed verdict, at half the runs). So those runs are drawn on the *representative* of each shape: the first
authored scenario of it in catalogue order; a recorded stream of a shape no authored scenario has is its own
representative. The fault corpus also breaks every recorded stream (``broken_here``): real bytes of a real server.
The checks that judge a scenario's own content (its explicit STR-10 cuts, its request, its result) still run on
every scenario.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

from ..profiles.base import WireProfile
from ..scenarios.model import (
    HttpError,
    Part,
    Refusal,
    Scenario,
    Stream,
    StreamError,
    Text,
    Thinking,
    ToolCall,
)
from ..scenarios.recorded import RecordedScenario


def representative(scenario: Scenario, profile: WireProfile) -> bool:
    """Whether ``scenario`` is where the runs of its delivery shape are drawn on ``profile``."""
    shapes, ids = _representatives(profile.name)
    return scenario.id in ids or delivery_shape(scenario) not in shapes


def broken_here(scenario: Scenario, profile: WireProfile) -> bool:
    """Whether the fault corpus breaks ``scenario``'s stream: the representative of its shape, and every recorded
    stream (real bytes of a real server, whose framing the authored ones only imitate)."""
    return isinstance(scenario, RecordedScenario) or representative(scenario, profile)


@functools.lru_cache(maxsize=16)
def _representatives(profile: str) -> tuple[frozenset[Hashable], frozenset[str]]:
    """The delivery shapes of the profile's authored scenarios, and the first scenario of each."""
    from ..scenarios import scenarios_for

    chosen: dict[Hashable, str] = {}
    for scenario in scenarios_for(profile):
        chosen.setdefault(delivery_shape(scenario), scenario.id)
    return frozenset(chosen), frozenset(chosen.values())


def delivery_shape(scenario: Scenario) -> Hashable:
    """What an adapter's generic code sees of the scenario's responses: per exchange, the response's kind and,
    for streams, the part kinds in order of first appearance, whether several tool calls come, whether any text
    is multi-byte, and the finish; for errors the status or error kind. Abort and stall plans, retries and
    generated inputs are shapes of their own (their tags)."""
    return (
        tuple(sorted(scenario.tags & _SHAPE_TAGS)),
        scenario.abort is not None,
        tuple((_response_shape(exchange.response), repr(exchange.fault)) for exchange in scenario.exchanges),
    )


_SHAPE_TAGS = frozenset({"abort", "retry", "stall", "generated"})


def _response_shape(response: object) -> Hashable:
    if isinstance(response, Stream):
        finish = response.finish.reason if response.finish is not None else None
        return ("stream", _parts_shape(response.parts), finish)
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
