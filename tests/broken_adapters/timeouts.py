"""Broken adapters that wait for what never comes (issue 18): no read timeout, a blocked event loop, a body read
on past its terminal event (with a read timeout: NT-05; without one: NT-04), callbacks fired after an abort from
the events already read (AB-02)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import httpx

from helix_conformance.contract import (
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    StepResult,
    invoke_callback,
)
from reference_adapters._http import (
    SafeCallbacks,
    StreamGuard,
    aborted_error,
    classify_status,
    tls_context,
)
from reference_adapters._sse import SSEEvent

from ._anthropic_base import HookedAnthropicAdapter, HookedMessagesStream, broken_anthropic
from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken
from ._gemini_base import HookedGeminiAdapter, HookedGeminiStream, broken_gemini

logger = logging.getLogger(__name__)

# --- NT-04: nothing ends a stall --------------------------------------------------------------------------------


class NoReadTimeout(HookedAdapter):
    """``httpx.AsyncClient(timeout=None)`` "because an answer can take minutes": a stalled one takes forever."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**kwargs, "timeout": None})  # Bug: AdapterContext.timeout thrown away

    def make_guard(self, input: LLMGenerateInput) -> StreamGuard:
        return StreamGuard(input.abort_signal, idle_timeout=None)


class SyncClientInAsyncStep(HookedAdapter):
    """Streams with the blocking ``httpx.Client`` inside ``async def`` and no timeout: a stalled read blocks
    the event loop itself, so no abort, no asyncio timer and no task cancellation can end it."""

    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        if guard.aborted:
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        body = json.dumps(self.build_body(input), ensure_ascii=False).encode("utf-8")
        stream, decoder = self.stream_class(emit), self.make_decoder()
        try:
            with (
                httpx.Client(timeout=None, verify=tls_context()) as client,  # Bug: sync, and no timeout
                client.stream("POST", self._url, content=body, headers=self.build_headers(input)) as response,
            ):
                if response.status_code >= 400:
                    code, retryable = classify_status(response.status_code)
                    message = f"openai: HTTP {response.status_code}"
                    error = HelixError(
                        message, code=code, retryable=retryable, status_code=response.status_code
                    )
                    return ErrorStepResult(error=error)
                for chunk in response.iter_bytes():  # Bug: a blocking read inside a coroutine
                    if await stream.feed(decoder.feed(chunk)):
                        break
            return await stream.result()
        except httpx.HTTPError as exc:
            return ErrorStepResult(error=self.transport_error(exc))


# --- NT-05 (and NT-04 with no read timeout): reading on after the terminal event ---------------------------------


class _ReadsToTheEndChat(HookedChatStream):
    async def feed(self, events: list[SSEEvent]) -> bool:
        stop = await super().feed(events)
        return stop and self._error is not None  # Bug: [DONE] parsed, but reading goes on until the body ends


class ReadsPastDone(HookedAdapter):
    stream_class = _ReadsToTheEndChat


class _ReadsToTheEndMessages(HookedMessagesStream):
    async def feed(self, events: list[SSEEvent]) -> bool:
        stop = await super().feed(events)
        return stop and self._error is not None  # Bug: message_stop seen, reading goes on until EOF


class ReadsPastDoneForever(NoReadTimeout):
    """Reads on after [DONE] and has no read timeout: a connection held open is waited for forever."""

    stream_class = _ReadsToTheEndChat


class ReadsPastMessageStop(HookedAnthropicAdapter):
    stream_class = _ReadsToTheEndMessages


class _ReadsOnAfterAnError(HookedMessagesStream):
    async def feed(self, events: list[SSEEvent]) -> bool:
        stop = await super().feed(events)
        return stop and self._error is None  # Bug: message_stop ends the read, `event: error` does not


class ReadsPastTheErrorEvent(HookedAnthropicAdapter):
    stream_class = _ReadsOnAfterAnError


class _ReadsToTheEndGemini(HookedGeminiStream):
    async def feed(self, events: list[SSEEvent]) -> bool:
        stop = await super().feed(events)
        return stop and self._error is not None  # Bug: the finish chunk seen, reading goes on until EOF


class ReadsPastTheFinishChunk(HookedGeminiAdapter):
    stream_class = _ReadsToTheEndGemini


# --- AB-02: callbacks from what was already read -----------------------------------------------------------------


class _CallbacksBlindToTheSignal(SafeCallbacks):
    async def _call(self, callback: Callable[..., Any] | None, *args: Any, after_abort: bool = False) -> None:
        if callback is None:
            return  # Bug: no look at the signal; the abort is checked between reads only
        try:
            await invoke_callback(callback, *args)
        except Exception:
            logger.warning("stream callback %r raised; ignored", callback, exc_info=True)


class CallbacksAfterAbort(HookedAdapter):
    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _CallbacksBlindToTheSignal(input.callbacks, guard)


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "no_read_timeout",
        NoReadTimeout,
        "NT-04",
        ["stall_read_timeout"],
        "httpx.AsyncClient(timeout=None) and no idle timer: a stall nothing aborts hangs the step.",
    ),
    broken(
        "sync_client_in_async_step",
        SyncClientInAsyncStep,
        "NT-04",
        ["stall_read_timeout"],
        "Reads the stream with the blocking httpx.Client, no timeout: a stall blocks the event loop itself "
        "(the harness gives the thread up; it is not hung).",
    ),
    broken(
        "reads_past_done",
        ReadsPastDone,
        "NT-05",
        ["text_basic", "tool_call"],
        "Parses [DONE] but reads on until the body ends: a connection held open keeps the step waiting.",
    ),
    broken(
        "reads_past_done_forever",
        ReadsPastDoneForever,
        "NT-04",
        ["text_basic"],
        "Reads on after [DONE] until the body ends, with no read timeout: a connection held open after the "
        "terminal event hangs the step (NT-04, MUST; with a read timeout it would be NT-05's SHOULD).",
    ),
    broken_anthropic(
        "anthropic_reads_past_message_stop",
        ReadsPastMessageStop,
        "NT-05",
        ["text_basic", "tool_call"],
        "Reads on after message_stop until the body ends (what the anthropic SDK's iterator does).",
    ),
    broken_anthropic(
        "anthropic_reads_past_the_error_event",
        ReadsPastTheErrorEvent,
        "NT-05",
        ["text_basic"],
        "Returns on message_stop, but after an `event: error` reads on until the body ends: a connection held "
        "open after the error keeps the step waiting (its code is right: NT-05 judges the wait, ERR-03 the code).",
    ),
    broken_gemini(
        "gemini_reads_past_the_finish_chunk",
        ReadsPastTheFinishChunk,
        "NT-05",
        ["text_basic", "tool_call"],
        "Reads on after the finishReason chunk until the body ends (what google-genai's iterator does).",
    ),
    broken(
        "callbacks_after_abort",
        CallbacksAfterAbort,
        "AB-02",
        ["abort_midstream"],
        "Checks the abort signal between reads only: the events already read still reach the callbacks.",
    ),
]
