"""The harness catches broken adapters on the right clause, and only because of their bug.

For every adapter of ``tests/broken_adapters`` the clause it breaks must fail on every scenario it lists;
the reference adapter, and the hooked copy of it the broken adapters are built on, must pass exactly the
same (clause, scenario) selections. Entries with a ``harness_gap`` are strict xfails: bugs the harness
misses today, recorded so the gap is visible and the test flips once it is closed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from broken_adapters import BASELINE, BROKEN_ADAPTERS, FAMILIES, BrokenAdapter

from helix_conformance.clauses import CLAUSES
from helix_conformance.contract import AdapterSpec
from helix_conformance.scenarios import SCENARIOS, get_scenario
from helix_conformance.suite import plan_suite
from helix_conformance.testing import run_conformance
from reference_adapters.openai_chat import spec as reference_spec

TIMEOUT = 3.0
EXAMPLES = 3


@pytest.fixture(autouse=True)
def _catalogue_restored() -> Iterator[None]:
    """Put the scenario catalogue back as it was after each test.

    The harness hands adapters the catalogue's own message and schema objects, so a broken adapter that
    edits its input in place (``strips_content_in_place``) would otherwise corrupt every later run.
    """
    messages = [(m, copy.deepcopy(m.__dict__)) for s in SCENARIOS for m in s.messages]
    schemas = [
        (t.input_schema, copy.deepcopy(t.input_schema))
        for s in SCENARIOS
        for t in s.tools
        if isinstance(t.input_schema, dict)
    ]
    yield
    for message, state in messages:
        message.__dict__.update(state)
    for schema, saved in schemas:
        schema.clear()
        schema.update(saved)


def _outcomes(spec: AdapterSpec, clause: str, scenarios: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The result row of ``clause`` on each scenario, by scenario id."""
    report = run_conformance(
        spec, clauses=[clause], scenarios=list(scenarios), timeout=TIMEOUT, examples=EXAMPLES
    )
    return {row["scenario"]: row for row in report["results"] if row["clause"] == clause}


def _describe(clause: str, scenarios: Iterable[str], outcomes: dict[str, dict[str, Any]]) -> str:
    lines = []
    for scenario in scenarios:
        row = outcomes.get(scenario)
        if row is None:
            lines.append(
                f"  {clause} on {scenario}: not planned (the check does not apply, or no such scenario)"
            )
        else:
            lines.append(f"  {clause} on {scenario}: {row['outcome']} — {row['message']}")
    return "\n".join(lines)


def _broken_params() -> list[Any]:
    params = []
    for broken in BROKEN_ADAPTERS:
        marks = []
        if broken.harness_gap:
            marks.append(
                pytest.mark.xfail(
                    strict=True, raises=AssertionError, reason=f"harness gap: {broken.harness_gap}"
                )
            )
        params.append(pytest.param(broken, id=broken.name, marks=marks))
    return params


@pytest.mark.parametrize("broken", _broken_params())
def test_broken_adapter_fails_its_clause(broken: BrokenAdapter) -> None:
    outcomes = _outcomes(broken.spec, broken.caught_by, broken.scenarios)
    missed = [s for s in broken.scenarios if outcomes.get(s, {}).get("outcome") != "failed"]
    assert not missed, (
        f"{broken.name} ({broken.description}) was not caught by {broken.caught_by} on {missed}:\n"
        + _describe(broken.caught_by, broken.scenarios, outcomes)
    )


def _selections() -> list[tuple[str, tuple[str, ...]]]:
    """Every (clause, scenarios) selection of the registry, merged per clause."""
    by_clause: dict[str, list[str]] = {}
    for broken in BROKEN_ADAPTERS:
        wanted = by_clause.setdefault(broken.caught_by, [])
        wanted.extend(s for s in broken.scenarios if s not in wanted)
    return sorted((clause, tuple(scenarios)) for clause, scenarios in by_clause.items())


@pytest.mark.parametrize(("clause", "scenarios"), _selections(), ids=[c for c, _ in _selections()])
@pytest.mark.parametrize("control", [reference_spec, BASELINE.spec], ids=["reference", "hooked_baseline"])
def test_controls_pass_the_same_selections(
    control: AdapterSpec, clause: str, scenarios: tuple[str, ...]
) -> None:
    outcomes = _outcomes(control, clause, scenarios)
    wrong = [s for s in scenarios if outcomes.get(s, {}).get("outcome") != "passed"]
    assert not wrong, f"{control.name} does not pass {clause} on {wrong}:\n" + _describe(
        clause, scenarios, outcomes
    )


def test_every_clause_family_is_covered_by_a_caught_adapter() -> None:
    caught = {b.caught_by.split("-", 1)[0] for b in BROKEN_ADAPTERS if not b.harness_gap}
    assert not set(FAMILIES) - caught, (
        f"families without a caught broken adapter: {sorted(set(FAMILIES) - caught)}"
    )


def test_registry_is_well_formed() -> None:
    names = [b.name for b in BROKEN_ADAPTERS]
    assert len(names) == len(set(names)), "duplicate broken adapter names"
    assert len(BROKEN_ADAPTERS) >= 30
    for broken in BROKEN_ADAPTERS:
        assert broken.caught_by in CLAUSES, broken.name
        assert broken.scenarios, broken.name
        assert broken.description, broken.name
        for scenario in broken.scenarios:
            get_scenario(scenario)
        planned = {(p.clause, p.scenario.id) for p in plan_suite(broken.spec) if p.skip_reason is None}
        unplanned = [s for s in broken.scenarios if (broken.caught_by, s) not in planned]
        assert not unplanned, f"{broken.name}: {broken.caught_by} is not run on {unplanned}"


def test_every_registered_check_is_tripped_by_some_broken_adapter() -> None:
    """A check that no broken adapter trips proves nothing: each one must have a caught adapter here."""
    from helix_conformance.checks.registry import load_all_checks

    caught = {b.caught_by for b in BROKEN_ADAPTERS if b.harness_gap is None}
    untripped = sorted(set(load_all_checks()) - caught)
    assert not untripped, f"checks no broken adapter trips: {untripped}"
