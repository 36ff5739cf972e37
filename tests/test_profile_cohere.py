"""The cohere-chat request decoder reads a v2 chat request as the API does."""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.contract import (
    AssistantMessage,
    LLMGenerateInput,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from helix_conformance.profiles import get_profile
from helix_conformance.scenarios import get_scenario
from reference_adapters.cohere import build_request_body

PROFILE = get_profile("cohere-chat")
CALL = {
    "id": "get_weather_a1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}


def _decode(body: dict[str, Any]) -> Any:
    return PROFILE.decode_request(json.dumps(body).encode(), "https://api.cohere.com/v2/chat")


def test_a_v2_chat_request_reads_back_as_canonical_messages() -> None:
    request = _decode(
        {
            "model": "command-a-03-2025",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                {"role": "assistant", "tool_plan": "I will look.", "tool_calls": [CALL]},
                {
                    "role": "tool",
                    "tool_call_id": "get_weather_a1",
                    "content": [{"type": "document", "document": {"data": {"t": 18}}}],
                },
            ],
            "p": 0.9,
            "k": 40,
            "max_tokens": 64,
            "safety_mode": "CONTEXTUAL",
        }
    )
    assert [type(m) for m in request.messages] == [SystemMessage, UserMessage, AssistantMessage, ToolMessage]
    assistant = request.messages[2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.content == "I will look."  # the plan is the turn's text
    assert assistant.tool_calls is not None
    assert assistant.tool_calls[0].arguments == {"city": "Paris"}
    assert request.messages[3].content == '{"t": 18}'
    assert request.config == {"top_p": 0.9, "top_k": 40, "max_output_tokens": 64}
    assert request.extra["safety_mode"] == "CONTEXTUAL"
    assert request.streaming
    assert (request.problems, request.violations, request.empty_text) == ([], [], [])


def test_the_breaches_the_api_answers_with_400_are_reported() -> None:
    request = _decode(
        {
            "model": "command-a-03-2025",
            "messages": [
                {"role": "user", "content": ""},
                {"role": "tool", "tool_call_id": "nope", "content": "x"},
            ],
            "top_p": 0.5,
        }
    )
    assert request.violations == [
        ("MSG-04", "messages[1]: tool call id 'nope' not found in previous tool calls")
    ]
    assert request.empty_text == ["messages[0]: message must not be empty in a turn"]
    assert request.problems == ["top_p is not a v2 chat request field"]
    assert not request.streaming


def test_the_reference_body_decodes_to_its_input_with_no_problem() -> None:
    for scenario_id in (
        "tool_result_roundtrip",
        "system_multiturn",
        "config_passthrough",
        "tool_result_empty",
    ):
        scenario = get_scenario(scenario_id)
        body = build_request_body(
            LLMGenerateInput(
                messages=list(scenario.messages), tools=list(scenario.tools), config=scenario.llm_config("m")
            )
        )
        request = _decode(body)
        assert (request.problems, request.violations, request.empty_text) == ([], [], []), scenario_id
        assert len(request.messages) == len(PROFILE.expected_history(scenario.messages)), scenario_id


def test_tool_names_follow_the_documented_rule() -> None:
    from helix_conformance.profiles.base import DecodedTool

    assert PROFILE.tool_problems(DecodedTool("get_weather", None, {"type": "object"})) == []
    assert PROFILE.tool_problems(DecodedTool("2fast", None, {"type": "object"}))
    assert PROFILE.tool_problems(DecodedTool("get-weather", None, {"type": "object"}))
