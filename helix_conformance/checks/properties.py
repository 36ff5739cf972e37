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
DERANDOMIZED_SEED = 0x48454C4958
"""The seed without --helix-seed. Hypothesis's own derandomized seed is a digest of the test function's
source, parsed again on every call (a third of the property clauses' cost); a constant is as repeatable."""


def falsify(
    ctx: CheckContext,
    strategy: st.SearchStrategy[T],
    probe: Callable[[T], str | None],
    *,
    examples: int | None = None,
) -> str | None:
    """Look for a value on which ``probe`` reports a problem; return the report of the shrunk example, or None.
    ``examples`` overrides --helix-examples for a property whose probes are cheap. The values Hypothesis will
    draw are known (``examples_of``): when every one passes, so would Hypothesis's own search; it runs (and
    shrinks) only when one fails."""
    first = next(
        (found for value in examples_of(ctx, strategy, examples=examples) if (found := probe(value))), None
    )
    if first is None:
        return None
    # Hypothesis also draws from constants in the local modules loaded at that moment, so a search after an
    # import may not meet this value again: its unshrunk report stands then.
    return _search(ctx, strategy, probe, examples) or first


def examples_of(ctx: CheckContext, strategy: st.SearchStrategy[T], *, examples: int | None = None) -> list[T]:
    """The values the search tries, in order, while no probe reports a problem: the same seed, settings and
    generation give the same draws. Drawn once per scenario and clause (the runs of a property's examples
    are sent ahead, ``ScenarioSession.ahead``)."""
    drawn: dict[tuple[str, str, int | None], list[Any]] | None = getattr(ctx.session, "drawn", None)
    key = (ctx.clause, repr(strategy), examples)
    if drawn is not None and key in drawn:
        return drawn[key]
    seen: list[T] = []
    _search(ctx, strategy, seen.append, examples)  # append returns None: no problem reported
    if drawn is not None:
        drawn[key] = seen
    return seen


def _search(
    ctx: CheckContext, strategy: st.SearchStrategy[T], probe: Callable[[T], str | None], examples: int | None
) -> str | None:
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

    test = seed(DERANDOMIZED_SEED if harness.seed is None else harness.seed)(property_)
    # No example database, so no key: Hypothesis would otherwise parse this function's source for one.
    test._hypothesis_internal_database_key = None  # type: ignore[attr-defined]
    try:
        test()
    except AssertionError:
        return reports[-1] if reports else "a counterexample was found but not reported"
    return None
