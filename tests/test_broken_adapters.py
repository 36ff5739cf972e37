"""The harness catches broken adapters on the right clause, and only because of their bug.

For every adapter of ``tests/broken_adapters`` the clause it breaks must fail on every scenario it lists;
the controls of its wire profile — that profile's reference adapter, and the hooked copy of it the broken
adapters are built on — must pass exactly the same (clause, scenario) selections. Entries with a
``harness_gap`` are strict xfails: bugs the harness misses today, recorded so the gap is visible and the
test flips once it is closed.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from broken_adapters import BASELINES, BROKEN_ADAPTERS, FAMILIES, BrokenAdapter

from helix_conformance.clauses import CLAUSES
from helix_conformance.contract import AdapterSpec
from helix_conformance.scenarios import SCENARIOS, get_scenario
from helix_conformance.scenarios.recorded import RECORDED_PREFIX
from helix_conformance.suite import plan_suite
from helix_conformance.testing import run_conformance
from reference_adapters.anthropic import spec as anthropic_reference_spec
from reference_adapters.bedrock_converse import spec as bedrock_reference_spec
from reference_adapters.cohere import spec as cohere_reference_spec
from reference_adapters.gemini import spec as gemini_reference_spec
from reference_adapters.openai_chat import spec as openai_reference_spec
from reference_adapters.openai_responses import spec as responses_reference_spec

TIMEOUT = 3.0
EXAMPLES = 3

REFERENCES: dict[str, AdapterSpec] = {
    spec.wire_profile: spec
    for spec in (
        openai_reference_spec,
        anthropic_reference_spec,
        gemini_reference_spec,
        responses_reference_spec,
        bedrock_reference_spec,
        cohere_reference_spec,
    )
}
"""The reference adapter of each wire profile: with ``BASELINES``, the controls of that profile's selections."""
MINIMUM_ADAPTERS = {
    "openai-chat": 30,
    "anthropic-messages": 20,
    "gemini": 30,
    "openai-responses": 14,
    "bedrock-converse": 10,
    "cohere-chat": 8,
}
"""How many broken adapters each wire profile's library must hold at least."""


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
    missed = [
        s for s in broken.scenarios if outcomes.get(s, {}).get("outcome") not in ("failed", "should_failed")
    ]
    assert not missed, (
        f"{broken.name} ({broken.description}) was not caught by {broken.caught_by} on {missed}:\n"
        + _describe(broken.caught_by, broken.scenarios, outcomes)
    )


def _selections() -> list[tuple[str, frozenset[str], str, tuple[str, ...]]]:
    """Every (profile, capabilities, clause, scenarios) selection of the registry, merged per key. The
    capabilities are the broken adapter's: HARN-05's undeclared-capability check runs only where one is
    missing, so its controls must leave out the same ones."""
    by_key: dict[tuple[str, frozenset[str], str], list[str]] = {}
    for broken in BROKEN_ADAPTERS:
        wanted = by_key.setdefault((broken.profile, broken.spec.capabilities, broken.caught_by), [])
        wanted.extend(s for s in broken.scenarios if s not in wanted)
    return sorted(
        ((p, caps, c, tuple(scenarios)) for (p, caps, c), scenarios in by_key.items()),
        key=lambda row: (row[0], row[2], sorted(row[1])),
    )


def _control(kind: str, profile: str, capabilities: frozenset[str]) -> AdapterSpec:
    spec = REFERENCES[profile] if kind == "reference" else BASELINES[profile].spec
    return dataclasses.replace(spec, capabilities=capabilities)


def _selection_id(profile: str, capabilities: frozenset[str], clause: str) -> str:
    missing = sorted(REFERENCES[profile].capabilities - capabilities)
    return f"{profile}:{clause}" + "".join(f":without-{m}" for m in missing)


@pytest.mark.parametrize(
    ("profile", "capabilities", "clause", "scenarios"),
    _selections(),
    ids=[_selection_id(p, caps, c) for p, caps, c, _ in _selections()],
)
@pytest.mark.parametrize("kind", ["reference", "hooked_baseline"])
def test_controls_pass_the_same_selections(
    kind: str, profile: str, capabilities: frozenset[str], clause: str, scenarios: tuple[str, ...]
) -> None:
    control = _control(kind, profile, capabilities)
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


def test_every_profile_has_its_controls() -> None:
    assert set(BASELINES) == set(REFERENCES)
    for profile, baseline in BASELINES.items():
        assert REFERENCES[profile].wire_profile == profile
        assert baseline.spec.model == REFERENCES[profile].model, profile
        assert baseline.spec.capabilities == REFERENCES[profile].capabilities, profile
        assert baseline not in BROKEN_ADAPTERS, f"the {profile} baseline is a control, not a broken adapter"


def test_registry_is_well_formed() -> None:
    names = [b.name for b in BROKEN_ADAPTERS]
    assert len(names) == len(set(names)), "duplicate broken adapter names"
    for profile, minimum in MINIMUM_ADAPTERS.items():
        count = sum(b.profile == profile for b in BROKEN_ADAPTERS)
        assert count >= minimum, f"{profile}: {count} broken adapters, expected at least {minimum}"
    for broken in BROKEN_ADAPTERS:
        assert broken.profile in REFERENCES, f"{broken.name}: no controls for {broken.profile}"
        reference = REFERENCES[broken.profile]
        assert broken.spec.model == reference.model, (
            f"{broken.name}: built unlike the {broken.profile} reference"
        )
        if broken.caught_by != "HARN-05":  # only the undeclared-capability check needs a capability left out
            assert broken.spec.capabilities == reference.capabilities, (
                f"{broken.name}: its spec must declare what the {broken.profile} reference declares"
            )
        assert broken.caught_by in CLAUSES, broken.name
        assert broken.scenarios, broken.name
        assert broken.description, broken.name
        for scenario in broken.scenarios:
            if not scenario.startswith(RECORDED_PREFIX):  # a recorded one exists if it is planned (below)
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
