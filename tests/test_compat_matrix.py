"""Serve only what the provider sends to the adapter's request, and judge server quirks where they belong.

- A scenario whose precondition the adapter's request does not meet is *not applicable to this adapter's
  request*: a skip with the reason, counted in the terminal summary and every report, never a failure; its
  request-side clauses are still judged (the request came before any answer).
- A quirk of a server the adapter does not declare (``AdapterSpec.servers``) is run and shown in the
  compatibility matrix, and never fails the gate (xdist, baselines and ``--helix-strict`` included); declared,
  it is judged as before. A request to a server's own URL shape (Vertex AI, Azure) targets that server.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from broken_adapters import BROKEN_ADAPTERS
from plugin_runs import adapter_module, output, run

from helix_conformance.cli import main as cli_main
from helix_conformance.contract import AdapterSpec
from helix_conformance.testing import run_conformance

TESTS = Path(__file__).resolve().parent
TIMEOUT = 5.0


def _broken(name: str) -> AdapterSpec:
    return next(b for b in BROKEN_ADAPTERS if b.name == name).spec


def _rows(report: dict[str, Any], clause: str) -> dict[str, str]:
    return {r["scenario"]: r["outcome"] for r in report["results"] if r["clause"] == clause}


# --- the matrix through run_conformance ----------------------------------------------------------------------


def test_a_quirk_of_an_undeclared_server_goes_to_the_matrix_and_a_declared_ones_to_the_gate() -> None:
    trusts_ids = _broken("trusts_provider_ids")  # returns DeepSeek's duplicate ids as sent (RES-03)
    scenarios = ["compat_duplicate_tool_ids", "tool_call_parallel"]
    openai_only = dataclasses.replace(trusts_ids, servers=frozenset())
    report = run_conformance(openai_only, scenarios=scenarios, clauses=["RES-03"], timeout=TIMEOUT)
    assert _rows(report, "RES-03") == {
        "compat_duplicate_tool_ids": "compat_failed",
        "tool_call_parallel": "passed",
    }
    assert report["passed"], report["gate_errors"]
    cells = {row["id"]: row for row in report["compatibility"]["servers"]}
    assert cells["deepseek"]["failing"] == ["RES-03"]
    assert not cells["deepseek"]["works"]
    assert not cells["deepseek"]["declared"]
    assert cells["openai"]["works"]
    assert cells["openai"]["declared"]
    assert cells["glm"]["scenarios"] == ["compat_duplicate_tool_ids"]

    declared = dataclasses.replace(trusts_ids, servers=frozenset({"openai", "deepseek"}))
    report = run_conformance(declared, scenarios=scenarios, clauses=["RES-03"], timeout=TIMEOUT)
    assert _rows(report, "RES-03")["compat_duplicate_tool_ids"] == "failed"
    assert not report["passed"]
    assert {row["id"]: row["declared"] for row in report["compatibility"]["servers"]}["deepseek"]


def test_a_foreign_adapter_declaring_deepseek_is_judged_on_deepseeks_quirks_again() -> None:
    """The foreign OpenAI SDK adapter keeps DeepSeek's duplicate ids (its own bug for DeepSeek): declared,
    that fails the gate; as the original declares (OpenAI only), it is in the matrix."""
    from foreign_copies import openai_deepseek  # imports the openai SDK: here, not at every collection

    scenarios, clauses = ["compat_duplicate_tool_ids"], ["RES-03"]
    judged = run_conformance(openai_deepseek.spec, scenarios=scenarios, clauses=clauses, timeout=TIMEOUT)
    assert _rows(judged, "RES-03") == {"compat_duplicate_tool_ids": "failed"}
    assert not judged["passed"]
    as_written = dataclasses.replace(openai_deepseek.spec, servers=frozenset())
    matrix = run_conformance(as_written, scenarios=scenarios, clauses=clauses, timeout=TIMEOUT)
    assert _rows(matrix, "RES-03") == {"compat_duplicate_tool_ids": "compat_failed"}
    assert matrix["passed"]


def test_an_unknown_server_is_refused_with_the_known_ones() -> None:
    spec = dataclasses.replace(_broken("trusts_provider_ids"), servers=frozenset({"deepsek"}))
    with pytest.raises(
        ValueError, match=r"unknown server\(s\) 'deepsek' for wire profile 'openai-chat'.*deepseek"
    ):
        run_conformance(spec, scenarios=["text_basic"], clauses=["RES-01"], timeout=TIMEOUT)


# --- Vertex's streamed arguments: not applicable, matrix or gate, by the request --------------------------------


def _gemini_variant(
    base: AdapterSpec, *, servers: frozenset[str], vertex_url: bool = False, ignores_options: bool = False
) -> AdapterSpec:
    """``base`` (a Gemini adapter) targeting ``servers``; ``vertex_url``: posting to Vertex AI's URL shape;
    ``ignores_options``: dropping provider_options (so its request never asks for streamed arguments)."""
    factory = base.factory

    def build(ctx: Any) -> Any:
        adapter = factory(ctx)
        if vertex_url:
            origin = adapter._base.removesuffix("/v1beta")
            adapter.url = lambda model: (  # type: ignore[method-assign]
                f"{origin}/v1/projects/p/locations/us-central1/publishers/google/models/{model}"
                ":streamGenerateContent?alt=sse"
            )
        if ignores_options:
            step = adapter.generate_step

            async def generate_step(step_input: Any) -> Any:
                config = step_input.config.model_copy(update={"provider_options": None})
                return await step(step_input.model_copy(update={"config": config}))

            adapter.generate_step = generate_step
        return adapter

    return dataclasses.replace(base, factory=build, servers=servers)


PARTIAL = ["tool_call_streamed_typed_arguments"]


def test_a_request_that_does_not_ask_for_streamed_arguments_is_not_judged_on_them() -> None:
    spec = _gemini_variant(
        _broken("gemini_string_partial_args_only"),
        servers=frozenset({"gemini-api", "vertex"}),
        ignores_options=True,
    )
    report = run_conformance(spec, scenarios=PARTIAL, timeout=TIMEOUT)
    outcomes = {r["clause"]: r["outcome"] for r in report["results"]}
    assert outcomes["RES-04"] == "not_applicable"
    assert outcomes["MSG-02"] == "passed"  # the request is judged all the same
    assert outcomes["TOOL-01"] == "passed"
    (reason,) = report["not_applicable"]["reasons"]
    assert reason["scenarios"] == PARTIAL
    assert "streamFunctionCallArguments: true" in reason["reason"]
    assert report["not_applicable"]["checks"] == sum(1 for o in outcomes.values() if o == "not_applicable")
    assert report["passed"]


def test_a_request_that_asks_is_judged_for_vertex_by_declaration_or_by_url() -> None:
    broken = _broken("gemini_string_partial_args_only")  # loses numberValue/boolValue pieces (RES-04)
    gemini_api_only = _gemini_variant(broken, servers=frozenset({"gemini-api"}))
    report = run_conformance(gemini_api_only, scenarios=PARTIAL, clauses=["RES-04"], timeout=TIMEOUT)
    assert _rows(report, "RES-04") == {PARTIAL[0]: "compat_failed"}
    assert report["passed"]
    vertex_row = next(r for r in report["compatibility"]["servers"] if r["id"] == "vertex")
    assert vertex_row["failing"] == ["RES-04"]
    on_vertex_url = _gemini_variant(broken, servers=frozenset({"gemini-api"}), vertex_url=True)
    report = run_conformance(on_vertex_url, scenarios=PARTIAL, clauses=["RES-04"], timeout=TIMEOUT)
    assert _rows(report, "RES-04") == {PARTIAL[0]: "failed"}  # its URL says it targets Vertex AI
    declared = _gemini_variant(broken, servers=frozenset({"gemini-api", "vertex"}))
    report = run_conformance(declared, scenarios=PARTIAL, clauses=["RES-04"], timeout=TIMEOUT)
    assert _rows(report, "RES-04") == {PARTIAL[0]: "failed"}


# --- the plugin, as users run it -----------------------------------------------------------------------------

MODULE = f"""
import dataclasses, sys
sys.path.insert(0, {str(TESTS)!r})
from broken_adapters import BROKEN_ADAPTERS
from reference_adapters.gemini import GeminiAdapter, spec as gemini

trusts = next(b for b in BROKEN_ADAPTERS if b.name == "trusts_provider_ids").spec
from broken_adapters._base import broken
from broken_adapters.field_bugs import DeveloperRole
developer_role = broken("developer-role", DeveloperRole, "MSG-01", ("system_multiturn",), "d", servers=frozenset()).spec
openai_only = dataclasses.replace(trusts, name="openai-only", servers=frozenset())
with_deepseek = dataclasses.replace(trusts, name="with-deepseek", servers=frozenset({{"openai", "deepseek"}}))
unknown_server = dataclasses.replace(trusts, name="unknown-server", servers=frozenset({{"deepsek"}}))


class NoProviderOptions(GeminiAdapter):
    async def generate_step(self, step_input):
        config = step_input.config.model_copy(update={{"provider_options": None}})
        return await super().generate_step(step_input.model_copy(update={{"config": config}}))


no_options = dataclasses.replace(
    gemini, name="no-options", factory=lambda ctx: NoProviderOptions(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout)
)
"""
COMPAT = ("-k", "compat_duplicate_tool_ids or text_basic")


@pytest.fixture
def compat_adapters(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    return adapter_module(pytester, monkeypatch, "compat_adapters", MODULE)


def _report(pytester: pytest.Pytester, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    return data


@pytest.mark.slow  # a session per way of running, xdist included
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_matrix_is_in_the_summary_and_every_report_and_leaves_the_exit_code(
    compat_adapters: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    result = run(
        compat_adapters,
        "--adapter=compat_adapters:openai_only",
        *COMPAT,
        *workers,
        "--helix-strict",
        "--helix-report=r.json,r.md,r.html",
    )
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(
        [
            "compatibility matrix of wire profile openai-chat*never fail the gate:",
            "*works with: OpenAI (declared) ✓*DeepSeek ✗ RES-03*",
            "*DeepSeek: RES-03 on compat_duplicate_tool_ids",
            "VERDICT: PASS*",
        ]
    )
    data = _report(compat_adapters, "r.json")
    assert data["schema_version"] == 3
    assert data["adapter"]["servers"] == ["openai"]
    deepseek = next(row for row in data["compatibility"]["servers"] if row["id"] == "deepseek")
    assert (deepseek["works"], deepseek["failing"]) == (False, ["RES-03"])
    row = next(
        r for r in data["results"] if r["scenario"] == "compat_duplicate_tool_ids" and r["clause"] == "RES-03"
    )
    assert row["outcome"] == "compat_failed"
    assert "deepseek" in row["servers"]
    markdown = (compat_adapters.path / "r.md").read_text(encoding="utf-8")
    assert "## Compatibility matrix" in markdown
    assert "| DeepSeek |  |" in markdown
    assert "RES-03 on compat\\_duplicate\\_tool\\_ids" in markdown
    html = (compat_adapters.path / "r.html").read_text(encoding="utf-8")
    assert "<h2>Compatibility matrix</h2>" in html
    assert "<td>DeepSeek</td>" in html


def test_a_request_shape_only_undeclared_servers_reject_is_in_the_matrix_not_the_gate(
    compat_adapters: pytest.Pytester,
) -> None:
    """`developer` as the system role: OpenAI takes it, DeepSeek and others answer 400 (server_rejections.py)."""
    result = run(
        compat_adapters,
        "--adapter=compat_adapters:developer_role",
        "-k",
        "system_multiturn and MSG-01",
        "--helix-report=r.json",
    )
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(["*works with: OpenAI (declared) ✓*DeepSeek ✗ MSG-01*", "VERDICT: PASS*"])
    deepseek = next(
        r for r in _report(compat_adapters, "r.json")["compatibility"]["servers"] if r["id"] == "deepseek"
    )
    assert (deepseek["works"], deepseek["failing"]) == (False, ["MSG-01"]), deepseek


def test_a_declared_servers_quirk_fails_the_gate(compat_adapters: pytest.Pytester) -> None:
    result = run(compat_adapters, "--adapter=compat_adapters:with_deepseek", *COMPAT)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    result.stdout.fnmatch_lines(["*DeepSeek (declared) ✗ RES-03*", "VERDICT: FAIL*RES-03*"])


@pytest.mark.slow  # sessions that write and read a baseline: rarely changed
def test_a_matrix_failure_needs_no_baseline_and_writing_one_leaves_it_out(
    compat_adapters: pytest.Pytester,
) -> None:
    compat_adapters.makefile(
        ".yaml",
        baseline="entries:\n  - {clause: RES-03, scenario: compat_duplicate_tool_ids, reason: DeepSeek ids}\n",
    )
    result = run(
        compat_adapters, "--adapter=compat_adapters:openai_only", *COMPAT, "--helix-baseline=baseline.yaml"
    )
    assert result.ret == pytest.ExitCode.OK, output(result)
    assert "stale baseline" not in output(result)
    result = run(
        compat_adapters,
        "--adapter=compat_adapters:openai_only",
        *COMPAT,
        "--helix-baseline=baseline.yaml",
        "--helix-write-baseline",
    )
    assert result.ret == pytest.ExitCode.OK, output(result)
    assert "compat_duplicate_tool_ids" not in (compat_adapters.path / "baseline.yaml").read_text()


def test_an_unknown_server_is_a_usage_error(compat_adapters: pytest.Pytester) -> None:
    result = run(compat_adapters, "--adapter=compat_adapters:unknown_server", *COMPAT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*unknown server(s) 'deepsek' for wire profile 'openai-chat'*known: openai, azure-openai*"]
    )


def test_not_applicable_checks_are_counted_with_their_reason_everywhere(
    compat_adapters: pytest.Pytester,
) -> None:
    result = run(
        compat_adapters,
        "--adapter=compat_adapters:no_options",
        "-k",
        "tool_call_streamed_arguments or text_basic",
        "--helix-report=r.json,r.md,r.html",
    )
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(
        [
            "not applicable to this adapter's request: * check(s) on 1 scenario(s), not judged*",
            "  - tool_call_streamed_arguments (* checks): the provider sends this response only to a request that "
            "asks Vertex AI to stream call arguments*",
        ]
    )
    data = _report(compat_adapters, "r.json")
    skipped = [r for r in data["results"] if r["outcome"] == "not_applicable"]
    assert skipped
    assert data["not_applicable"]["checks"] == len(skipped)
    assert {r["scenario"] for r in skipped} == {"tool_call_streamed_arguments"}
    assert "## Not applicable to this adapter's request" in (compat_adapters.path / "r.md").read_text()
    assert (
        "<h2>Not applicable to this adapter's request</h2>" in (compat_adapters.path / "r.html").read_text()
    )


@pytest.mark.slow  # an old report read back: rarely changed
def test_a_schema_2_report_is_still_rendered(
    compat_adapters: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(compat_adapters, "--adapter=compat_adapters:openai_only", *COMPAT, "--helix-report=r.json")
    assert result.ret == pytest.ExitCode.OK, output(result)
    data = _report(compat_adapters, "r.json")
    old = {k: v for k, v in data.items() if k not in ("compatibility", "not_applicable")}
    old["schema_version"] = 2
    old["adapter"] = {k: v for k, v in data["adapter"].items() if k != "servers"}
    old["results"] = [
        {k: v for k, v in r.items() if k != "servers"}
        for r in data["results"]
        if r["outcome"] in ("passed", "failed")
    ]
    path = compat_adapters.path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    for fmt in ("md", "html", "json", "badge"):
        assert cli_main(["report", str(path), "--format", fmt]) == 0
    assert "Compatibility matrix" not in capsys.readouterr().out


# --- the replay serves the servers' own URL shapes -----------------------------------------------------------


def test_azure_and_claude_on_vertex_urls_are_served_and_judged() -> None:
    """An adapter posting to Azure OpenAI's deployment URL, or to Claude on Vertex AI's ``:streamRawPredict``
    (with ``anthropic_version`` in the body and a bearer token), is served as at the provider's own URL and
    judged the same."""
    from reference_adapters.anthropic import AnthropicAdapter
    from reference_adapters.anthropic import spec as anthropic
    from reference_adapters.openai_chat import OpenAIChatAdapter
    from reference_adapters.openai_chat import spec as openai

    def azure(ctx: Any) -> Any:
        origin = ctx.base_url.removesuffix("/v1")
        return OpenAIChatAdapter(
            api_key=ctx.api_key, base_url=f"{origin}/openai/deployments/gpt4o", timeout=ctx.timeout
        )

    class ClaudeOnVertex(AnthropicAdapter):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            origin = self._url.removesuffix("/v1/messages")
            self._url = f"{origin}/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude:streamRawPredict"

        async def generate_step(self, step_input: Any) -> Any:
            options = {"anthropic": {"anthropic_version": "vertex-2023-10-16"}}
            config = step_input.config.model_copy(
                update={"headers": {"authorization": "Bearer ya29.token"}, "provider_options": options}
            )
            return await super().generate_step(step_input.model_copy(update={"config": config}))

    vertex = dataclasses.replace(
        anthropic,
        factory=lambda ctx: ClaudeOnVertex(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout),
    )
    for spec in (dataclasses.replace(openai, factory=azure), vertex):
        report = run_conformance(
            spec,
            scenarios=["text_basic", "tool_call"],
            clauses=["RES-01", "RES-04", "MSG-09", "HARN-01"],
            timeout=TIMEOUT,
        )
        assert {r["outcome"] for r in report["results"]} == {"passed"}, report["results"]
