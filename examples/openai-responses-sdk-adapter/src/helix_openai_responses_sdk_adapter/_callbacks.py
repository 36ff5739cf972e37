"""The caller's streaming callbacks, called the way the contract wants (STR-08, STR-11, AB-02)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from helix_conformance.contract import AbortSignal, LLMStreamCallbacks, ParsedToolCall, invoke_callback

logger = logging.getLogger(__name__)


class SafeCallbacks:
    """Each callback awaited if it is a coroutine function (STR-08); an exception it raises is logged, not
    propagated (STR-11); nothing but ``on_error`` is called once the abort signal fired (AB-02)."""

    def __init__(self, callbacks: LLMStreamCallbacks | None, signal: AbortSignal | None) -> None:
        self._callbacks = callbacks or LLMStreamCallbacks()
        self._signal = signal

    async def text(self, delta: str) -> None:
        await self._call(self._callbacks.on_text_delta, delta)

    async def thinking(self, delta: str, is_complete: bool) -> None:
        await self._call(self._callbacks.on_thinking, delta, is_complete)

    async def tool_call(self, call: ParsedToolCall) -> None:
        await self._call(self._callbacks.on_tool_call, call)

    async def error(self, error: Exception) -> None:
        await self._call(self._callbacks.on_error, error, after_abort=True)

    async def _call(self, callback: Callable[..., Any] | None, *args: Any, after_abort: bool = False) -> None:
        if callback is None or (self._signal is not None and self._signal.aborted and not after_abort):
            return
        try:
            await invoke_callback(callback, *args)
        except Exception:  # STR-11: a broken callback must not break the step
            logger.warning("stream callback %r raised; ignored", callback, exc_info=True)
