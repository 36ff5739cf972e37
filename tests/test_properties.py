"""The Hypothesis plumbing of the property clauses (STR-10, NT-02, generated scenarios): the examples drawn
ahead are the search's, a failure is still shrunk and never lost, and the draws depend on the seed alone."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from helix_conformance.checks.context import HarnessSettings
from helix_conformance.checks.properties import (
    DERANDOMIZED_SEED,
    StopSearch,
    _search,
    examples_of,
    falsify,
)


def _ctx(clause: str = "STR-10", **harness: Any) -> Any:
    return SimpleNamespace(clause=clause, session=SimpleNamespace(settings=HarnessSettings(**harness)))


@pytest.mark.parametrize("seed_", [None, 12345])
def test_the_examples_drawn_ahead_are_the_ones_the_search_tries(seed_: int | None) -> None:
    """STR-10 and NT-02 send their Hypothesis examples ahead, and a property whose drawn examples all pass
    skips the search: both only right if a search draws the same values every time."""
    ctx = _ctx(examples=7, seed=seed_)
    strategy = st.tuples(st.integers(0, 5000), st.lists(st.integers(1, 4999), max_size=24))
    tried: list[Any] = []

    def probe(value: Any) -> None:
        tried.append(value)

    assert _search(ctx, strategy, probe, None) is None
    ahead = examples_of(ctx, strategy)
    assert len(ahead) == 7
    assert ahead == tried


def test_a_property_that_fails_on_a_drawn_example_is_still_shrunk() -> None:
    report = falsify(
        _ctx(examples=20), st.lists(st.integers(0, 100)), lambda cuts: f"{cuts}" if len(cuts) > 2 else None
    )
    assert report == "[0, 0, 0]"


def test_a_drawn_example_that_fails_is_reported_even_if_the_search_does_not_meet_it_again() -> None:
    """The failure found on the drawn examples must not be lost when the search that follows (to shrink it)
    draws other values."""
    calls: list[Any] = []

    def probe(value: Any) -> str | None:
        calls.append(value)
        return "broke on the first draw" if len(calls) == 1 else None

    assert falsify(_ctx("NT-02", examples=5), st.integers(0, 1000), probe) == "broke on the first draw"


def test_a_probe_that_stops_the_search_leaves_its_last_report_standing() -> None:
    """A shrinking budget spent (generated.SHRINK_RUNS) ends the search at once, with the smallest failing value
    reported so far; Hypothesis does not take the stop for a failure to shrink."""
    failed: list[list[int]] = []

    def probe(cuts: list[int]) -> str | None:
        if len(cuts) <= 2:
            return None
        if len(failed) == 3:
            raise StopSearch
        failed.append(cuts)
        return f"{cuts}"

    report = falsify(_ctx(examples=20), st.lists(st.integers(0, 100)), probe)
    assert report == f"{failed[-1]}"
    assert len(failed) == 3


STRATEGY = st.lists(st.one_of(st.text(max_size=12), st.integers(-(10**6), 10**6)), max_size=4)
EXAMPLES = 300


def _plain_hypothesis_draws() -> list[Any]:
    """What Hypothesis itself draws with our seed and settings, without our guard."""
    drawn: list[Any] = []

    @seed(DERANDOMIZED_SEED)
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=list(HealthCheck),
    )
    @given(STRATEGY)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


def test_loading_a_module_full_of_constants_does_not_change_what_is_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit to the adapter under test (a local module) must not change the inputs, or the verdict would
    change without a seed change. Hypothesis alone does change them: the control below shows the guard is
    what holds them still."""
    constants = [f"adapter constant {i}" for i in range(200)] + [7_000 + i for i in range(200)]
    (tmp_path / "adapter_full_of_constants.py").write_text(
        textwrap.dedent(f"""\
            KNOWN = {constants!r}
            def pick(value):
                return {" or ".join(f"value == {c!r}" for c in constants[::7])}
        """),
        encoding="utf-8",
    )
    ctx = _ctx(examples=EXAMPLES)
    ours_before, plain_before = examples_of(ctx, STRATEGY), _plain_hypothesis_draws()
    monkeypatch.chdir(tmp_path)  # Hypothesis caches the constants it parses under ./.hypothesis
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("adapter_full_of_constants")
    ours_after = examples_of(_ctx(examples=EXAMPLES), STRATEGY)
    assert ours_after == ours_before
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # a Hypothesis older than local constants: nothing to control
        return
    if hasattr(providers, "_get_local_constants"):  # the control: Hypothesis 6.131+ draws them
        assert _plain_hypothesis_draws() != plain_before


def test_every_way_in_draws_the_same_number_of_examples_by_default() -> None:
    """``--helix-examples``'s default is one number whichever way the suite is run (pytest, ``run_conformance``,
    the standalone runner, a check's settings) and the one the fault corpus counts its positions from."""
    import inspect

    from helix_conformance.scenarios.fault_kinds import DEFAULT_EXAMPLES
    from helix_conformance.settings import OPTIONS
    from helix_conformance.standalone import run_suite
    from helix_conformance.testing import run_conformance

    (option,) = [o for o in OPTIONS if o.name == "helix-examples"]
    defaults = {
        "pytest option": option.default,
        "run_conformance": inspect.signature(run_conformance).parameters["examples"].default,
        "run_suite": inspect.signature(run_suite).parameters["examples"].default,
        "HarnessSettings": HarnessSettings().examples,
    }
    assert defaults == dict.fromkeys(defaults, DEFAULT_EXAMPLES)
    assert f"default {DEFAULT_EXAMPLES})" in option.help
