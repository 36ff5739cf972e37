"""Focused unit tests of the Anthropic reference adapter over httpx.MockTransport (the suite checks the rest).

Stream bodies are adapted from live recordings (../shared/recordings/anthropic): ``event:``/``data:`` pairs,
``data:`` JSON padded with trailing spaces, ``ping`` events between and inside blocks, ``caller`` on
tool_use blocks, a first ``partial_json`` of ``""`` and an empty ``thinking_delta`` before the signature.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from helix_conformance.contract import (
    AssistantMessage,
    ErrorStepResult,
    HelixError,
    LLMConfig,
    LLMGenerateInput,
    LLMStreamCallbacks,
    Message,
    ParsedToolCall,
    StepResult,
    StopReason,
    StructuredOutputStepResult,
    SystemMessage,
    TextStepResult,
    ThinkingContent,
    Tool,
    ToolCallInfo,
    ToolCallsStepResult,
    ToolMessage,
    UserMessage,
)
from reference_adapters.anthropic import DEFAULT_MAX_TOKENS, AnthropicAdapter, build_request_body, spec

API_KEY = "sk-ant-api03-unit-test-secret"
MODEL = "claude-haiku-4-5-20251001"
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8"}
SIGNATURE = (
    "EuYDCmMIDBgCKkC05Zda4P+Cdk/LQKE+Aol4ZY3EY4wLDrf8XcApz2PiqrxiRjS7uY1kGtZ63vVlaVmtuIpdsHbkdfGHb9AsBYw="
)
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfgXz7DMjRZ9chTRhTX/m4="

# --- stream building --------------------------------------------------------------------------------------

MESSAGE_START = {
    "type": "message_start",
    "message": {
        "model": MODEL,
        "id": "msg_01BnVamfF7ccY9Qt3nZHAyaG",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "stop_details": None,
        "usage": {
            "input_tokens": 543,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 40,
            "service_tier": "standard",
            "inference_geo": "not_available",
        },
    },
}
PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def event(data: dict[str, Any], pad: int = 0) -> bytes:
    """One event as the live API frames it: compact JSON, optionally padded with trailing spaces."""
    return f"event: {data['type']}\ndata: {json.dumps(data, separators=(',', ':'))}{' ' * pad}\n\n".encode()


def start(index: int, block: dict[str, Any]) -> bytes:
    return event({"type": "content_block_start", "index": index, "content_block": block}, pad=5)


def delta(index: int, body: dict[str, Any]) -> bytes:
    return event({"type": "content_block_delta", "index": index, "delta": body}, pad=index % 3)


def stop(index: int) -> bytes:
    return event({"type": "content_block_stop", "index": index}, pad=9)


def text_block(index: int, *pieces: str) -> bytes:
    deltas = b"".join(delta(index, {"type": "text_delta", "text": p}) for p in pieces)
    return start(index, {"type": "text", "text": ""}) + deltas + stop(index)


def tool_block(index: int, call_id: str, name: str, *pieces: str) -> bytes:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}, "caller": {"type": "direct"}}
    deltas = b"".join(delta(index, {"type": "input_json_delta", "partial_json": p}) for p in ("", *pieces))
    return start(index, block) + PING + deltas + stop(index)


def thinking_block(index: int, *pieces: str, signature: str = SIGNATURE) -> bytes:
    deltas = b"".join(delta(index, {"type": "thinking_delta", "thinking": p}) for p in (*pieces, ""))
    sig = delta(index, {"type": "signature_delta", "signature": signature})
    return start(index, {"type": "thinking", "thinking": "", "signature": ""}) + deltas + sig + stop(index)


def finish(reason: str, stop_sequence: str | None = None) -> bytes:
    usage = {
        "input_tokens": 543,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 40,
    }
    message_delta = {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": stop_sequence, "stop_details": None},
        "usage": usage,
    }
    return event(message_delta, pad=12) + event({"type": "message_stop"}, pad=13)


def message(*blocks: bytes, reason: str = "end_turn") -> bytes:
    return event(MESSAGE_START, pad=8) + b"".join(blocks) + finish(reason)


def stream_error(kind: str, text: str) -> bytes:
    body = {
        "type": "error",
        "error": {"type": kind, "message": text},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    return event(body)


def streamed(body: bytes, *, split: int | None = None) -> httpx.Response:
    """A 200 response delivering ``body`` one SSE event per chunk (or ``split``-byte chunks), yielding between."""

    async def chunks() -> AsyncIterator[bytes]:
        if split is not None:
            pieces = [body[i : i + split] for i in range(0, len(body), split)]
        else:
            pieces = [piece + b"\n\n" for piece in body.split(b"\n\n")[:-1]]
        for piece in pieces:
            yield piece
            await asyncio.sleep(0)

    return httpx.Response(200, headers=SSE_HEADERS, content=chunks())


def api_error(status: int, kind: str, text: str, **headers: str) -> httpx.Response:
    body = {
        "type": "error",
        "error": {"type": kind, "message": text},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    return httpx.Response(status, headers={"content-type": "application/json", **headers}, json=body)


# --- running ----------------------------------------------------------------------------------------------


def error_of(result: StepResult) -> HelixError:
    assert isinstance(result, ErrorStepResult)
    assert isinstance(result.error, HelixError)
    assert (result.should_stop, result.stop_reason) == (True, "error")
    return result.error


def run(
    responses: list[httpx.Response],
    messages: list[Message] | None = None,
    base_url: str | None = None,
    **input_fields: Any,
) -> tuple[StepResult, list[httpx.Request], list[tuple[str, Any]]]:
    """Run one step against canned responses; return the result, the requests sent and the callbacks seen."""
    requests: list[httpx.Request] = []
    seen: list[tuple[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return responses[len(requests) - 1]

    callbacks = LLMStreamCallbacks(
        on_text_delta=lambda d: seen.append(("text", d)),
        on_thinking=lambda d, complete: seen.append(("thinking", (d, complete))),
        on_tool_call=lambda call: seen.append(("tool_call", call)),
        on_error=lambda error: seen.append(("error", error)),
    )
    adapter = AnthropicAdapter(api_key=API_KEY, base_url=base_url, transport=httpx.MockTransport(handler))
    input_fields.setdefault("config", LLMConfig(model=MODEL))
    step = LLMGenerateInput(
        messages=messages or [UserMessage(content="Two names for a pet pelican")],
        callbacks=callbacks,
        **input_fields,
    )
    return asyncio.run(adapter.generate_step(step)), requests, seen


def body_of(**input_fields: Any) -> dict[str, Any]:
    input_fields.setdefault("messages", [UserMessage(content="hi")])
    input_fields.setdefault("config", LLMConfig(model=MODEL))
    return build_request_body(LLMGenerateInput(**input_fields))


class Weather(BaseModel):
    city: str
    unit: str = "celsius"


WEATHER = Tool(name="get_weather", description="Current weather in a city.", input_schema=Weather)
PELICAN = Tool(name="pelican_name_generator", description="", input_schema={"properties": {}})


# --- request ----------------------------------------------------------------------------------------------


def test_spec_and_defaults() -> None:
    assert (spec.name, spec.wire_profile, spec.model) == ("anthropic", "anthropic-messages", MODEL)
    assert spec.capabilities == {"thinking", "parallel_tool_calls", "retries", "caching", "abort"}
    body = body_of()
    assert body == {
        "model": MODEL,
        "max_tokens": DEFAULT_MAX_TOKENS,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "stream": True,
    }


def test_system_slot_and_an_empty_assistant_turn_dropped() -> None:
    body = body_of(
        messages=[
            SystemMessage(content="You are terse."),
            SystemMessage(content="Answer in one word."),
            UserMessage(content="Capital of France?"),
            AssistantMessage(content="Paris."),
            UserMessage(content="And of Italy?"),
            AssistantMessage(content=""),
            UserMessage(content="Please answer."),
        ]
    )
    assert body["system"] == [
        {"type": "text", "text": "You are terse."},
        {"type": "text", "text": "Answer in one word."},
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Paris."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "And of Italy?"},
                {"type": "text", "text": "Please answer."},
            ],
        },
    ]


def test_tool_results_share_one_user_turn_with_the_following_text() -> None:
    calls = [
        ToolCallInfo(id="toolu_01LtHJmixrs9NcWQkK8hu8hj", name="pelican_name_generator", arguments={}),
        ToolCallInfo(id="toolu_01N8a4jWyf116qKTMqKKmjyt", name="pelican_name_generator", arguments={"n": 2}),
    ]
    body = body_of(
        messages=[
            UserMessage(content="Two names for a pet pelican"),
            AssistantMessage(content="", tool_calls=calls),
            ToolMessage(tool_call_id=calls[0].id, tool_name=calls[0].name, content="Charles"),
            ToolMessage(tool_call_id=calls[1].id, tool_name=calls[1].name, content="Sammy"),
            UserMessage(content="Pick one."),
        ],
        tools=[PELICAN],
    )
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [  # no empty text block beside the tool calls (MSG-06)
                {"type": "tool_use", "id": calls[0].id, "name": calls[0].name, "input": {}},
                {"type": "tool_use", "id": calls[1].id, "name": calls[1].name, "input": {"n": 2}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": calls[0].id, "content": "Charles"},
                {"type": "tool_result", "tool_use_id": calls[1].id, "content": "Sammy"},
                {"type": "text", "text": "Pick one."},
            ],
        },
    ]


def test_no_empty_text_block_is_ever_sent() -> None:
    body = body_of(
        messages=[
            SystemMessage(content=""),
            UserMessage(content="Hello"),
            UserMessage(content=""),
            AssistantMessage(content="", tool_calls=[ToolCallInfo(id="toolu_1", name="f", arguments={})]),
            ToolMessage(tool_call_id="toolu_1", tool_name="f", content=""),
        ]
    )
    assert "system" not in body
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hello"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
    ]


def test_thinking_in_history_is_sent_back_signed_and_redacted_first() -> None:
    thinking = ThinkingContent(content="I should call get_weather.", signature=SIGNATURE, redacted=[REDACTED])
    call = ToolCallInfo(id="toolu_01CzN6riCPqw4pVSuTd9Dwn7", name="get_weather", arguments={"city": "Paris"})
    body = body_of(
        messages=[
            UserMessage(content="Weather in Paris?"),
            AssistantMessage(content="Checking.", thinking=thinking, tool_calls=[call]),
            ToolMessage(tool_call_id=call.id, tool_name=call.name, content="18°C"),
            AssistantMessage(content="18°C.", thinking=ThinkingContent(content="unsigned")),
            UserMessage(content="Thanks"),
        ]
    )
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "I should call get_weather.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": call.id, "name": "get_weather", "input": {"city": "Paris"}},
    ]
    # reasoning without a signature cannot be accepted back by the API: it is left out
    assert body["messages"][3]["content"] == [{"type": "text", "text": "18°C."}]


def test_generation_config_only_what_is_set_and_only_anthropic_fields() -> None:
    config = LLMConfig(
        model=MODEL,
        max_output_tokens=256,
        temperature=0.5,
        top_p=0.9,
        top_k=40,
        presence_penalty=0.1,
        frequency_penalty=0.2,
        seed=7,
        stop_sequences=["```"],
        provider_options={"anthropic": {"metadata": {"user_id": "u-1"}}, "openai": {"n": 2}},
    )
    body = body_of(config=config)
    assert {k: body[k] for k in ("max_tokens", "temperature", "top_p", "top_k", "stop_sequences")} == {
        "max_tokens": 256,
        "temperature": 0.5,
        "top_p": 0.9,
        "top_k": 40,
        "stop_sequences": ["```"],
    }
    assert body["metadata"] == {"user_id": "u-1"}
    for foreign in ("presence_penalty", "frequency_penalty", "seed", "n", "tools", "tool_choice"):
        assert foreign not in body
    assert body["stream"] is True


def test_tool_schemas_are_object_schemas_and_the_input_is_not_mutated() -> None:
    raw_schema: dict[str, Any] = {
        "properties": {"q": {"$ref": "#/$defs/Q"}},
        "$defs": {"Q": {"type": "string"}},
    }
    search = Tool(name="search", description="Search.", input_schema=raw_schema)
    body = body_of(tools=[WEATHER, search])
    assert body["tools"][0] == {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "input_schema": Weather.model_json_schema(),
    }
    assert body["tools"][1]["input_schema"] == {**raw_schema, "type": "object"}
    assert "type" not in raw_schema  # MSG-07


def test_cache_breakpoints_only_with_caching_auto() -> None:
    messages: list[Message] = [
        SystemMessage(content="You are terse."),
        UserMessage(content="Weather?"),
        AssistantMessage(
            content="", tool_calls=[ToolCallInfo(id="toolu_1", name="get_weather", arguments={})]
        ),
        ToolMessage(tool_call_id="toolu_1", tool_name="get_weather", content="sunny"),
    ]
    snapshot = [m.model_dump() for m in messages]
    plain = body_of(messages=messages, tools=[WEATHER, PELICAN])
    assert "cache_control" not in json.dumps(plain)  # CACHE-01
    cached = body_of(
        messages=messages, tools=[WEATHER, PELICAN], config=LLMConfig(model=MODEL, caching="auto")
    )
    marked = json.dumps(cached).count("cache_control")
    assert 0 < marked <= 4
    ephemeral = {"type": "ephemeral"}
    assert cached["system"][-1]["cache_control"] == ephemeral
    assert cached["tools"][-1]["cache_control"] == ephemeral
    assert "cache_control" not in cached["tools"][0]
    assert cached["messages"][-1]["content"][-1]["cache_control"] == ephemeral
    assert [m.model_dump() for m in messages] == snapshot  # MSG-07
    assert "cache_control" not in json.dumps(body_of(messages=messages, tools=[WEATHER, PELICAN]))


def test_invalid_tool_name_is_refused_before_any_request() -> None:
    bad = Tool(name="get weather!", description="", input_schema={"type": "object"})
    result, requests, seen = run([], tools=[bad])
    error = error_of(result)
    assert (error.code, error.retryable) == ("provider_invalid_request", False)
    assert requests == []
    assert seen == [("error", error)]


def test_headers_and_url() -> None:
    config = LLMConfig(model=MODEL, headers={"anthropic-beta": "prompt-caching-2024-07-31", "X-Trace": "t-1"})
    ok = message(text_block(0, "ok"))
    _, requests, _ = run([streamed(ok)], config=config)
    request = requests[0]
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == API_KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["anthropic-beta"] == "prompt-caching-2024-07-31"
    assert request.headers["x-trace"] == "t-1"
    assert "authorization" not in request.headers
    _, requests, _ = run([streamed(ok)], base_url="http://127.0.0.1:8080/v1/")
    assert str(requests[0].url) == "http://127.0.0.1:8080/v1/messages"


# --- stream -----------------------------------------------------------------------------------------------


def test_text_with_pings_and_padded_data_lines() -> None:
    body = event(MESSAGE_START, pad=8) + start(0, {"type": "text", "text": ""}) + PING
    body += delta(0, {"type": "text_delta", "text": "Here"}) + PING
    body += delta(0, {"type": "text_delta", "text": " are two names 🦅"}) + stop(0) + finish("end_turn")
    for response in (streamed(body), streamed(body, split=3)):
        result, requests, seen = run([response])
        assert result == TextStepResult(
            content="Here are two names 🦅", should_stop=True, stop_reason="end_turn"
        )
        assert seen == [("text", "Here"), ("text", " are two names 🦅")]
        assert json.loads(requests[0].content)["stream"] is True


def test_parallel_tool_calls_with_empty_and_split_arguments() -> None:
    body = message(
        tool_block(0, "toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator"),
        tool_block(1, "toolu_01N8a4jWyf116qKTMqKKmjyt", "get_weather", '{"ci', 'ty": "Pa', 'ris"}'),
        reason="tool_use",
    )
    result, _, seen = run([streamed(body)], tools=[PELICAN, WEATHER])
    expected = [
        ParsedToolCall(id="toolu_01LtHJmixrs9NcWQkK8hu8hj", name="pelican_name_generator", arguments={}),
        ParsedToolCall(id="toolu_01N8a4jWyf116qKTMqKKmjyt", name="get_weather", arguments={"city": "Paris"}),
    ]
    assert isinstance(result, ToolCallsStepResult)
    assert result.tool_calls == expected
    assert (result.should_stop, result.stop_reason, result.content, result.sub_agent_calls) == (
        False,
        "tool_use",
        None,
        [],
    )
    assert seen == [("tool_call", call) for call in expected]


def test_text_before_a_tool_call_is_kept_and_streamed_first() -> None:
    body = message(
        text_block(0, "I'll update the issue list for", " you."),
        PING + tool_block(1, "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList"),
        reason="tool_use",
    )
    result, _, seen = run([streamed(body)])
    call = ParsedToolCall(id="toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name="updateIssueList", arguments={})
    assert result == ToolCallsStepResult(
        tool_calls=[call], sub_agent_calls=[], content="I'll update the issue list for you."
    )
    assert seen == [("text", "I'll update the issue list for"), ("text", " you."), ("tool_call", call)]


def test_tool_calls_win_over_an_end_turn_stop_reason() -> None:
    body = message(tool_block(0, "toolu_1", "get_weather", '{"city":"Rome"}'), reason="end_turn")
    result, _, _ = run([streamed(body)])
    assert isinstance(result, ToolCallsStepResult)
    assert result.stop_reason == "tool_use"


def test_thinking_with_signature_and_one_completion_callback() -> None:
    body = message(
        thinking_block(0, "The user wants", " two names for a pet pelican."),
        text_block(1, "1. **Pouch**", "\n2. **Pelé**"),
    )
    result, _, seen = run([streamed(body)])
    assert isinstance(result, TextStepResult)
    assert result.content == "1. **Pouch**\n2. **Pelé**"
    assert result.thinking == ThinkingContent(
        content="The user wants two names for a pet pelican.", signature=SIGNATURE, redacted=[]
    )
    assert seen == [
        ("thinking", ("The user wants", False)),
        ("thinking", (" two names for a pet pelican.", False)),
        ("thinking", ("", True)),
        ("text", "1. **Pouch**"),
        ("text", "\n2. **Pelé**"),
    ]


def test_redacted_thinking_is_kept_without_callbacks() -> None:
    body = message(
        start(0, {"type": "redacted_thinking", "data": REDACTED}) + stop(0),
        thinking_block(1, "Six times seven", " is 42."),
        text_block(2, "42."),
    )
    result, _, seen = run([streamed(body)])
    assert isinstance(result, TextStepResult)
    assert result.thinking == ThinkingContent(
        content="Six times seven is 42.", signature=SIGNATURE, redacted=[REDACTED]
    )
    assert [name for name, _ in seen].count("thinking") == 3  # two deltas and one completion
    assert REDACTED not in result.content


def test_thinking_kept_on_tool_calls_and_structured_results() -> None:
    tools = message(
        thinking_block(0, "Call it."), tool_block(1, "toolu_1", "get_weather", "{}"), reason="tool_use"
    )
    result, _, _ = run([streamed(tools)])
    assert isinstance(result, ToolCallsStepResult)
    assert result.thinking is not None
    assert result.thinking.content == "Call it."
    finishing = message(
        thinking_block(0, "Paris is the capital."),
        tool_block(1, "toolu_2", "get_weather", '{"city": "Paris"}'),
        tool_block(2, "toolu_3", "__finish__", '{"answer": "Paris", ', '"confidence": 0.9}'),
        reason="tool_use",
    )
    result, _, seen = run([streamed(finishing)])
    assert isinstance(result, StructuredOutputStepResult)
    assert result.output == {"answer": "Paris", "confidence": 0.9}
    assert result.thinking is not None
    assert result.thinking.signature == SIGNATURE
    assert not [name for name, _ in seen if name == "tool_call"]


def test_invalid_finish_arguments_are_an_error_result() -> None:
    body = message(tool_block(0, "toolu_1", "__finish__", '{"answer": '), reason="tool_use")
    result, _, seen = run([streamed(body)])
    error = error_of(result)
    assert error.code == "provider_error"
    assert seen == [("error", error)]


def test_refusal_with_zero_content_blocks() -> None:
    body = event(MESSAGE_START, pad=8) + finish("refusal")
    result, _, seen = run([streamed(body)])
    assert result == TextStepResult(content="", should_stop=True, stop_reason="refusal")
    assert seen == []


@pytest.mark.parametrize(
    ("wire", "canonical"),
    [
        ("end_turn", "end_turn"),
        ("stop_sequence", "stop_sequence"),
        ("max_tokens", "max_tokens"),
        ("model_context_window_exceeded", "max_tokens"),
        ("pause_turn", "end_turn"),
        ("compaction", "unknown"),
        ("something_new", "unknown"),
    ],
)
def test_stop_reasons(wire: str, canonical: StopReason) -> None:
    result, _, _ = run([streamed(message(text_block(0, "Paris"), reason=wire))])
    assert result == TextStepResult(content="Paris", should_stop=True, stop_reason=canonical)


def test_tool_calls_cut_off_by_max_tokens_are_not_executable() -> None:
    body = message(
        text_block(0, "Let me check."), tool_block(1, "toolu_1", "get_weather", '{"ci'), reason="max_tokens"
    )
    result, _, seen = run([streamed(body)])
    assert result == TextStepResult(content="Let me check.", should_stop=True, stop_reason="max_tokens")
    assert [name for name, _ in seen] == ["text"]


def test_unknown_events_blocks_and_fields_are_ignored() -> None:
    body = event(MESSAGE_START) + event({"type": "x_future_event", "detail": {"nested": [1]}})
    body += (
        start(0, {"type": "x_future_block", "payload": "?"}) + delta(0, {"type": "x_future_delta"}) + stop(0)
    )
    body += start(1, {"type": "text", "text": "", "citations": None})
    body += event(
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Ok."}, "x": 1}
    )
    body += delta(1, {"type": "citations_delta", "citation": {"type": "char_location"}}) + stop(1)
    body += finish("end_turn")
    result, _, _ = run([streamed(body)])
    assert result == TextStepResult(content="Ok.", should_stop=True, stop_reason="end_turn")


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("overloaded_error", "provider_overloaded"),
        ("rate_limit_error", "provider_rate_limited"),
        ("api_error", "provider_error"),
    ],
)
def test_error_event_inside_a_200_stream(kind: str, code: str) -> None:
    body = event(MESSAGE_START) + start(0, {"type": "text", "text": ""})
    body += delta(0, {"type": "text_delta", "text": "partial"}) + stream_error(kind, "Overloaded")
    result, requests, seen = run([streamed(body)])
    error = error_of(result)
    assert error.code == code
    assert len(requests) == 1  # output had streamed: not retried
    assert seen == [("text", "partial"), ("error", error)]


@pytest.mark.parametrize(
    "tail",
    [
        b"",  # the connection ended inside the text block
        stop(0) + event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}}),
    ],
)
def test_stream_without_message_stop_is_a_retryable_error(tail: bytes) -> None:
    body = event(MESSAGE_START) + start(0, {"type": "text", "text": ""})
    body += delta(0, {"type": "text_delta", "text": "partial"}) + tail
    result, _, seen = run([streamed(body)])
    error = error_of(result)
    assert (error.code, error.retryable) == ("provider_error", True)
    assert seen == [("text", "partial"), ("error", error)]


def test_event_data_that_is_not_json_is_a_provider_error() -> None:
    body = event(MESSAGE_START) + b"event: content_block_start\ndata: {not json\n\n" + finish("end_turn")
    error = error_of(run([streamed(body)])[0])
    assert error.code == "provider_error"


def test_a_200_that_is_not_an_event_stream_is_a_provider_error() -> None:
    page = httpx.Response(200, headers={"content-type": "text/html"}, content=b"<html>Bad gateway</html>")
    error = error_of(run([page])[0])
    assert error.code == "provider_error"


# --- HTTP errors and retries ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind", "code", "retryable"),
    [
        (400, "invalid_request_error", "provider_invalid_request", False),
        (401, "authentication_error", "provider_auth_error", False),
        (403, "permission_error", "provider_auth_error", False),
        (404, "not_found_error", "provider_invalid_request", False),
        (408, "timeout_error", "provider_timeout", True),
        (413, "request_too_large", "provider_invalid_request", False),
        (429, "rate_limit_error", "provider_rate_limited", True),
        (500, "api_error", "provider_error", True),
        (503, "api_error", "provider_overloaded", True),
        (529, "overloaded_error", "provider_overloaded", True),
    ],
)
def test_status_mapping(status: int, kind: str, code: str, retryable: bool) -> None:
    config = LLMConfig(model=MODEL, max_retries=0)
    result, requests, seen = run([api_error(status, kind, "Overloaded")], config=config)
    error = error_of(result)
    assert (error.code, error.category, error.status_code, error.retryable) == (
        code,
        "provider",
        status,
        retryable,
    )
    assert isinstance(error.cause, httpx.HTTPStatusError)
    assert len(requests) == 1
    assert seen == [("error", error)]


def test_529_is_retried_honouring_retry_after_then_succeeds() -> None:
    overloaded = api_error(529, "overloaded_error", "Overloaded", **{"retry-after": "0"})
    limited = api_error(429, "rate_limit_error", "slow down", **{"retry-after-ms": "1"})
    result, requests, _ = run([overloaded, limited, streamed(message(text_block(0, "ok")))])
    assert result == TextStepResult(content="ok", should_stop=True, stop_reason="end_turn")
    assert len(requests) == 3


def test_retries_are_bounded_and_the_survivor_is_final() -> None:
    responses = [
        api_error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "1"}) for _ in range(3)
    ]
    result, requests, _ = run(responses, config=LLMConfig(model=MODEL, max_retries=2))
    error = error_of(result)
    assert (error.code, error.retryable) == ("provider_overloaded", False)
    assert len(requests) == 3


def test_the_api_key_never_appears_in_an_error() -> None:
    echoed = api_error(401, "authentication_error", f"invalid x-api-key: {API_KEY}")
    result, requests, _ = run([echoed])
    error = error_of(result)
    assert error.code == "provider_auth_error"
    assert API_KEY not in str(error)
    assert API_KEY not in error.message
    assert len(requests) == 1  # never retried
    body = event(MESSAGE_START) + stream_error("api_error", f"bad key {API_KEY}")
    error = error_of(run([streamed(body)])[0])
    assert API_KEY not in str(error)


def test_connect_error_is_retried_then_surfaced() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    adapter = AnthropicAdapter(api_key=API_KEY, transport=httpx.MockTransport(handler))
    step = LLMGenerateInput(
        messages=[UserMessage(content="hi")], config=LLMConfig(model=MODEL, max_retries=1)
    )
    error = error_of(asyncio.run(adapter.generate_step(step)))
    assert (error.code, error.retryable) == ("provider_error", False)
