"""pydantic-ai's model classes as an adapter author uses them: a Helix history turned into pydantic-ai messages,
``Model.request_stream`` with ``ModelSettings`` and ``ModelRequestParameters``, the stream's events as callbacks,
``StreamedResponse.get()`` for the result.

Shims: ``openai_chat`` (``OpenAIChatModel``), ``anthropic`` (``AnthropicModel``), ``gemini`` (``GoogleModel``),
``openai_responses`` (``OpenAIResponsesModel``). Each gets its provider with the step's base URL and key and an
HTTP client of its own (pydantic-ai's default client is cached for the process, and replay runs each step on a
loop of its own). Retries are the provider SDK's, set through ``ModelSettings.max_retries``; errors are coded by
the HTTP status pydantic-ai puts on ``ModelHTTPError``. Versions: ``constraints/zoo-pydantic-ai.txt``.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import httpx2
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelHTTPError,
    ModelOverloadedError,
    ModelRateLimitError,
    ModelTimeoutError,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.google import GoogleProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from helix_conformance.contract import (
    PROVIDER_AUTH_ERROR,
    PROVIDER_OVERLOADED,
    PROVIDER_RATE_LIMITED,
    AdapterContext,
    AdapterSpec,
    AssistantMessage,
    HelixError,
    LLMGenerateInput,
    StepResult,
    StopReason,
    SystemMessage,
    ToolMessage,
)

from . import _glue

STOP: dict[str, dict[str, StopReason]] = {  # the provider's own finish reason (provider_details)
    "openai": _glue.STOP_REASONS["openai"],
    "anthropic": _glue.STOP_REASONS["anthropic"],
    "google": _glue.STOP_REASONS["gemini"],
    "openai-responses": {
        "completed": "end_turn",
        "max_output_tokens": "max_tokens",
        "content_filter": "content_filter",
    },
}
NORMALIZED: dict[str, StopReason] = {  # pydantic-ai's own FinishReason, where the provider's is not given
    "stop": "end_turn",
    "tool_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}
REDACTED = "redacted_thinking"
"""The id pydantic-ai gives a ThinkingPart holding a redacted_thinking block's data as its signature."""
OPTIONS_KEY = {"openai": "openai", "anthropic": "anthropic", "google": "gemini", "openai-responses": "openai"}


def _reasoning_id(signature: str | None) -> str | None:
    return "rs_" + hashlib.sha256(signature.encode()).hexdigest()[:48] if signature else None


def _messages(input: LLMGenerateInput, system: str, *, reasoning_items: bool = False) -> list[ModelMessage]:
    """The history as pydantic-ai messages: system, user and tool-result parts gather into one ModelRequest
    until an assistant turn (a ModelResponse) comes. ``reasoning_items``: a Responses model, whose thinking
    goes back as a reasoning item only under the item id pydantic-ai kept from the response (Helix keeps none:
    derived from the encrypted content, as the reference adapter does)."""
    out: list[ModelMessage] = []
    parts: list[Any] = []
    for m in input.messages:
        if isinstance(m, AssistantMessage):
            if parts:
                out.append(ModelRequest(parts=parts))
                parts = []
            response: list[Any] = []
            gemini = system.startswith("google")
            if m.thinking is not None:
                response.append(
                    ThinkingPart(
                        content=m.thinking.content,
                        id=_reasoning_id(m.thinking.signature) if reasoning_items else None,
                        signature=None if gemini else m.thinking.signature,
                        provider_name=system,
                    )
                )
                response.extend(  # pydantic-ai's own form of Anthropic's redacted_thinking block (MSG-08)
                    ThinkingPart(id=REDACTED, content="", signature=data, provider_name=system)
                    for data in m.thinking.redacted
                    if system == "anthropic"
                )
            if m.content or not m.tool_calls:  # an empty answer is a turn too (MSG-02/05)
                response.append(TextPart(content=m.content or ""))
            response.extend(
                ToolCallPart(tool_name=c.name, args=dict(c.arguments), tool_call_id=c.id)
                for c in m.tool_calls or ()
            )
            if gemini and m.thinking is not None and m.thinking.signature:
                _place_thought_signature(response, m.thinking.signature, system)
            out.append(ModelResponse(parts=response, provider_name=system))
        elif isinstance(m, SystemMessage):
            parts.append(SystemPromptPart(content=m.content))
        elif isinstance(m, ToolMessage):
            parts.append(
                ToolReturnPart(tool_name=m.tool_name or "", content=m.content, tool_call_id=m.tool_call_id)
            )
        else:
            parts.append(UserPromptPart(content=m.content))
    if parts:
        out.append(ModelRequest(parts=parts))
    return out


def _place_thought_signature(parts: list[Any], signature: str, system: str) -> None:
    """Gemini: pydantic-ai keeps a thoughtSignature on the part that carried it (``provider_details``), and the
    API returns it on the turn's first functionCall part, else on its text (MSG-08)."""
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    texts = [p for p in parts if isinstance(p, TextPart)]
    for part in (calls or texts)[:1]:
        part.provider_details = {"thought_signature": signature}
        part.provider_name = system


def _thought_signature(response: ModelResponse) -> str | None:
    """The Gemini thoughtSignature pydantic-ai put in a part's provider_details, first functionCall first."""
    parts = sorted(response.parts, key=lambda p: not isinstance(p, ToolCallPart))
    for part in parts:
        signature = (getattr(part, "provider_details", None) or {}).get("thought_signature")
        if signature:
            return str(signature)
    return None


def _settings(input: LLMGenerateInput, provider: str, timeout: float) -> ModelSettings:
    config = input.config
    settings: dict[str, Any] = {
        "max_tokens": config.max_output_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "seed": config.seed,
        "presence_penalty": config.presence_penalty,
        "frequency_penalty": config.frequency_penalty,
        "stop_sequences": list(config.stop_sequences) if config.stop_sequences is not None else None,
        "extra_headers": dict(config.headers) if config.headers else None,
        "max_retries": config.max_retries,
        "timeout": timeout,  # NT-04: the read timeout the caller asks for
    }
    if provider in ("anthropic", "google"):
        settings["top_k"] = config.top_k
    options = (config.provider_options or {}).get(OPTIONS_KEY[provider])
    if options:  # CFG-02: merged into the request body by the provider SDK
        settings["extra_body"] = copy.deepcopy(options)
    return ModelSettings(**{k: v for k, v in settings.items() if v is not None})  # type: ignore[typeddict-item]


def _tools(input: LLMGenerateInput) -> ModelRequestParameters:
    return ModelRequestParameters(
        function_tools=[
            ToolDefinition(
                name=t.name,
                description=t.description,
                parameters_json_schema=copy.deepcopy(
                    t.json_schema()
                ),  # the caller's own dict otherwise (MSG-07)
                strict=t.strict or None,
            )
            for t in input.tools
        ],
        allow_text_output=True,
    )


CATEGORIES: tuple[tuple[type[Exception], str, bool], ...] = (
    (ModelOverloadedError, PROVIDER_OVERLOADED, True),
    (ModelRateLimitError, PROVIDER_RATE_LIMITED, True),
    (ModelAuthenticationError, PROVIDER_AUTH_ERROR, False),
)
"""pydantic-ai's error categories for an error that came with no HTTP status (an error event inside the stream)."""


def _error(exc: Exception) -> HelixError:
    status = exc.status_code if isinstance(exc, ModelHTTPError) else None
    timeout = isinstance(exc, ModelTimeoutError)
    if status is None:
        for category, code, retryable in CATEGORIES:
            if isinstance(exc, category):
                return HelixError(f"{type(exc).__name__}: {exc}", code=code, retryable=retryable, cause=exc)
    error = _glue.error_for(exc, status, timeout=timeout)
    if isinstance(exc, ModelAPIError) and exc.provider_error_code == "insufficient_quota":
        error.retryable = False  # ERR-08: a quota, not a rate
    return error


class _RawReasoning:
    """OpenAI Responses reasoning text (``response.reasoning_text.delta``): pydantic-ai keeps it in the thinking
    part's ``provider_details['raw_content']``, not its content; this hands out what each delta added."""

    def __init__(self) -> None:
        self._sent: dict[int, int] = {}

    def more(self, index: int, part: Any) -> str:
        text = "".join((getattr(part, "provider_details", None) or {}).get("raw_content") or ())
        new = text[self._sent.get(index, 0) :]
        self._sent[index] = len(text)
        return new


class PydanticAIAdapter:
    def __init__(self, *, provider: str, profile: str, model: Model, api_key: str, timeout: float) -> None:
        self._provider = provider
        self._profile = profile
        self._model = model
        self._api_key = api_key
        self._timeout = timeout

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        return await _glue.run_step(
            input, lambda emit: self._stream(input, emit), _error, self._api_key, self._profile
        )

    async def _stream(self, input: LLMGenerateInput, emit: _glue.SafeCallbacks) -> StepResult:
        thinking = _glue.ThinkingTracker(emit)
        raw = _RawReasoning()
        summaries = isinstance(self._model, OpenAIResponsesModel)
        messages = _messages(
            input, self._model.system, reasoning_items=isinstance(self._model, OpenAIResponsesModel)
        )
        settings = _settings(input, self._provider, self._timeout)
        async with self._model.request_stream(messages, settings, _tools(input)) as stream:
            async for event in stream:
                if isinstance(event, PartStartEvent):
                    part = event.part
                    if isinstance(part, ThinkingPart):
                        if part.id != REDACTED:
                            if summaries and thinking.parts:  # each Responses summary part is a ThinkingPart:
                                await thinking.delta("\n\n")  # joined as the provider's parts are (RES-08)
                            await thinking.delta(part.content)
                    elif isinstance(part, TextPart):
                        await thinking.end()
                        await emit.text(part.content)
                    elif isinstance(part, ToolCallPart):
                        await thinking.end()
                elif isinstance(event, PartDeltaEvent):
                    delta = event.delta
                    if isinstance(delta, ThinkingPartDelta) and delta.content_delta:
                        await thinking.delta(delta.content_delta)
                    elif isinstance(delta, ThinkingPartDelta) and delta.provider_details is not None:
                        await thinking.delta(raw.more(event.index, stream.get().parts[event.index]))
                    elif isinstance(delta, TextPartDelta):
                        await thinking.end()
                        await emit.text(delta.content_delta)
            response = stream.get()
        await thinking.end()
        for part in response.parts:
            if isinstance(part, ThinkingPart) and part.id == REDACTED and part.signature:
                thinking.redacted.append(part.signature)
            elif isinstance(part, ThinkingPart) and part.signature:
                thinking.signature = part.signature
                thinking.seen = True
        if self._provider == "google" and (signature := _thought_signature(response)):
            thinking.signature = signature
            thinking.seen = True
        calls = [
            _glue.Call(p.tool_call_id, p.tool_name, p.args)
            for p in response.parts
            if isinstance(p, ToolCallPart)
        ]
        raw = (response.provider_details or {}).get("finish_reason")
        if (raw is None and response.finish_reason is None) or response.state == "incomplete":
            raise HelixError(  # ERR-04: what pydantic-ai says of a stream cut before its finish
                "the stream ended without a finish reason", code="provider_error", retryable=True
            )
        stop = STOP[self._provider].get(str(raw)) if raw is not None else None
        if (response.provider_details or {}).get("refusal"):
            stop = "refusal"  # pydantic-ai says content_filter and keeps the refusal aside
        if stop is None:
            stop = NORMALIZED.get(str(response.finish_reason), "unknown")
        return await _glue.finish(
            emit,
            text="".join(p.content for p in response.parts if isinstance(p, TextPart)),
            thinking=thinking.content(),
            calls=calls,
            stop=stop,
        )


def _model(provider: str, model: str, ctx: AdapterContext) -> Model:
    client = httpx2.AsyncClient(timeout=ctx.timeout)
    if provider == "anthropic":
        return AnthropicModel(
            model, provider=AnthropicProvider(api_key=ctx.api_key, base_url=ctx.base_url, http_client=client)
        )
    if provider == "google":
        return GoogleModel(
            model, provider=GoogleProvider(api_key=ctx.api_key, base_url=ctx.base_url, http_client=client)
        )
    openai = OpenAIProvider(base_url=ctx.base_url, api_key=ctx.api_key, http_client=client)
    if provider == "openai-responses":
        return OpenAIResponsesModel(model, provider=openai)
    return OpenAIChatModel(model, provider=openai)


def _spec(name: str, profile: str, provider: str, model: str) -> AdapterSpec:
    def factory(ctx: AdapterContext) -> PydanticAIAdapter:
        return PydanticAIAdapter(
            provider=provider,
            profile=profile,
            model=_model(provider, model, ctx),
            api_key=ctx.api_key,
            timeout=ctx.timeout,
        )

    return AdapterSpec(
        name=name,
        factory=factory,
        wire_profile=profile,
        model=model,
        capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "abort"}),
        description=f"zoo: pydantic-ai {provider} model, Model.request_stream",
    )


openai_chat = _spec("zoo-pydantic-ai-openai", "openai-chat", "openai", "gpt-4o-mini")
anthropic = _spec("zoo-pydantic-ai-anthropic", "anthropic-messages", "anthropic", "claude-haiku-4-5-20251001")
gemini = _spec("zoo-pydantic-ai-gemini", "gemini", "google", "gemini-2.5-flash")
openai_responses = _spec("zoo-pydantic-ai-responses", "openai-responses", "openai-responses", "gpt-4.1-mini")
SPECS = (openai_chat, anthropic, gemini, openai_responses)
