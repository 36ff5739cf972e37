"""Adapters written elsewhere (issue 29 section 5): the three adapters of ``../shared/foreign-adapters`` (official
openai, anthropic and google-genai SDKs, written independently of this project) through the whole suite, judged for the
default and the ``--helix-strict`` gate.

Every clause x scenario they fail must be an adapter bug listed in ``tests/foreign/known_bugs.yaml`` with the
evidence that proves the wire behaviour; anything else is a harness false failure (or a new adapter bug to triage),
and a listed bug that no longer fails is stale. Each adapter's suite takes 15-30 s on a quiet machine, so
they are slow tests: the README's test command (``--slow``, what ``.ci/run`` runs, with ``../shared`` installed
beside it) and ``tox -e foreign`` run them, a plain ``pytest`` leaves them out.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from helix_conformance.clauses import CLAUSES

KNOWN_BUGS = Path(__file__).parent / "foreign" / "known_bugs.yaml"
ADAPTERS = ("foreign-openai-sdk", "foreign-anthropic-sdk", "foreign-google-genai-sdk")
FAILING = ("failed", "should_failed", "stale")
SEED = 20261124
"""Fixed: fault positions and generated inputs are drawn, and the known failures must be the same each run."""


def known_bugs() -> dict[str, dict[tuple[str, str], str]]:
    """adapter -> (clause, scenario) -> reason, from the data file; malformed entries fail loudly. An entry with
    ``requires: MODULE`` holds only where that module is importable (a bug an installed package brings out)."""
    return _load()[0]


def timing_dependent() -> set[tuple[str, str, str]]:
    """(adapter, clause, scenario) of entries marked ``may_pass``: real bugs whose failure depends on timing or
    on a draw the harness does not make (the SDK's own ``random``)."""
    return _load()[1]


def _load() -> tuple[dict[str, dict[tuple[str, str], str]], set[tuple[str, str, str]]]:
    entries = yaml.safe_load(KNOWN_BUGS.read_text(encoding="utf-8")) or []
    known: dict[str, dict[tuple[str, str], str]] = {}
    may_pass: set[tuple[str, str, str]] = set()
    for i, entry in enumerate(entries):
        missing = {"adapter", "clause", "bug", "scenarios", "reason"} - set(entry)
        assert not missing, f"{KNOWN_BUGS.name} entry {i}: missing {sorted(missing)}"
        assert entry["adapter"] in ADAPTERS, (
            f"{KNOWN_BUGS.name} entry {i}: unknown adapter {entry['adapter']!r}"
        )
        assert entry["clause"] in CLAUSES, f"{KNOWN_BUGS.name} entry {i}: unknown clause {entry['clause']!r}"
        evidence = entry["reason"]
        assert ".py:" in evidence or "http" in evidence or "recordings/" in evidence, (
            f"{KNOWN_BUGS.name} entry {i}: the reason must cite the evidence (source file:line, documentation "
            "or a recording)"
        )
        if entry.get("requires") and importlib.util.find_spec(entry["requires"]) is None:
            continue
        for scenario in entry["scenarios"]:
            known.setdefault(entry["adapter"], {})[(entry["clause"], scenario)] = evidence
            if entry.get("may_pass"):
                may_pass.add((entry["adapter"], entry["clause"], scenario))
    return known, may_pass


def compare(
    failing: set[tuple[str, str]], known: set[tuple[str, str]]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(unexplained failures, stale listings) of one adapter's run."""
    return sorted(failing - known), sorted(known - failing)


def test_known_bugs_file_is_well_formed() -> None:
    assert known_bugs(), f"{KNOWN_BUGS} lists no adapter bug"


def test_a_new_failure_and_a_stale_listing_both_fail_the_comparison() -> None:
    known = {("NT-05", "text_basic")}
    assert compare({("NT-05", "text_basic")}, known) == ([], [])
    assert compare({("NT-05", "text_basic"), ("RES-01", "tool_call")}, known)[0] == [("RES-01", "tool_call")]
    assert compare(set(), known)[1] == [("NT-05", "text_basic")]


def _enabled() -> None:
    pytest.importorskip(
        "helix_foreign_adapters",
        reason="../shared/foreign-adapters is not installed: `pip install -e ../shared/foreign-adapters`",
    )


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("name", ADAPTERS)
def test_foreign_adapter_fails_only_on_evidenced_bugs(name: str) -> None:
    """One run judges both gates: ``--helix-strict`` changes what an outcome does to the verdict, never which
    checks run or what they find (gate.Gate), so the strict verdict is the default run's failures, SHOULDs too."""
    _enabled()
    from helix_conformance.testing import run_conformance

    run_conformance(
        name, scenarios=["text_basic"], clauses=["RES-01"], seed=SEED
    )  # imports paid here, not in
    report = run_conformance(name, seed=SEED)  # the first scenario's limit (HARN-03)
    rows: dict[tuple[str, str], dict[str, Any]] = {
        (r["clause"], r["scenario"]): r for r in report["results"] if r["outcome"] in FAILING
    }
    unexplained, stale = compare(set(rows), set(known_bugs().get(name, {})))
    stale = [key for key in stale if (name, *key) not in timing_dependent()]
    details = "\n\n".join(f"{c} {s}:\n{(rows[c, s]['message'] or '')[:1500]}" for c, s in unexplained)
    assert not unexplained, (
        f"{name}: {len(unexplained)} failure(s) not explained by a listed adapter bug (a harness false failure, "
        f"or a new bug for {KNOWN_BUGS.name}): {unexplained}\n\n{details}"
    )
    assert not stale, f"{name}: listed in {KNOWN_BUGS.name} but no longer failing: {stale}"
    assert not report["gate_errors"], report["gate_errors"]
    must = [key for key, row in rows.items() if row["level"] == "MUST"]
    assert all(
        row["outcome"] == ("failed" if row["level"] == "MUST" else "should_failed") for row in rows.values()
    )
    assert report["passed"] is not must, (report["verdict_text"], sorted(rows))
