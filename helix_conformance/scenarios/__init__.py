"""The scenario catalogue: provider-neutral, frozen, documented (see docs/scenarios.md)."""

from __future__ import annotations

from . import bedrock_cohere_shapes, compat, failures, field_bugs, generated, success, wire_shapes
from .model import Scenario

SCENARIOS: tuple[Scenario, ...] = (
    success.SCENARIOS
    + failures.SCENARIOS
    + compat.SCENARIOS
    + wire_shapes.SCENARIOS
    + field_bugs.SCENARIOS
    + bedrock_cohere_shapes.SCENARIOS
    + generated.SCENARIOS
)
_BY_ID = {s.id: s for s in SCENARIOS}
if len(_BY_ID) != len(SCENARIOS):  # pragma: no cover - guarded by tests too
    raise RuntimeError("duplicate scenario ids in the catalogue")


def get_scenario(scenario_id: str) -> Scenario:
    try:
        return _BY_ID[scenario_id]
    except KeyError:
        raise KeyError(f"unknown scenario {scenario_id!r}; known: {', '.join(sorted(_BY_ID))}") from None


def scenarios_for(profile: str) -> tuple[Scenario, ...]:
    return tuple(s for s in SCENARIOS if s.applies_to_profile(profile))


__all__ = ["SCENARIOS", "Scenario", "get_scenario", "scenarios_for"]
