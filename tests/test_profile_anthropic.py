"""The anthropic-messages request decoder: canonical meaning back out of a Messages request, and every
structural breach the canonical form alone would hide (alternation, split tool results, empty blocks)."""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.contract import (
    AssistantMessage,
    Message,
    SystemMessage,
    ThinkingContent,
    ToolCallInfo,
    ToolMessage,
    UserMessage,
)
from helix_conformance.profiles import get_profile
from helix_conformance.profiles.base import DecodedTool

PROFILE = get_profile("anthropic-messages")


def _decode(**body: Any) -> Any:
    request = {"model": "claude-haiku-4-5-20251001", "max_tokens": 1024, "stream": True, **body}
    return PROFILE.decode_request(json.dumps(request).encode())


def _text(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, **extra}


TOOL_TURN = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "Check both.", "signature": "EqQBsig"},
        {"type": "redacted_thinking", "data": "EmwKAhgB"},
        _text("Checking."),
        {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "London"}},
    ],
}


def test_a_conforming_request_decodes_to_the_canonical_conversation() -> None:
    decoded = _decode(
        system=[_text("Be terse.")],
        messages=[
            {"role": "user", "content": [_text("Weather?")]},
            TOOL_TURN,
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18°C"},
                    {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [_text("12°C")]},
                    _text("And tomorrow?"),
                ],
            },
        ],
        temperature=0.2,
        top_k=40,
        metadata={"user_id": "u1"},
    )
    assert decoded.messages == [
        SystemMessage(content="Be terse."),
        UserMessage(content="Weather?"),
        AssistantMessage(
            content="Checking.",
            tool_calls=[
                ToolCallInfo(id="toolu_01A", name="get_weather", arguments={"city": "Paris"}),
                ToolCallInfo(id="toolu_01B", name="get_weather", arguments={"city": "London"}),
            ],
            thinking=ThinkingContent(content="Check both.", signature="EqQBsig", redacted=["EmwKAhgB"]),
        ),
        ToolMessage(tool_call_id="toolu_01A", tool_name="", content="18°C"),
        ToolMessage(tool_call_id="toolu_01B", tool_name="", content="12°C"),
        UserMessage(content="And tomorrow?"),
    ]
    assert decoded.problems == []
    assert decoded.violations == []
    assert decoded.empty_text == []
    assert decoded.config == {"max_output_tokens": 1024, "temperature": 0.2, "top_k": 40}
    assert decoded.extra == {"metadata": {"user_id": "u1"}}
    assert decoded.streaming
    assert decoded.tools is None
    assert decoded.cache == {}


def test_a_system_prompt_sent_as_a_message_is_not_the_system_slot() -> None:
    decoded = _decode(
        messages=[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}]
    )
    assert not any(isinstance(m, SystemMessage) for m in decoded.messages)
    assert any("top-level system field" in p for p in decoded.problems)


def test_tool_results_split_across_user_turns_break_msg04() -> None:
    decoded = _decode(
        messages=[
            {"role": "user", "content": "Weather?"},
            TOOL_TURN,
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18°C"}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_01B", "content": "12°C"}],
            },
        ]
    )
    assert [type(m).__name__ for m in decoded.messages][-2:] == ["ToolMessage", "ToolMessage"]
    assert decoded.violations_of("MSG-05") == []  # the API combines consecutive turns (see below)
    assert any("toolu_01B" in v for v in decoded.violations_of("MSG-04"))


def test_consecutive_same_role_turns_are_allowed_the_api_combines_them() -> None:
    """The Messages API reference (``messages``): "Consecutive ``user`` or ``assistant`` turns in your request
    will be combined into a single turn". Sending them apart is no MSG-05 breach, and calls of consecutive
    assistant turns are answered by the one user turn after them."""
    decoded = _decode(
        messages=[
            {"role": "user", "content": "Hi."},
            {"role": "user", "content": [_text("Weather?")]},
            {"role": "assistant", "content": [_text("Checking.")]},
            TOOL_TURN,
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18°C"},
                    {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "12°C"},
                ],
            },
            {"role": "user", "content": "Thanks."},
        ]
    )
    assert decoded.violations == []
    assert decoded.problems == []
    assert [type(m).__name__ for m in decoded.messages] == [
        "UserMessage",
        "UserMessage",
        "AssistantMessage",
        "AssistantMessage",
        "ToolMessage",
        "ToolMessage",
        "UserMessage",
    ]


def test_a_tool_result_after_text_and_a_stray_result_break_msg04() -> None:
    decoded = _decode(
        messages=[
            {"role": "user", "content": "Weather?"},
            TOOL_TURN,
            {
                "role": "user",
                "content": [
                    _text("Here:"),
                    {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18°C"},
                    {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "12°C"},
                    {"type": "tool_result", "tool_use_id": "toolu_01Z", "content": "?"},
                ],
            },
        ]
    )
    breaches = decoded.violations_of("MSG-04")
    assert any("tool results must come first" in b for b in breaches)
    assert any("toolu_01Z" in b and "answers no tool_use" in b for b in breaches)


def test_empty_text_blocks_and_empty_turns_are_reported() -> None:
    decoded = _decode(
        messages=[
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": [_text(""), {"type": "tool_use", "id": "t", "name": "f", "input": {}}],
            },
            {"role": "user", "content": []},
        ]
    )
    assert len(decoded.empty_text) == 2


def test_an_assistant_first_turn_and_a_thinking_block_without_signature() -> None:
    decoded = _decode(
        messages=[{"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": ""}]}]
    )
    assert decoded.violations_of("MSG-05") == ["messages[0]: the first turn must be a user turn"]
    assert any("without its signature" in p for p in decoded.problems)


def test_cache_breakpoints_and_the_spots_left_unmarked() -> None:
    ephemeral = {"cache_control": {"type": "ephemeral"}}
    decoded = _decode(
        system=[_text("Long prompt.", **ephemeral)],
        tools=[
            {"name": "a", "description": "A", "input_schema": {"type": "object"}, **ephemeral},
            {"name": "b", "description": "B", "input_schema": {"type": "object"}},
        ],
        messages=[{"role": "user", "content": [_text("Hi", **ephemeral)]}],
    )
    assert decoded.cache == {
        "breakpoints": ["system[0]", "messages[0].content[0]", "tools[0]"],
        "unmarked": ["last tool (tools[1])"],
    }
    assert _decode(system="plain", messages=[{"role": "user", "content": "Hi"}]).cache == {}


def test_missing_max_tokens_and_other_providers_fields_are_format_problems() -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Hi"}], "seed": 7}
    problems = PROFILE.decode_request(json.dumps(body).encode()).problems
    assert any(p.startswith("max_tokens is missing") for p in problems)
    assert any(p.startswith("seed is not a Messages API field") for p in problems)


def test_garbage_bodies_are_problems_not_exceptions() -> None:
    assert PROFILE.decode_request(b"{not json").problems[0].startswith("body is not JSON")
    assert PROFILE.decode_request(b"[1]").problems == ["body is not a JSON object"]
    decoded = _decode(messages=[{"role": "user", "content": 5}, 7])
    assert len(decoded.problems) == 2


def test_required_headers() -> None:
    json_body = {"content-type": "application/json"}
    assert (
        PROFILE.request_header_problems({"x-api-key": "k", "anthropic-version": "2023-06-01", **json_body})
        == []
    )
    assert len(PROFILE.request_header_problems({"authorization": "Bearer k", **json_body})) == 1
    assert len(PROFILE.request_header_problems({})) == 3  # the key, the version, the content type


def test_tool_restrictions() -> None:
    ok = DecodedTool(name="get_weather", description="d", parameters={"type": "object", "properties": {}})
    assert PROFILE.tool_problems(ok) == []
    bad = DecodedTool(name="get weather!", description="d", parameters={"type": "string"})
    assert len(PROFILE.tool_problems(bad)) == 2


def test_expected_history_drops_what_the_api_rejects() -> None:
    history: list[Message] = [
        UserMessage(content="Hi"),
        AssistantMessage(content=""),
        UserMessage(content="Hello?"),
        AssistantMessage(content="", tool_calls=[ToolCallInfo(id="t", name="f", arguments={})]),
        ToolMessage(tool_call_id="t", tool_name="f", content=""),
    ]
    assert PROFILE.expected_history(history) == [history[0], history[2], history[3], history[4]]


def test_a_breakpoint_on_a_thinking_block_is_a_cache02_violation() -> None:
    ephemeral = {"cache_control": {"type": "ephemeral"}}
    turn = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "hm", "signature": "EqQB", **ephemeral}, _text("Hi")],
    }
    decoded = _decode(messages=[{"role": "user", "content": "Hi"}, turn, {"role": "user", "content": "Go"}])
    (breach,) = decoded.violations_of("CACHE-02")
    assert breach.startswith("messages[1].content[0]: cache_control on a thinking block")
    assert not _decode(messages=[{"role": "user", "content": [_text("Hi", **ephemeral)]}]).violations


def test_expected_history_leaves_unsigned_thinking_out_and_keeps_redacted_blocks() -> None:
    call = [ToolCallInfo(id="t", name="f", arguments={})]
    unsigned = AssistantMessage(content="", tool_calls=call, thinking=ThinkingContent(content="hm"))
    redacted = AssistantMessage(
        content="", tool_calls=call, thinking=ThinkingContent(content="hm", redacted=["EmwK"])
    )
    signed = AssistantMessage(
        content="", tool_calls=call, thinking=ThinkingContent(content="hm", signature="s")
    )
    kept = PROFILE.expected_history([unsigned, redacted, signed])
    assert [m.thinking for m in kept if isinstance(m, AssistantMessage)] == [
        None,
        ThinkingContent(content="", redacted=["EmwK"]),
        signed.thinking,
    ]
