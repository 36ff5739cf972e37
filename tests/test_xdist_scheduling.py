"""Under ``pytest -n``, every clause of a scenario runs on the same xdist worker (helix_conformance/scheduling.py),
so a scenario is run once however many workers there are; an explicit ``--dist`` is left to the user."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from plugin_runs import output, run

from helix_conformance.scheduling import scenario_scope

pytestmark = pytest.mark.slow  # pytest-xdist sessions in subprocesses: an integration that rarely changes

SELECT = ("-k", "text_basic or tool_call_parallel or retry_429", "-v")
WORKER_LINE = re.compile(r"^\[(gw\d+)\].*PASSED .*test_conformance\[(?P<id>[^\]]+)\]")


def test_the_scope_is_the_profile_and_the_scenario() -> None:
    assert (
        scenario_scope("helix-conformance::test_conformance[openai-chat::tool_call_parallel::RES-06]")
        == "openai-chat::tool_call_parallel"
    )
    assert (
        scenario_scope("helix-conformance::test_conformance[gemini::recorded/google/test_x[0]::STR-10]")
        == "gemini::recorded/google/test_x[0]"
    )
    assert scenario_scope("tests/test_other.py::test_thing[a::b::c]") is None


def _workers_by_scenario(result: pytest.RunResult) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    for line in result.outlines:
        match = WORKER_LINE.match(line)
        if match:
            scope, _clause = match["id"].rsplit("::", 1)
            seen[scope].add(match.group(1))
    return seen


def test_each_scenario_runs_on_one_worker(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=my_adapter:spec", "-n", "2", *SELECT)
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(["scheduling tests via ScenarioScheduling"])
    seen = _workers_by_scenario(result)
    assert len(seen) >= 4, output(result)
    assert all(len(workers) == 1 for workers in seen.values()), seen
    assert len(set().union(*seen.values())) == 2, seen  # and the work was shared


def test_an_explicit_dist_mode_is_kept(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=my_adapter:spec", "-n", "2", "--dist", "loadfile", *SELECT)
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(["scheduling tests via LoadFileScheduling"])
