"""MockLLMAdapter, the scripted double adapter authors use in their unit tests (as in the Helix docs)."""

from __future__ import annotations

import asyncio
from typing import Any

from helix_conformance.contract import (
    AbortController,
    ErrorStepResult,
    HelixError,
    LLMConfig,
    LLMGenerateInput,
    LLMStreamCallbacks,
    ParsedToolCall,
    TextStepResult,
    ToolCallsStepResult,
    UserMessage,
)
from helix_conformance.testing import MockLLMAdapter


def _input(**kw: Any) -> LLMGenerateInput:
    return LLMGenerateInput(messages=[UserMessage(content="hi")], config=LLMConfig(model="m"), **kw)


def test_queue_then_default_and_call_count() -> None:
    first = TextStepResult(content="one", should_stop=True, stop_reason="end_turn")
    mock = MockLLMAdapter([first])
    second = ToolCallsStepResult(tool_calls=[ParsedToolCall(id="c1", name="f", arguments={})])
    mock.add_response(second)
    results = [asyncio.run(mock.generate_step(_input())) for _ in range(3)]
    assert results[:2] == [first, second]
    assert isinstance(results[2], TextStepResult)
    assert results[2].content == "Mock response"
    assert mock.call_count == 3
    assert len(mock.calls) == 3


def test_streams_its_results_through_sync_and_async_callbacks() -> None:
    seen: list[tuple[str, Any]] = []

    async def on_text(delta: str) -> None:
        seen.append(("text", delta))

    callbacks = LLMStreamCallbacks(
        on_text_delta=on_text, on_tool_call=lambda call: seen.append(("tool", call.id))
    )
    mock = MockLLMAdapter(
        [
            TextStepResult(content="Hello there world", should_stop=True, stop_reason="end_turn"),
            ToolCallsStepResult(tool_calls=[ParsedToolCall(id="c1", name="f", arguments={})]),
        ]
    )
    asyncio.run(mock.generate_step(_input(callbacks=callbacks)))
    asyncio.run(mock.generate_step(_input(callbacks=callbacks)))
    assert "".join(d for kind, d in seen if kind == "text") == "Hello there world"
    assert ("tool", "c1") in seen


def test_aborted_signal_and_raising_callbacks() -> None:
    controller = AbortController()
    controller.abort()
    errors: list[Exception] = []
    result = asyncio.run(
        MockLLMAdapter().generate_step(
            _input(abort_signal=controller.signal, callbacks=LLMStreamCallbacks(on_error=errors.append))
        )
    )
    assert isinstance(result, ErrorStepResult)
    assert isinstance(result.error, HelixError)
    assert result.error.code == "request_aborted"
    assert errors == [result.error]

    def explode(_: str) -> None:
        raise RuntimeError("callback bug")

    ok = asyncio.run(
        MockLLMAdapter().generate_step(_input(callbacks=LLMStreamCallbacks(on_text_delta=explode)))
    )
    assert isinstance(ok, TextStepResult)
