"""The public contract is an API: its names are pinned, and its models behave as CONTRACT §0 says."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from helix_conformance import contract
from helix_conformance.contract import (
    AbortController,
    AdapterContext,
    AdapterSpec,
    ErrorStepResult,
    HelixError,
    Message,
    StepResult,
    TextStepResult,
    ToolCallsStepResult,
)

PINNED = {
    "CAPABILITIES",
    "ERROR_CODES",
    "FINISH_TOOL_NAME",
    "PROVIDER_AUTH_ERROR",
    "PROVIDER_ERROR",
    "PROVIDER_INVALID_REQUEST",
    "PROVIDER_OVERLOADED",
    "PROVIDER_RATE_LIMITED",
    "PROVIDER_TIMEOUT",
    "REQUEST_ABORTED",
    "STOP_REASONS",
    "AbortController",
    "AbortSignal",
    "AdapterContext",
    "AdapterSpec",
    "AssistantMessage",
    "Capability",
    "ErrorStepResult",
    "HelixError",
    "LLMAdapter",
    "LLMConfig",
    "LLMGenerateInput",
    "LLMStreamCallbacks",
    "Message",
    "ParsedSubAgentCall",
    "ParsedToolCall",
    "RecordMode",
    "StepResult",
    "StopReason",
    "StructuredOutputStepResult",
    "SystemMessage",
    "TextStepResult",
    "ThinkingContent",
    "Tool",
    "ToolCallInfo",
    "ToolCallsStepResult",
    "ToolMessage",
    "UserMessage",
    "invoke_callback",
}


def test_public_names_are_pinned() -> None:
    assert set(contract.__all__) == PINNED
    for name in contract.__all__:
        assert hasattr(contract, name), name


def test_step_results_round_trip_with_camel_case_aliases() -> None:
    adapter = TypeAdapter(StepResult)
    result = adapter.validate_python(
        {"type": "tool_calls", "toolCalls": [{"id": "c1", "name": "f", "arguments": {"a": 1}}]}
    )
    assert isinstance(result, ToolCallsStepResult)
    assert result.should_stop is False
    assert result.stop_reason == "tool_use"
    assert result.sub_agent_calls == []
    dumped = result.model_dump(by_alias=True)
    assert dumped["toolCalls"][0]["arguments"] == {"a": 1}
    assert "shouldStop" in dumped


def test_invalid_stop_reason_and_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValidationError):
        TextStepResult(content="x", should_stop=True, stop_reason="stop")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        TypeAdapter(StepResult).validate_python(
            {"type": "text", "content": "", "shouldStop": True, "stopReason": "end_turn", "surprise": 1}
        )


def test_messages_are_discriminated_by_role() -> None:
    message = TypeAdapter(Message).validate_python(
        {"role": "tool", "toolCallId": "c", "toolName": "t", "content": "ok"}
    )
    assert type(message).__name__ == "ToolMessage"


def test_helix_error_category_and_cause() -> None:
    cause = ValueError("boom")
    error = HelixError(
        "rate limited", code="provider_rate_limited", retryable=True, status_code=429, cause=cause
    )
    assert error.category == "provider"
    assert error.__cause__ is cause
    assert str(error) == "rate limited"
    assert ErrorStepResult(error=error).stop_reason == "error"


def test_abort_signal_wakes_waiters_and_late_listeners() -> None:
    async def scenario() -> object:
        controller = AbortController()
        waiter = asyncio.ensure_future(controller.signal.wait())
        await asyncio.sleep(0)
        controller.abort("stop")
        controller.abort("ignored")
        late: list[object] = []
        controller.signal.add_listener(late.append)
        return await waiter, late, controller.signal.aborted

    assert asyncio.run(scenario()) == ("stop", ["stop"], True)


def test_adapter_spec_rejects_unknown_capabilities() -> None:
    with pytest.raises(ValueError, match="unknown capabilities"):
        AdapterSpec(
            name="x",
            factory=lambda ctx: None,
            wire_profile="openai-chat",
            model="m",  # type: ignore[arg-type,return-value]
            capabilities=frozenset({"telepathy"}),
        )


def test_adapter_context_carries_the_read_timeout_to_use() -> None:
    """``AdapterContext.timeout``: 60 s unless the harness says otherwise; in replay a fifth of the scenario's
    limit, so the adapter's own read timeout ends a stall before the harness gives up on the step (NT-04)."""
    from helix_conformance.testing import run_conformance
    from reference_adapters.openai_chat import spec as reference

    assert AdapterContext(api_key="k", base_url="https://api.example").timeout == 60.0
    seen: list[float] = []

    def factory(ctx: AdapterContext) -> Any:
        seen.append(ctx.timeout)
        return reference.factory(ctx)

    spec = dataclasses.replace(reference, factory=factory)
    report = run_conformance(spec, scenarios=["text_basic"], clauses=["RES-01"], timeout=5.0)
    assert [row["outcome"] for row in report["results"]] == ["passed"]
    assert seen
    assert set(seen) == {1.0}
