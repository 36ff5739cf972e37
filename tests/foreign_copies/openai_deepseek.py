"""A Helix LLMAdapter over the official ``openai`` SDK (AsyncOpenAI, Chat Completions, streaming).

Run the conformance suite with ``pytest --adapter=helix_foreign_adapters.openai_adapter:spec``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai

from helix_conformance.contract import (
    FINISH_TOOL_NAME,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    PROVIDER_RATE_LIMITED,
    PROVIDER_TIMEOUT,
    AdapterContext,
    AdapterSpec,
    HelixError,
    LLMGenerateInput,
    ParsedToolCall,
    StepResult,
    StructuredOutputStepResult,
    TextStepResult,
    ThinkingContent,
    ToolCallsStepResult,
)

from ._common import (
    Aborted,
    Callbacks,
    aborted_error,
    code_for_error_type,
    delay_from_headers,
    finish_with_error,
    mark_mid_stream,
    redact,
    run_abortable,
    status_error,
    with_retries,
)

FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class OpenAIChatAdapter:
    """Helix adapter for OpenAI Chat Completions and compatible servers, on ``openai.AsyncOpenAI``."""

    provider_key = "openai"

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout: float = 60.0) -> None:
        self._api_key = api_key
        # The SDK's own retries are off: they would ignore config.max_retries and the abort signal.
        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    # ---------------------------------------------------------------------------------------- entry

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        callbacks = Callbacks(input)
        try:
            if input.abort_signal is not None and input.abort_signal.aborted:
                raise Aborted("aborted before the request")
            request = self._build_request(input)
            return await run_abortable(
                with_retries(
                    lambda: self._attempt(request, callbacks),
                    max_retries=max(0, input.config.max_retries),
                    classify=self._classify,
                    retry_delay_hint=self._retry_hint,
                    callbacks=callbacks,
                ),
                input.abort_signal,
            )
        except Aborted:
            return await finish_with_error(callbacks, aborted_error())
        except HelixError as error:
            return await finish_with_error(callbacks, error)
        except Exception as exc:  # never raise (NT-01)
            return await finish_with_error(callbacks, self._classify(exc))

    # -------------------------------------------------------------------------------------- request

    def _build_request(self, input: LLMGenerateInput) -> dict[str, Any]:
        config = input.config
        params: dict[str, Any] = {
            "model": config.model,
            "messages": [self._message(m) for m in input.messages],
            "stream": True,
        }
        if input.tools:
            params["tools"] = [self._tool(t) for t in input.tools]
        if config.max_output_tokens is not None:
            params["max_completion_tokens"] = config.max_output_tokens
        if config.temperature is not None:
            params["temperature"] = config.temperature
        if config.top_p is not None:
            params["top_p"] = config.top_p
        if config.presence_penalty is not None:
            params["presence_penalty"] = config.presence_penalty
        if config.frequency_penalty is not None:
            params["frequency_penalty"] = config.frequency_penalty
        if config.stop_sequences:
            params["stop"] = list(config.stop_sequences)
        if config.seed is not None:
            params["seed"] = config.seed
        if config.caching == "auto":
            # OpenAI caches prefixes implicitly; the key routes one session's requests to the same cache.
            params["prompt_cache_key"] = f"helix-{input.agent_id}"
        if config.headers:
            params["extra_headers"] = dict(config.headers)
        options = (config.provider_options or {}).get(self.provider_key)
        if options:
            params["extra_body"] = json.loads(json.dumps(options))  # a copy: never mutate the input
        return params

    @staticmethod
    def _message(m: Any) -> dict[str, Any]:
        if m.role == "system":
            return {"role": "system", "content": m.content}
        if m.role == "user":
            return {"role": "user", "content": m.content}
        if m.role == "assistant":
            out: dict[str, Any] = {"role": "assistant"}
            if m.tool_calls:
                out["content"] = m.content or None  # no empty text beside tool calls
                out["tool_calls"] = [
                    {
                        "id": tc.id,
                        "type": "function",
                        "function": {"name": tc.name, "arguments": json.dumps(tc.arguments)},
                    }
                    for tc in m.tool_calls
                ]
            else:
                out["content"] = m.content
            return out
        if m.role == "tool":
            return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
        raise ValueError(f"unknown message role {m.role!r}")

    @staticmethod
    def _tool(tool: Any) -> dict[str, Any]:
        if not TOOL_NAME.match(tool.name):  # TOOL-05: fail before the request, not with a 400
            raise HelixError(
                f"openai: tool name {tool.name!r} does not match {TOOL_NAME.pattern}",
                code=PROVIDER_INVALID_REQUEST,
                retryable=False,
            )
        schema = json.loads(json.dumps(tool.json_schema()))
        function: dict[str, Any] = {"name": tool.name, "description": tool.description, "parameters": schema}
        if tool.strict:
            function["parameters"] = _strict_schema(schema)
            function["strict"] = True
        return {"type": "function", "function": function}

    # ----------------------------------------------------------------------------------- one attempt

    async def _attempt(self, request: dict[str, Any], callbacks: Callbacks) -> StepResult:
        stream = await self._client.chat.completions.create(**request)
        try:
            return await self._consume(stream, callbacks)
        except (HelixError, Aborted):
            raise
        except Exception as exc:
            raise mark_mid_stream(exc)
        finally:
            await stream.close()

    async def _consume(self, stream: Any, callbacks: Callbacks) -> StepResult:
        text: list[str] = []
        refusal: list[str] = []
        thinking: list[str] = []
        thinking_open = False
        calls: list[dict[str, Any]] = []
        by_index: dict[int, dict[str, Any]] = {}
        finish_reason: str | None = None

        async def close_thinking() -> None:
            nonlocal thinking_open
            if thinking_open:
                thinking_open = False
                await callbacks.thinking("", True)

        async for chunk in stream:
            for choice in getattr(chunk, "choices", None) or []:
                if getattr(choice, "index", 0) not in (0, None):
                    continue
                delta = getattr(choice, "delta", None)
                if delta is not None:
                    reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
                    if isinstance(reasoning, str) and reasoning:
                        thinking.append(reasoning)
                        thinking_open = True
                        await callbacks.thinking(reasoning, False)
                    content = getattr(delta, "content", None)
                    if isinstance(content, str) and content:
                        await close_thinking()
                        text.append(content)
                        await callbacks.text(content)
                    refused = getattr(delta, "refusal", None)
                    if isinstance(refused, str) and refused:
                        await close_thinking()
                        refusal.append(refused)
                        await callbacks.text(refused)
                    for tc in getattr(delta, "tool_calls", None) or []:
                        await close_thinking()
                        self._merge_tool_delta(tc, calls, by_index)
                if getattr(choice, "finish_reason", None):
                    finish_reason = choice.finish_reason
        await close_thinking()

        if finish_reason is None:
            raise HelixError(
                "openai: the stream ended before a finish_reason (truncated response)",
                code=PROVIDER_ERROR,
                retryable=True,
            )

        content = "".join(text)
        thought = ThinkingContent(content="".join(thinking)) if thinking else None
        stop_reason = FINISH_REASONS.get(finish_reason, "unknown")
        if refusal:
            stop_reason = "refusal"
            content = content + "".join(refusal)

        if calls and stop_reason != "max_tokens":
            parsed = [self._parse_call(c) for c in calls]
            for call in parsed:
                await callbacks.tool_call(call)
            finish = next((c for c in parsed if c.name == FINISH_TOOL_NAME), None)
            if finish is not None:
                return StructuredOutputStepResult(output=finish.arguments, thinking=thought)
            return ToolCallsStepResult(
                tool_calls=parsed, sub_agent_calls=[], content=content or None, thinking=thought
            )
        # A call cut off by the token limit is not executable (RES-10): a truncated text step.
        return TextStepResult(content=content, thinking=thought, should_stop=True, stop_reason=stop_reason)

    @staticmethod
    def _merge_tool_delta(tc: Any, calls: list[dict[str, Any]], by_index: dict[int, dict[str, Any]]) -> None:
        index = getattr(tc, "index", None)
        call_id = getattr(tc, "id", None) or ""
        fn = getattr(tc, "function", None)
        name = (getattr(fn, "name", None) or "") if fn is not None else ""
        args = (getattr(fn, "arguments", None) or "") if fn is not None else ""
        current = by_index.get(index) if index is not None else (calls[-1] if calls else None)
        # A new call: an index not seen yet, or (servers without index / reusing one) a different id.
        if current is None or (call_id and current["id"] and call_id != current["id"]):
            current = {"id": call_id, "name": name, "arguments": ""}
            calls.append(current)
            if index is not None:
                by_index[index] = current
        if call_id and not current["id"]:
            current["id"] = call_id
        if name and not current["name"]:
            current["name"] = name
        if isinstance(args, str):
            current["arguments"] += args
        elif isinstance(args, dict):
            current["arguments"] += json.dumps(args)

    @staticmethod
    def _parse_call(call: dict[str, Any]) -> ParsedToolCall:
        raw = call["arguments"]
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            raise HelixError(
                f"openai: tool call {call['name']!r} has arguments that are not valid JSON",
                code=PROVIDER_ERROR,
                retryable=False,
                cause=exc,
            ) from exc
        if not isinstance(arguments, dict):
            raise HelixError(
                f"openai: tool call {call['name']!r} has arguments that are not a JSON object",
                code=PROVIDER_ERROR,
                retryable=False,
            )
        return ParsedToolCall(id=call["id"], name=call["name"], arguments=arguments)

    # --------------------------------------------------------------------------------------- errors

    def _classify(self, exc: BaseException) -> HelixError:
        if isinstance(exc, HelixError):
            return exc
        msg = redact(f"openai: {exc}", self._api_key)
        if isinstance(exc, openai.APIStatusError):
            error = status_error(msg, exc.status_code, exc)
            if exc.status_code == 429 and _quota_exhausted(exc.body):
                error.retryable = False  # ERR-08: quota, not rate
            return error
        if isinstance(exc, openai.APITimeoutError):
            return HelixError(msg, code=PROVIDER_TIMEOUT, retryable=True, cause=exc)
        if isinstance(exc, openai.APIConnectionError):
            return HelixError(msg, code=PROVIDER_ERROR, retryable=True, cause=exc)
        if isinstance(exc, openai.APIError):
            # An error chunk inside a 200 stream (ERR-03).
            body = exc.body if isinstance(exc.body, dict) else {}
            kind = " ".join(str(body.get(k) or "") for k in ("type", "code")) or str(exc.code or exc.type or "")
            code = code_for_error_type(kind)
            numeric = body.get("code")
            if isinstance(numeric, int) and numeric >= 400:
                code = status_error(msg, numeric, exc).code if code == PROVIDER_ERROR else code
            if code == PROVIDER_RATE_LIMITED and _quota_exhausted(body):
                return HelixError(msg, code=code, retryable=False, cause=exc)
            return HelixError(msg, code=code, retryable=True, cause=exc)
        if isinstance(exc, ValueError):  # a body that is not the provider's JSON
            return HelixError(
                f"openai: the response is not a valid Chat Completions stream ({type(exc).__name__})",
                code=PROVIDER_ERROR,
                retryable=False,
                cause=exc,
            )
        return HelixError(msg, code=PROVIDER_ERROR, retryable=False, cause=exc)

    @staticmethod
    def _retry_hint(exc: BaseException) -> float | None:
        response = getattr(exc, "response", None)
        return delay_from_headers(getattr(response, "headers", None))


def _quota_exhausted(body: Any) -> bool:
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        return "insufficient_quota" in (str(inner.get("code")), str(inner.get("type")))
    return False


def _strict_schema(schema: Any) -> Any:
    """OpenAI strict mode: every object closed (additionalProperties false) with every property required."""
    if isinstance(schema, list):
        return [_strict_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict_schema(v) for k, v in schema.items()}
    if out.get("type") == "object" or "properties" in out:
        props = out.get("properties") or {}
        out["additionalProperties"] = False
        out["required"] = list(props)
    return out


def make_adapter(ctx: AdapterContext) -> OpenAIChatAdapter:
    return OpenAIChatAdapter(api_key=ctx.api_key, base_url=ctx.base_url)


spec = AdapterSpec(
    name="foreign-openai-sdk-deepseek",
    factory=make_adapter,
    wire_profile="openai-chat",
    model="gpt-4o-mini",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="Independent adapter on the official openai SDK",
    servers=frozenset({"openai", "deepseek"}),  # the one change from the original: it says it targets DeepSeek
)
