"""Reference adapter for the OpenAI Chat Completions API (streamed): the example adapter authors copy.

Short comments name the CONTRACT.md clause each piece of code implements. Imports: the public contract,
the standard library and httpx. Also works against OpenAI-compatible servers (DeepSeek, OpenRouter, Groq,
Ollama, Azure, Mistral): their extra fields are ignored and their quirks are noted where handled.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import httpx

from helix_conformance.contract import (
    FINISH_TOOL_NAME,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    AdapterSpec,
    AssistantMessage,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    Message,
    StepResult,
    StopReason,
    StructuredOutputStepResult,
    TextStepResult,
    ThinkingContent,
    Tool,
    ToolCallsStepResult,
    ToolMessage,
)

from ._http import (
    ProviderResponseError,
    RetryableFailure,
    SafeCallbacks,
    StreamGuard,
    ToolCallBuffer,
    aborted_error,
    classify_status,
    describe_error,
    error_for_stream_event,
    exchange,
    parse_tool_calls,
    redact,
    run_attempts,
    step,
    tls_context,
)
from ._sse import SSEDecoder, SSEEvent

__all__ = ["OpenAIChatAdapter", "build_request_body", "spec", "strict_schema"]

PROVIDER = "openai"  # the key of config.provider_options, and the prefix of error messages
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_STOP_REASONS: dict[str, StopReason] = {  # STOP-01; anything else -> "unknown", never the provider string
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}

# --- request --------------------------------------------------------------------------------------------


def build_request_body(input: LLMGenerateInput) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions``. ``input`` is only read, never mutated (MSG-07)."""
    config = input.config
    body: dict[str, Any] = {"model": config.model, "messages": [_message(m) for m in input.messages]}
    if input.tools:  # TOOL-04: no tools -> neither `tools` nor `tool_choice`
        body["tools"] = [_tool(tool) for tool in input.tools]
    generation = {  # CFG-01: unset -> absent. top_k has no Chat Completions field, so it is not sent
        "max_completion_tokens": config.max_output_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "presence_penalty": config.presence_penalty,
        "frequency_penalty": config.frequency_penalty,
        "stop": list(config.stop_sequences) if config.stop_sequences is not None else None,
        "seed": config.seed,
    }
    body.update((name, value) for name, value in generation.items() if value is not None)
    if config.caching == "auto":  # CACHE-03: stable for the session; CACHE-01: no cache field otherwise
        body["prompt_cache_key"] = f"helix-{input.agent_id}"
    body.update((config.provider_options or {}).get(PROVIDER, {}))  # CFG-02
    body["stream"] = True  # MSG-10 (kept over provider_options: this adapter parses a stream)
    body.setdefault("stream_options", {"include_usage": True})
    return body


def _message(message: Message) -> dict[str, Any]:
    """One contract message as a Chat Completions message, content unchanged (MSG-01..04)."""
    if isinstance(message, ToolMessage):  # MSG-04: linked to its call by id
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if isinstance(message, AssistantMessage) and message.tool_calls:  # MSG-03: same ids, names, arguments
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
        return {"role": "assistant", "content": message.content or None, "tool_calls": calls}  # MSG-06
    # System -> "system" (MSG-01); user and plain assistant text as is (MSG-02). Chat Completions has no
    # field for past reasoning, so AssistantMessage.thinking is not sent (MSG-08 is about other providers).
    return {"role": message.role, "content": message.content}


def _tool(tool: Tool) -> dict[str, Any]:
    """A function tool: name and description unchanged, ``__finish__`` like any other (TOOL-01, TOOL-02)."""
    function: dict[str, Any] = {"name": tool.name, "description": tool.description}
    function["parameters"] = tool.json_schema()
    if tool.strict:  # TOOL-03
        function.update(parameters=strict_schema(function["parameters"]), strict=True)
    return {"type": "function", "function": function}


_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "contains", "if", "then", "else")


def strict_schema(schema: Any) -> Any:
    """A copy of a JSON Schema as OpenAI strict mode wants it: objects closed, all properties required.

    Recurses through schema positions only (``enum``, ``default`` and ``examples`` values are left alone),
    ``$defs`` included. Builds new dicts: the tool's own schema is not touched (MSG-07).
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: strict_schema(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [strict_schema(sub) for sub in value]
        elif key in _SUBSCHEMAS:
            out[key] = strict_schema(value)
    if "default" in out and out["default"] is None:  # as the official SDK does: null defaults are dropped
        del out["default"]
    types = out.get("type")
    if "properties" in out or types == "object" or (isinstance(types, list) and "object" in types):
        properties = out.get("properties")
        out["additionalProperties"] = False
        out["required"] = list(properties) if isinstance(properties, dict) else []
    return out


# --- response -------------------------------------------------------------------------------------------


class _ChatStream:
    """Accumulates one streamed completion, firing callbacks as each delta arrives (STR-01..04)."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self._emit = emit
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._in_thinking = False
        self._refused = False
        self._calls: list[ToolCallBuffer] = []
        self._by_index: dict[int, ToolCallBuffer] = {}
        self._finish_reason: str | None = None
        self._done = False
        self._error: HelixError | None = None

    async def feed(self, events: list[SSEEvent]) -> bool:
        """Apply parsed SSE events in order; True when reading can stop: ``[DONE]`` or an error."""
        try:
            for event in events:
                if await self._event(event):
                    return True
        except HelixError as error:  # kept for result(): it is raised there, after the body is drained
            self._error = error
            return True
        return False

    async def _event(self, event: SSEEvent) -> bool:
        data = event.data.strip()
        if not data or event.event not in (None, "message", "error"):
            return False  # RES-12: unknown event types are ignored
        if data == "[DONE]":
            self._done = True
            return True
        try:
            payload = json.loads(data)
        except ValueError as exc:  # ERR-05: not the provider's format
            raise HelixError("openai: stream event is not JSON", code=PROVIDER_ERROR, cause=exc) from exc
        if not isinstance(payload, dict):
            raise HelixError("openai: stream event is not a JSON object", code=PROVIDER_ERROR)
        if payload.get("error") is not None or event.event == "error":  # ERR-03: an error in a 200 stream
            raise _stream_error(payload)
        choices = payload.get("choices")
        # Chunks with empty `choices` (usage, moderation, Azure's first chunk) may come anywhere: skipped.
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                await self._choice(choice)
        return False

    async def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            # DeepSeek sends `reasoning_content`; OpenRouter, Groq and Ollama send `reasoning`; some servers
            # (OpenRouter, Snowflake) only `reasoning_details`, which OpenRouter also sends beside `reasoning`.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                await self._reasoning(reasoning)
            else:
                for piece in _reasoning_details_text(delta.get("reasoning_details")):
                    await self._reasoning(piece)
            content = delta.get("content")
            if isinstance(content, list):  # Mistral (magistral): typed parts instead of a string
                for part in content:
                    await self._typed_part(part)
            else:
                await self._visible(content)
            await self._visible(delta.get("refusal"), refusal=True)  # a refusal is the model's answer text
            tool_calls = delta.get("tool_calls")
            if isinstance(tool_calls, list) and tool_calls:
                await self._end_thinking()
                for position, entry in enumerate(tool_calls):
                    if isinstance(entry, dict):
                        self._tool_delta(entry, position)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish_reason = reason

    async def _reasoning(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # RES-08
            self._in_thinking = True
            self._thinking.append(piece)
            await self._emit.thinking(piece, False)  # STR-03

    async def _visible(self, piece: Any, *, refusal: bool = False) -> None:
        if isinstance(piece, str) and piece:  # STR-01: no empty deltas
            await self._end_thinking()  # STR-04: the thinking block closes before the text
            self._refused = self._refused or refusal
            self._text.append(piece)
            await self._emit.text(piece)  # STR-02: as it arrives, never buffered

    async def _typed_part(self, part: Any) -> None:
        """One Mistral content part: ``{"type":"text","text"}`` or ``{"type":"thinking","thinking":[...]}``."""
        if not isinstance(part, dict):
            return
        if part.get("type") == "text":
            await self._visible(part.get("text"))
        elif part.get("type") == "thinking":
            thinking = part.get("thinking")
            for item in thinking if isinstance(thinking, list) else [{"text": thinking}]:
                await self._reasoning(item.get("text") if isinstance(item, dict) else None)
        # RES-12: other part types (images, references...) are ignored

    def _tool_delta(self, entry: dict[str, Any], position: int) -> None:
        """Merge one tool-call delta: first id, first non-empty name, argument fragments concatenated."""
        call_id = entry.get("id") if isinstance(entry.get("id"), str) else ""
        buffer = self._slot(entry.get("index"), call_id or "", position)
        buffer.id = buffer.id or call_id or ""
        function = entry.get("function")
        if not isinstance(function, dict):
            return
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(name, str) and name and not buffer.name:
            buffer.name = name
        if isinstance(arguments, dict):  # some compatible servers send an object, not a string
            arguments = json.dumps(arguments)
        if isinstance(arguments, str) and not _repeats_whole_call(buffer, arguments):
            buffer.arguments.append(arguments)

    def _slot(self, index: Any, call_id: str, position: int) -> ToolCallBuffer:
        """The call a delta belongs to (RES-06): by ``index``; without one (Mistral), by id or position."""
        if isinstance(index, int) and not isinstance(index, bool):  # OpenAI: keyed by `index`
            if index not in self._by_index:
                self._by_index[index] = self._add_call()
            return self._by_index[index]
        for buffer in self._calls:  # no `index` (Mistral): a known id continues its call
            if call_id and buffer.id == call_id:
                return buffer
        if call_id or position > 0 or not self._calls:  # a new id, or a later entry of the same delta
            return self._add_call()
        return self._calls[-1]  # an anonymous continuation of the latest call

    def _add_call(self) -> ToolCallBuffer:
        self._calls.append(ToolCallBuffer())
        return self._calls[-1]

    async def _end_thinking(self) -> None:
        if self._in_thinking:  # STR-03: exactly one completion call per thinking block
            self._in_thinking = False
            await self._emit.thinking("", True)

    async def result(self) -> StepResult:
        """The StepResult of the finished stream; the last callbacks (thinking end, tool calls) fire here."""
        if self._error is not None:
            raise self._error
        if not self._done and self._finish_reason is None:  # ERR-04: partial output is not a success
            cause = ProviderResponseError("the stream ended without [DONE] or a finish_reason")
            raise HelixError("openai: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)
        await self._end_thinking()
        thinking = ThinkingContent(content="".join(self._thinking)) if self._thinking else None  # RES-08
        text = "".join(self._text)
        if not self._calls:  # RES-02, STOP-02: truncated, filtered and refused text keep their stop reason
            stop = "refusal" if self._refused else _STOP_REASONS.get(self._finish_reason or "", "unknown")
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        if self._finish_reason == "length":  # RES-10: calls cut off by the token limit are not executable
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason="max_tokens")
        # RES-09: tool calls make a tool-calls result whatever the finish reason ("stop" happens)
        calls = parse_tool_calls(self._calls, PROVIDER)  # RES-03..05, FIN-03
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05: exact name
        if finish is not None:  # FIN-01, FIN-02: wins over its siblings; FIN-04: thinking kept
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:  # STR-05: once per call, arguments complete, in result order
            await self._emit.tool_call(call)
        content = text or None  # RES-07: accompanying text is kept. RES-11: sub_agent_calls is a list
        return ToolCallsStepResult(tool_calls=calls, sub_agent_calls=[], content=content, thinking=thinking)


def _reasoning_details_text(details: Any) -> list[str]:
    """The readable pieces of OpenRouter's ``reasoning_details``: ``reasoning.text`` and ``reasoning.summary``
    entries (``reasoning.encrypted`` is opaque, no text)."""
    pieces = []
    for entry in details if isinstance(details, list) else ():
        if isinstance(entry, dict) and entry.get("type") in ("reasoning.text", "reasoning.summary"):
            piece = entry.get("text") if entry.get("type") == "reasoning.text" else entry.get("summary")
            if isinstance(piece, str) and piece:
                pieces.append(piece)
    return pieces


def _repeats_whole_call(buffer: ToolCallBuffer, fragment: str) -> bool:
    """A fragment that is a whole JSON object arriving after the call's arguments already form one: the call
    sent again whole (seen behind OpenRouter), not more of it. Appended, it would make ``{...}{...}``."""
    if not buffer.arguments or not fragment.lstrip().startswith("{"):
        return False
    try:
        json.loads("".join(buffer.arguments))
    except ValueError:
        return False  # the arguments so far are incomplete: this fragment continues them
    return True


# --- adapter --------------------------------------------------------------------------------------------


def _stream_error(payload: dict[str, Any]) -> HelixError:
    """ERR-03. OpenAI's error chunk names its `type`; OpenRouter's has only a numeric `code`, which its docs
    define as the HTTP status the error stands for, so it is classified like that status (ERR-01)."""
    error = payload.get("error")
    status = error.get("code") if isinstance(error, dict) and not error.get("type") else None
    if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599:
        return error_for_stream_event(payload, PROVIDER)
    message, _ = describe_error(payload)
    code, retryable = classify_status(status)
    cause = ProviderResponseError(message)
    return HelixError(f"{PROVIDER}: stream error: {message}", code=code, retryable=retryable, cause=cause)


class OpenAIChatAdapter:
    """LLMAdapter for ``POST {base_url}/chat/completions`` with ``stream: true``."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str = "https://api.openai.com/v1",
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api_key = api_key
        self._url = f"{base_url.rstrip('/')}/chat/completions"
        self._timeout = timeout  # httpx timeouts, and the idle timeout of the stream (NT-04)
        self._transport = transport  # tests pass an httpx.MockTransport

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        """One provider call -> one StepResult. Never raises an Exception (NT-01, via ``_http.step``: errors
        redacted, ``on_error`` once); cancellation propagates (NT-03)."""
        return await step(
            input, self._generate, provider=PROVIDER, api_key=self._api_key, idle_timeout=self._timeout
        )

    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        if guard.aborted:  # AB-01: nothing is sent
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        rejected = [tool.name for tool in input.tools if not _TOOL_NAME.fullmatch(tool.name)]
        if rejected:  # TOOL-05: refused before any request is sent
            message = f"openai: tool names must match ^[a-zA-Z0-9_-]{{1,64}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        body = json.dumps(build_request_body(input), ensure_ascii=False).encode("utf-8")
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            **(input.config.headers or {}),  # CFG-02
        }
        client = httpx.AsyncClient(timeout=self._timeout, transport=self._transport, verify=tls_context())
        async with client:  # CFG-03..05, AB-02/03, NT-04: retries, abort and stall handling in run_attempts
            request = client.build_request("POST", self._url, content=body, headers=headers)
            attempt = functools.partial(self._attempt, client, request, guard, emit)
            return await run_attempts(attempt, guard, input.config.max_retries, PROVIDER)

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        """One HTTP exchange: the provider-neutral part (statuses, transport errors, feeding the stream as it
        arrives, abort, closing) is ``_http.exchange``; this adapter brings its status errors and its parser."""
        parser = _ChatStream(emit)
        return await exchange(
            client,
            request,
            guard,
            PROVIDER,
            status_error=self._status_error,
            parser=parser,
            decoder=SSEDecoder(),
        )

    async def _status_error(self, response: httpx.Response) -> HelixError:
        """The HelixError of an HTTP error; its body may be OpenAI JSON, HTML or plain text (ERR-01/02)."""
        message, kind = describe_error(await response.aread())
        status = response.status_code
        message = f"openai: HTTP {status}: {redact(message, self._api_key)}"  # ERR-07: keys get echoed
        code, retryable = classify_status(status)
        retryable = retryable and not (status == 429 and "insufficient_quota" in kind)  # ERR-08: quota
        cause = httpx.HTTPStatusError(message, request=response.request, response=response)
        return HelixError(message, code=code, retryable=retryable, status_code=status, cause=cause)


spec = AdapterSpec(
    name="openai",
    factory=lambda ctx: OpenAIChatAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout),
    wire_profile="openai-chat",
    model="gpt-4o-mini",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="The reference adapter: OpenAI Chat Completions, streamed, over httpx.",
    # Every server of the profile (helix-conformance list servers): the reference is the proof that each
    # scenario can be passed, so every server's quirks are judged on it by the gate.
    servers=frozenset(
        {
            "openai",
            "azure-openai",
            "deepseek",
            "openrouter",
            "mistral",
            "groq",
            "ollama",
            "gemini-openai",
            "anthropic-openai",
            "xai",
            "alibaba",
            "perplexity",
            "huggingface",
            "glm",
            "kimi",
            "snowflake",
            "novita",
            "nvidia-nim",
            "volcengine",
            "vercel-ai-gateway",
            "litellm",
            "anthropic-openai-proxy",
            "cliproxyapi",
            "chat-gateways",
            "sse-framing",
        }
    ),
)
