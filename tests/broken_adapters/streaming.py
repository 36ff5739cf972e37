"""Broken adapters that get the streaming callbacks wrong: STR clauses.

Most wrap the callbacks the reference adapter calls (``SafeCallbacks``) or the stream that fires them; the
naive, from-scratch ways of getting streaming wrong live in ``naive.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, ClassVar

import httpx

from helix_conformance.contract import (
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    ParsedToolCall,
    StepResult,
    invoke_callback,
)
from reference_adapters._http import RetryableFailure, SafeCallbacks, StreamGuard
from reference_adapters._sse import SSEDecoder, SSEEvent
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken

logger = logging.getLogger(__name__)
GROUPING_TURNS = 4
"""Loop turns the grouping dispatcher waits so that parallel tool calls arrive together."""

# --- STR-01..05: what the callbacks carry, and when ---------------------------------------------------------


class _EmptyDeltaStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict) and delta.get("content") == "":
            await self._emit.text("")  # Bug: `if content is not None` instead of `if content`
        await super()._choice(choice)


class EmitsEmptyDeltas(HookedAdapter):
    stream_class = _EmptyDeltaStream


class _TrimmedTextStream(HookedChatStream):
    async def _visible(self, piece: Any, *, refusal: bool = False) -> None:
        # Bug: "cleans" every delta, so the words of the answer run together (in callbacks and result alike).
        await super()._visible(piece.strip() if isinstance(piece, str) else piece, refusal=refusal)


class TrimsEveryDelta(HookedAdapter):
    stream_class = _TrimmedTextStream


class _HeldTextCallbacks(SafeCallbacks):
    """Holds text deltas back (to strip a stop sequence the provider may echo) until the finish_reason."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.held: list[str] = []

    async def text(self, delta: str) -> None:
        self.held.append(delta)

    async def flush(self) -> None:
        held, self.held = self.held, []
        for delta in held:
            await super().text(delta)


class _FlushAtFinishStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        await super()._choice(choice)
        if choice.get("finish_reason") and isinstance(self._emit, _HeldTextCallbacks):
            await self._emit.flush()


class FlushesTextAtFinishReason(HookedAdapter):
    stream_class = _FlushAtFinishStream

    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _HeldTextCallbacks(input.callbacks, guard)


class _NoThinkingEndStream(HookedChatStream):
    async def _end_thinking(self) -> None:
        self._in_thinking = False  # Bug: the block is closed internally, but on_thinking(_, True) never fires


class NoThinkingComplete(HookedAdapter):
    stream_class = _NoThinkingEndStream


class _LateThinkingStream(HookedChatStream):
    async def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict) and (delta.get("reasoning_content") or delta.get("reasoning")):
            # Bug: reasoning is collected quietly and only reported once the step is complete.
            self._thinking.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
            rest = {k: v for k, v in delta.items() if k not in ("reasoning_content", "reasoning")}
            choice = {**choice, "delta": rest}
        await super()._choice(choice)

    async def result(self) -> StepResult:
        for piece in self._thinking:
            await self._emit.thinking(piece, False)
        if self._thinking:
            await self._emit.thinking("", True)
        return await super().result()


class ReportsThinkingAtTheEnd(HookedAdapter):
    stream_class = _LateThinkingStream


class ForgetsOnToolCall(OpenAIChatAdapter):
    """Bug: copies the caller's callbacks into its own set and forgets ``on_tool_call``."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        callbacks = input.callbacks
        if callbacks is not None:
            callbacks = type(callbacks)(
                on_text_delta=callbacks.on_text_delta,
                on_thinking=callbacks.on_thinking,
                on_error=callbacks.on_error,
            )
        return await super().generate_step(input.model_copy(update={"callbacks": callbacks}))


# --- STR-06: on_error ------------------------------------------------------------------------------------------


class ReportsErrorTwice(OpenAIChatAdapter):
    """Bug: reports the error at the top "to be sure", though the adapter already called on_error."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ErrorStepResult) and input.callbacks is not None:
            await invoke_callback(input.callbacks.on_error, result.error)
        return result


class ReportsRetriedAttempts(HookedAdapter):
    """Bug: every failed attempt goes to on_error, including the 429 that the retry then recovered from."""

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        outcome = await super()._attempt(client, request, guard, emit)
        if isinstance(outcome, RetryableFailure):
            await emit.error(outcome.error)
        return outcome


# --- STR-07/08: callbacks after return, callbacks not awaited -------------------------------------------------


class _DeferredToolCalls(SafeCallbacks):
    """Keeps on_tool_call notifications back, to hand them to the UI as one batch once the step is done."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.deferred: list[ParsedToolCall] = []

    async def tool_call(self, call: ParsedToolCall) -> None:
        self.deferred.append(call)

    async def release(self, grouping_turns: int) -> None:
        for _ in range(grouping_turns):  # let the batch settle before notifying
            await asyncio.sleep(0)
        for call in self.deferred:
            await super().tool_call(call)


class _BackgroundToolCalls(HookedAdapter):
    """Bug: on_tool_call is fired from a background task started as the step returns."""

    grouping_turns: ClassVar[int]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._emitter: _DeferredToolCalls | None = None
        self._background: set[asyncio.Task[None]] = set()

    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        self._emitter = _DeferredToolCalls(input.callbacks, guard)
        return self._emitter

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if self._emitter is not None and self._emitter.deferred:
            task = asyncio.create_task(self._emitter.release(self.grouping_turns))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        return result


class GroupsToolCallsInBackground(_BackgroundToolCalls):
    grouping_turns = GROUPING_TURNS  # the callbacks come a few loop turns after the return


class FireAndForgetToolCalls(_BackgroundToolCalls):
    grouping_turns = 0  # asyncio.create_task(notify()) just before `return result`


class _UnawaitedCallbacks(SafeCallbacks):
    async def _call(self, callback: Callable[..., Any] | None, *args: Any, after_abort: bool = False) -> None:
        if callback is None or (self._guard.aborted and not after_abort):
            return
        try:
            callback(*args)  # Bug: what an async callback returns is never awaited
        except Exception:
            logger.warning("stream callback %r raised; ignored", callback, exc_info=True)


class DoesNotAwaitCallbacks(HookedAdapter):
    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _UnawaitedCallbacks(input.callbacks, guard)


# --- STR-09..11: the result must not depend on callbacks, chunking or failing handlers ---------------------------


class _DeliveredTextCallbacks(SafeCallbacks):
    """Collects the text it delivered; nothing is delivered when there is no on_text_delta."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.delivered: list[str] = []

    async def text(self, delta: str) -> None:
        if self._callbacks.on_text_delta is None:
            return
        self.delivered.append(delta)
        await super().text(delta)


class _ContentFromCallbacksStream(HookedChatStream):
    async def result(self) -> StepResult:
        if isinstance(self._emit, _DeliveredTextCallbacks):
            self._text = list(self._emit.delivered)  # Bug: the content is what the callbacks were given
        return await super().result()


class ContentBuiltFromCallbacks(HookedAdapter):
    stream_class = _ContentFromCallbacksStream

    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _DeliveredTextCallbacks(input.callbacks, guard)


class _PerChunkDecoder(SSEDecoder):
    def feed(self, chunk: bytes) -> list[SSEEvent]:
        # Bug: a fresh decoder per network chunk, as if every chunk held whole lines and whole characters.
        decoder = SSEDecoder()
        return decoder.feed(chunk) + decoder.close()


class DecoderPerChunk(HookedAdapter):
    def make_decoder(self) -> SSEDecoder:
        return _PerChunkDecoder()


class _UnguardedCallbacks(SafeCallbacks):
    async def _call(self, callback: Callable[..., Any] | None, *args: Any, after_abort: bool = False) -> None:
        if callback is None or (self._guard.aborted and not after_abort):
            return
        await invoke_callback(callback, *args)  # Bug: no try/except around the caller's code


class CallbackErrorsPropagate(HookedAdapter):
    """Bug: callbacks unguarded, and generate_step only converts the errors it knows about."""

    catches = (HelixError, httpx.HTTPError)

    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _UnguardedCallbacks(input.callbacks, guard)


class _StopOnCallbackErrors(SafeCallbacks):
    failed = False

    async def _call(self, callback: Callable[..., Any] | None, *args: Any, after_abort: bool = False) -> None:
        if callback is None or (self._guard.aborted and not after_abort):
            return
        try:
            await invoke_callback(callback, *args)
        except Exception:
            self.failed = True  # Bug: "the consumer is broken, stop streaming" and return what was read


class _StopsWhenACallbackFails(HookedChatStream):
    async def feed(self, events: list[SSEEvent]) -> bool:
        stop = await super().feed(events)
        return stop or bool(getattr(self._emit, "failed", False))


class CutsTheStreamOnCallbackErrors(HookedAdapter):
    stream_class = _StopsWhenACallbackFails

    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _StopOnCallbackErrors(input.callbacks, guard)


class _MasksCallbackErrors(SafeCallbacks):
    async def _call(self, callback: Callable[..., Any] | None, *args: Any, after_abort: bool = False) -> None:
        if callback is None or (self._guard.aborted and not after_abort):
            return
        try:
            await invoke_callback(callback, *args)
        except Exception:
            # Bug: reported as the provider's failure, the caller's own exception dropped
            raise HelixError("openai: the stream failed", code="provider_error", retryable=True) from None


class MasksCallbackErrorsAsProviderErrors(HookedAdapter):
    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _MasksCallbackErrors(input.callbacks, guard)


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "trims_every_delta",
        TrimsEveryDelta,
        "STR-01",
        ["text_basic", "text_unicode"],
        "Strips whitespace off each text delta: callbacks and content agree, and both lose the spaces.",
    ),
    broken(
        "emits_empty_deltas",
        EmitsEmptyDeltas,
        "STR-01",
        ["text_basic", "text_and_tool_call"],
        'Calls on_text_delta("") for the role chunk\'s empty content.',
    ),
    broken(
        "flushes_text_at_finish_reason",
        FlushesTextAtFinishReason,
        "STR-02",
        ["text_basic"],
        "Holds every text delta back (to strip echoed stop sequences) and releases them at the finish_reason.",
    ),
    broken(
        "no_thinking_complete",
        NoThinkingComplete,
        "STR-03",
        ["thinking_text", "thinking_tool_call"],
        "Never calls on_thinking(_, True): the thinking block is never closed for the listener.",
    ),
    broken(
        "reports_thinking_at_the_end",
        ReportsThinkingAtTheEnd,
        "STR-04",
        ["thinking_text"],
        "Collects reasoning silently and reports it after the answer text was streamed.",
    ),
    broken(
        "forgets_on_tool_call",
        ForgetsOnToolCall,
        "STR-05",
        ["tool_call", "tool_call_parallel", "text_and_tool_call"],
        "Copies the callbacks into its own LLMStreamCallbacks and drops on_tool_call.",
    ),
    broken(
        "reports_error_twice",
        ReportsErrorTwice,
        "STR-06",
        ["http_500", "midstream_error", "connection_reset"],
        "Calls on_error a second time at the top of generate_step.",
    ),
    broken(
        "reports_retried_attempts",
        ReportsRetriedAttempts,
        "STR-06",
        ["retry_429_then_success"],
        "Calls on_error for a failed attempt that a retry then recovered from (on_error on success).",
    ),
    broken(
        "groups_tool_calls_in_background",
        GroupsToolCallsInBackground,
        "STR-07",
        ["tool_call", "tool_call_parallel"],
        "Fires on_tool_call from a background task that waits a few loop turns: after the step returned.",
    ),
    broken(
        "fire_and_forget_tool_calls",
        FireAndForgetToolCalls,
        "STR-07",
        ["tool_call"],
        "Fires on_tool_call with asyncio.create_task and returns: the callback runs after the return.",
    ),
    broken(
        "does_not_await_callbacks",
        DoesNotAwaitCallbacks,
        "STR-08",
        ["text_basic", "tool_call"],
        "Calls async callbacks without awaiting what they return.",
    ),
    broken(
        "content_built_from_callbacks",
        ContentBuiltFromCallbacks,
        "STR-09",
        ["text_basic"],
        "Builds the returned content from the deltas it delivered: without callbacks the content is empty.",
    ),
    broken(
        "decoder_per_chunk",
        DecoderPerChunk,
        "STR-10",
        ["text_basic", "text_unicode"],
        "Creates a new SSE decoder for every network chunk: lines and characters split across chunks break.",
    ),
    broken(
        "cuts_the_stream_on_callback_errors",
        CutsTheStreamOnCallbackErrors,
        "STR-11",
        ["text_basic", "text_and_tool_call"],
        "Stops reading when a callback raises and returns what it read so far: no exception, a wrong answer.",
    ),
    broken(
        "masks_callback_errors_as_provider_errors",
        MasksCallbackErrorsAsProviderErrors,
        "STR-11",
        ["text_basic"],
        "Turns a raising callback into provider_error 'the stream failed', the callback's exception dropped.",
    ),
    broken(
        "callback_errors_propagate",
        CallbackErrorsPropagate,
        "STR-11",
        ["text_basic", "tool_call"],
        "Does not guard the callbacks and only catches HelixError/httpx errors: a raising callback escapes.",
    ),
]
