"""Streaming callbacks: each optional, each a plain function or a coroutine function (STR clauses)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .results import ParsedToolCall

MaybeAwaitable = Awaitable[None] | None


@dataclass
class LLMStreamCallbacks:
    on_text_delta: Callable[[str], MaybeAwaitable] | None = None
    on_thinking: Callable[[str, bool], MaybeAwaitable] | None = None
    on_tool_call: Callable[[ParsedToolCall], MaybeAwaitable] | None = None
    on_error: Callable[[Exception], MaybeAwaitable] | None = None


async def invoke_callback(callback: Callable[..., Any] | None, *args: Any) -> None:
    """Call ``callback(*args)`` and await it if it returned an awaitable (STR-08); no-op when absent."""
    if callback is None:
        return
    outcome = callback(*args)
    if inspect.isawaitable(outcome):
        await outcome
