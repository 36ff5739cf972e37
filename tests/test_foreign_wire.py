"""Correct adapters written elsewhere pass: the wire shapes of official SDKs, LiteLLM and LangChain.

Issue 16: the harness must not fail an adapter for what the provider accepts. Gemini parses proto3 JSON, so
snake_case field names (LiteLLM; google-genai's ``parameters_json_schema``) and URL-safe base64 thought
signatures (google-genai) mean what the reference adapter's spelling means; a declaration without
``parameters`` is a tool without arguments (LangChain); the Vercel AI SDK reads Gemini options from
``provider_options["google"]``; and Anthropic combines consecutive same-role turns itself. Each shape is
decoded here and run end to end against the clauses it touches. The broken adapters that must still fail
there (dropped parameters, a re-encoded signature, every provider's options merged, a merge that loses a turn)
are in ``broken_adapters``.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterable
from typing import Any

import pytest
from broken_adapters._anthropic_base import HookedAnthropicAdapter, broken_anthropic
from broken_adapters._gemini_base import HookedGeminiAdapter, HookedGeminiStream, broken_gemini
from broken_adapters.anthropic_requests import _one_turn_per_message

from helix_conformance.contract import AdapterSpec, AssistantMessage, LLMGenerateInput, ThinkingContent
from helix_conformance.profiles import get_profile
from helix_conformance.profiles.gemini import NO_PARAMETERS, GeminiTool
from helix_conformance.profiles.proto_json import bytes_value, camel_keys
from helix_conformance.testing import run_conformance

GEMINI = get_profile("gemini")
URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
SIGNATURE = "CiQB0e2Kb+/7Zx9w3Q=="  # standard alphabet, padded: what the API and the recordings send
SIGNATURE_URL_SAFE = "CiQB0e2Kb-_7Zx9w3Q"  # the same bytes as google-genai re-encodes them
_FREE_FORM = {"args", "response", "properties", "labels", "parametersJsonSchema"}


def _snake(value: Any, parent: str = "") -> Any:
    """A request in snake_case field names (LiteLLM's ``system_instruction``, ``function_call``...), leaving
    free-form values (arguments, results, property names, labels) as they are."""
    if isinstance(value, list):
        return [_snake(item, parent) for item in value]
    if not isinstance(value, dict) or parent in _FREE_FORM:
        return value
    out = {}
    for key, sub in value.items():
        name = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        out[name] = _snake(sub, key) if key != "properties" else {k: _snake(v) for k, v in sub.items()}
    return out


def _url_safe(signature: str) -> str:
    return base64.urlsafe_b64encode(base64.b64decode(signature)).decode().rstrip("=")


CAMEL: dict[str, Any] = {
    "systemInstruction": {"parts": [{"text": "Be terse."}]},
    "contents": [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Checking."},
                {
                    "functionCall": {"name": "get_weather", "args": {"city_name": "Paris"}},
                    "thoughtSignature": SIGNATURE,
                },
            ],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_weather", "response": {"tool_output": "18°C"}}}],
        },
    ],
    "tools": [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Weather.",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {"city_name": {"type": "STRING"}, "max_items": {"type": "INTEGER"}},
                        "required": ["city_name"],
                        "propertyOrdering": ["city_name", "max_items"],
                    },
                }
            ]
        }
    ],
    "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    "generationConfig": {
        "maxOutputTokens": 256,
        "topP": 0.9,
        "topK": 40,
        "stopSequences": ["END"],
        "presencePenalty": 0.1,
        "frequencyPenalty": 0.2,
        "thinkingConfig": {"includeThoughts": True},
    },
    "labels": {"suite_name": "x"},
}


def _decode(body: dict[str, Any]) -> Any:
    return GEMINI.decode_request(json.dumps(body).encode(), URL)


# --- the proto3 JSON mapping ----------------------------------------------------------------------------------


def test_a_snake_case_request_decodes_like_the_camel_case_one() -> None:
    camel, snake = _decode(CAMEL), _decode(_snake(CAMEL))
    assert "system_instruction" in _snake(CAMEL)
    assert "function_call" in json.dumps(_snake(CAMEL))
    assert snake.messages == camel.messages
    assert snake.tools == camel.tools
    assert (
        snake.config
        == camel.config
        == {
            "max_output_tokens": 256,
            "top_p": 0.9,
            "top_k": 40,
            "stop_sequences": ["END"],
            "presence_penalty": 0.1,
            "frequency_penalty": 0.2,
        }
    )
    assert snake.tool_choice_present
    assert camel.tool_choice_present
    assert (snake.problems, snake.violations, snake.empty_text) == ([], [], [])
    assert snake.extra == camel.extra == {"labels": {"suite_name": "x"}}
    assert [GEMINI.tool_problems(t) for t in snake.tools or []] == [[]]


def test_free_form_values_keep_their_keys() -> None:
    """Arguments, results and property names are the user's data: never renamed."""
    decoded = _decode(_snake(CAMEL))
    call = decoded.messages[2].tool_calls[0]
    assert call.arguments == {"city_name": "Paris"}
    assert decoded.messages[3].content == "18°C"
    assert decoded.tools[0].parameters["properties"].keys() == {"city_name", "max_items"}
    normalised = camel_keys({"function_response": {"name": "f", "response": {"a_b": {"c_d": 1}}}})
    assert normalised == {"functionResponse": {"name": "f", "response": {"a_b": {"c_d": 1}}}}
    schema = camel_keys({"response": {"type": "OBJECT", "any_of": [{"min_items": 1}]}})
    assert schema == {"response": {"type": "OBJECT", "anyOf": [{"minItems": 1}]}}  # FunctionDeclaration's


def test_a_field_sent_under_both_spellings_is_a_problem() -> None:
    body = {**CAMEL, "system_instruction": {"parts": [{"text": "Other."}]}}
    assert any("systemInstruction is sent twice" in p for p in _decode(body).problems)


def test_a_turn_without_role_is_a_user_turn() -> None:
    """Content.role "can be left blank or unset"; LiteLLM sends its functionResponse turns that way."""
    body = copy.deepcopy(CAMEL)
    del body["contents"][2]["role"]
    decoded = _decode(body)
    assert decoded.messages == _decode(CAMEL).messages
    assert decoded.problems == []


def test_the_response_side_reads_snake_case_chunks_too() -> None:
    chunk = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"function_call": {"name": "f", "args": {"a_b": 1}}, "thought_signature": "AQ=="}
                    ],
                },
                "finish_reason": "STOP",
            }
        ]
    }
    body = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
    summary = GEMINI.summarise_response(200, {"content-type": "text/event-stream"}, body)
    assert not summary.problems
    assert [(c.name, c.arguments) for c in summary.tool_calls] == [("f", {"a_b": 1})]
    assert summary.stop_reason == "tool_use"
    assert summary.thinking_signed


# --- tool schemas ---------------------------------------------------------------------------------------------


def _declaration(**fn: Any) -> dict[str, Any]:
    return {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "tools": [{"functionDeclarations": [fn]}],
    }


def test_parameters_json_schema_is_json_schema() -> None:
    """google-genai sends ``parameters_json_schema``: full JSON Schema, ``$defs`` and ``additionalProperties``
    included ("mutually exclusive with parameters"; "must describe an object")."""
    schema = {
        "type": "object",
        "properties": {"when": {"$ref": "#/$defs/Range"}},
        "$defs": {"Range": {"type": "object", "properties": {"start": {"type": "string"}}}},
        "additionalProperties": False,
        "required": ["when"],
    }
    (tool,) = _decode(_declaration(name="f", description="d", parameters_json_schema=schema)).tools
    assert isinstance(tool, GeminiTool)
    assert tool.fields == ("parametersJsonSchema",)
    assert tool.parameters == schema
    assert GEMINI.tool_problems(tool) == []
    (array,) = _decode(_declaration(name="f", parametersJsonSchema={"type": "array"})).tools
    assert GEMINI.tool_problems(array) == ["f: parametersJsonSchema must describe an object"]
    (both,) = _decode(
        _declaration(name="f", parameters={"type": "OBJECT"}, parametersJsonSchema=schema)
    ).tools
    assert "f: parameters and parametersJsonSchema are mutually exclusive" in GEMINI.tool_problems(both)


def test_a_declaration_without_parameters_takes_no_arguments() -> None:
    """FunctionDeclaration.parameters: "For function with no parameters, this can be left unset"."""
    (tool,) = _decode(_declaration(name="get_time", description="Now.")).tools
    assert tool.parameters == NO_PARAMETERS
    assert tool.sent is None
    assert GEMINI.tool_problems(tool) == []


# --- thought signatures ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", [SIGNATURE, SIGNATURE.rstrip("="), SIGNATURE_URL_SAFE, SIGNATURE_URL_SAFE + "=="]
)
def test_a_bytes_value_reads_either_base64_alphabet_with_or_without_padding(text: str) -> None:
    assert bytes_value(text) == base64.b64decode(SIGNATURE)


def test_a_signature_that_is_not_base64_is_a_problem() -> None:
    body = copy.deepcopy(CAMEL)
    body["contents"][1]["parts"][1]["thoughtSignature"] = "not base64!"
    assert bytes_value("not base64!") is None
    assert any("thoughtSignature is not base64" in p for p in _decode(body).problems)


# --- end to end: foreign adapters through the clauses they touch ----------------------------------------------


class _UrlSafeStream(HookedGeminiStream):
    def thinking(self) -> ThinkingContent | None:
        thinking = super().thinking()  # google-genai hands the signature over as bytes; re-encoded URL-safe
        if thinking is not None and thinking.signature:
            return thinking.model_copy(update={"signature": _url_safe(thinking.signature)})
        return thinking


class GenAIShapedGemini(HookedGeminiAdapter):
    """Shaped like google-genai 3.x and the Vercel AI SDK: tools as ``parameters_json_schema`` (the tool's own
    JSON Schema), none for a tool without arguments (LangChain), URL-safe signatures, options from ``google``."""

    stream_class = _UrlSafeStream

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        options = input.config.provider_options or {}
        bare = input.model_copy(update={"config": input.config.model_copy(update={"provider_options": None})})
        body = super().build_body(bare)
        body.update(copy.deepcopy(options.get("google", {})))
        schemas = {tool.name: tool.json_schema() for tool in input.tools}
        for tool in body.get("tools", []):
            for fn in tool["functionDeclarations"]:
                del fn["parameters"]
                if schemas[fn["name"]].get("properties"):
                    fn["parameters_json_schema"] = copy.deepcopy(schemas[fn["name"]])
        for turn in body["contents"]:
            for part in turn["parts"]:
                if "thoughtSignature" in part:
                    part["thoughtSignature"] = _url_safe(part["thoughtSignature"])
        return body


class LiteLLMShapedGemini(HookedGeminiAdapter):
    """Shaped like LiteLLM: snake_case field names, functionResponse turns without a role, unpadded
    URL-safe signatures."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        for turn in body["contents"]:
            if any("functionResponse" in part for part in turn["parts"]):
                del turn["role"]
            for part in turn["parts"]:
                if "thoughtSignature" in part:
                    part["thoughtSignature"] = _url_safe(part["thoughtSignature"])
        snake: dict[str, Any] = _snake(body)
        return snake


class AnthropicUnmergedTurns(HookedAnthropicAdapter):
    """One turn per message, never merged (the API combines consecutive same-role turns itself)."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        body["messages"] = _one_turn_per_message(input, keep_empty=False)
        return body


def _spec(build: Any, adapter: Any) -> AdapterSpec:
    spec: AdapterSpec = build(
        adapter.__name__, adapter, "HARN-01", ["text_basic"], adapter.__doc__ or ""
    ).spec
    return spec


def _failures(spec: AdapterSpec, clauses: Iterable[str], scenarios: Iterable[str]) -> tuple[list[str], int]:
    report = run_conformance(spec, clauses=list(clauses), scenarios=list(scenarios), timeout=3.0, examples=3)
    rows = report["results"]
    failed = [f"{r['clause']} on {r['scenario']}: {r['message']}" for r in rows if r["outcome"] != "passed"]
    return failed, sum(r["outcome"] == "passed" for r in rows)


MESSAGE_CLAUSES = ("MSG-01", "MSG-02", "MSG-03", "MSG-04", "MSG-05", "MSG-06", "MSG-08", "MSG-09")
HISTORIES = ("system_multiturn", "tool_result_roundtrip", "tool_result_then_user", "thinking_history")
TOOLS = ("tool_call", "tool_schemas", "tool_call_no_arguments")


def test_a_litellm_shaped_gemini_adapter_passes() -> None:
    clauses = (*MESSAGE_CLAUSES, "TOOL-01", "TOOL-02", "TOOL-03", "TOOL-04", "CFG-01", "CFG-02")
    failed, passed = _failures(
        _spec(broken_gemini, LiteLLMShapedGemini),
        clauses,
        (*HISTORIES, *TOOLS, "config_passthrough", "text_basic"),
    )
    assert not failed, "\n".join(failed)
    assert passed >= 30


def test_a_genai_shaped_gemini_adapter_passes() -> None:
    clauses = ("TOOL-02", "TOOL-03", "MSG-08", "MSG-09", "RES-08", "CFG-02")
    scenarios = (*TOOLS, "thinking_history", "thinking_text", "thinking_tool_call", "config_passthrough")
    failed, passed = _failures(_spec(broken_gemini, GenAIShapedGemini), clauses, scenarios)
    assert not failed, "\n".join(failed)
    assert passed >= 12


def test_an_anthropic_adapter_that_never_merges_turns_passes_msg05() -> None:
    """Two user turns in a row are combined by the API: MSG-05 passes. Parallel tool results split across
    user turns stay an MSG-04 failure (the API answers 400 "tool_use ids were found without tool_result
    blocks immediately after"), so that clause is asserted where the history has one tool result."""
    spec = _spec(broken_anthropic, AnthropicUnmergedTurns)
    failed, passed = _failures(
        spec,
        ("MSG-02", "MSG-05", "MSG-09"),
        ("system_multiturn", "tool_result_then_user", "tool_result_roundtrip"),
    )
    assert not failed, "\n".join(failed)
    assert passed == 9
    failed, passed = _failures(spec, ("MSG-04",), ("tool_result_then_user",))
    assert (failed, passed) == ([], 1)


def test_the_foreign_shapes_really_differ_from_the_reference() -> None:
    """The adapters above exercise the shapes they claim: no test passes by sending the reference's body."""
    from helix_conformance.scenarios import get_scenario

    scenario = get_scenario("thinking_history")
    input = LLMGenerateInput(
        messages=list(scenario.messages),
        tools=list(scenario.tools),
        config=scenario.llm_config("gemini-2.5-flash"),
    )
    litellm = LiteLLMShapedGemini(api_key="k").build_body(input)
    assert "function_declarations" in litellm["tools"][0]
    assert "role" not in litellm["contents"][-1]
    (signed,) = [p for turn in litellm["contents"] for p in turn["parts"] if "thought_signature" in p]
    (given,) = [
        m.thinking.signature for m in scenario.messages if isinstance(m, AssistantMessage) and m.thinking
    ]
    assert given
    assert signed["thought_signature"] == _url_safe(given)
    assert signed["thought_signature"] != given
    genai = GenAIShapedGemini(api_key="k").build_body(input)
    (fn,) = genai["tools"][0]["functionDeclarations"]
    assert "parameters" not in fn
    assert "parameters_json_schema" in fn
