"""Where the runs that exercise an adapter's generic machinery are drawn: one scenario per delivery shape.

Fault handling, chunk reassembly and callback dispatch are code an adapter runs the same way for every stream of
one shape: the same part kinds (text, thinking, tool calls, refusals), one tool call or several, ASCII or
multi-byte text, the same error response (the finish's reason is a table lookup, judged on every scenario). Faulting, re-splitting or re-calling every scenario of a shape
judges that code again on the same paths (issue 34: without those runs, no field-bug mutant and none of the
broken adapters of tests/ changed verdict, at half the runs). So those runs are drawn on the *representative* of
each shape: the first authored scenario of it in catalogue order; a recorded stream of a shape no authored
scenario has is its own representative. The fault corpus also breaks the first recorded stream of each shape per
server and source (``broken_here``): real bytes of a real server, framed by that server's code; STR-10's
byte-by-byte split is drawn there too. The checks that judge a scenario's own bytes and content (STR-10's cuts at
its framing and inside its multi-byte characters, its request, its result) still run on every scenario.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType

from ..profiles.base import WireProfile
from ..scenarios.model import Scenario
from ..scenarios.recorded import RecordedScenario
from ..scenarios.shapes import delivery_shape


def representative(scenario: Scenario, profile: WireProfile) -> bool:
    """Whether ``scenario`` is where the runs of its delivery shape are drawn on ``profile``."""
    shapes, ids = _representatives(profile.name)
    return scenario.id in ids or delivery_shape(scenario) not in shapes


def broken_here(scenario: Scenario, profile: WireProfile) -> bool:
    """Whether the fault corpus breaks ``scenario``'s stream (and STR-10 splits it byte by byte): the
    representative of its shape, and the first recorded stream of each shape from each server and source (real
    bytes of a real server, whose framing the authored ones only imitate)."""
    if isinstance(scenario, RecordedScenario):
        return scenario.first_of_shape
    return representative(scenario, profile)


@functools.lru_cache(maxsize=16)
def _representatives(profile: str) -> tuple[frozenset[Hashable], frozenset[str]]:
    """The delivery shapes of the profile's authored scenarios, and the first scenario of each."""
    chosen = first_of_each(profile, delivery_shape)
    return frozenset(chosen), frozenset(chosen.values())


@functools.lru_cache(maxsize=32)
def first_of_each(profile: str, key: Callable[[Scenario], Hashable]) -> Mapping[Hashable, str]:
    """Each value of ``key`` over the profile's authored scenarios, and the first scenario (in catalogue
    order) that has it: the representatives above, and ``--helix-quick``'s one scenario per finish."""
    from ..scenarios import scenarios_for

    chosen: dict[Hashable, str] = {}
    for scenario in scenarios_for(profile):
        chosen.setdefault(key(scenario), scenario.id)
    return MappingProxyType(chosen)
