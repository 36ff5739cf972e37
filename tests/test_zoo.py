"""The foreign zoo: adapters that are thin shims over third-party client libraries (LiteLLM, LangChain, pydantic-ai), run
through the whole suite as regression data for false failures.

Each shim (``tests/zoo/``) delegates everything to its library and fixes none of its bugs. Every clause x
scenario a shim fails must be a library bug listed in ``tests/zoo/known_bugs.yaml`` with the library's own
file and line; anything else failing is a harness false failure (or a new library bug to triage), and a listed
bug that no longer fails is stale. The libraries are not part of the project's test dependencies: the test
skips without them; ``tox -e zoo`` installs the versions pinned in ``constraints/zoo.txt`` and runs it, and
``tox -e zoo-pydantic-ai`` the pydantic-ai shims (``constraints/zoo-pydantic-ai.txt``: its SDK pins fight LiteLLM's).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

# Before anything imports litellm (importorskip does): otherwise its import fetches the model cost map from the
# network, and a failed fetch is retried from a background thread that may fire in the middle of a scenario.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
KNOWN_BUGS = Path(__file__).parent / "zoo" / "known_bugs.yaml"
SHIMS = {  # spec name -> (module in tests/zoo, attribute, the libraries it needs)
    "zoo-litellm-openai": ("litellm_shims", "openai_chat", ("litellm",)),
    "zoo-litellm-anthropic": ("litellm_shims", "anthropic", ("litellm",)),
    "zoo-litellm-gemini": ("litellm_shims", "gemini", ("litellm",)),
    "zoo-langchain-openai": ("langchain_shims", "openai_chat", ("langchain_openai",)),
    "zoo-langchain-anthropic": ("langchain_shims", "anthropic", ("langchain_anthropic",)),
    "zoo-langchain-gemini": ("langchain_shims", "gemini", ("langchain_google_genai",)),
    "zoo-pydantic-ai-openai": ("pydantic_ai_shims", "openai_chat", ("pydantic_ai",)),
    "zoo-pydantic-ai-anthropic": ("pydantic_ai_shims", "anthropic", ("pydantic_ai",)),
    "zoo-pydantic-ai-gemini": ("pydantic_ai_shims", "gemini", ("pydantic_ai",)),
    "zoo-pydantic-ai-responses": ("pydantic_ai_shims", "openai_responses", ("pydantic_ai",)),
}
FAILING = ("failed", "should_failed", "stale")
GENERATED = "random_"
"""Scenarios whose inputs Hypothesis draws (scenarios/generated.py)."""
SEED = 20261124
"""Fixed: fault positions and generated inputs are drawn, and the known failures must be the same each run."""


def known_bugs() -> dict[str, dict[tuple[str, str], str]]:
    """shim -> (clause, scenario) -> reason, from the data file; malformed entries fail loudly."""
    return _load()[0]


def timing_dependent() -> set[tuple[str, str, str]]:
    """(shim, clause, scenario) of entries marked ``may_pass``: real bugs whose failure depends on timing."""
    return _load()[1]


def _load() -> tuple[dict[str, dict[tuple[str, str], str]], set[tuple[str, str, str]]]:
    entries = yaml.safe_load(KNOWN_BUGS.read_text(encoding="utf-8")) or []
    known: dict[str, dict[tuple[str, str], str]] = {}
    may_pass: set[tuple[str, str, str]] = set()
    for i, entry in enumerate(entries):
        missing = {"shim", "clause", "scenarios", "reason"} - set(entry)
        assert not missing, f"{KNOWN_BUGS.name} entry {i}: missing {sorted(missing)}"
        assert entry["shim"] in SHIMS, f"{KNOWN_BUGS.name} entry {i}: unknown shim {entry['shim']!r}"
        assert ".py:" in entry["reason"], f"{KNOWN_BUGS.name} entry {i}: the reason must name file.py:line"
        for scenario in entry["scenarios"]:
            known.setdefault(entry["shim"], {})[(entry["clause"], scenario)] = entry["reason"]
            if entry.get("may_pass"):
                may_pass.add((entry["shim"], entry["clause"], scenario))
    return known, may_pass


def test_known_bugs_file_is_well_formed() -> None:
    assert known_bugs(), "tests/zoo/known_bugs.yaml lists no library bug"


def _spec(name: str) -> Any:
    module, attribute, libraries = SHIMS[name]
    for library in libraries:
        pytest.importorskip(
            library,
            reason=f"{library} is not installed: the zoo runs under `tox -e zoo` (constraints/zoo.txt)",
        )
    return getattr(importlib.import_module(f"zoo.{module}"), attribute)


@pytest.mark.parametrize("name", sorted(SHIMS))
def test_shim_fails_only_on_known_library_bugs(name: str) -> None:
    from helix_conformance.testing import run_conformance

    spec = _spec(name)
    assert spec.name == name
    run_conformance(spec, scenarios=["text_basic"], clauses=["RES-01"], seed=SEED)  # lazy imports paid here,
    report = run_conformance(spec, seed=SEED)  # not inside the first scenario's 10 s (HARN-03)
    failing = {(r["clause"], r["scenario"]): r for r in report["results"] if r["outcome"] in FAILING}
    known = known_bugs().get(name, {})
    unexplained = sorted(set(failing) - set(known))
    # Generated-input scenarios (random_*) are explored by Hypothesis: which of the clauses a bad input breaks
    # is blamed first can change from run to run, so a listed one of them may pass; anything new still fails.
    flaky = timing_dependent()
    stale = sorted(
        key
        for key in set(known) - set(failing)
        if not key[1].startswith(GENERATED) and (name, *key) not in flaky
    )
    details = "\n\n".join(f"{c} {s}:\n{(failing[c, s]['message'] or '')[:1500]}" for c, s in unexplained)
    assert not unexplained, (
        f"{name}: {len(unexplained)} failure(s) not explained by a known library bug (a harness false failure, "
        f"or a new library bug for {KNOWN_BUGS.name}): {unexplained}\n\n{details}"
    )
    assert not stale, f"{name}: listed in {KNOWN_BUGS.name} but no longer failing: {stale}"
    assert not report["gate_errors"], report["gate_errors"]
