"""Shared pieces of the broken-adapter library: the registry entry, spec helpers and a hookable reference.

``HookedAdapter`` and ``HookedChatStream`` behave exactly like the OpenAI Chat reference adapter, but the
decisions a real adapter gets wrong (building the body, classifying an error, mapping a finish reason,
recognising ``__finish__``...) are split into small methods, so that each broken adapter overrides one of
them and nothing else. ``BASELINE`` is the hooked adapter with no override: the control tests prove it passes
every selection a broken adapter fails, so a failure comes from the injected bug, not from this plumbing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import httpx

from helix_conformance.contract import (
    FINISH_TOOL_NAME,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    AdapterSpec,
    ErrorStepResult,
    HelixError,
    LLMAdapter,
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
    redact_error,
    require_event_stream,
    retry_or_fail,
    run_attempts,
    tls_context,
)
from reference_adapters._sse import SSEDecoder
from reference_adapters.anthropic import spec as anthropic_reference
from reference_adapters.bedrock_converse import spec as bedrock_reference
from reference_adapters.cohere import spec as cohere_reference
from reference_adapters.gemini import spec as gemini_reference
from reference_adapters.openai_chat import (
    _STOP_REASONS,
    _TOOL_NAME,
    PROVIDER,
    OpenAIChatAdapter,
    _ChatStream,
    build_request_body,
)
from reference_adapters.openai_chat import spec as openai_reference
from reference_adapters.openai_responses import spec as responses_reference

__all__ = [
    "BASELINE",
    "REFERENCE_CAPABILITIES",
    "BrokenAdapter",
    "HookedAdapter",
    "HookedChatStream",
    "broken",
]

REFERENCE_CAPABILITIES = frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"})
REFERENCE_SERVERS: dict[str, frozenset[str]] = {
    spec.wire_profile: spec.servers
    for spec in (
        openai_reference,
        anthropic_reference,
        gemini_reference,
        responses_reference,
        bedrock_reference,
        cohere_reference,
    )
}
"""The servers each profile's reference adapter declares (all of its profile's)."""


@dataclass(frozen=True)
class BrokenAdapter:
    """A deliberately broken adapter and the clause that must catch it on each of ``scenarios``."""

    name: str
    spec: AdapterSpec
    caught_by: str
    scenarios: tuple[str, ...]
    description: str
    harness_gap: str | None = None
    """Set when the harness does NOT catch this bug: the test is then a strict xfail with this reason."""

    @property
    def profile(self) -> str:
        """The wire profile the adapter speaks: its controls are that profile's reference and baseline."""
        return self.spec.wire_profile


class AdapterClass(Protocol):
    """What ``broken`` builds adapters with: a class taking the reference adapter's keyword arguments."""

    def __call__(self, *, api_key: str, base_url: str, timeout: float) -> LLMAdapter: ...


def broken_like(
    reference: AdapterSpec,
    name: str,
    adapter: AdapterClass,
    caught_by: str,
    scenarios: Sequence[str],
    description: str,
) -> BrokenAdapter:
    """A registry entry built like ``reference``: its wire profile, model and capabilities."""
    return broken(
        name,
        adapter,
        caught_by,
        scenarios,
        description,
        capabilities=reference.capabilities,
        wire_profile=reference.wire_profile,
        model=reference.model,
    )


def broken(
    name: str,
    adapter: AdapterClass,
    caught_by: str,
    scenarios: Sequence[str],
    description: str,
    *,
    harness_gap: str | None = None,
    capabilities: frozenset[str] = REFERENCE_CAPABILITIES,
    wire_profile: str = "openai-chat",
    model: str = "gpt-4o-mini",
    servers: frozenset[str] | None = None,
) -> BrokenAdapter:
    """A registry entry whose spec builds ``adapter`` exactly as the reference spec builds the reference
    (by default the OpenAI Chat one; ``_anthropic_base.broken_anthropic`` for the Messages API). It targets
    the servers its profile's reference declares (every one: their quirks are judged by the gate) unless
    ``servers`` says otherwise."""
    spec = AdapterSpec(
        name=f"broken-{name}",
        factory=lambda ctx: adapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout),
        wire_profile=wire_profile,
        model=model,
        capabilities=capabilities,
        description=description,
        servers=REFERENCE_SERVERS[wire_profile] if servers is None else servers,
    )
    return BrokenAdapter(name, spec, caught_by, tuple(scenarios), description, harness_gap)


# --- the response side, hookable -------------------------------------------------------------------------


class HookedChatStream(_ChatStream):
    """The reference ``_ChatStream`` with ``result()`` split into overridable decisions."""

    stop_reasons: ClassVar[dict[str, StopReason]] = _STOP_REASONS

    def on_incomplete(self) -> None:
        """The stream ended without ``[DONE]`` or a finish_reason (ERR-04)."""
        cause = ProviderResponseError("the stream ended without [DONE] or a finish_reason")
        raise HelixError("openai: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)

    def has_tool_calls(self) -> bool:
        return bool(self._calls)

    def text_stop_reason(self) -> StopReason:
        if self._refused:
            return "refusal"
        return self.stop_reasons.get(self._finish_reason or "", "unknown")

    def text_result(self, text: str, thinking: ThinkingContent | None) -> StepResult:
        return TextStepResult(
            content=text, thinking=thinking, should_stop=True, stop_reason=self.text_stop_reason()
        )

    def parse_calls(self) -> list[ParsedToolCall]:
        return parse_tool_calls(self._calls, PROVIDER)

    def is_finish(self, call: ParsedToolCall) -> bool:
        return call.name == FINISH_TOOL_NAME

    def finish_call(self, calls: list[ParsedToolCall]) -> ParsedToolCall | None:
        return next((call for call in calls if self.is_finish(call)), None)

    async def announce(self, calls: list[ParsedToolCall]) -> None:
        for call in calls:
            await self._emit.tool_call(call)

    def tool_calls_result(
        self, calls: list[ParsedToolCall], text: str, thinking: ThinkingContent | None
    ) -> StepResult:
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )

    async def result(self) -> StepResult:
        if self._error is not None:
            raise self._error
        if not self._done and self._finish_reason is None:
            self.on_incomplete()
        await self._end_thinking()
        thinking = ThinkingContent(content="".join(self._thinking)) if self._thinking else None
        text = "".join(self._text)
        if not self.has_tool_calls():
            return self.text_result(text, thinking)
        if self._finish_reason == "length":
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason="max_tokens")
        calls = self.parse_calls()
        finish = self.finish_call(calls)
        if finish is not None:
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        await self.announce(calls)
        return self.tool_calls_result(calls, text, thinking)


# --- the adapter, hookable -------------------------------------------------------------------------------


class HookedAdapter(OpenAIChatAdapter):
    """The reference adapter's ``generate_step``/``_generate``/``_attempt`` with their decisions as hooks."""

    stream_class: ClassVar[type[HookedChatStream]] = HookedChatStream
    catches: ClassVar[tuple[type[BaseException], ...]] = (Exception,)
    """What ``generate_step`` turns into an ErrorStepResult (the reference: every Exception)."""

    def make_guard(self, input: LLMGenerateInput) -> StreamGuard:
        return StreamGuard(input.abort_signal, idle_timeout=self._timeout)

    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return SafeCallbacks(input.callbacks, guard)

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        return build_request_body(input)

    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self._api_key}",
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            **(input.config.headers or {}),
        }

    def accepts_tool_name(self, name: str) -> bool:
        return _TOOL_NAME.fullmatch(name) is not None

    def make_decoder(self) -> SSEDecoder:
        return SSEDecoder()

    def max_retries(self, input: LLMGenerateInput) -> int:
        return input.config.max_retries

    def retry_or_fail(
        self, error: HelixError, headers: httpx.Headers | None = None
    ) -> RetryableFailure | StepResult:
        return retry_or_fail(error, headers)

    def transport_error(self, exc: Exception) -> HelixError:
        return error_for_transport(exc, PROVIDER)

    def scrub(self, error: BaseException) -> None:
        redact_error(error, self._api_key)

    async def before_request(self, client: httpx.AsyncClient, input: LLMGenerateInput) -> None:
        """Called once the client exists, before the step's request (the reference does nothing)."""

    async def midstream_failure(self, stream: HookedChatStream, exc: httpx.HTTPError) -> StepResult:
        """The connection failed after the response started (ERR-04): an error, never the partial text."""
        return ErrorStepResult(error=self.transport_error(exc))

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        guard = self.make_guard(input)
        emit = self.make_emit(input, guard)
        try:
            result = await self._generate(input, guard, emit)
        except self.catches as exc:
            message = f"openai: unexpected {type(exc).__name__}: {exc}"
            result = ErrorStepResult(error=HelixError(message, code=PROVIDER_ERROR, cause=exc))
        if isinstance(result, ErrorStepResult):
            self.scrub(result.error)
            await emit.error(result.error)
        return result

    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        if guard.aborted:
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        rejected = [tool.name for tool in input.tools if not self.accepts_tool_name(tool.name)]
        if rejected:
            message = f"openai: tool names must match ^[a-zA-Z0-9_-]{{1,64}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        body = json.dumps(self.build_body(input), ensure_ascii=False).encode("utf-8")
        headers = self.build_headers(input)
        client = httpx.AsyncClient(timeout=self._timeout, transport=self._transport, verify=tls_context())
        async with client:
            await self.before_request(client, input)
            request = client.build_request("POST", self._url, content=body, headers=headers)
            attempt = functools.partial(self._attempt, client, request, guard, emit)
            return await run_attempts(attempt, guard, self.max_retries(input), PROVIDER)

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            return self.retry_or_fail(self.transport_error(exc))
        stream = self.stream_class(emit)
        try:
            if response.status_code >= 400:
                return self.retry_or_fail(await self._status_error(response), response.headers)
            await require_event_stream(response, PROVIDER)
            decoder, chunks = self.make_decoder(), response.aiter_bytes()
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
            return await self.midstream_failure(stream, exc)
        finally:
            await response.aclose()


BASELINE = broken(
    "baseline",
    HookedAdapter,
    "HARN-01",
    ("text_basic",),
    "The hooked reference with no override: must pass everything the reference passes (control only).",
)
"""Not a broken adapter: the control tests run it on every selection of the registry."""
