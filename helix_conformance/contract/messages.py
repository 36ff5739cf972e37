"""Conversation messages handed to an adapter (CONTRACT §0), discriminated by ``role``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ._model import ContractModel


class ThinkingContent(ContractModel):
    """Reasoning text of a step, with what the provider needs to accept it back in the history (MSG-08)."""

    content: str
    signature: str | None = None
    """The provider's opaque proof of the reasoning (Anthropic ``signature``, Gemini ``thoughtSignature``)."""
    redacted: list[str] = Field(default_factory=list)
    """Opaque reasoning the provider returned encrypted (Anthropic ``redacted_thinking`` data), kept verbatim."""


class ToolCallInfo(ContractModel):
    """A tool call made by the assistant earlier in the conversation."""

    id: str
    name: str
    arguments: dict[str, Any]


class SystemMessage(ContractModel):
    role: Literal["system"] = "system"
    content: str


class UserMessage(ContractModel):
    role: Literal["user"] = "user"
    content: str


class AssistantMessage(ContractModel):
    role: Literal["assistant"] = "assistant"
    content: str
    tool_calls: list[ToolCallInfo] | None = None
    thinking: ThinkingContent | None = None


class ToolMessage(ContractModel):
    """The result of one tool call, linked to it by ``tool_call_id``."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    tool_name: str
    content: str


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage,
    Field(discriminator="role"),
]
