"""Generation configuration of a step (CFG clauses)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._model import ContractModel


class LLMConfig(ContractModel):
    """Unset optional fields must not reach the provider (CFG-01)."""

    model: str
    max_output_tokens: int | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = None
    top_k: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    stop_sequences: list[str] | None = None
    seed: int | None = None
    max_retries: int = 3
    caching: Literal["auto", False] = False
    headers: dict[str, str] | None = None
    provider_options: dict[str, dict[str, Any]] | None = None
