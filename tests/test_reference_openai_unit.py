"""Focused unit tests of the OpenAI reference adapter over httpx.MockTransport (the suite checks the rest)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from helix_conformance.contract import (
    AbortController,
    ErrorStepResult,
    HelixError,
    LLMConfig,
    LLMGenerateInput,
    LLMStreamCallbacks,
    ParsedToolCall,
    StepResult,
    TextStepResult,
    ToolCallsStepResult,
    UserMessage,
)
from reference_adapters.openai_chat import OpenAIChatAdapter

API_KEY = "sk-unit-test-secret"
SSE_HEADERS = {"content-type": "text/event-stream"}


def sse_body(*deltas: dict[str, Any], finish: str = "stop") -> bytes:
    """A Chat Completions stream: one chunk per delta, the finish chunk, a usage chunk, then [DONE]."""
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}})
    return b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks) + b"data: [DONE]\n\n"


def streamed(body: bytes) -> httpx.Response:
    """A 200 response delivering ``body`` one SSE event per chunk, yielding to the loop in between."""

    async def chunks() -> AsyncIterator[bytes]:
        for event in body.split(b"\n\n")[:-1]:
            yield event + b"\n\n"
            await asyncio.sleep(0)

    return httpx.Response(200, headers=SSE_HEADERS, content=chunks())


def error_of(result: StepResult) -> HelixError:
    assert isinstance(result, ErrorStepResult)
    assert isinstance(result.error, HelixError)
    return result.error


def run(
    responses: list[httpx.Response], **input_fields: Any
) -> tuple[StepResult, list[httpx.Request], list[tuple[str, Any]]]:
    """Run one step against canned responses; return the result, the requests sent and the callbacks seen."""
    requests: list[httpx.Request] = []
    seen: list[tuple[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return responses[len(requests) - 1]

    callbacks = LLMStreamCallbacks(
        on_text_delta=lambda delta: seen.append(("text", delta)),
        on_tool_call=lambda call: seen.append(("tool_call", call)),
        on_error=lambda error: seen.append(("error", error)),
    )
    adapter = OpenAIChatAdapter(api_key=API_KEY, transport=httpx.MockTransport(handler))
    step = LLMGenerateInput(
        messages=[UserMessage(content="hi")],
        config=LLMConfig(model="gpt-4o-mini"),
        callbacks=callbacks,
        **input_fields,
    )
    return asyncio.run(adapter.generate_step(step)), requests, seen


def test_text_is_streamed_and_returned() -> None:
    result, requests, seen = run(
        [streamed(sse_body({"role": "assistant", "content": ""}, {"content": "Hel"}, {"content": "lo"}))]
    )
    assert result == TextStepResult(content="Hello", should_stop=True, stop_reason="end_turn")
    assert seen == [("text", "Hel"), ("text", "lo")]
    body = json.loads(requests[0].content)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert "tools" not in body
    assert "tool_choice" not in body
    assert requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def tool_delta(
    index: int, arguments: str, call_id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """A `tool_calls` delta as OpenAI streams it: id and name only on the first delta of a call."""
    entry: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        entry.update(id=call_id, type="function", function={"name": name, "arguments": arguments})
    return {"tool_calls": [entry]}


def test_parallel_tool_calls_are_assembled_by_index() -> None:
    deltas = [
        tool_delta(0, "", "call_a", "get_a"),
        tool_delta(0, '{"x": '),
        tool_delta(1, "", "call_b", "get_b"),
        tool_delta(0, "1}"),
    ]
    result, _, seen = run([streamed(sse_body(*deltas, finish="tool_calls"))])
    expected = [
        ParsedToolCall(id="call_a", name="get_a", arguments={"x": 1}),
        ParsedToolCall(id="call_b", name="get_b", arguments={}),
    ]
    assert isinstance(result, ToolCallsStepResult)
    assert result.tool_calls == expected
    assert (result.should_stop, result.stop_reason, result.content) == (False, "tool_use", None)
    assert seen == [("tool_call", call) for call in expected]


def test_401_is_an_auth_error_without_the_key() -> None:
    body = {"error": {"message": f"Incorrect API key provided: {API_KEY}", "type": "invalid_request_error"}}
    result, requests, seen = run([httpx.Response(401, json=body)])
    error = error_of(result)
    assert (error.code, error.status_code) == ("provider_auth_error", 401)
    assert error.retryable is False
    assert API_KEY not in str(error)
    assert len(requests) == 1  # never retried
    assert seen == [("error", error)]


def test_429_is_retried_then_succeeds() -> None:
    limited = httpx.Response(429, headers={"retry-after-ms": "1"}, json={"error": {"message": "slow down"}})
    result, requests, _ = run([limited, streamed(sse_body({"content": "ok"}))])
    assert isinstance(result, TextStepResult)
    assert result.content == "ok"
    assert len(requests) == 2


def test_already_aborted_signal_sends_nothing() -> None:
    controller = AbortController()
    controller.abort("user cancelled")
    result, requests, seen = run([], abort_signal=controller.signal)
    error = error_of(result)
    assert (error.code, error.retryable) == ("request_aborted", False)
    assert requests == []
    assert seen == [("error", error)]


def test_stream_cut_before_done_is_a_retryable_error_not_partial_text() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":null}]}\n\n'
    result, _, seen = run([streamed(body)])
    error = error_of(result)
    assert (error.code, error.retryable) == ("provider_error", True)
    assert seen == [("text", "partial"), ("error", error)]
