"""pytest-xdist scheduling by scenario: every clause of a scenario goes to the same xdist worker.

A scenario is run once and judged by all its clauses (suite.py); spread over workers by xdist's default
``load`` scheduling, each worker that gets one of its clauses runs the scenario again, so ``-n 2`` used to do
more work than a serial run. Scheduling whole scenarios keeps a run per scenario, whatever ``-n`` is.
"""

from __future__ import annotations

import re

from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

_CONFORMANCE_ID = re.compile(
    r"::test_conformance\[(?P<profile>[^:\]]+)::(?P<scenario>.+)::(?P<clause>[^:\]]+)\]$"
)


def scenario_scope(nodeid: str) -> str | None:
    """``profile::scenario`` of a conformance item's node id, None for any other test."""
    match = _CONFORMANCE_ID.search(nodeid)
    return f"{match['profile']}::{match['scenario']}" if match else None


class ScenarioScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """xdist's load-scope scheduling with a conformance item's scenario as its scope."""

    def _split_scope(self, nodeid: str) -> str:
        scope = scenario_scope(nodeid)
        return scope if scope is not None else str(super()._split_scope(nodeid))
