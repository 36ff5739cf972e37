"""The generated regions of the docs: how each is rendered, and the comparison (``HELIX_UPDATE_DOCS=1`` writes
the rendering into the doc instead, for a deliberate change: review the diff)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from doc_numbers import ROOT

GENERATED = {
    "profile-table": "the wire profiles with their scenario, cassette and clause counts (tests/test_doc_numbers.py)",
    "openai-summary": "the terminal summary of `pytest --adapter=openai` (tests/test_plugin_e2e.py, the full run)",
    "guide-checks": "the checks `pytest --adapter=acme` runs (tests/test_doc_numbers.py, from the plan)",
    "recorded-tally": "the recordings per provider (tests/test_recorded.py, from replaying them)",
}
PROFILE_ROWS = {
    "openai-chat": (
        "`openai-chat` (OpenAI Chat Completions and compatible servers)",
        "openai",
        "openai_chat.py",
    ),
    "anthropic-messages": ("`anthropic-messages` (Anthropic Messages)", "anthropic", "anthropic.py"),
    "gemini": ("`gemini` (Gemini `:streamGenerateContent?alt=sse`)", "gemini", "gemini.py"),
    "openai-responses": (
        "`openai-responses` (OpenAI Responses API, `POST /v1/responses`)",
        "openai-responses",
        "openai_responses.py",
    ),
}


def check_region(path: Path, name: str, rendered: str) -> None:
    """The region ``name`` of ``path`` holds ``rendered`` (or, with HELIX_UPDATE_DOCS set, is made to)."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(rf"(<!-- generated: {re.escape(name)} -->\n)(.*?)(<!-- /generated -->)", re.S)
    found = pattern.search(text)
    assert found, f"{path.name} has no generated region {name!r}"
    body = rendered.rstrip("\n") + "\n"
    if found.group(2) == body:
        return
    if os.environ.get("HELIX_UPDATE_DOCS"):
        path.write_text(text[: found.start(2)] + body + text[found.end(2) :], encoding="utf-8")
        return
    raise AssertionError(
        f"{path.relative_to(ROOT)}: the generated region {name!r} ({GENERATED[name]}) is stale; rerun this test "
        f"with HELIX_UPDATE_DOCS=1 and review the diff.\n--- in the doc:\n{found.group(2)}--- now:\n{body}"
    )


def profile_table() -> str:
    from helix_conformance.adapters import resolve_adapter
    from helix_conformance.scenarios import scenarios_for
    from helix_conformance.suite import plan_suite, profile_for

    lines = [
        "| profile | reference adapter | scenarios | cassettes | clauses run |",
        "|---|---|---|---|---|",
    ]
    for name, (label, adapter, module) in PROFILE_ROWS.items():
        spec = resolve_adapter(adapter).spec
        profile = profile_for(spec)
        assert profile.name == name
        scenarios = [s for s in scenarios_for(name) if profile.runs_scenario(s)]
        cassettes = len(list((ROOT / "cassettes" / name).glob("*.yaml")))
        clauses = len({p.clause for p in plan_suite(spec)})
        lines.append(
            f"| {label} | `--adapter={adapter}`, [reference_adapters/{module}](reference_adapters/{module}) | "
            f"{len(scenarios)} | {cassettes} | {clauses} |"
        )
    return "\n".join(lines)


def guide_checks() -> str:
    """The sentence before the guide's summary: how many checks its adapter's run has (the plan of the spec the
    guide writes: the reference OpenAI Chat spec with the guide's capabilities)."""
    import dataclasses

    from helix_conformance.suite import plan_suite
    from reference_adapters.openai_chat import spec

    guide = (ROOT / "docs" / "writing-an-adapter.md").read_text(encoding="utf-8")
    declared = re.findall(r"capabilities=frozenset\(\{([^}]*)\}\)", guide)[-1]
    capabilities = frozenset(re.findall(r'"([a-z_]+)"', declared))
    checks = len(plan_suite(dataclasses.replace(spec, capabilities=capabilities)))
    return (
        f"It runs {checks} checks (how long that takes on a 2-core machine: the example SDK adapters' rows of "
        "[docs/speed.md](speed.md#measured)) and ends with the verdict:"
    )


PROVIDER_LABELS = {"alibaba": "alibaba (DashScope, Qwen)"}


def recorded_tally(rows: list[tuple[str, int, int, int]]) -> str:
    """docs/real-traffic.md's table from ``importing.recorded.tally``: (provider, recordings, as expected,
    excluded) per provider."""
    lines = ["| provider | recordings | replayed | as expected | excluded |", "|---|---:|---:|---:|---:|"]
    for provider, total, passed, excluded in rows:
        lines.append(
            f"| {PROVIDER_LABELS.get(provider, provider)} | {total} | {total - excluded} | {passed} | {excluded} |"
        )
    total, passed, excluded = (sum(row[i] for row in rows) for i in (1, 2, 3))
    lines.append(f"| **total** | **{total}** | **{total - excluded}** | **{passed}** | **{excluded}** |")
    return "\n".join(lines)


def summary_block(output: str) -> str:
    """The summary a run printed, as the README shows it: from its title to the verdict, without the lines
    that vary between runs (virtual time skipped, real waits)."""
    lines = output.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("helix-conformance summary for adapter")
    )
    end = next(i for i, line in enumerate(lines) if line.startswith("VERDICT:"))
    kept = [
        line for line in lines[start : end + 1] if not line.startswith(("virtual time:", "real waiting:"))
    ]
    return "```\n" + "\n".join(kept) + "\n```"
