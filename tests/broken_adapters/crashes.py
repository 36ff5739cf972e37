"""One bug, one cause (issue 29 §4): adapters with a single crash each, in the places real adapters crash.

Each is the reference adapter with one line of a realistic mistake. What ``tests/test_one_cause.py`` pins is
how the run reads: one cause for the one bug, reported on the clause that owns what happened, never the
clauses whose input the crash took away (STR-01 comparing deltas with an error result's empty text).
"""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.contract import LLMGenerateInput
from reference_adapters._http import SafeCallbacks, StreamGuard
from reference_adapters._sse import SSEEvent

from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken


class _ParsesEveryDataLineStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        data = event.data.strip()
        if data:
            json.loads(data)  # Bug: the JSON.parse of every `data:` line, the `[DONE]` sentinel included
        return await super()._event(event)


class ParsesTheDoneSentinel(HookedAdapter):
    """Catches every exception into an ErrorStepResult, as the contract asks: so every success response ends
    in ``openai: unexpected JSONDecodeError`` after its text has been streamed."""

    stream_class = _ParsesEveryDataLineStream


class _NameOnEveryDeltaStream(HookedChatStream):
    def _tool_delta(self, entry: dict[str, Any], position: int) -> None:
        entry["function"]["name"].strip()  # Bug: only the first delta of a call carries its name
        super()._tool_delta(entry, position)


class CrashesAssemblingToolCalls(HookedAdapter):
    stream_class = _NameOnEveryDeltaStream


class RaisesOnToolResults(HookedAdapter):
    """Lets an exception out of ``generate_step`` while building the body of a history with tool results."""

    catches = ()

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        if any(message.role == "tool" for message in input.messages):
            raise TypeError("Object of type ToolMessage is not JSON serializable")
        return super().build_body(input)


class _AwaitsWhatCallbacksReturn(SafeCallbacks):
    async def _call(self, callback: Any, *args: Any, after_abort: bool = False) -> None:
        if callback is not None:
            await callback(*args)  # Bug: a sync callback returns None, which cannot be awaited


class AwaitsSyncCallbacks(HookedAdapter):
    """Written against coroutine callbacks only, and lets the TypeError out: a crash only with sync ones."""

    catches = ()

    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _AwaitsWhatCallbacksReturn(input.callbacks, guard)


PARSES_DONE = broken(
    "parses-done-sentinel",
    ParsesTheDoneSentinel,
    "RES-02",
    ("text_basic", "tool_call", "thinking_text", "retry_429_then_success"),
    "JSON.parse of the `[DONE]` sentinel mid-stream, caught into an ErrorStepResult for every success response.",
)
TOOL_CALL_ASSEMBLY = broken(
    "tool-call-assembly-crash",
    CrashesAssemblingToolCalls,
    "RES-02",
    ("tool_call", "tool_call_parallel", "text_and_tool_call"),
    "KeyError on the second delta of a tool call (no `name` there), caught into an ErrorStepResult.",
)
RAISES_IN_STEP = broken(
    "raises-on-tool-results",
    RaisesOnToolResults,
    "NT-01",
    ("tool_result_roundtrip", "tool_result_then_user"),
    "A TypeError raised out of generate_step while building a body with tool results.",
)

AWAITS_SYNC_CALLBACKS = broken(
    "awaits-sync-callbacks",
    AwaitsSyncCallbacks,
    "STR-09",
    ("text_basic", "tool_call"),
    "Awaits what every callback returns: with sync callbacks the step raises TypeError.",
)

ADAPTERS: list[BrokenAdapter] = [PARSES_DONE, TOOL_CALL_ASSEMBLY, RAISES_IN_STEP, AWAITS_SYNC_CALLBACKS]
