"""Focused unit tests of the Gemini reference adapter over httpx.MockTransport (the suite checks the rest).

Stream bodies are shaped like the live recordings (../shared/recordings/google): ``data: {json}`` events
separated by ``\\r\\n\\r\\n``, JSON written with ``": "`` after keys, a whole ``functionCall`` in one part and
usually without an id, ``thought: true`` parts, a last chunk with an empty text part and the finishReason,
MAX_TOKENS with no parts, a blocked prompt with no candidates, and errors in the middle of the stream
written as raw pretty-printed JSON rather than as an event.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from helix_conformance.contract import (
    AbortController,
    AssistantMessage,
    ErrorStepResult,
    HelixError,
    LLMConfig,
    LLMGenerateInput,
    LLMStreamCallbacks,
    Message,
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
from reference_adapters._sse import SSEDecoder, SSEEvent
from reference_adapters.gemini import GeminiAdapter, build_request_body, gemini_schema, retry_info_delay, spec

API_KEY = "AIzaSyD-unit-test-secret-key-0123456789"
MODEL = "gemini-2.5-flash"
SSE_HEADERS = {"content-type": "text/event-stream"}
RESPONSE_ID = "w1peaMz6INOvnvgPgYfPiQY"
SIGNATURE = "EpwICpkIAXLI2nxlU6gsWZaZHRYkX1orzuM8vSUFwaAt1JRxEC2hJzPAcAu3PWaKz7X+PIyTTqF+ZIQPF+fQzkaRCbrxB0Q="
URL = f"https://generativelanguage.googleapis.com/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
SCHEMA_KEYWORDS = {
    "type", "format", "description", "nullable", "enum", "items", "properties", "required", "anyOf",
    "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "title", "default",
    "propertyOrdering", "minProperties", "maxProperties", "example",
}  # fmt: skip
"""Gemini's OpenAPI subset for ``parameters`` (TOOL-03)."""

# --- stream building --------------------------------------------------------------------------------------


def dumps(value: Any) -> str:
    """Google's JSON spacing: ``": "`` after keys, nothing after commas."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ": "))


def chunk(
    *parts: dict[str, Any], finish: str | None = None, response_id: str = RESPONSE_ID, **extra: Any
) -> bytes:
    """One GenerateContentResponse event; ``finish`` without parts gives a content with no parts at all."""
    content: dict[str, Any] = {"parts": list(parts), "role": "model"} if parts else {"role": "model"}
    candidate: dict[str, Any] = {"content": content}
    if finish is not None:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    usage = {"promptTokenCount": 15, "totalTokenCount": 15}
    event = {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": MODEL,
        "responseId": response_id,
    }
    return f"data: {dumps({**event, **extra})}\r\n\r\n".encode()


def text(*pieces: str) -> bytes:
    return b"".join(chunk({"text": piece}) for piece in pieces)


def stop(reason: str = "STOP") -> bytes:
    """The last chunk: an empty text part and the finishReason, as the live API ends a normal answer."""
    return chunk({"text": ""}, finish=reason)


def call(name: str, args: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if args is not None:
        body["args"] = args
    return {"functionCall": {**body, **fields.pop("inner", {})}, **fields}


def raw_error(code: int, status: str, message: str) -> bytes:
    """A mid-stream error as Gemini writes it: raw pretty-printed JSON, not a data: event."""
    body = {"error": {"code": code, "message": message, "status": status}}
    return (json.dumps(body, indent=2) + "\n").encode()


def streamed(body: bytes, *, split: int | None = None) -> httpx.Response:
    """A 200 response delivering ``body`` one event per chunk (or ``split``-byte chunks), yielding between."""

    async def chunks() -> AsyncIterator[bytes]:
        if split is not None:
            pieces = [body[i : i + split] for i in range(0, len(body), split)]
        else:
            pieces = [piece + b"\r\n\r\n" for piece in body.split(b"\r\n\r\n")]
            pieces[-1] = pieces[-1][:-4]
        for piece in pieces:
            if piece:
                yield piece
                await asyncio.sleep(0)

    return httpx.Response(200, headers=SSE_HEADERS, content=chunks())


def api_error(status: int, grpc: str, message: str, details: Any = None, **headers: str) -> httpx.Response:
    error: dict[str, Any] = {"code": status, "message": message, "status": grpc}
    if details is not None:
        error["details"] = details
    content = (json.dumps({"error": error}, indent=2) + "\n").encode()
    return httpx.Response(
        status, headers={"content-type": "application/json; charset=UTF-8", **headers}, content=content
    )


def retry_info(delay: str) -> list[dict[str, Any]]:
    return [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}],
        },
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
    ]


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
        on_tool_call=lambda c: seen.append(("tool_call", c)),
        on_error=lambda error: seen.append(("error", error)),
    )
    adapter = GeminiAdapter(api_key=API_KEY, base_url=base_url, transport=httpx.MockTransport(handler))
    input_fields.setdefault("config", LLMConfig(model=MODEL))
    step = LLMGenerateInput(
        messages=messages or [UserMessage(content="What is the capital of France?")],
        callbacks=callbacks,
        **input_fields,
    )
    return asyncio.run(adapter.generate_step(step)), requests, seen


def body_of(**input_fields: Any) -> dict[str, Any]:
    input_fields.setdefault("messages", [UserMessage(content="hi")])
    input_fields.setdefault("config", LLMConfig(model=MODEL))
    return build_request_body(LLMGenerateInput(**input_fields))


class Unit(BaseModel):
    name: str = Field(pattern="^[a-z]+$")


class Range(BaseModel):
    start: int = Field(ge=0)
    end: int | None = None


class Search(BaseModel):
    """Nested models ($defs), an optional nested model, an enum-like literal, arrays and bounds."""

    query: str = Field(min_length=1, max_length=50)
    tags: list[str] = Field(default_factory=list, max_length=3)
    ranges: list[Range] = Field(default_factory=list)
    unit: Unit | None = None
    mode: str = Field(default="fast", json_schema_extra={"enum": ["fast", "exact"]})
    score: float | None = None


WEATHER = Tool(
    name="get_weather",
    description="Current weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SEARCH = Tool(name="search", description="Search the docs.", input_schema=Search)
NO_ARGS = Tool(name="get_time", description="UTC time.", input_schema={"type": "object", "properties": {}})


# --- request ----------------------------------------------------------------------------------------------


def test_spec_and_defaults() -> None:
    assert (spec.name, spec.wire_profile, spec.model) == ("gemini", "gemini", MODEL)
    assert spec.capabilities == {"thinking", "parallel_tool_calls", "retries", "caching", "abort"}
    assert body_of() == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def test_url_and_headers_with_the_key_never_in_the_url() -> None:
    config = LLMConfig(model=MODEL, headers={"X-Trace": "t-1", "x-goog-user-project": "p-1"})
    ok = text("ok") + stop()
    _, requests, _ = run([streamed(ok)], config=config)
    request = requests[0]
    assert str(request.url) == URL
    assert "key=" not in str(request.url)
    assert request.headers["x-goog-api-key"] == API_KEY
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-trace"] == "t-1"
    assert request.headers["x-goog-user-project"] == "p-1"
    assert "authorization" not in request.headers
    for base in ("http://127.0.0.1:8080/v1beta/", "http://127.0.0.1:8080"):
        _, requests, _ = run([streamed(ok)], base_url=base)
        assert str(requests[0].url) == (
            f"http://127.0.0.1:8080/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
        )
    _, requests, _ = run([streamed(ok)], config=LLMConfig(model=f"models/{MODEL}"))
    assert str(requests[0].url) == URL


def test_system_instruction_alternation_and_dropped_empty_turns() -> None:
    body = body_of(
        messages=[
            SystemMessage(content="You are terse."),
            SystemMessage(content=""),
            SystemMessage(content="Answer in one word."),
            UserMessage(content="Capital of France?"),
            AssistantMessage(content="Paris."),
            UserMessage(content="And of Italy?"),
            AssistantMessage(content=""),  # nothing to send: dropped, its neighbours merge
            UserMessage(content=""),
            UserMessage(content="Please answer."),
        ]
    )
    assert body["systemInstruction"] == {
        "parts": [{"text": "You are terse."}, {"text": "Answer in one word."}]
    }
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Capital of France?"}]},
        {"role": "model", "parts": [{"text": "Paris."}]},
        {"role": "user", "parts": [{"text": "And of Italy?"}, {"text": "Please answer."}]},
    ]
    assert "systemInstruction" not in body_of(messages=[SystemMessage(content=""), UserMessage(content="x")])


def test_function_calls_and_responses_are_linked_by_name_and_order() -> None:
    calls = [
        ToolCallInfo(id="call_Xc81NfQzB0aWm5TgR2yVhJ4k", name="get_weather", arguments={"city": "Paris"}),
        ToolCallInfo(id="call_q9DkE3sLpA6uZw0HnC7xYt1M", name="get_weather", arguments={"city": "London"}),
    ]
    body = body_of(
        messages=[
            UserMessage(content="Weather in Paris and London?"),
            AssistantMessage(content="", tool_calls=calls),
            ToolMessage(tool_call_id=calls[0].id, tool_name="get_weather", content="18°C, sunny"),
            ToolMessage(tool_call_id=calls[1].id, tool_name="get_weather", content="12°C, rain"),
            UserMessage(content="And tomorrow?"),
        ],
        tools=[WEATHER],
    )
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [  # no empty text part beside the calls (MSG-06), no canonical ids
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                {"functionCall": {"name": "get_weather", "args": {"city": "London"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"result": "18°C, sunny"}}},
                {"functionResponse": {"name": "get_weather", "response": {"result": "12°C, rain"}}},
                {"text": "And tomorrow?"},
            ],
        },
    ]
    assert "call_" not in json.dumps(body)


def test_consecutive_assistant_messages_make_one_model_turn() -> None:
    body = body_of(
        messages=[
            UserMessage(content="Hi"),
            AssistantMessage(content="Let me check."),
            AssistantMessage(content="", tool_calls=[ToolCallInfo(id="c1", name="get_time", arguments={})]),
            ToolMessage(tool_call_id="c1", tool_name="get_time", content="12:00"),
        ]
    )
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [{"text": "Let me check."}, {"functionCall": {"name": "get_time", "args": {}}}],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_time", "response": {"result": "12:00"}}}],
        },
    ]


def test_thought_signature_round_trips_on_the_first_call_without_the_thinking_text() -> None:
    thinking = ThinkingContent(content="I should call get_weather twice.", signature=SIGNATURE)
    calls = [
        ToolCallInfo(id="a", name="get_weather", arguments={"city": "Paris"}),
        ToolCallInfo(id="b", name="get_weather", arguments={"city": "Rome"}),
    ]
    body = body_of(
        messages=[
            UserMessage(content="Weather?"),
            AssistantMessage(content="Checking.", thinking=thinking, tool_calls=calls),
            ToolMessage(tool_call_id="a", tool_name="get_weather", content="18°C"),
            ToolMessage(tool_call_id="b", tool_name="get_weather", content="21°C"),
            AssistantMessage(
                content="Warm.", thinking=ThinkingContent(content="Both warm.", signature="sig2")
            ),
            UserMessage(content="Thanks"),
            AssistantMessage(content="You're welcome.", thinking=ThinkingContent(content="unsigned")),
            UserMessage(content="Bye"),
        ]
    )
    assert body["contents"][1]["parts"] == [
        {"text": "Checking."},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": SIGNATURE},
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
    ]
    assert body["contents"][3]["parts"] == [{"text": "Warm.", "thoughtSignature": "sig2"}]
    assert body["contents"][5]["parts"] == [{"text": "You're welcome."}]
    sent = json.dumps(body)
    assert "I should call" not in sent
    assert "unsigned" not in sent
    assert '"thought"' not in sent


def test_tool_schemas_are_inlined_gemini_subset_and_equivalent() -> None:
    original = Search.model_json_schema()
    assert "$defs" in original  # the nested models are $refs in pydantic's schema
    body = body_of(tools=[SEARCH, WEATHER, NO_ARGS])
    declarations = body["tools"][0]["functionDeclarations"]
    assert [(d["name"], d["description"]) for d in declarations] == [
        ("search", "Search the docs."),
        ("get_weather", "Current weather in a city."),
        ("get_time", "UTC time."),
    ]
    parameters = declarations[0]["parameters"]

    def keywords(schema: Any) -> set[str]:
        found = set(schema)
        for sub in [
            schema.get("items"),
            *(schema.get("properties") or {}).values(),
            *schema.get("anyOf", []),
        ]:
            if isinstance(sub, dict):
                found |= keywords(sub)
        return found

    assert keywords(parameters) <= SCHEMA_KEYWORDS
    assert "$ref" not in json.dumps(parameters)
    assert parameters["properties"]["unit"] == {
        "properties": {"name": {"pattern": "^[a-z]+$", "title": "Name", "type": "string"}},
        "required": ["name"],
        "title": "Unit",
        "type": "object",
        "default": None,
        "nullable": True,
    }
    assert parameters["properties"]["ranges"]["items"]["properties"]["start"] == {
        "minimum": 0,
        "title": "Start",
        "type": "integer",
    }
    assert declarations[1]["parameters"] == WEATHER.input_schema
    assert declarations[2]["parameters"] == {"type": "object"}  # Gemini rejects an empty `properties`

    def as_json_schema(schema: Any) -> Any:  # Gemini's nullable back to JSON Schema
        if not isinstance(schema, dict):
            return schema
        out = {k: v for k, v in schema.items() if k != "nullable"}
        if "items" in out:
            out["items"] = as_json_schema(out["items"])
        if "properties" in out:
            out["properties"] = {k: as_json_schema(v) for k, v in out["properties"].items()}
        if "anyOf" in out:
            out["anyOf"] = [as_json_schema(v) for v in out["anyOf"]]
        return {"anyOf": [out, {"type": "null"}]} if schema.get("nullable") else out

    want, got = Draft202012Validator(original), Draft202012Validator(as_json_schema(parameters))
    instances: list[Any] = [
        {"query": "x"},
        {"query": "x", "unit": None, "score": None, "ranges": [{"start": 0, "end": None}]},
        {"query": "x", "unit": {"name": "abc"}, "tags": ["a", "b", "c"], "score": 1.5, "mode": "exact"},
        {},
        {"query": ""},
        {"query": "x" * 51},
        {"query": "x", "tags": ["a", "b", "c", "d"]},
        {"query": "x", "unit": {"name": "ABC"}},
        {"query": "x", "unit": {}},
        {"query": "x", "ranges": [{"start": -1}]},
        {"query": "x", "ranges": [{"end": 3}]},
        {"query": "x", "score": "high"},
        {"query": "x", "mode": "slow"},
        {"query": 3},
    ]
    for instance in instances:
        assert want.is_valid(instance) == got.is_valid(instance), instance


def test_schema_translation_of_json_schema_constructs() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "kind": {"const": "order"},
            "count": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "id": {"type": ["string", "null"], "format": "uuid"},
            "when": {"type": "string", "format": "date-time", "examples": ["2025-01-01T00:00:00Z"]},
            "value": {"type": ["string", "integer"], "minLength": 2, "minimum": 1},
            "shape": {"oneOf": [{"$ref": "#/definitions/Circle"}, {"$ref": "#/definitions/Square"}]},
            "item": {"allOf": [{"$ref": "#/definitions/Circle"}], "description": "An item."},
        },
        "definitions": {
            "Circle": {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]},
            "Square": {"type": "object", "properties": {"side": {"type": "NUMBER"}}},
        },
    }
    before = json.dumps(schema, sort_keys=True)
    circle = {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]}
    assert gemini_schema(schema) == {
        "type": "object",
        "properties": {
            "kind": {"enum": ["order"], "type": "string"},
            "count": {"type": "integer", "minimum": 1, "maximum": 9},
            "id": {"type": "string", "nullable": True},  # uuid is not a format Gemini knows: an annotation
            "when": {"type": "string", "format": "date-time"},
            "value": {"anyOf": [{"minLength": 2, "type": "string"}, {"minimum": 1, "type": "integer"}]},
            "shape": {"anyOf": [circle, {"type": "object", "properties": {"side": {"type": "number"}}}]},
            "item": {**circle, "description": "An item."},
        },
    }
    assert json.dumps(schema, sort_keys=True) == before  # MSG-07


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/Node", "$defs": {"Node": {"properties": {"next": {"$ref": "#/$defs/Node"}}}}},
        {"type": "object", "properties": {"x": {"not": {"type": "string"}}}},
        {"type": "object", "properties": {"x": {"type": "number", "multipleOf": 0.5}}},
        {"type": "object", "properties": {"x": {"type": "number", "exclusiveMinimum": 0}}},
        {"type": "object", "properties": {"x": {"$ref": "https://example.com/schema.json"}}},
        {"type": "object", "properties": {"x": {"type": "array", "items": [{"type": "string"}]}}},
    ],
)
def test_a_schema_gemini_cannot_express_is_refused_before_any_request(schema: dict[str, Any]) -> None:
    tool = Tool(name="walk", description="", input_schema=schema)
    result, requests, seen = run([], tools=[tool])
    error = error_of(result)
    assert (error.code, error.retryable) == ("provider_invalid_request", False)
    assert "walk" in error.message
    assert requests == []
    assert seen == [("error", error)]


@pytest.mark.parametrize("name", ["get weather", "1st_tool", "a" * 65, "naïve", ""])
def test_invalid_tool_name_is_refused_before_any_request(name: str) -> None:
    bad = Tool(name=name, description="", input_schema={"type": "object"})
    result, requests, seen = run([], tools=[bad])
    error = error_of(result)
    assert (error.code, error.retryable) == ("provider_invalid_request", False)
    assert requests == []
    assert seen == [("error", error)]


def test_tool_names_gemini_accepts() -> None:
    names = ["__finish__", "_x", "ns.tool-v2", "a" * 64]
    tools = [Tool(name=n, description="", input_schema={"type": "object"}) for n in names]
    result, requests, _ = run([streamed(text("ok") + stop())], tools=tools)
    assert isinstance(result, TextStepResult)
    declarations = json.loads(requests[0].content)["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == names


def test_generation_config_only_what_is_set() -> None:
    assert "generationConfig" not in body_of(config=LLMConfig(model=MODEL, max_retries=1))
    config = LLMConfig(
        model=MODEL,
        max_output_tokens=256,
        temperature=0.0,
        top_p=0.9,
        top_k=40,
        presence_penalty=0.1,
        frequency_penalty=0.2,
        seed=7,
        stop_sequences=["```"],
    )
    assert body_of(config=config)["generationConfig"] == {
        "maxOutputTokens": 256,
        "temperature": 0.0,
        "topP": 0.9,
        "topK": 40,
        "presencePenalty": 0.1,
        "frequencyPenalty": 0.2,
        "stopSequences": ["```"],
        "seed": 7,
    }
    assert body_of(config=LLMConfig(model=MODEL, top_k=3))["generationConfig"] == {"topK": 3}


def test_provider_options_are_merged_and_the_input_is_not_mutated() -> None:
    options: dict[str, dict[str, Any]] = {
        "gemini": {
            "labels": {"suite": "helix"},
            "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
            "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
        },
        "openai": {"n": 2},
    }
    config = LLMConfig(model=MODEL, temperature=0.5, provider_options=options)
    snapshot = json.dumps(options, sort_keys=True)
    body = body_of(config=config)
    assert body["labels"] == {"suite": "helix"}
    assert body["safetySettings"][0]["threshold"] == "BLOCK_NONE"
    assert body["generationConfig"] == {"temperature": 0.5, "thinkingConfig": {"includeThoughts": True}}
    assert "n" not in body
    body["labels"]["suite"] = "changed"
    assert json.dumps(options, sort_keys=True) == snapshot  # MSG-07


def test_no_tools_means_no_tools_field_and_caching_auto_changes_nothing() -> None:
    messages: list[Message] = [SystemMessage(content="Be brief."), UserMessage(content="Weather?")]
    plain = body_of(messages=messages)
    assert "tools" not in plain
    assert "toolConfig" not in plain
    assert body_of(messages=messages, config=LLMConfig(model=MODEL, caching="auto")) == plain
    with_tools = body_of(messages=messages, tools=[WEATHER])
    cached = body_of(messages=messages, tools=[WEATHER], config=LLMConfig(model=MODEL, caching="auto"))
    assert cached == with_tools
    assert "cachedContent" not in json.dumps(cached)


def test_the_input_is_not_mutated_by_a_step() -> None:
    messages: list[Message] = [
        UserMessage(content="Weather?"),
        AssistantMessage(
            content="",
            thinking=ThinkingContent(content="t", signature=SIGNATURE),
            tool_calls=[ToolCallInfo(id="a", name="get_weather", arguments={"city": {"name": "Paris"}})],
        ),
        ToolMessage(tool_call_id="a", tool_name="get_weather", content="18°C"),
    ]
    before = [m.model_dump() for m in messages]
    schema_before = json.dumps(Search.model_json_schema(), sort_keys=True)
    run([streamed(text("ok") + stop())], messages=messages, tools=[SEARCH, WEATHER])
    assert [m.model_dump() for m in messages] == before
    assert json.dumps(Search.model_json_schema(), sort_keys=True) == schema_before


# --- stream -----------------------------------------------------------------------------------------------


def test_text_with_crlf_framing_however_it_is_chunked() -> None:
    body = text("The", " capital of France", " is Paris 🇫🇷.\n") + stop()
    for response in (streamed(body), streamed(body, split=1), streamed(body, split=7)):
        result, requests, seen = run([response])
        assert result == TextStepResult(
            content="The capital of France is Paris 🇫🇷.\n", should_stop=True, stop_reason="end_turn"
        )
        assert seen == [("text", "The"), ("text", " capital of France"), ("text", " is Paris 🇫🇷.\n")]
        assert str(requests[0].url) == URL


def test_the_finish_chunk_may_carry_the_last_text() -> None:
    body = text("The") + chunk({"text": " end."}, finish="STOP")
    result, _, seen = run([streamed(body)])
    assert result == TextStepResult(content="The end.", should_stop=True, stop_reason="end_turn")
    assert seen == [("text", "The"), ("text", " end.")]


def test_thought_parts_stream_as_thinking_with_one_completion_and_the_signature_is_kept() -> None:
    body = chunk({"text": "**Clarifying**\n\nThe user", "thought": True})
    body += chunk({"text": " wants the capital.", "thought": True})
    body += chunk({"text": "Paris", "thoughtSignature": SIGNATURE}) + text(" it is.") + stop()
    result, _, seen = run([streamed(body)])
    assert result == TextStepResult(
        content="Paris it is.",
        thinking=ThinkingContent(
            content="**Clarifying**\n\nThe user wants the capital.", signature=SIGNATURE
        ),
        should_stop=True,
        stop_reason="end_turn",
    )
    assert seen == [
        ("thinking", ("**Clarifying**\n\nThe user", False)),
        ("thinking", (" wants the capital.", False)),
        ("thinking", ("", True)),
        ("text", "Paris"),
        ("text", " it is."),
    ]


def test_thinking_that_ends_the_stream_still_gets_its_completion() -> None:
    body = chunk({"text": "Hmm.", "thought": True}) + chunk(finish="MAX_TOKENS")
    result, _, seen = run([streamed(body)])
    assert result == TextStepResult(
        content="", thinking=ThinkingContent(content="Hmm."), should_stop=True, stop_reason="max_tokens"
    )
    assert seen == [("thinking", ("Hmm.", False)), ("thinking", ("", True))]


def test_a_signature_without_thought_text_is_kept() -> None:
    body = chunk(call("get_country", {}, thoughtSignature=SIGNATURE)) + stop()
    result, _, seen = run([streamed(body)])
    assert isinstance(result, ToolCallsStepResult)
    assert result.thinking == ThinkingContent(content="", signature=SIGNATURE)
    assert [name for name, _ in seen] == ["tool_call"]  # no thinking callbacks without thinking text


def test_function_calls_without_ids_get_unique_stable_ids() -> None:
    body = chunk(
        call("get_weather", {"city": "Paris", "unit": "celsius"}), call("get_weather", {"city": "London"})
    )
    body += stop()
    first, _, seen = run([streamed(body)])
    again, _, _ = run([streamed(body, split=5)])
    assert isinstance(first, ToolCallsStepResult)
    assert first == again  # the same response gives the same ids, however it is chunked
    ids = [c.id for c in first.tool_calls]
    assert all(ids)
    assert len(set(ids)) == 2
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
        ("get_weather", {"city": "London"}),
    ]
    assert (first.should_stop, first.stop_reason, first.content, first.sub_agent_calls) == (
        False,
        "tool_use",
        None,
        [],
    )
    assert seen == [("tool_call", c) for c in first.tool_calls]
    other, _, _ = run([streamed(chunk(call("get_time"), response_id="AnotherResponse01") + stop())])
    assert isinstance(other, ToolCallsStepResult)
    assert other.tool_calls[0].id not in ids  # another response, other ids


def test_provider_ids_are_kept_and_repeated_ones_made_unique() -> None:
    body = chunk(call("a", {}, inner={"id": "c9bjmkfz"}), call("b", {}, inner={"id": "c9bjmkfz"}))
    result, _, _ = run([streamed(body + stop())])
    assert isinstance(result, ToolCallsStepResult)
    assert result.tool_calls[0].id == "c9bjmkfz"
    assert result.tool_calls[1].id not in ("", "c9bjmkfz")


def test_calls_in_separate_chunks_and_typed_arguments() -> None:
    args = {"n": 2, "ratio": 0.5, "flag": False, "none": None, "list": [1, "a"], "nested": {"k": True}}
    body = chunk(call("first", args)) + chunk(call("second")) + stop()
    result, _, _ = run([streamed(body)])
    assert isinstance(result, ToolCallsStepResult)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("first", args), ("second", {})]


def test_text_before_a_call_is_kept_and_streamed_first() -> None:
    body = text("Let me", " check.") + chunk(call("get_weather", {"city": "Rome"})) + stop()
    result, _, seen = run([streamed(body)])
    assert isinstance(result, ToolCallsStepResult)
    assert result.content == "Let me check."
    assert seen[:2] == [("text", "Let me"), ("text", " check.")]
    assert seen[2] == ("tool_call", result.tool_calls[0])


def test_finish_tool_wins_and_a_lookalike_is_an_ordinary_call() -> None:
    body = chunk({"text": "Done."}) + chunk(
        call("get_weather", {"city": "Paris"}),
        call("__finish__", {"answer": "Paris", "confidence": 1}, thoughtSignature=SIGNATURE),
    )
    result, _, seen = run([streamed(body + stop())])
    assert result == StructuredOutputStepResult(
        output={"answer": "Paris", "confidence": 1}, thinking=ThinkingContent(content="", signature=SIGNATURE)
    )
    assert [name for name, _ in seen] == ["text"]
    result, _, _ = run([streamed(chunk(call("finish", {"task_id": "7"})) + stop())])
    assert isinstance(result, ToolCallsStepResult)
    assert result.tool_calls[0].name == "finish"


def test_arguments_that_are_not_an_object_are_an_error_result() -> None:
    body = chunk({"functionCall": {"name": "f", "args": [1, 2]}}) + stop()
    error = error_of(run([streamed(body)])[0])
    assert error.code == "provider_error"


@pytest.mark.parametrize(
    ("wire", "canonical"),
    [
        ("STOP", "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("SPII", "content_filter"),
        ("IMAGE_SAFETY", "content_filter"),
        ("MODEL_ARMOR", "content_filter"),
        ("OTHER", "unknown"),
        ("MALFORMED_FUNCTION_CALL", "unknown"),
        ("UNEXPECTED_TOOL_CALL", "unknown"),
        ("LANGUAGE", "unknown"),
        ("FINISH_REASON_UNSPECIFIED", "unknown"),
        ("SOMETHING_NEW", "unknown"),
    ],
)
def test_finish_reasons(wire: str, canonical: StopReason) -> None:
    result, _, _ = run([streamed(text("Roses are", " red") + chunk(finish=wire))])
    assert result == TextStepResult(content="Roses are red", should_stop=True, stop_reason=canonical)


def test_max_tokens_and_safety_with_no_parts_at_all() -> None:
    body = chunk(finish="MAX_TOKENS")  # a thinking model that spent its budget: content {"role": "model"}
    result, _, seen = run([streamed(body)])
    assert result == TextStepResult(content="", should_stop=True, stop_reason="max_tokens")
    assert seen == []
    safety = b'data: {"candidates": [{"content": {},"finishReason": "SAFETY","index": 0,"safetyRatings": '
    safety += b'[{"category": "HARM_CATEGORY_HARASSMENT","probability": "HIGH","blocked": true}]}]}\r\n\r\n'
    result, _, _ = run([streamed(safety)])
    assert result == TextStepResult(content="", should_stop=True, stop_reason="content_filter")


def test_calls_with_a_stop_reason_other_than_stop_are_still_calls() -> None:
    body = chunk(call("get_weather", {"city": "Paris"}), finish="UNEXPECTED_TOOL_CALL")
    result, _, _ = run([streamed(body)])
    assert isinstance(result, ToolCallsStepResult)
    assert result.stop_reason == "tool_use"


def test_a_blocked_prompt_is_a_content_filter_text_result() -> None:
    blocked = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": MODEL,
        "responseId": RESPONSE_ID,
    }
    result, _, seen = run([streamed(f"data: {dumps(blocked)}\r\n\r\n".encode())])
    assert result == TextStepResult(content="", should_stop=True, stop_reason="content_filter")
    assert seen == []


def test_unknown_fields_and_parts_are_ignored() -> None:
    body = chunk({"text": "Ok", "x_future": 1}, x_helix_future_field={"nested": [1, 2]})
    body += chunk({"executableCode": {"language": "PYTHON", "code": "print(1)"}})
    body += chunk({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}, {"text": "."})
    body += b": a comment\r\n\r\n" + stop()
    result, _, _ = run([streamed(body)])
    assert result == TextStepResult(content="Ok.", should_stop=True, stop_reason="end_turn")


@pytest.mark.parametrize(
    ("code", "status", "expected"),
    [
        (503, "UNAVAILABLE", "provider_overloaded"),
        (429, "RESOURCE_EXHAUSTED", "provider_rate_limited"),
        (500, "INTERNAL", "provider_error"),
    ],
)
@pytest.mark.parametrize("split", [None, 1, 9])
def test_raw_json_error_in_the_middle_of_the_stream(
    code: int, status: str, expected: str, split: int | None
) -> None:
    body = text("Hi", " there") + raw_error(code, status, "The model is overloaded. Please try again later.")
    result, requests, seen = run([streamed(body, split=split)])
    error = error_of(result)
    assert (error.code, error.retryable) == (expected, True)
    assert "overloaded" in error.message
    assert len(requests) == 1  # output had streamed: not retried
    assert seen == [("text", "Hi"), ("text", " there"), ("error", error)]


def test_error_object_as_a_data_event() -> None:
    body = (
        text("Hi")
        + f"data: {dumps({'error': {'code': 429, 'status': 'RESOURCE_EXHAUSTED'}})}\r\n\r\n".encode()
    )
    error = error_of(run([streamed(body)])[0])
    assert error.code == "provider_rate_limited"
    body = (
        text("Hi") + b'data: {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}\r\n\r\n'
    )
    error = error_of(run([streamed(body)])[0])
    assert (error.code, error.retryable) == ("provider_error", False)


@pytest.mark.parametrize(
    "tail",
    [
        b"",  # the connection ended after some text
        chunk({"text": "more"}),  # the last chunk came without its finishReason
        b'{\n  "error": {\n    "code": 503,\n',  # a raw error cut short
    ],
)
def test_stream_without_a_finish_reason_is_a_retryable_error(tail: bytes) -> None:
    result, _, seen = run([streamed(text("partial") + tail)])
    error = error_of(result)
    assert (error.code, error.retryable) == ("provider_error", True)
    assert seen[0] == ("text", "partial")
    assert seen[-1] == ("error", error)


@pytest.mark.parametrize(
    "garbage",
    [
        b"data: {not json\r\n\r\n",
        b"<html><body>Bad gateway</body></html>\r\n\r\n",
        b"data: [1, 2]\r\n\r\n",
        b'{"not": "an error"}\n',
    ],
)
def test_a_stream_that_is_not_gemini_events_is_a_provider_error(garbage: bytes) -> None:
    error = error_of(run([streamed(text("Hi") + garbage + stop())])[0])
    assert error.code == "provider_error"


def test_a_200_that_is_not_an_event_stream_is_a_provider_error() -> None:
    page = httpx.Response(200, headers={"content-type": "text/html"}, content=b"<html>Bad gateway</html>")
    error = error_of(run([page])[0])
    assert error.code == "provider_error"
    array = httpx.Response(200, headers={"content-type": "application/json"}, content=b"[{}]")
    assert error_of(run([array])[0]).code == "provider_error"


# --- HTTP errors and retries ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "grpc", "code", "retryable"),
    [
        (400, "INVALID_ARGUMENT", "provider_invalid_request", False),
        (401, "UNAUTHENTICATED", "provider_auth_error", False),
        (403, "PERMISSION_DENIED", "provider_auth_error", False),
        (404, "NOT_FOUND", "provider_invalid_request", False),
        (408, "DEADLINE_EXCEEDED", "provider_timeout", True),
        (413, "INVALID_ARGUMENT", "provider_invalid_request", False),
        (422, "INVALID_ARGUMENT", "provider_invalid_request", False),
        (429, "RESOURCE_EXHAUSTED", "provider_rate_limited", True),
        (500, "INTERNAL", "provider_error", True),
        (502, "UNAVAILABLE", "provider_error", True),
        (503, "UNAVAILABLE", "provider_overloaded", True),
        (529, "UNAVAILABLE", "provider_overloaded", True),
    ],
)
def test_status_mapping(status: int, grpc: str, code: str, retryable: bool) -> None:
    config = LLMConfig(model=MODEL, max_retries=0)
    result, requests, seen = run([api_error(status, grpc, "The model is overloaded.")], config=config)
    error = error_of(result)
    assert (error.code, error.category, error.status_code, error.retryable) == (
        code,
        "provider",
        status,
        retryable,
    )
    assert isinstance(error.cause, httpx.HTTPStatusError)
    assert "The model is overloaded." in error.message
    assert len(requests) == 1
    assert seen == [("error", error)]


def test_retry_info_delay_is_honoured_between_retries() -> None:
    limited = api_error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", retry_info("0.150s"))
    times: list[float] = []
    responses = [limited, streamed(text("ok") + stop())]

    def handler(request: httpx.Request) -> httpx.Response:
        times.append(time.monotonic())
        return responses[len(times) - 1]

    adapter = GeminiAdapter(api_key=API_KEY, transport=httpx.MockTransport(handler))
    step = LLMGenerateInput(messages=[UserMessage(content="hi")], config=LLMConfig(model=MODEL))
    result = asyncio.run(adapter.generate_step(step))
    assert result == TextStepResult(content="ok", should_stop=True, stop_reason="end_turn")
    assert len(times) == 2
    assert times[1] - times[0] >= 0.14


@pytest.mark.parametrize(
    ("delay", "seconds"),
    [
        ("34.4s", 34.4),
        ("34s", 34.0),
        ("0.150s", 0.15),
        ({"seconds": 1, "nanos": 500000000}, 1.5),
        ("x", None),
    ],
)
def test_retry_info_parsing(delay: Any, seconds: float | None) -> None:
    details = retry_info("0s")
    details[1]["retryDelay"] = delay
    body = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": details}}
    assert retry_info_delay(json.dumps(body).encode()) == seconds
    assert retry_info_delay(b"<html>") is None
    assert retry_info_delay({"error": {"code": 429}}) is None


def test_retries_are_bounded_and_the_survivor_is_final() -> None:
    responses = [api_error(503, "UNAVAILABLE", "Overloaded", **{"retry-after-ms": "1"}) for _ in range(3)]
    result, requests, _ = run(responses, config=LLMConfig(model=MODEL, max_retries=2))
    error = error_of(result)
    assert (error.code, error.retryable) == ("provider_overloaded", False)
    assert len(requests) == 3
    responses = [api_error(429, "RESOURCE_EXHAUSTED", "quota", retry_info("0.001s"))]
    error = error_of(run(responses, config=LLMConfig(model=MODEL, max_retries=0))[0])
    assert (error.code, error.retryable) == ("provider_rate_limited", True)


def test_a_client_error_is_never_retried() -> None:
    result, requests, _ = run([api_error(400, "INVALID_ARGUMENT", "* temperature: must be in [0, 2]\n")])
    assert error_of(result).code == "provider_invalid_request"
    assert len(requests) == 1


def test_the_api_key_never_appears_in_an_error() -> None:
    echoed = api_error(400, "INVALID_ARGUMENT", f"API key not valid: {API_KEY}. Please pass a valid API key.")
    result, requests, _ = run([echoed])
    error = error_of(result)
    assert API_KEY not in str(error)
    assert API_KEY not in error.message
    assert len(requests) == 1
    body = text("Hi") + raw_error(500, "INTERNAL", f"bad key {API_KEY}")
    error = error_of(run([streamed(body)])[0])
    assert API_KEY not in str(error)


def test_connect_error_is_retried_then_surfaced() -> None:
    attempts: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        raise httpx.ConnectError("connection refused", request=request)

    adapter = GeminiAdapter(api_key=API_KEY, transport=httpx.MockTransport(handler))
    step = LLMGenerateInput(
        messages=[UserMessage(content="hi")], config=LLMConfig(model=MODEL, max_retries=1)
    )
    error = error_of(asyncio.run(adapter.generate_step(step)))
    assert (error.code, error.retryable) == ("provider_error", False)
    assert len(attempts) == 2


def test_an_aborted_signal_sends_nothing() -> None:
    controller = AbortController()
    controller.abort("user cancelled")
    result, requests, seen = run([], abort_signal=controller.signal)
    error = error_of(result)
    assert (error.code, error.retryable) == ("request_aborted", False)
    assert requests == []
    assert seen == [("error", error)]


# --- the SSE decoder's opt-in for raw lines ----------------------------------------------------------------


def test_sse_decoder_returns_stray_lines_in_order_only_when_asked() -> None:
    body = b'data: {"a": 1}\r\n\r\n: keep-alive\r\nid: 7\r\nretry: 10\r\n{\n  "error": {}\n}\ndata: x\n<html>'
    plain = SSEDecoder()
    assert plain.feed(body) + plain.close() == [SSEEvent(None, '{"a": 1}'), SSEEvent(None, "x")]
    strays = SSEDecoder(keep_stray_lines=True)
    events: list[SSEEvent] = []
    for i in range(len(body)):  # one byte at a time: the same events
        events += strays.feed(body[i : i + 1])
    assert events + strays.close() == [
        SSEEvent(None, '{"a": 1}'),
        SSEEvent(None, "{", stray=True),
        SSEEvent(None, '  "error": {}', stray=True),
        SSEEvent(None, "}", stray=True),
        SSEEvent(None, "x"),  # an event left open by a stray line is dispatched before it
        SSEEvent(None, "<html>", stray=True),
    ]
