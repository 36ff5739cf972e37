"""The adapter protocol and its input."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import Field

from ._model import ContractModel
from .abort import AbortSignal
from .callbacks import LLMStreamCallbacks
from .config import LLMConfig
from .messages import Message
from .results import StepResult
from .tools import Tool


class LLMGenerateInput(ContractModel):
    """Everything one step needs; adapters must not mutate it (MSG-07)."""

    messages: list[Message]
    tools: list[Tool] = Field(default_factory=list)
    config: LLMConfig
    abort_signal: AbortSignal | None = None
    callbacks: LLMStreamCallbacks | None = None
    agent_id: str = "agent"
    agent_type: str = "agent"


@runtime_checkable
class LLMAdapter(Protocol):
    """Turns one step's input into one provider call and the provider's answer into a StepResult."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult: ...
