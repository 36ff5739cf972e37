"""What ``generate_step`` returns: one of four StepResult types, discriminated by ``type``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ._model import ContractModel
from .messages import ThinkingContent

StopReason = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "content_filter",
    "refusal",
    "stop_sequence",
    "error",
    "unknown",
]
STOP_REASONS: tuple[str, ...] = StopReason.__args__  # type: ignore[attr-defined]


class ParsedToolCall(ContractModel):
    """A tool call the model asked for, arguments already parsed to a JSON object (RES-04)."""

    id: str
    name: str
    arguments: dict[str, Any]


class ParsedSubAgentCall(ContractModel):
    id: str
    agent_type: str
    input: Any


class TextStepResult(ContractModel):
    type: Literal["text"] = "text"
    content: str
    thinking: ThinkingContent | None = None
    should_stop: bool
    stop_reason: StopReason


class ToolCallsStepResult(ContractModel):
    type: Literal["tool_calls"] = "tool_calls"
    tool_calls: list[ParsedToolCall]
    sub_agent_calls: list[ParsedSubAgentCall] = Field(default_factory=list)
    content: str | None = None
    thinking: ThinkingContent | None = None
    should_stop: bool = False
    stop_reason: StopReason = "tool_use"


class StructuredOutputStepResult(ContractModel):
    type: Literal["structured_output"] = "structured_output"
    output: Any
    thinking: ThinkingContent | None = None
    should_stop: bool = True
    stop_reason: StopReason = "tool_use"


class ErrorStepResult(ContractModel):
    """A failure returned, never raised (NT-01); ``error`` is normally a HelixError."""

    type: Literal["error"] = "error"
    error: Exception
    should_stop: bool = True
    stop_reason: StopReason = "error"


StepResult = Annotated[
    TextStepResult | ToolCallsStepResult | StructuredOutputStepResult | ErrorStepResult,
    Field(discriminator="type"),
]
STEP_RESULT_TYPES = (TextStepResult, ToolCallsStepResult, StructuredOutputStepResult, ErrorStepResult)
