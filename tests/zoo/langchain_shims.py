"""LangChain chat models as an adapter author uses them: the model built from the step's config,
``bind_tools``, ``astream``, chunks added up with ``+`` (LangChain's own merge), ``.tool_calls`` at the end.

Shims: ``openai_chat`` (``ChatOpenAI``), ``anthropic`` (``ChatAnthropic``), ``gemini``
(``ChatGoogleGenerativeAI``). LangChain lets the provider SDK's exceptions through, so they are coded by the
example adapters' own ``from_sdk`` (examples/*-sdk-adapter): what fails is what LangChain changes.
Retries are LangChain's (``max_retries``).
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from typing import Any

import anthropic as anthropic_sdk
import httpx
import openai
from google.genai import errors as genai_errors
from helix_anthropic_sdk_adapter._errors import from_sdk as anthropic_error
from helix_gemini_sdk_adapter._errors import from_sdk as gemini_error
from helix_openai_sdk_adapter._errors import from_sdk as openai_error
from langchain_anthropic import ChatAnthropic
from langchain_core.exceptions import (
    ModelAuthenticationError,
    ModelError,
    ModelInvalidRequestError,
    ModelNotFoundError,
    ModelPermissionDeniedError,
    ModelRateLimitError,
    ModelTimeoutError,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.messages import SystemMessage as LCSystemMessage
from langchain_core.messages import ToolMessage as LCToolMessage
from langchain_google_genai import ChatGoogleGenerativeAI
from langchain_openai import ChatOpenAI

from helix_conformance.contract import (
    PROVIDER_AUTH_ERROR,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    PROVIDER_RATE_LIMITED,
    PROVIDER_TIMEOUT,
    AdapterContext,
    AdapterSpec,
    AssistantMessage,
    HelixError,
    LLMConfig,
    LLMGenerateInput,
    StepResult,
    SystemMessage,
    ToolMessage,
)

from . import _glue

GEMINI_SIGNATURES = "__gemini_function_call_thought_signatures__"
"""Where langchain-google-genai keeps thought signatures of function calls (``additional_kwargs``)."""

STOP = _glue.STOP_REASONS
FINISH_KEY = {"openai": "finish_reason", "anthropic": "stop_reason", "gemini": "finish_reason"}


def _model(
    provider: str, config: LLMConfig, api_key: str, base_url: str | None, timeout: float
) -> BaseChatModel:
    options = dict((config.provider_options or {}).get(provider) or {})
    common: dict[str, Any] = {
        "model": config.model,
        "api_key": api_key,
        "base_url": base_url,
        "max_retries": config.max_retries,
        "timeout": timeout,  # NT-04: the read timeout the caller asks for
        "temperature": config.temperature,
        "max_tokens": config.max_output_tokens,
        "top_p": config.top_p,
    }
    stop = list(config.stop_sequences) if config.stop_sequences is not None else None
    if provider == "openai":
        return ChatOpenAI(
            **common,
            stream_usage=True,
            presence_penalty=config.presence_penalty,
            frequency_penalty=config.frequency_penalty,
            seed=config.seed,
            stop=stop,
            default_headers=dict(config.headers or {}) or None,
            extra_body=options or None,
        )
    if provider == "anthropic":
        if common["max_tokens"] is None:
            del common["max_tokens"]  # ChatAnthropic's default then
        return ChatAnthropic(
            **common,
            top_k=config.top_k,
            stop=stop,
            default_headers=dict(config.headers or {}) or None,
            model_kwargs=options,
        )
    # aiohttp is installed beside LiteLLM, and google-genai then sends through it (not interceptable) unless
    # an httpx transport is given: client_args is langchain-google-genai's way to the SDK's client arguments.
    return ChatGoogleGenerativeAI(
        **common,
        top_k=config.top_k,
        presence_penalty=config.presence_penalty,
        frequency_penalty=config.frequency_penalty,
        seed=config.seed,
        stop=stop,
        additional_headers=dict(config.headers or {}) or None,
        client_args={"transport": httpx.AsyncHTTPTransport()},
        model_kwargs=options,
    )


def _messages(provider: str, input: LLMGenerateInput) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for m in input.messages:
        if isinstance(m, SystemMessage):
            out.append(LCSystemMessage(content=m.content))
        elif isinstance(m, ToolMessage):
            out.append(LCToolMessage(content=m.content, tool_call_id=m.tool_call_id, name=m.tool_name))
        elif isinstance(m, AssistantMessage):
            out.append(_ai_message(provider, m))
        else:
            out.append(HumanMessage(content=m.content))
    return out


def _ai_message(provider: str, m: AssistantMessage) -> AIMessage:
    calls = [
        {"id": c.id, "name": c.name, "args": c.arguments, "type": "tool_call"} for c in m.tool_calls or ()
    ]
    thinking = m.thinking
    if provider == "anthropic" and thinking is not None and (thinking.signature or thinking.redacted):
        content: list[Any] = []  # as ChatAnthropic returns it: the blocks, redacted ones too, then the text
        if thinking.signature:
            content.append(
                {"type": "thinking", "thinking": thinking.content, "signature": thinking.signature}
            )
        content.extend({"type": "redacted_thinking", "data": data} for data in thinking.redacted)
        if m.content:
            content.append({"type": "text", "text": m.content})
        return AIMessage(content=content, tool_calls=calls)
    extra: dict[str, Any] = {}
    if provider == "gemini" and thinking is not None and thinking.signature and calls:
        extra[GEMINI_SIGNATURES] = {
            calls[0]["id"]: thinking.signature
        }  # as ChatGoogleGenerativeAI returns it
    if provider == "gemini" and thinking is not None and thinking.signature and not calls and m.content:
        block = {"type": "text", "text": m.content, "extras": {"signature": thinking.signature}}
        return AIMessage(content=[block])  # as ChatGoogleGenerativeAI returns a signed text part
    return AIMessage(content=m.content, tool_calls=calls, additional_kwargs=extra)


def _pieces(content: Any) -> list[tuple[str, str]]:
    """(kind, text) of a chunk's content: a string, or a list of typed blocks (Anthropic, Gemini)."""
    if isinstance(content, str):
        return [("text", content)] if content else []
    pieces: list[tuple[str, str]] = []
    for block in content or ():
        if isinstance(block, str):
            pieces.append(("text", block))
        elif isinstance(block, dict) and block.get("type") == "text":
            pieces.append(("text", block.get("text") or ""))
        elif isinstance(block, dict) and block.get("type") in ("thinking", "reasoning"):
            value = block.get("thinking") or block.get("reasoning") or ""
            if isinstance(value, list):  # Mistral: a list of text parts
                value = "".join(p.get("text") or "" for p in value if isinstance(p, dict))
            pieces.append(("thinking", value if isinstance(value, str) else ""))
    return pieces


def _proof(provider: str, message: AIMessageChunk) -> tuple[str | None, list[str]]:
    """The thinking signature and redacted thinking blocks, where the library keeps them (MSG-08)."""
    signature: str | None = None
    redacted: list[str] = []
    if provider == "anthropic" and isinstance(message.content, list):
        for block in message.content:
            if isinstance(block, dict) and block.get("type") == "thinking" and block.get("signature"):
                signature = str(block["signature"])
            elif isinstance(block, dict) and block.get("type") == "redacted_thinking" and block.get("data"):
                redacted.append(str(block["data"]))
    if provider == "gemini" and isinstance(message.content, list):  # a text part's, in the block's extras
        for block in message.content:
            extras = block.get("extras") if isinstance(block, dict) else None
            if isinstance(extras, dict) and extras.get("signature"):
                signature = str(extras["signature"])
    if provider == "gemini":
        for value in (message.additional_kwargs.get(GEMINI_SIGNATURES) or {}).values():
            signature = base64.b64encode(value).decode() if isinstance(value, bytes) else str(value)
            break
    return signature, redacted


SDK_ERRORS = (openai.APIError, anthropic_sdk.APIError, genai_errors.APIError)
"""What the example adapters' mappers know; LangChain's own ``ModelError`` types are mapped by class."""
MODEL_ERRORS: tuple[tuple[type[ModelError], str], ...] = (
    (ModelAuthenticationError, PROVIDER_AUTH_ERROR),
    (ModelPermissionDeniedError, PROVIDER_AUTH_ERROR),
    (ModelRateLimitError, PROVIDER_RATE_LIMITED),
    (ModelTimeoutError, PROVIDER_TIMEOUT),
    (ModelInvalidRequestError, PROVIDER_INVALID_REQUEST),
    (ModelNotFoundError, PROVIDER_INVALID_REQUEST),
)


def _model_error(exc: ModelError) -> HelixError:
    """LangChain's standard error classes (langchain_core.exceptions), with the status where they keep one."""
    status = getattr(exc, "status_code", None)
    code = next((code for cls, code in MODEL_ERRORS if isinstance(exc, cls)), PROVIDER_ERROR)
    retryable = bool(getattr(exc, "is_retryable", code != PROVIDER_INVALID_REQUEST))
    return HelixError(
        f"{type(exc).__name__}: {exc}",
        code=code,
        retryable=retryable,
        status_code=status if isinstance(status, int) else None,
        cause=exc,
    )


ERRORS: dict[str, Callable[[Exception, str], HelixError]] = {
    "openai": openai_error,
    "anthropic": anthropic_error,
    "gemini": gemini_error,
}


class LangChainAdapter:
    def __init__(
        self, *, profile: str, provider: str, api_key: str, base_url: str | None, timeout: float
    ) -> None:
        self._timeout = timeout
        self._profile = profile
        self._provider = provider
        self._api_key = api_key
        self._base_url = base_url

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        def to_error(exc: Exception) -> HelixError:
            if isinstance(exc, httpx.TimeoutException | httpx.TransportError):  # openai<3 streams over httpx
                return _glue.error_for(exc, None, timeout=isinstance(exc, httpx.TimeoutException))
            if isinstance(exc, ModelError) and not isinstance(exc, SDK_ERRORS):
                return _model_error(exc)
            return ERRORS[self._provider](exc, self._api_key)

        return await _glue.run_step(
            input, lambda emit: self._stream(input, emit), to_error, self._api_key, self._profile
        )

    async def _stream(self, input: LLMGenerateInput, emit: _glue.SafeCallbacks) -> StepResult:
        model = _model(self._provider, input.config, self._api_key, self._base_url, self._timeout)
        runnable: Any = model
        if input.tools:
            tools = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": copy.deepcopy(t.json_schema()),
                    },
                }
                for t in input.tools
            ]
            runnable = model.bind_tools(tools)
        thinking = _glue.ThinkingTracker(emit)
        total: AIMessageChunk | None = None
        async for chunk in runnable.astream(_messages(self._provider, input)):
            total = chunk if total is None else total + chunk
            for kind, text in _pieces(chunk.content):
                if kind == "thinking":
                    await thinking.delta(text)
                else:
                    await thinking.end()
                    await emit.text(text)
            if chunk.tool_call_chunks:
                await thinking.end()
        await thinking.end()
        if total is None:
            raise HelixError("the stream ended without a message", code="provider_error", retryable=True)
        reason = total.response_metadata.get(FINISH_KEY[self._provider])
        feedback = total.response_metadata.get("prompt_feedback") or {}
        if not reason and isinstance(feedback, dict) and feedback.get("block_reason"):
            reason = "SAFETY"  # a blocked prompt (Gemini): no candidate, the reason is in prompt_feedback
        if not reason:
            raise HelixError(
                "the stream ended without a finish reason", code="provider_error", retryable=True
            )
        thinking.signature, thinking.redacted = _proof(self._provider, total)
        if total.invalid_tool_calls:
            bad = total.invalid_tool_calls[0]
            raise HelixError(
                f"invalid tool call {bad.get('name')!r}: {bad.get('error')}", code="provider_error"
            )
        calls = [_glue.Call(c.get("id") or "", c["name"], c["args"]) for c in total.tool_calls]
        text = "".join(t for kind, t in _pieces(total.content) if kind == "text")
        return await _glue.finish(
            emit,
            text=text,
            thinking=thinking.content(),
            calls=calls,
            stop=STOP[self._provider].get(str(reason), "unknown"),
        )


def _spec(name: str, profile: str, provider: str, model: str, cls: str) -> AdapterSpec:
    def factory(ctx: AdapterContext) -> LangChainAdapter:
        return LangChainAdapter(
            profile=profile,
            provider=provider,
            api_key=ctx.api_key,
            base_url=ctx.base_url,
            timeout=ctx.timeout,
        )

    return AdapterSpec(
        name=name,
        factory=factory,
        wire_profile=profile,
        model=model,
        capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "abort"}),
        description=f"zoo: LangChain {cls}.astream",
    )


openai_chat = _spec("zoo-langchain-openai", "openai-chat", "openai", "gpt-4o-mini", "ChatOpenAI")
anthropic = _spec(
    "zoo-langchain-anthropic", "anthropic-messages", "anthropic", "claude-haiku-4-5-20251001", "ChatAnthropic"
)
gemini = _spec("zoo-langchain-gemini", "gemini", "gemini", "gemini-2.5-flash", "ChatGoogleGenerativeAI")
SPECS = (openai_chat, anthropic, gemini)
