"""Scenario catalogue and checks registry integrity: nothing that silently never runs."""

from __future__ import annotations

import importlib

import pytest

from helix_conformance.checks import registry
from helix_conformance.checks.registry import load_all_checks
from helix_conformance.clauses import CLAUSES
from helix_conformance.contract import CAPABILITIES
from helix_conformance.profiles import KNOWN_PROFILES, get_profile
from helix_conformance.scenarios import SCENARIOS, get_scenario, scenarios_for
from helix_conformance.scenarios.model import Reuse

WITHOUT_A_CHECK = {"STOP-03"}
"""STOP-03 needs a non-streaming entry point the seed contract lacks. (HARN-05 is judged once per session by
the plugin, and per scenario only where a capability is undeclared.)"""
NOT_FOR_PROFILE = {
    "openai-chat": {"MSG-08", "CACHE-02", "CACHE-04"},  # no reasoning round trip; others' caching rules
    "anthropic-messages": {
        "CACHE-03",
        "CACHE-04",
        "ERR-08",
    },  # OpenAI's and Gemini's caching; insufficient_quota
    # Gemini sends parsed argument objects only (no partial or invalid JSON to cut off or reject)
    "gemini": {"CACHE-02", "CACHE-03", "ERR-08", "RES-10", "FIN-03"},
    "openai-responses": {"CACHE-02", "CACHE-04"},  # Anthropic's and Gemini's caching rules
    "bedrock-converse": {"CACHE-02", "CACHE-03", "CACHE-04", "ERR-08"},  # others' caching; insufficient_quota
    # Cohere needs no reasoning back (its reasoning guide asks for none); no cache markers; no quota body
    "cohere-chat": {"MSG-08", "CACHE-02", "CACHE-03", "CACHE-04", "ERR-08"},
}


def test_scenario_ids_unique_and_references_resolve() -> None:
    assert len({s.id for s in SCENARIOS}) == len(SCENARIOS)
    for scenario in SCENARIOS:
        assert scenario.requires <= set(CAPABILITIES), scenario.id
        assert scenario.should <= set(CLAUSES), scenario.id
        for exchange in scenario.exchanges:
            if isinstance(exchange.response, Reuse):
                assert get_scenario(exchange.response.scenario).recorded_exchanges


def test_every_check_applies_to_some_scenario_of_every_profile() -> None:
    for profile_name in KNOWN_PROFILES:
        profile = get_profile(profile_name)
        for clause, check in load_all_checks().items():
            hits = [s.id for s in scenarios_for(profile_name) if check.applies(s, profile)]
            if clause in NOT_FOR_PROFILE[profile_name]:
                assert not hits, f"{clause} is not an {profile_name} clause but runs on {hits}"
            else:
                assert hits, f"{clause} applies to no scenario of {profile_name}: it would never run"


def test_every_clause_has_a_check_or_a_stated_reason() -> None:
    missing = set(CLAUSES) - set(load_all_checks())
    assert missing == WITHOUT_A_CHECK


def test_scripted_profile_only_runs_clauses_that_have_checks() -> None:
    from helix_conformance.profiles.scripted import WIRE_FREE_CLAUSES

    assert set(WIRE_FREE_CLAUSES) <= set(load_all_checks())


def test_scenario_docs_are_current() -> None:
    from pathlib import Path

    from helix_conformance.scenarios.docs import render

    path = Path(__file__).resolve().parents[1] / "docs" / "scenarios.md"
    assert path.read_text(encoding="utf-8") == render(), (
        "docs/scenarios.md is stale: python -m helix_conformance.scenarios.docs > docs/scenarios.md"
    )


def test_a_check_module_imported_again_replaces_its_checks_and_a_second_check_is_refused() -> None:
    """A pytest run in-process drops the modules it imported, so the next one imports the checks again (it
    failed with "clause HARN-01 already has a check" in the run after); another check for a clause is an error."""
    load_all_checks()
    module = importlib.import_module(registry.REGISTRY["HARN-01"].func.__module__)
    importlib.reload(module)
    assert registry.REGISTRY["HARN-01"].func is getattr(module, registry.REGISTRY["HARN-01"].func.__name__)
    with pytest.raises(RuntimeError, match="HARN-01 already has a check"):
        registry.check("HARN-01")(lambda ctx: None)
