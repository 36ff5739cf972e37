"""Hypothesis plumbing shared by the property clauses (STR-10, NT-02).

Derandomized unless ``--helix-seed`` is given, so a CI gate gives the same verdict on every run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from .context import CheckContext

T = TypeVar("T")
DERANDOMIZED_SEED = 0x48454C4958
"""The seed without --helix-seed. Hypothesis's own derandomized seed is a digest of the test function's
source, parsed again on every call (a third of the property clauses' cost); a constant is as repeatable."""


class StopSearch(BaseException):
    """Raised by a probe to end the search now (a shrinking budget spent): the last problem it reported stands.
    A BaseException, as KeyboardInterrupt, so Hypothesis does not take it for a failure of the input to shrink."""


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
    # The search draws the same values (the same seed, no local constants), but should it not meet this one
    # again (a flaky probe), the unshrunk report stands.
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
        with without_local_constants():
            test()
    except AssertionError:
        return reports[-1] if reports else "a counterexample was found but not reported"
    except StopSearch:  # the probe's last report is the smallest input it failed on so far
        return reports[-1] if reports else None
    except Flaky:  # the input failed, then passed when replayed: the first failure is the finding
        return f"{reports[0]} (the same input did not fail again when replayed)" if reports else None
    return None


def register_hypothesis_random() -> None:
    """Hypothesis registers the Random it keeps per thread on its thread's first search, after a full
    ``gc.collect()`` and a scan of every object's referrers: 0.2 s mid-suite, a third of that before collection.
    pytest's main thread calls it at start-up (plugin.py); elsewhere the first search does it, as before."""
    try:
        from hypothesis.internal.entropy import deterministic_PRNG
    except ImportError:  # pragma: no cover - a Hypothesis without it registers as it goes
        return
    with deterministic_PRNG():  # seeds, then restores, every registered Random: no state changes
        pass


@contextmanager
def without_local_constants() -> Iterator[None]:
    """Draw from our strategies alone. Hypothesis (6.131+) also draws about 5% of its values from constants
    it parses out of every loaded module outside site-packages: the user's adapter, an editable install. An
    edit there would change the inputs as a seed change does, and the verdict with them; and the parse writes
    a ``.hypothesis/constants`` cache into the user's folder. Hypothesis's own list of constants stays."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the internals this hides
        yield
        return
    collect = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if collect is None or cache is None or not hasattr(providers, "Constants"):
        yield  # older Hypothesis: no local constants to hide
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    cache.clear()  # its entries hold the local constants allowed for each kind of draw
    try:
        yield
    finally:
        providers._get_local_constants = collect
        cache.clear()
