"""The Anthropic Messages counterpart of ``_base``: a hookable reference and the ``broken_anthropic`` helper.

``HookedAnthropicAdapter`` and ``HookedMessagesStream`` behave exactly like ``reference_adapters.anthropic``,
but the decisions a real adapter gets wrong (building the body and the headers, mapping a stop reason,
parsing the tool-call arguments, accepting a stream without ``message_stop``...) are small methods, so that
each broken adapter overrides one of them and nothing else. The stream's event handlers (``_event``,
``_block_start``, ``_block_delta``, ``_close``) are the reference's own and are overridden directly.
``ANTHROPIC_BASELINE`` is the hooked adapter with no override: the control tests prove it passes every
Anthropic selection a broken adapter fails, so a failure comes from the injected bug, not from this plumbing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any, ClassVar

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
    aborted_error,
    drain,
    error_for_transport,
    parse_tool_calls,
    require_event_stream,
    retry_or_fail,
    run_attempts,
    tls_context,
)
from reference_adapters._sse import SSEDecoder
from reference_adapters.anthropic import (
    _STOP_REASONS,
    _TOOL_NAME,
    API_VERSION,
    PROVIDER,
    AnthropicAdapter,
    _MessagesStream,
    build_request_body,
)

from ._base import REFERENCE_CAPABILITIES, AdapterClass, BrokenAdapter, broken

__all__ = [
    "ANTHROPIC_BASELINE",
    "HookedAnthropicAdapter",
    "HookedMessagesStream",
    "broken_anthropic",
]


def broken_anthropic(
    name: str,
    adapter: AdapterClass,
    caught_by: str,
    scenarios: Sequence[str],
    description: str,
    *,
    harness_gap: str | None = None,
) -> BrokenAdapter:
    """A registry entry built like ``reference_adapters.anthropic.spec``: same profile, model, capabilities."""
    return broken(
        name,
        adapter,
        caught_by,
        scenarios,
        description,
        harness_gap=harness_gap,
        capabilities=REFERENCE_CAPABILITIES,
        wire_profile="anthropic-messages",
        model="claude-haiku-4-5-20251001",
    )


# --- the response side, hookable -------------------------------------------------------------------------


class HookedMessagesStream(_MessagesStream):
    """The reference ``_MessagesStream`` with ``result()`` split into overridable decisions."""

    stop_reasons: ClassVar[dict[str, StopReason]] = _STOP_REASONS

    def on_incomplete(self) -> None:
        """The stream ended without ``message_stop`` (ERR-04)."""
        cause = ProviderResponseError("the stream ended without message_stop")
        raise HelixError("anthropic: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)

    def stop_reason(self) -> StopReason:
        return self.stop_reasons.get(self._stop_reason or "", "unknown")

    def text_result(self, text: str, thinking: ThinkingContent | None, stop: StopReason) -> StepResult:
        return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)

    def parse_calls(self) -> list[ParsedToolCall]:
        return parse_tool_calls(self._call_buffers(), PROVIDER)

    async def result(self) -> StepResult:
        if self._error is not None:
            raise self._error
        if not self._done:
            self.on_incomplete()
        for state in self._blocks.values():
            await self._close(state)
        thinking = None
        if self._has_thinking:
            reasoning = "".join(self._thinking)
            thinking = ThinkingContent(content=reasoning, signature=self._signature, redacted=self._redacted)
        text = "".join(self._text)
        stop = self.stop_reason()
        if not self._calls or stop == "max_tokens":
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


class HookedAnthropicAdapter(AnthropicAdapter):
    """The reference adapter's ``_generate``/``_attempt`` with the body, headers and stream as hooks."""

    stream_class: ClassVar[type[HookedMessagesStream]] = HookedMessagesStream

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        return build_request_body(input)

    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        return {
            "x-api-key": self._api_key,
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }

    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        if guard.aborted:
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        rejected = [tool.name for tool in input.tools if not _TOOL_NAME.fullmatch(tool.name)]
        if rejected:
            message = f"anthropic: tool names must match ^[a-zA-Z0-9_-]{{1,128}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        body = json.dumps(self.build_body(input), ensure_ascii=False).encode("utf-8")
        headers = httpx.Headers(self.build_headers(input))
        headers.update(input.config.headers or {})
        client = httpx.AsyncClient(timeout=self._timeout, transport=self._transport, verify=tls_context())
        async with client:
            request = client.build_request("POST", self._url, content=body, headers=headers)
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
                return retry_or_fail(await self._status_error(response), response.headers)
            await require_event_stream(response, PROVIDER)
            stream, decoder, chunks = self.stream_class(emit), SSEDecoder(), response.aiter_bytes()
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


ANTHROPIC_BASELINE = broken_anthropic(
    "anthropic_baseline",
    HookedAnthropicAdapter,
    "HARN-01",
    ("text_basic",),
    "The hooked Anthropic reference with no override: must pass everything the reference passes (control).",
)
"""Not a broken adapter: the control tests run it on every Anthropic selection of the registry."""
