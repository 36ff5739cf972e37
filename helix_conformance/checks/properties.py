"""Hypothesis plumbing shared by the property clauses (STR-10, NT-02).

Derandomized unless ``--helix-seed`` is given, so a CI gate gives the same verdict on every run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from .context import CheckContext

T = TypeVar("T")


def falsify(
    ctx: CheckContext,
    strategy: st.SearchStrategy[T],
    probe: Callable[[T], str | None],
    *,
    examples: int | None = None,
) -> str | None:
    """Look for a value on which ``probe`` reports a problem; return the report of the shrunk example, or None.
    ``examples`` overrides --helix-examples for a property whose probes are cheap."""
    harness = ctx.session.settings
    reports: list[str] = []

    @settings(
        max_examples=examples or harness.examples,
        derandomize=harness.seed is None,
        database=None,
        deadline=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def property_(value: Any) -> None:
        problem = probe(value)
        if problem is not None:
            reports.append(problem)
            raise AssertionError(problem)

    test = property_ if harness.seed is None else seed(harness.seed)(property_)
    try:
        test()
    except AssertionError:
        return reports[-1] if reports else "a counterexample was found but not reported"
    return None
