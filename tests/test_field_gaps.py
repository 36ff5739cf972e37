"""Issue 18, the other way round: what the new scenarios and checks must accept, and the machinery behind them.

``tests/broken_adapters/{timeouts,retry_gaps,request_gaps}.py`` prove each gap is now caught on its clause;
these tests prove the harness accepts what the providers document (no false failure), and pin the pieces the
checks rest on: the input snapshot, the read timeout handed to adapters, the hang owners, held-open variants.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from broken_adapters._base import HookedAdapter, broken
from broken_adapters._gemini_base import HookedGeminiAdapter, broken_gemini

from helix_conformance.checks.root import hang_owner
from helix_conformance.checks.schema_equivalence import differences
from helix_conformance.contract import AdapterSpec, LLMGenerateInput, Tool
from helix_conformance.profiles import get_profile
from helix_conformance.replay.faults import corpus
from helix_conformance.replay.runner import adapter_timeout, build_input, snapshot_input
from helix_conformance.scenarios import get_scenario
from helix_conformance.scenarios.fault_kinds import kinds_of
from helix_conformance.suite import bundled_cassettes, plan_suite
from helix_conformance.testing import run_conformance
from reference_adapters.openai_chat import spec as openai_reference


def _passes(spec: AdapterSpec, clauses: tuple[str, ...], scenarios: tuple[str, ...]) -> list[dict[str, Any]]:
    report = run_conformance(spec, clauses=list(clauses), scenarios=list(scenarios), timeout=3.0, examples=3)
    rows: list[dict[str, Any]] = report["results"]
    failed = [f"{r['clause']} on {r['scenario']}: {r['message']}" for r in rows if r["outcome"] != "passed"]
    assert not failed, "\n".join(failed)
    return rows


# --- CFG-01: an explicit null is "unset" where the provider documents it so --------------------------------------


class OpenAINullsForUnset(HookedAdapter):
    """Every parameter written out, unset ones as null: OpenAI documents each as "number or null"."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body: dict[str, Any] = super().build_body(input)
        for name in ("temperature", "top_p", "presence_penalty", "frequency_penalty", "seed", "stop"):
            body.setdefault(name, None)
        return body


class GeminiNullsForUnset(HookedGeminiAdapter):
    """proto3 JSON: a null field is the field's default."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body: dict[str, Any] = super().build_body(input)
        generation = body.setdefault("generationConfig", {})
        for name in ("temperature", "topP", "topK", "seed"):
            generation.setdefault(name, None)
        return body


def test_null_for_an_unset_parameter_passes_where_the_provider_documents_null() -> None:
    openai = broken("openai_nulls", OpenAINullsForUnset, "CFG-01", ["text_basic"], "").spec
    gemini = broken_gemini("gemini_nulls", GeminiNullsForUnset, "CFG-01", ["text_basic"], "").spec
    for spec in (openai, gemini):
        assert len(_passes(spec, ("CFG-01", "MSG-09"), ("text_basic", "config_passthrough"))) == 4


def test_the_decoders_keep_an_explicit_null_visible() -> None:
    openai = get_profile("openai-chat").decode_request(b'{"model": "m", "messages": [], "temperature": null}')
    anthropic = get_profile("anthropic-messages").decode_request(
        b'{"model": "m", "max_tokens": 5, "messages": [], "temperature": null}'
    )
    assert openai.config == {"temperature": None}
    assert anthropic.config == {"max_output_tokens": 5, "temperature": None}
    assert get_profile("openai-chat").null_is_unset
    assert not get_profile("anthropic-messages").null_is_unset


# --- MSG-09: the auth and content-type headers each provider documents --------------------------------------------


class AzureApiKeyHeader(HookedAdapter):
    """Azure OpenAI authenticates with an ``api-key`` header (its REST reference) instead of a Bearer token."""

    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        headers = super().build_headers(input)
        headers["api-key"] = headers.pop("Authorization").removeprefix("Bearer ")
        return headers


def test_azure_api_key_header_passes_msg09() -> None:
    spec = broken("azure_api_key", AzureApiKeyHeader, "MSG-09", ["text_basic"], "").spec
    assert len(_passes(spec, ("MSG-09",), ("text_basic",))) == 1


def test_header_rules_per_profile() -> None:
    json_type = {"content-type": "application/json; charset=utf-8"}
    openai, anthropic, gemini = (get_profile(p) for p in ("openai-chat", "anthropic-messages", "gemini"))
    assert openai.request_header_problems({"authorization": "Bearer k", **json_type}) == []
    assert openai.request_header_problems({"authorization": "k", **json_type})
    assert openai.request_header_problems({"authorization": "Bearer k"})  # no Content-Type
    assert gemini.request_header_problems(json_type, "https://g/v1beta/models/m:x?alt=sse&key=k") == []
    assert gemini.request_header_problems({"x-goog-api-key": "k", **json_type}) == []
    assert gemini.request_header_problems(json_type, "https://g/v1beta/models/m:x?alt=sse")
    anthropic_ok = {"x-api-key": "k", "anthropic-version": "2023-06-01", **json_type}
    assert anthropic.request_header_problems(anthropic_ok) == []
    assert anthropic.request_header_problems({k: v for k, v in anthropic_ok.items() if k != "content-type"})


# --- TOOL-02: closed objects, where the dialect can close them ----------------------------------------------------


class GeminiJsonSchemaAsIs(HookedGeminiAdapter):
    """The schema as given, in ``parametersJsonSchema`` (JSON Schema): `$schema` and closed objects included."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body: dict[str, Any] = super().build_body(input)
        for declaration, tool in zip(body["tools"][0]["functionDeclarations"], input.tools):
            del declaration["parameters"]
            declaration["parametersJsonSchema"] = tool.json_schema()
        return body


def test_gemini_json_schema_keeps_closed_objects_and_passes() -> None:
    spec = broken_gemini("gemini_json_schema", GeminiJsonSchemaAsIs, "TOOL-02", ["text_basic"], "").spec
    assert len(_passes(spec, ("TOOL-02", "TOOL-03"), ("tool_schemas_in_the_wild",))) == 2


def test_extra_properties_are_judged_only_where_objects_can_be_closed() -> None:
    closed = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    sent_open = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert differences(closed, sent_open, complete_only=False)
    assert differences(closed, sent_open, complete_only=False, closed_objects=False) == []


# --- MSG-07: the snapshot owns its copy of a dict schema ------------------------------------------------------


def test_the_input_snapshot_sees_a_schema_edited_in_place() -> None:
    from helix_conformance.replay.runner import AdapterJob, RunOptions
    from helix_conformance.replay.trace import Trace

    scenario = get_scenario("tool_schemas_in_the_wild")
    job = AdapterJob(
        scenario.id,
        scenario.messages,
        scenario.tools,
        scenario.llm_config(openai_reference.model),
        RunOptions(),
    )
    step_input = build_input(job, Trace(), RunOptions(), None)
    before = snapshot_input(step_input)
    schema = step_input.tools[0].input_schema
    assert isinstance(schema, dict)
    del schema["$schema"]
    assert snapshot_input(step_input) != before


# --- NT-04: timeouts, hang owners, held-open connections ------------------------------------------------------


def test_the_adapter_timeout_is_a_fifth_of_the_scenario_limit() -> None:
    assert adapter_timeout(10.0) == 2.0
    assert adapter_timeout(3.0) == 0.6


def test_a_hang_is_reported_on_the_clause_the_scenario_is_about() -> None:
    assert hang_owner(get_scenario("stall_read_timeout").tags) == "NT-04"
    assert hang_owner(get_scenario("stall_midstream").tags) == "NT-04"
    assert hang_owner(get_scenario("retry_after_too_long").tags) == "CFG-05"
    assert hang_owner(get_scenario("text_basic").tags) == "HARN-03"


def test_stalls_nothing_aborts_are_judged_without_the_abort_capability() -> None:
    spec = dataclasses.replace(openai_reference, capabilities=openai_reference.capabilities - {"abort"})
    planned = {(p.clause, p.scenario.id): p.skip_reason for p in plan_suite(spec)}
    assert planned[("NT-04", "stall_read_timeout")] is None
    assert planned[("NT-04", "text_basic")] is None  # held-open connections after the terminal event: a hang
    assert planned[("NT-05", "text_basic")] is None  # ... and where the step returned
    assert planned[("NT-04", "stall_midstream")] is not None  # the harness's abort: needs the capability


def test_held_open_variants_serve_the_whole_response_then_stall() -> None:
    from helix_conformance.replay.interactions import CassetteCache, build_interactions

    profile = get_profile("anthropic-messages")
    base = build_interactions(get_scenario("text_basic"), profile, CassetteCache(bundled_cassettes()))[0]
    held = [v for v in corpus(profile, base, held_open=True) if v.kind == "held_open"]
    assert [v.expect.same_as_unfaulted for v in held] == [True, False]
    whole, error = held
    assert whole.interaction.body == base.body
    assert whole.interaction.fault is not None
    assert whole.interaction.fault.kind == "stall"
    assert error.expect.codes == ()  # the error event's code is ERR-03's to judge, not NT-05's
    assert not [v for v in corpus(profile, base) if v.kind == "held_open"]  # only where asked (stall bases)
    assert "held_open" not in kinds_of("NT-01")
    assert "held_open" in kinds_of("NT-04")  # judged for a hang
    assert kinds_of("NT-05") == ["held_open"]  # judged for where the step returned


def test_a_reference_tool_schema_keeps_its_closed_objects() -> None:
    tool = get_scenario("tool_schemas_in_the_wild").tools[0]
    assert isinstance(tool, Tool)
    assert tool.json_schema()["additionalProperties"] is False
