"""Every scenario and fault kind says when a provider sends its response, with evidence, and the profiles read
those request options and servers off the adapter's request (``scenarios/preconditions.py``).

The statements are data; these tests keep them complete (a scenario or fault kind without one fails), honest
(a recording's ``needs`` are checked against the request it answered, where that was kept, and against what its
response carries) and readable by the decoders that evaluate them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helix_conformance._yaml import read_yaml_file
from helix_conformance.profiles import KNOWN_PROFILES, get_profile
from helix_conformance.profiles.servers import SERVERS, addressed_by, servers_of, unknown_servers
from helix_conformance.replay.cassette import load_cassette
from helix_conformance.replay.recorded import recorded_scenarios
from helix_conformance.scenarios import SCENARIOS, scenarios_for
from helix_conformance.scenarios.fault_kinds import KINDS, PRECONDITIONS
from helix_conformance.scenarios.preconditions import (
    OPTION_EVIDENCE,
    OPTIONS,
    Precondition,
    any_request,
    when,
)
from helix_conformance.scenarios.recorded import CatalogueError, read_catalogue
from helix_conformance.scenarios.served import ASK
from helix_conformance.suite import bundled_cassettes

RECORDED = bundled_cassettes() / "recorded"


def _recorded(profile: str) -> list[object]:
    return list(recorded_scenarios(get_profile(profile), (RECORDED,)))


# --- complete: every scenario, fault kind and recording states one -----------------------------------------


@pytest.mark.parametrize("profile", KNOWN_PROFILES)
def test_every_scenario_states_its_precondition_for_every_profile_it_runs_on(profile: str) -> None:
    missing = [s.id for s in scenarios_for(profile) if s.precondition(profile) is None]
    assert not missing, f"scenarios with no request precondition on {profile}: {missing}"


def test_every_fault_kind_states_its_precondition() -> None:
    assert set(PRECONDITIONS) == set(KINDS), "fault kinds without a request precondition"
    assert all(isinstance(p, Precondition) for p in PRECONDITIONS.values())
    assert all(p.evidence for p in PRECONDITIONS.values())


@pytest.mark.parametrize("profile", KNOWN_PROFILES)
def test_every_recorded_scenario_states_its_precondition(profile: str) -> None:
    scenarios = _recorded(profile)
    assert scenarios
    missing = [s.id for s in scenarios if s.precondition(profile) is None]  # type: ignore[attr-defined]
    assert not missing, f"recordings without `needs`/a server in expected.yml: {missing}"


def test_a_precondition_needs_evidence_and_known_options() -> None:
    with pytest.raises(ValueError, match="needs its evidence"):
        any_request("trust me")
    with pytest.raises(ValueError, match="unknown request option"):
        when("telepathy", why="x", evidence=("y",))


def test_every_option_has_its_documentation() -> None:
    assert set(OPTION_EVIDENCE) == set(OPTIONS)


@pytest.mark.parametrize("profile", KNOWN_PROFILES)
def test_the_servers_a_precondition_names_are_servers_of_the_profile(profile: str) -> None:
    known = {s.id for s in servers_of(profile)}
    for scenario in [*scenarios_for(profile), *_recorded(profile)]:
        precondition = scenario.precondition(profile)  # type: ignore[attr-defined]
        if precondition is not None and precondition.servers is not None:
            assert precondition.servers <= known, (scenario.id, precondition.servers - known)  # type: ignore[attr-defined]


def test_server_ids_are_unique_per_profile_and_each_profile_has_its_own_first() -> None:
    assert len({(s.profile, s.id) for s in SERVERS}) == len(SERVERS)
    assert [servers_of(p)[0].id for p in KNOWN_PROFILES] == [
        "openai",
        "anthropic",
        "gemini-api",
        "openai",
        "bedrock",
        "cohere",
    ]


def test_unknown_servers_are_named_with_the_known_ones() -> None:
    assert unknown_servers("gemini", frozenset({"vertex"})) is None
    problem = unknown_servers("gemini", frozenset({"vertexai"}))
    assert problem is not None
    assert "'vertexai'" in problem
    assert "gemini-api, vertex" in problem


# --- honest: what a recording needs is what its request set and its response carries ------------------------

_CATALOGUE = read_catalogue(read_yaml_file(RECORDED / "expected.yml"), "expected.yml")


def _response_needs(profile: str, bodies: list[bytes]) -> set[str]:
    """What a recorded response shows its request asked for (beyond the tools a tool call answers)."""
    wire = get_profile(profile)
    needs: set[str] = set()
    for body in bodies:
        if profile == "openai-chat":
            for event in wire.split_events(body):
                summary = wire.summarise_response(200, {"content-type": "text/event-stream"}, event)
                if list(summary.events) == ["usage"]:  # the usage chunk, `choices: []`
                    needs.add("include_usage")
        elif wire.summarise_response(200, {"content-type": wire.stream_content_type}, body).thinking:
            needs.add("thinking")
        if profile == "openai-responses" and re.search(rb'"encrypted_content":\s*"', body):
            needs.add("reasoning_encrypted")
        if profile == "gemini" and b"partialArgs" in body:
            needs.add("stream_function_call_arguments")
        if profile == "anthropic-messages" and re.search(rb"server_tool_use|mcp_tool_use", body):
            needs.add("server_tools")
    return needs


@pytest.mark.parametrize(
    "recording",
    [r for r in _CATALOGUE if not r.excluded and r.profile and r.interactions],
    ids=lambda r: r.key,
)
def test_a_recordings_needs_are_what_its_request_set_and_its_response_shows(recording: object) -> None:
    from helix_conformance.scenarios.recorded import Recording

    assert isinstance(recording, Recording)
    assert recording.profile is not None
    assert recording.needs is not None, f"{recording.key}: write `needs:` ([] for none)"
    assert recording.server in {s.id for s in servers_of(recording.profile)}, recording.key
    cassette = load_cassette(RECORDED / recording.cassette)
    replayed = [i for i, outcome in zip(cassette.interactions, recording.interactions) if outcome is not None]
    shown = _response_needs(recording.profile, [i.body for i in replayed if i.status == 200])
    assert shown <= set(recording.needs), f"{recording.key}: its responses show {sorted(shown)}"
    profile = get_profile(recording.profile)
    for interaction in replayed:
        if isinstance(interaction.request_body, str) and interaction.request_body.strip():
            sent = profile.decode_request(
                interaction.request_body.encode(), interaction.uri
            ).request_options()
            assert set(recording.needs) <= sent, f"{recording.key}: its request set {sorted(sent)}"


def test_a_catalogue_with_an_unknown_option_or_server_makes_that_recording_unusable() -> None:
    data = {
        "profiles": {"x": "gemini"},
        "servers": {"x": "gemini-api"},
        "recordings": {
            "x/a.yaml": {
                "needs": ["telepathy"],
                "interactions": [{"type": "text", "stop_reason": "end_turn"}],
            },
            "x/b.yaml": {"server": "vertexai", "interactions": [{"type": "text", "stop_reason": "end_turn"}]},
            "x/c.yaml": {"needs": [], "interactions": [{"type": "text", "stop_reason": "end_turn"}]},
        },
    }
    a, b, c = read_catalogue(data, "expected.yml")
    assert "needs lists the request options" in str(a.problem)
    assert "'vertexai' is not a server of wire profile gemini" in str(b.problem)
    assert (c.problem, c.needs, c.server) == (None, (), "gemini-api")
    with pytest.raises(CatalogueError, match="'servers' maps each recording directory"):
        read_catalogue({**data, "servers": ["gemini-api"]}, "expected.yml")


# --- readable: the decoders report the options, the URLs say the server --------------------------------------


def _options(profile: str, body: dict[str, object], url: str = "") -> frozenset[str]:
    return get_profile(profile).decode_request(json.dumps(body).encode(), url).request_options()


def test_openai_chat_reads_include_usage_and_parallel_calls_off() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    assert _options("openai-chat", body) == frozenset()
    asked = {**body, "stream_options": {"include_usage": True}, "parallel_tool_calls": False, "stop": "x"}
    assert _options("openai-chat", asked) == {"include_usage", "parallel_tool_calls_off", "stop_sequences"}


def test_anthropic_reads_thinking_server_tools_and_parallel_calls_off() -> None:
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    assert _options("anthropic-messages", body) == frozenset()
    asked = {
        **body,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    }
    assert _options("anthropic-messages", asked) >= {"thinking", "server_tools", "parallel_tool_calls_off"}
    assert "server_tools" in _options("anthropic-messages", {**body, "mcp_servers": [{"type": "url"}]})
    assert "thinking" not in _options("anthropic-messages", {**body, "thinking": {"type": "disabled"}})


@pytest.mark.parametrize("spelling", ["camel", "snake"])
def test_gemini_reads_include_thoughts_and_streamed_arguments_in_either_spelling(spelling: str) -> None:
    body: dict[str, object] = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
        "toolConfig": {"functionCallingConfig": {"streamFunctionCallArguments": True}},
    }
    if spelling == "snake":  # proto3 JSON takes either (google-genai sends camelCase, others snake_case)
        body = json.loads(re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), json.dumps(body)))
    assert _options("gemini", body) == {"thinking", "stream_function_call_arguments"}


def test_responses_reads_reasoning_summary_and_encrypted_content() -> None:
    body = {"model": "m", "input": "hi", "stream": True}
    assert _options("openai-responses", body) == frozenset()
    asked = {**body, "reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"]}
    assert _options("openai-responses", asked) == {"thinking", "reasoning_encrypted"}
    assert "thinking" not in _options("openai-responses", {**body, "reasoning": {"effort": "low"}})


BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com/model"


def test_bedrock_reads_claude_thinking_a_reasoning_model_system_tools_and_a_guardrail() -> None:
    body: dict[str, object] = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    claude = f"{BEDROCK}/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
    assert _options("bedrock-converse", body, claude) == frozenset()
    thinking = {"additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}
    assert _options("bedrock-converse", {**body, **thinking}, claude) == {"thinking"}
    disabled = {"additionalModelRequestFields": {"thinking": {"type": "disabled"}}}
    assert _options("bedrock-converse", {**body, **disabled}, claude) == frozenset()
    gpt_oss = f"{BEDROCK}/openai.gpt-oss-120b-1%3A0/converse-stream"  # reasons unasked (the recording)
    assert _options("bedrock-converse", body, gpt_oss) == {"thinking"}
    tools = {
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}},
                {"systemTool": {"name": "nova_code_interpreter"}},
            ]
        }
    }
    decoded = get_profile("bedrock-converse").decode_request(json.dumps({**body, **tools}).encode(), claude)
    assert [t.name for t in decoded.tools or []] == ["f"]
    assert decoded.problems == []
    assert decoded.request_options() == {"tools", "server_tools"}
    guardrail = {"guardrailConfig": {"guardrailIdentifier": "g1", "guardrailVersion": "1"}}
    assert _options("bedrock-converse", {**body, **guardrail}, claude) == {"guardrail"}


def test_cohere_reads_thinking_enabled_or_left_on_by_a_reasoning_model() -> None:
    body = {"model": "command-a-03-2025", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    assert _options("cohere-chat", body) == frozenset()
    assert _options("cohere-chat", {**body, "thinking": {"type": "enabled"}}) == {"thinking"}
    reasoning = {**body, "model": "command-a-reasoning-08-2025"}
    assert _options("cohere-chat", reasoning) == {"thinking"}  # on by default for models that support it
    assert _options("cohere-chat", {**reasoning, "thinking": {"type": "disabled"}}) == frozenset()


def test_the_guardrail_scenario_asks_for_a_guardrail_and_needs_one() -> None:
    scenario = next(s for s in SCENARIOS if s.id == "stop_guardrail_intervened")
    precondition = scenario.precondition("bedrock-converse")
    assert precondition is not None
    assert precondition.needs == {"guardrail"}
    asked = scenario.config_for("bedrock-converse")["provider_options"]["bedrock"]
    assert _options("bedrock-converse", _merged(MINIMAL_BODIES["bedrock-converse"], asked)) == {"guardrail"}


VERTEX = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers"
URLS = [
    ("openai-chat", "https://api.openai.com/v1/chat/completions", None),
    (
        "openai-chat",
        "https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21",
        ("azure-openai", "gpt4o"),
    ),
    (
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse",
        None,
    ),
    (
        "gemini",
        f"{VERTEX}/google/models/gemini-3-pro:streamGenerateContent?alt=sse",
        ("vertex", "gemini-3-pro"),
    ),
    (
        "anthropic-messages",
        f"{VERTEX}/anthropic/models/claude-sonnet-4@20250514:streamRawPredict",
        ("vertex-anthropic", "claude-sonnet-4@20250514"),
    ),
    ("openai-responses", "https://r.openai.azure.com/openai/v1/responses", ("azure-openai", None)),
]


@pytest.mark.parametrize(("profile", "url", "addressed"), URLS, ids=lambda v: str(v)[:40])
def test_a_servers_own_url_shape_says_which_server_and_model(
    profile: str, url: str, addressed: tuple[str, str | None] | None
) -> None:
    from urllib.parse import urlsplit

    assert addressed_by(profile, urlsplit(url).path) == addressed
    assert get_profile(profile).matches(
        "POST", urlsplit(url).path, urlsplit(get_profile(profile).endpoint_url("m")).path
    )


def test_azure_and_vertex_bodies_without_a_model_decode_with_the_urls() -> None:
    chat = get_profile("openai-chat").decode_request(
        b'{"messages": [{"role": "user", "content": "hi"}], "stream": true}',
        "https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21",
    )
    assert (chat.model, chat.problems) == ("gpt4o", [])
    anthropic = get_profile("anthropic-messages")
    url = f"{VERTEX}/anthropic/models/claude-sonnet-4@20250514:streamRawPredict"
    body = {
        "anthropic_version": "vertex-2023-10-16",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
    }
    decoded = anthropic.decode_request(json.dumps(body).encode(), url)
    assert (decoded.model, decoded.problems, decoded.extra) == ("claude-sonnet-4@20250514", [], {})
    no_version = anthropic.decode_request(json.dumps({**body, "anthropic_version": None}).encode(), url)
    assert any("anthropic_version" in p for p in no_version.problems)
    headers = {"content-type": "application/json", "authorization": "Bearer ya29.x"}
    assert anthropic.request_header_problems(headers, url) == []
    assert anthropic.request_header_problems({"content-type": "application/json"}, url)


def test_the_partial_args_scenarios_ask_for_them_and_name_vertex() -> None:
    for scenario_id in ("tool_call_streamed_arguments", "tool_call_streamed_typed_arguments"):
        scenario = next(s for s in SCENARIOS if s.id == scenario_id)
        precondition = scenario.precondition("gemini")
        assert precondition is not None
        assert precondition.needs == {"tools", "stream_function_call_arguments"}
        assert precondition.servers == {"vertex"}
        assert any("not supported in Gemini API" in e for e in precondition.evidence)
        options = scenario.config_for("gemini")["provider_options"]["gemini"]
        assert options["toolConfig"]["functionCallingConfig"]["streamFunctionCallArguments"] is True


def test_docs_list_every_precondition() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert "## Request preconditions" in text
    assert "## Servers" in text
    for scenario in SCENARIOS:
        assert f"| `{scenario.id}` |" in text.split("## Request preconditions")[1], scenario.id


MINIMAL_BODIES: dict[str, dict[str, object]] = {
    "openai-chat": {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True},
    "anthropic-messages": {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
    "gemini": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    "openai-responses": {"model": "m", "input": "hi", "stream": True},
    "bedrock-converse": {"messages": [{"role": "user", "content": [{"text": "hi"}]}]},
    "cohere-chat": {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True},
}


def _merged(body: dict[str, object], fields: dict[str, object]) -> dict[str, object]:
    out = dict(body)
    for key, value in fields.items():
        old = out.get(key)
        out[key] = _merged(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return out


@pytest.mark.parametrize(
    ("option", "profile"), [(o, p) for o, by_profile in ASK.items() for p in by_profile], ids=str
)
def test_what_a_scenario_asks_is_what_the_decoder_reads(option: str, profile: str) -> None:
    """The provider_options by which a scenario asks for an option (``served.ASK``), merged into a request as
    request fields (CFG-02) under any key the profile reads, make the request carry that option."""
    for key, fields in ASK[option][profile].items():
        assert key in (get_profile(profile).provider_keys or (get_profile(profile).provider_key,))
        assert option in _options(profile, _merged(MINIMAL_BODIES[profile], fields)), key


def test_a_recorded_scenario_asks_for_what_its_response_needs() -> None:
    (scenario,) = [
        s for s in _recorded("openai-chat") if s.id == "recorded/openai/test_openai_moderation_stream"
    ]
    assert scenario.config_for("openai-chat")["provider_options"] == {  # type: ignore[attr-defined]
        "openai": {"stream_options": {"include_usage": True}}
    }


def test_the_code_interpreter_scenario_offers_the_system_tool_beside_its_own() -> None:
    scenario = next(s for s in SCENARIOS if s.id == "server_tool_then_call")
    precondition = scenario.precondition("bedrock-converse")
    assert precondition is not None
    assert precondition.needs == {"tools", "server_tools"}
    asked = scenario.config_for("bedrock-converse")["provider_options"]["bedrock"]
    body = json.dumps(_merged(MINIMAL_BODIES["bedrock-converse"], asked)).encode()
    decoded = get_profile("bedrock-converse").decode_request(body)
    assert [t.name for t in decoded.tools or []] == [t.name for t in scenario.tools]
    assert decoded.request_options() == precondition.needs
