"""The Gemini counterpart of ``_base``: a hookable reference and the ``broken_gemini`` helper.

``HookedGeminiAdapter`` and ``HookedGeminiStream`` behave exactly like ``reference_adapters.gemini``, but the
decisions a real adapter gets wrong (building the body, the headers and the URL, choosing the SSE decoder,
mapping a finishReason, making up tool-call ids, accepting a stream without a finishReason...) are small
methods, so that each broken adapter overrides one of them and nothing else. The stream's part handlers
(``_event``, ``_candidate``, ``_part``) are the reference's own and are overridden directly.
``GEMINI_BASELINE`` is the hooked adapter with no override: the control tests prove it passes every Gemini
selection a broken adapter fails, so a failure comes from the injected bug, not from this plumbing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

import httpx

from helix_conformance.contract import (
    FINISH_TOOL_NAME,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    ParsedToolCall,
    StepResult,
    StopReason,
    StructuredOutputStepResult,
    TextStepResult,
    ThinkingContent,
    ToolCallsStepResult,
)
from reference_adapters._http import (
    ProviderResponseError,
    RetryableFailure,
    SafeCallbacks,
    StreamGuard,
    ToolCallBuffer,
    aborted_error,
    drain,
    error_for_transport,
    parse_tool_calls,
    require_event_stream,
    retry_or_fail,
    run_attempts,
    tls_context,
)
from reference_adapters._sse import SSEDecoder, SSEEvent
from reference_adapters.gemini import (
    _STOP_REASONS,
    _TOOL_NAME,
    PROVIDER,
    GeminiAdapter,
    _GeminiStream,
    build_request_body,
)
from reference_adapters.gemini import spec as _reference

from ._base import AdapterClass, BrokenAdapter, broken

__all__ = [
    "GEMINI_BASELINE",
    "Decoder",
    "HookedGeminiAdapter",
    "HookedGeminiStream",
    "broken_gemini",
]


def broken_gemini(
    name: str,
    adapter: AdapterClass,
    caught_by: str,
    scenarios: Sequence[str],
    description: str,
    *,
    harness_gap: str | None = None,
) -> BrokenAdapter:
    """A registry entry built like ``reference_adapters.gemini.spec``: same profile, model, capabilities."""
    return broken(
        name,
        adapter,
        caught_by,
        scenarios,
        description,
        harness_gap=harness_gap,
        capabilities=_reference.capabilities,
        wire_profile=_reference.wire_profile,
        model=_reference.model,
    )


class Decoder(Protocol):
    """What the hooked adapter reads the body with: ``reference_adapters._sse.SSEDecoder``'s interface."""

    def feed(self, chunk: bytes) -> list[SSEEvent]: ...

    def close(self) -> list[SSEEvent]: ...


# --- the response side, hookable -------------------------------------------------------------------------


class HookedGeminiStream(_GeminiStream):
    """The reference ``_GeminiStream`` with ``result()`` split into overridable decisions."""

    stop_reasons: ClassVar[dict[str, StopReason]] = _STOP_REASONS

    def on_incomplete(self) -> None:
        """The stream ended without a finishReason (ERR-04)."""
        cause = ProviderResponseError("the stream ended without a finishReason")
        raise HelixError("gemini: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)

    def stop_reason(self) -> StopReason:
        fallback: StopReason = "content_filter" if self._blocked else "unknown"
        return self.stop_reasons.get(self._finish_reason or "", fallback)

    def has_tool_calls(self) -> bool:
        return bool(self._calls)

    def call_buffers(self) -> list[ToolCallBuffer]:
        return self._call_buffers()

    def parse_calls(self) -> list[ParsedToolCall]:
        return parse_tool_calls(self.call_buffers(), PROVIDER)

    def thinking(self) -> ThinkingContent | None:
        if self._has_thinking or self._signature:
            return ThinkingContent(content="".join(self._thinking), signature=self._signature)
        return None

    def text_result(self, text: str, thinking: ThinkingContent | None, stop: StopReason) -> StepResult:
        return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)

    async def result(self) -> StepResult:
        if self._error is not None:
            raise self._error
        if not self._done or self._raw:
            self.on_incomplete()
        await self._end_thinking()
        thinking = self.thinking()
        text = "".join(self._text)
        stop = self.stop_reason()
        if not self.has_tool_calls() or stop == "max_tokens":
            return self.text_result(text, thinking, stop)
        calls = self.parse_calls()
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)
        if finish is not None:
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:
            await self._emit.tool_call(call)
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )


# --- the adapter, hookable -------------------------------------------------------------------------------


class HookedGeminiAdapter(GeminiAdapter):
    """The reference adapter's ``_generate``/``_attempt`` with the body, headers, URL, decoder and stream
    as hooks."""

    stream_class: ClassVar[type[HookedGeminiStream]] = HookedGeminiStream

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        return build_request_body(input)

    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        return {
            "x-goog-api-key": self._api_key,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }

    def make_decoder(self) -> Decoder:
        return SSEDecoder(keep_stray_lines=True)

    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        if guard.aborted:
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        rejected = [tool.name for tool in input.tools if not _TOOL_NAME.fullmatch(tool.name)]
        if rejected:
            message = f"gemini: tool names must match ^[a-zA-Z_][a-zA-Z0-9_.-]{{0,63}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        try:
            payload = self.build_body(input)
        except HelixError as error:
            return ErrorStepResult(error=error)
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers = httpx.Headers(self.build_headers(input))
        headers.update(input.config.headers or {})
        client = httpx.AsyncClient(timeout=self._timeout, transport=self._transport, verify=tls_context())
        async with client:
            request = client.build_request(
                "POST", self.url(input.config.model), content=body, headers=headers
            )
            attempt = functools.partial(self._attempt, client, request, guard, emit)
            return await run_attempts(attempt, guard, input.config.max_retries, PROVIDER)

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            return retry_or_fail(error_for_transport(exc, PROVIDER))
        try:
            if response.status_code >= 400:
                error, hints = await self._status_error(response)
                return retry_or_fail(error, hints)
            await require_event_stream(response, PROVIDER)
            stream, decoder, chunks = self.stream_class(emit), self.make_decoder(), response.aiter_bytes()
            async for chunk in chunks:
                guard.touch()
                if await stream.feed(decoder.feed(chunk)) or guard.aborted:
                    break
            else:
                await stream.feed(decoder.close())
            if not guard.aborted:
                await drain(chunks)
            return await stream.result()
        except HelixError as error:
            return ErrorStepResult(error=error)
        except httpx.HTTPError as exc:
            return ErrorStepResult(error=error_for_transport(exc, PROVIDER))
        finally:
            await response.aclose()


GEMINI_BASELINE = broken_gemini(
    "gemini_baseline",
    HookedGeminiAdapter,
    "HARN-01",
    ("text_basic",),
    "The hooked Gemini reference with no override: must pass everything the reference passes (control).",
)
"""Not a broken adapter: the control tests run it on every Gemini selection of the registry."""
