"""LiteLLM as an adapter author uses it: ``litellm.acompletion(stream=True)`` for every provider, OpenAI-format
messages and tools in, OpenAI-format chunks out, ``litellm.stream_chunk_builder`` to put the answer together.

One shim per wire profile (``openai_chat``, ``anthropic``, ``gemini``): only the model prefix and the
provider key differ. Retries are LiteLLM's (``num_retries``); exceptions are coded by the ``status_code``
LiteLLM puts on them. LiteLLM sends through aiohttp by default, which the harness cannot intercept:
``disable_aiohttp_transport`` is LiteLLM's documented switch back to httpx.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else the import fetches it from the network

import litellm
from litellm.exceptions import MidStreamFallbackError

from helix_conformance.contract import (
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

litellm.disable_aiohttp_transport = True  # aiohttp is LiteLLM's default transport: not interceptable
litellm.telemetry = False
litellm.suppress_debug_info = True  # else every exception also prints a "Give Feedback" banner to stdout

SUPPORTED = {  # the generation parameters each provider has (LiteLLM refuses the others unless drop_params)
    "openai-chat": {
        "max_tokens",
        "temperature",
        "top_p",
        "presence_penalty",
        "frequency_penalty",
        "stop",
        "seed",
    },
    "anthropic-messages": {"max_tokens", "temperature", "top_p", "top_k", "stop"},
    "gemini": {
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "presence_penalty",
        "frequency_penalty",
        "stop",
        "seed",
    },
}
STOP: dict[str, StopReason] = {  # LiteLLM normalises every provider's reason to OpenAI's values
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


def _messages(input: LLMGenerateInput) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in input.messages:
        if isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif isinstance(m, AssistantMessage):
            message: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                message["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in m.tool_calls
                ]
            if (
                m.thinking is not None and m.thinking.signature and m.tool_calls
            ):  # Gemini's, as LiteLLM returns
                message["tool_calls"][0]["provider_specific_fields"] = {
                    "thought_signature": m.thinking.signature
                }
            elif m.thinking is not None and m.thinking.signature:
                message["provider_specific_fields"] = {"thought_signatures": [m.thinking.signature]}
            if m.thinking is not None:  # LiteLLM's documented way to send reasoning back
                message["thinking_blocks"] = [
                    {"type": "thinking", "thinking": m.thinking.content, "signature": m.thinking.signature},
                    *({"type": "redacted_thinking", "data": data} for data in m.thinking.redacted),
                ]
            out.append(message)
        elif isinstance(m, SystemMessage):
            out.append({"role": "system", "content": m.content})
        else:
            out.append({"role": "user", "content": m.content})
    return out


def _tools(input: LLMGenerateInput) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": copy.deepcopy(t.json_schema()),  # the caller's own dict otherwise (MSG-07)
            },
        }
        for t in input.tools
    ]


def _error(exc: Exception) -> HelixError:
    if isinstance(exc, MidStreamFallbackError) and exc.original_exception is not None:
        exc = exc.original_exception  # LiteLLM's wrapper for its Router: the provider's error is inside
    status = getattr(exc, "status_code", None)
    timeout = isinstance(exc, litellm.Timeout)
    if isinstance(exc, litellm.RateLimitError):
        status = 429
        body = getattr(exc, "body", None)  # the provider's error object, kept by LiteLLM
        if isinstance(body, dict) and "insufficient_quota" in (body.get("code"), body.get("type")):
            error = _glue.error_for(exc, status)
            error.retryable = False  # ERR-08: a quota, not a rate
            return error
    return _glue.error_for(exc, status if isinstance(status, int) else None, timeout=timeout)


class LiteLLMAdapter:
    def __init__(
        self, *, profile: str, prefix: str, provider: str, api_key: str, base_url: str | None, timeout: float
    ) -> None:
        self._timeout = timeout
        self._profile = profile
        self._prefix = prefix
        self._provider = provider
        self._api_key = api_key
        self._base_url = base_url

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        return await _glue.run_step(
            input, lambda emit: self._stream(input, emit), _error, self._api_key, self._profile
        )

    def _kwargs(self, input: LLMGenerateInput) -> dict[str, Any]:
        config = input.config
        kwargs: dict[str, Any] = {
            "model": f"{self._prefix}/{config.model}",
            "messages": _messages(input),
            "stream": True,
            "api_key": self._api_key,
            "api_base": self._base_url,
            "num_retries": config.max_retries,
            "timeout": self._timeout,  # NT-04: the read timeout the caller asks for
        }
        if input.tools:
            kwargs["tools"] = _tools(input)
        params = {
            "max_tokens": config.max_output_tokens,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "top_k": config.top_k,
            "presence_penalty": config.presence_penalty,
            "frequency_penalty": config.frequency_penalty,
            "stop": list(config.stop_sequences) if config.stop_sequences is not None else None,
            "seed": config.seed,
        }
        supported = SUPPORTED[self._profile]  # CFG-01: what the provider has no field for is left out
        kwargs.update((k, v) for k, v in params.items() if v is not None and k in supported)
        if config.headers:
            kwargs["extra_headers"] = dict(config.headers)
        options = (config.provider_options or {}).get(self._provider)
        if options:  # CFG-02: LiteLLM merges extra_body into the provider's request body
            kwargs["extra_body"] = copy.deepcopy(options)
        return kwargs

    async def _stream(self, input: LLMGenerateInput, emit: _glue.SafeCallbacks) -> StepResult:
        response = await litellm.acompletion(**self._kwargs(input))
        try:
            return await self._read(response, emit)
        finally:  # closes the response however this ends, an abort's cancellation included
            await response.aclose()

    async def _read(self, response: Any, emit: _glue.SafeCallbacks) -> StepResult:
        chunks: list[Any] = []
        thinking = _glue.ThinkingTracker(emit)
        finish_reason: str | None = None
        refused = False
        async for chunk in response:
            chunks.append(chunk)
            for choice in chunk.choices or ():
                delta = choice.delta
                reasoning = getattr(delta, "reasoning_content", None)
                if reasoning:
                    await thinking.delta(reasoning)
                for block in getattr(delta, "thinking_blocks", None) or ():
                    if not isinstance(block, dict):
                        continue
                    if block.get("type") == "redacted_thinking" and block.get("data"):
                        thinking.redacted.append(block["data"])
                        thinking.seen = True
                    elif block.get("signature"):
                        thinking.signature = block["signature"]
                        thinking.seen = True
                fields = getattr(delta, "provider_specific_fields", None) or {}
                for signature in fields.get("thought_signatures") or ():  # Gemini's, where LiteLLM puts them
                    thinking.signature = signature
                    thinking.seen = True
                if delta.content:
                    await thinking.end()
                    await emit.text(delta.content)
                refusal = getattr(delta, "refusal", None)  # OpenAI's refusal text, where LiteLLM keeps it
                if isinstance(refusal, str) and refusal:
                    refused = True
                    await emit.text(refusal)
                if delta.tool_calls:
                    await thinking.end()
                if choice.finish_reason:
                    finish_reason = choice.finish_reason
        await thinking.end()
        if finish_reason is None:
            raise HelixError(
                "the stream ended without a finish_reason", code="provider_error", retryable=True
            )
        built = litellm.stream_chunk_builder(chunks)
        message = built.choices[0].message
        calls = [
            _glue.Call(c.id or "", c.function.name or "", c.function.arguments)
            for c in message.tool_calls or ()
        ]
        stop = "refusal" if refused and not calls else STOP.get(finish_reason, "unknown")
        return await _glue.finish(
            emit,
            text=(message.content or "") + (getattr(message, "refusal", None) or ""),
            thinking=thinking.content(),
            calls=calls,
            stop=stop,
        )


def _spec(name: str, profile: str, prefix: str, provider: str, model: str) -> AdapterSpec:
    def factory(ctx: AdapterContext) -> LiteLLMAdapter:
        return LiteLLMAdapter(
            profile=profile,
            prefix=prefix,
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
        description=f"zoo: litellm.acompletion(stream=True), {prefix}/ models",
    )


openai_chat = _spec("zoo-litellm-openai", "openai-chat", "openai", "openai", "gpt-4o-mini")
anthropic = _spec(
    "zoo-litellm-anthropic", "anthropic-messages", "anthropic", "anthropic", "claude-haiku-4-5-20251001"
)
gemini = _spec("zoo-litellm-gemini", "gemini", "gemini", "gemini", "gemini-2.5-flash")
SPECS = (openai_chat, anthropic, gemini)
