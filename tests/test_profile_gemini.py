"""The gemini request decoder: canonical meaning back out of a generateContent request, the linking of
function responses by name, the URL's part of the meaning (model, SSE), and the schema subset."""

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
from helix_conformance.profiles.gemini import schema_problems, to_json_schema

PROFILE = get_profile("gemini")
URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def _decode(url: str = URL, **body: Any) -> Any:
    return PROFILE.decode_request(json.dumps(body).encode(), url)


def _call(name: str, **extra: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": {"city": name}}, **extra}


def _result(name: str, text: str) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": {"result": text}}}


def test_a_conforming_request_decodes_to_the_canonical_conversation() -> None:
    decoded = _decode(
        systemInstruction={"parts": [{"text": "Be terse."}]},
        contents=[
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [{"text": "Checking."}, _call("a", thoughtSignature="sig"), _call("b")],
            },
            {
                "role": "user",
                "parts": [_result("a", "18°C"), _result("b", "12°C"), {"text": "And tomorrow?"}],
            },
        ],
        generationConfig={"temperature": 0.2, "topK": 40, "seed": 7},
        labels={"suite": "x"},
    )
    assert decoded.messages == [
        SystemMessage(content="Be terse."),
        UserMessage(content="Weather?"),
        AssistantMessage(
            content="Checking.",
            tool_calls=[
                ToolCallInfo(id="", name="a", arguments={"city": "a"}),
                ToolCallInfo(id="", name="b", arguments={"city": "b"}),
            ],
            thinking=ThinkingContent(content="", signature="sig"),
        ),
        ToolMessage(tool_call_id="", tool_name="a", content="18°C"),
        ToolMessage(tool_call_id="", tool_name="b", content="12°C"),
        UserMessage(content="And tomorrow?"),
    ]
    assert decoded.problems == []
    assert decoded.violations == []
    assert decoded.config == {"temperature": 0.2, "top_k": 40, "seed": 7}
    assert decoded.extra == {"labels": {"suite": "x"}}
    assert decoded.model == "gemini-2.5-flash"
    assert decoded.streaming


def test_streaming_is_read_from_the_url() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    assert not _decode(URL.replace("?alt=sse", ""), **body).streaming
    assert not _decode(URL.replace(":streamGenerateContent", ":generateContent"), **body).streaming
    keyed = _decode(URL + "&key=AIza-secret", **body)  # a documented way to send the key (MSG-09 evidence)
    assert keyed.streaming
    assert keyed.problems == []


def test_responses_that_do_not_answer_the_calls_in_order_break_msg04() -> None:
    model = {"role": "model", "parts": [_call("a"), _call("b")]}
    split = _decode(
        contents=[
            {"role": "user", "parts": [{"text": "Q"}]},
            model,
            {"role": "user", "parts": [_result("a", "1")]},
            {"role": "user", "parts": [_result("b", "2")]},
        ]
    )
    assert split.violations_of("MSG-05") == ["contents[2] and contents[3] are both user turns"]
    assert split.violations_of("MSG-04")
    swapped = _decode(
        contents=[
            {"role": "user", "parts": [{"text": "Q"}]},
            model,
            {"role": "user", "parts": [_result("b", "2"), _result("a", "1")]},
        ]
    )
    assert swapped.violations_of("MSG-04")
    with_ids = _decode(
        contents=[
            {"role": "user", "parts": [{"text": "Q"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}, "id": "fc_1"}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "a", "id": "fc_2", "response": {"r": "1"}}}],
            },
        ]
    )
    assert with_ids.violations_of("MSG-04") == [
        "contents[2]: functionResponse ids do not match the call ids: [('fc_1', 'fc_2')]"
    ]


def test_schema_subset_and_translation_back_to_json_schema() -> None:
    sent = {
        "type": "OBJECT",
        "properties": {"unit": {"type": "STRING", "enum": ["c", "f"], "nullable": True}},
        "required": [],
    }
    assert schema_problems(sent) == []
    assert to_json_schema(sent) == {
        "type": "object",
        "properties": {"unit": {"anyOf": [{"type": "string", "enum": ["c", "f"]}, {"type": "null"}]}},
        "required": [],
    }
    pydantic_like = {"$defs": {"U": {"type": "string"}}, "properties": {"u": {"$ref": "#/$defs/U"}}}
    assert sorted(schema_problems(pydantic_like)) == [
        "parameters.$defs: not in Gemini's schema subset",
        "parameters.properties.u.$ref: not in Gemini's schema subset",
    ]
    tool = DecodedTool(
        name="1bad name", description="", parameters=None, sent={"additionalProperties": False}
    )
    assert len(PROFILE.tool_problems(tool)) == 2


def test_expected_history_has_no_canonical_ids_and_no_empty_turns() -> None:
    history: list[Message] = [
        UserMessage(content="Hi"),
        AssistantMessage(content=""),
        AssistantMessage(content="", tool_calls=[ToolCallInfo(id="call_1", name="f", arguments={})]),
        ToolMessage(tool_call_id="call_1", tool_name="f", content="ok"),
    ]
    expected = PROFILE.expected_history(history)
    assert expected == [
        history[0],
        AssistantMessage(content="", tool_calls=[ToolCallInfo(id="", name="f", arguments={})]),
        ToolMessage(tool_call_id="", tool_name="f", content="ok"),
    ]


def test_garbage_bodies_are_problems_not_exceptions() -> None:
    assert PROFILE.decode_request(b"{nope", URL).problems[0].startswith("body is not JSON")
    decoded = _decode(contents=[{"role": "assistant", "parts": []}, 3])
    assert len(decoded.problems) >= 2
