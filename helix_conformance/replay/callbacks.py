"""Recording callbacks: what the harness hands the adapter as ``input.callbacks``, in five flavours."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from typing import Any, Literal

from ..contract import LLMStreamCallbacks
from .trace import Trace

CallbackMode = Literal["async", "sync", "none", "raising", "slow"]
SLOW_CALLBACK_S = 0.02
"""How long a ``slow`` callback takes to complete: a consumer pushing to a UI or a socket (STR-08/09)."""
CALLBACK_NAMES = ("on_text_delta", "on_thinking", "on_tool_call", "on_error")


class CallbackRaised(RuntimeError):
    """Raised on purpose by the ``raising`` callbacks (STR-11)."""


class _TracedAwaitable:
    """Returned by async callbacks: records completion only when the adapter really awaits it (STR-08)."""

    def __init__(self, trace: Trace, name: str, args: tuple[Any, ...], delay: float = 0.0) -> None:
        self.trace, self.name, self.args, self.delay = trace, name, args, delay

    def __await__(self) -> Generator[Any, None, None]:
        # A real suspension (a slow consumer's, for ``slow``): overlapping callbacks become visible.
        yield from asyncio.sleep(self.delay).__await__()
        self.trace.add("callback_done", name=self.name, args=self.args)


def recording_callbacks(
    trace: Trace, mode: CallbackMode, after: Callable[[str], None] | None = None
) -> LLMStreamCallbacks | None:
    """``after(name)`` runs once each call is recorded (the harness aborts from inside a callback, AB-02)."""
    if mode == "none":
        return None

    def make(name: str) -> Any:
        def callback(*args: Any) -> Any:
            trace.add("callback", name=name, args=args)
            if after is not None:
                after(name)
            if mode == "raising":
                raise CallbackRaised(f"helix-conformance: {name} raises on purpose (STR-11)")
            if mode in ("async", "slow"):
                return _TracedAwaitable(trace, name, args, SLOW_CALLBACK_S if mode == "slow" else 0.0)
            return None

        callback.__name__ = name
        return callback

    return LLMStreamCallbacks(**{name: make(name) for name in CALLBACK_NAMES})
