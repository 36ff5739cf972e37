"""Reference adapter for Cohere's v2 Chat API (streamed): the example adapter authors copy.

Short comments name the CONTRACT.md clause each piece of code implements. Imports: the public contract,
the standard library and httpx. Cohere's stream is typed SSE (``message-start`` … ``message-end``): text and
reasoning come as content blocks, the text of a tool-calling answer as ``tool-plan-delta`` (kept as the
step's content, RES-07, and sent back as the turn's ``tool_plan``), tool calls as start/delta/end by
``index``, and an error during generation as a ``message-end`` whose ``finish_reason`` is ``ERROR``.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
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
    StepResult,
    StopReason,
    StructuredOutputStepResult,
    SystemMessage,
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
    exchange,
    parse_tool_calls,
    redact,
    run_attempts,
    step,
    tls_context,
)
from ._sse import SSEDecoder, SSEEvent

__all__ = ["CohereAdapter", "build_request_body", "spec"]

PROVIDER = "cohere"  # the key of config.provider_options, and the prefix of error messages
_TOOL_NAME = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*"
)  # "can only contain A-Za-z0-9_ and can't begin with a digit"
_STOP_REASONS: dict[str, StopReason] = {  # STOP-01; TIMEOUT and anything else -> "unknown"
    "COMPLETE": "end_turn",
    "TOOL_CALL": "tool_use",
    "MAX_TOKENS": "max_tokens",
    "STOP_SEQUENCE": "stop_sequence",
}

# --- request --------------------------------------------------------------------------------------------


def build_request_body(input: LLMGenerateInput) -> dict[str, Any]:
    """The JSON body of ``POST /v2/chat``. ``input`` is only read (MSG-07)."""
    config = input.config
    body: dict[str, Any] = {"model": config.model, "messages": _messages(input)}
    if input.tools:  # TOOL-04: no tools -> no tools field
        body["tools"] = [_tool(tool) for tool in input.tools]
    generation = {  # CFG-01: Cohere's names (p, k); unset -> absent
        "max_tokens": config.max_output_tokens,
        "temperature": config.temperature,
        "p": config.top_p,
        "k": config.top_k,
        "stop_sequences": list(config.stop_sequences) if config.stop_sequences is not None else None,
        "seed": config.seed,
        "frequency_penalty": config.frequency_penalty,
        "presence_penalty": config.presence_penalty,
    }
    body.update((name, value) for name, value in generation.items() if value is not None)
    body.update((config.provider_options or {}).get(PROVIDER, {}))  # CFG-02
    body["stream"] = True  # MSG-10
    return body


def _messages(input: LLMGenerateInput) -> list[dict[str, Any]]:
    """One v2 message per canonical message, in order (MSG-05): system messages keep the system role
    (MSG-01), tool results link by ``tool_call_id`` (MSG-04), and empty messages are left out (MSG-06)."""
    out: list[dict[str, Any]] = []
    for message in input.messages:
        if isinstance(message, SystemMessage):
            if message.content.strip():
                out.append({"role": "system", "content": message.content})
        elif isinstance(message, AssistantMessage):
            turn: dict[str, Any] = {"role": "assistant"}
            if message.tool_calls:  # the text of a tool-calling turn goes back as its plan
                if message.content:
                    turn["tool_plan"] = message.content
                turn["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                    for call in message.tool_calls
                ]
            elif message.content.strip():
                turn["content"] = message.content
            else:
                continue  # MSG-06: nothing to send
            out.append(turn)
        elif isinstance(message, ToolMessage):
            content = [{"type": "text", "text": message.content}] if message.content else []
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": content})
        elif message.content.strip():  # MSG-02: exactly as given
            out.append({"role": "user", "content": message.content})
    return out


def _tool(tool: Tool) -> dict[str, Any]:
    schema = tool.json_schema()
    if schema.get("type") != "object":  # TOOL-03: "schema must be an object"
        schema = {**schema, "type": "object"}
    function = {"name": tool.name, "description": tool.description, "parameters": schema}
    return {"type": "function", "function": function}


# --- response -------------------------------------------------------------------------------------------


@dataclass
class _Content:
    kind: str  # "text" or "thinking"
    ended: bool = False


@dataclass
class _Call:
    buffer: ToolCallBuffer = field(default_factory=ToolCallBuffer)


class _ChatStream:
    """Accumulates one streamed v2 chat answer, firing callbacks as each delta arrives (STR-01..04)."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self._emit = emit
        self._contents: dict[int, _Content] = {}
        self._calls: dict[int, _Call] = {}
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._finish: str | None = None
        self._error: HelixError | None = None

    async def feed(self, events: list[SSEEvent]) -> bool:
        """Apply SSE events in order; True when reading can stop: ``message-end`` or an error."""
        try:
            for event in events:
                if await self._event(event):
                    return True
        except HelixError as error:
            self._error = error
            return True
        return False

    async def _event(self, event: SSEEvent) -> bool:
        data = event.data.strip()
        if not data:
            return False
        try:
            payload = json.loads(data)
        except ValueError as exc:  # ERR-05
            raise HelixError("cohere: stream event is not JSON", code=PROVIDER_ERROR, cause=exc) from exc
        if not isinstance(payload, dict):
            raise HelixError("cohere: stream event is not a JSON object", code=PROVIDER_ERROR)
        kind = payload.get("type", event.event)
        delta = _object(payload.get("delta"))
        message = _object(delta.get("message"))
        index = payload.get("index")
        if kind == "content-start" and isinstance(index, int):
            content = _object(message.get("content"))
            self._contents[index] = _Content("thinking" if content.get("type") == "thinking" else "text")
        elif kind == "content-delta":
            content = _object(message.get("content"))
            await self._text_delta(content.get("text"))
            await self._thinking_delta(content.get("thinking"))
        elif kind == "content-end" and isinstance(index, int) and index in self._contents:
            await self._end(self._contents[index])
        elif kind == "tool-plan-delta":  # RES-07: the text accompanying the calls, streamed as it comes
            await self._text_delta(message.get("tool_plan"))
        elif kind in ("tool-call-start", "tool-call-delta") and isinstance(index, int):
            self._call_piece(index, message.get("tool_calls"))
        elif kind == "message-end":
            return self._message_end(delta)
        # message-start, tool-call-end, citations and unknown event types carry nothing we return (RES-12)
        return False

    def _call_piece(self, index: int, call: Any) -> None:
        """RES-06: calls are told apart by ``index``; the id and name come on the start, arguments in pieces."""
        if not isinstance(call, dict):
            return
        buffer = self._calls.setdefault(index, _Call()).buffer
        if isinstance(call.get("id"), str) and call["id"]:
            buffer.id = call["id"]  # RES-03: the provider's id
        function = _object(call.get("function"))
        if isinstance(function.get("name"), str) and function["name"]:
            buffer.name = function["name"]
        if isinstance(function.get("arguments"), str):
            buffer.arguments.append(function["arguments"])  # joined at the end (RES-04, RES-05)

    def _message_end(self, delta: dict[str, Any]) -> bool:
        reason = delta.get("finish_reason")
        if reason == "ERROR":  # ERR-03: the generation failed inside the 200 stream
            message = delta.get("error") if isinstance(delta.get("error"), str) else "generation failed"
            cause = ProviderResponseError(message)
            raise HelixError(
                f"cohere: stream error: {message}", code=PROVIDER_ERROR, retryable=True, cause=cause
            )
        self._finish = reason if isinstance(reason, str) else ""
        return True

    async def _end(self, content: _Content) -> None:
        if not content.ended:
            content.ended = True
            if content.kind == "thinking":
                await self._emit.thinking("", True)  # STR-03: one completion per thinking block

    async def _text_delta(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # STR-01: no empty deltas
            self._text.append(piece)
            await self._emit.text(piece)  # STR-02

    async def _thinking_delta(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:
            self._thinking.append(piece)
            await self._emit.thinking(piece, False)  # STR-03

    async def result(self) -> StepResult:
        if self._error is not None:
            raise self._error
        if self._finish is None:  # ERR-04: without message-end the output may be cut
            cause = ProviderResponseError("the stream ended without message-end")
            raise HelixError("cohere: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)
        for content in self._contents.values():
            await self._end(content)
        has_thinking = any(c.kind == "thinking" for c in self._contents.values())
        thinking = ThinkingContent(content="".join(self._thinking)) if has_thinking else None  # RES-08
        text = "".join(self._text)
        stop = _STOP_REASONS.get(self._finish, "unknown")
        if not self._calls or stop == "max_tokens":  # RES-02, STOP-02, RES-10
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        buffers = [self._calls[i].buffer for i in sorted(self._calls)]
        calls = parse_tool_calls(buffers, PROVIDER)  # RES-03..05, FIN-03
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05
        if finish is not None:  # FIN-01, FIN-02, FIN-04
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:  # STR-05
            await self._emit.tool_call(call)
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )


def _object(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: a missing or malformed part reads as absent."""
    return value if isinstance(value, dict) else {}


# --- adapter --------------------------------------------------------------------------------------------


class CohereAdapter:
    """LLMAdapter for ``POST {base_url}/v2/chat`` with ``stream: true``."""

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api_key = api_key
        base = (base_url or "https://api.cohere.com").rstrip("/")
        self._url = f"{base}/chat" if base.endswith("/v2") else f"{base}/v2/chat"
        self._timeout = timeout
        self._transport = transport

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        """One provider call -> one StepResult; never raises an Exception (NT-01), cancellation propagates."""
        return await step(
            input, self._generate, provider=PROVIDER, api_key=self._api_key, idle_timeout=self._timeout
        )

    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        if guard.aborted:  # AB-01
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        rejected = [tool.name for tool in input.tools if not _TOOL_NAME.fullmatch(tool.name)]
        if rejected:  # TOOL-05
            message = f"cohere: tool names may only hold A-Za-z0-9_ and not start with a digit: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        body = json.dumps(self._request_body(input), ensure_ascii=False).encode("utf-8")
        headers = httpx.Headers(
            {
                "authorization": f"Bearer {self._api_key}",
                "content-type": "application/json",
                "accept": "text/event-stream",
            }
        )
        headers.update(input.config.headers or {})  # CFG-02
        client = httpx.AsyncClient(timeout=self._timeout, transport=self._transport, verify=tls_context())
        async with client:
            request = client.build_request("POST", self._url, content=body, headers=headers)
            attempt = functools.partial(self._attempt, client, request, guard, emit)
            return await run_attempts(attempt, guard, input.config.max_retries, PROVIDER)

    def _request_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        return build_request_body(input)

    def _parser(self, emit: SafeCallbacks) -> _ChatStream:
        return _ChatStream(emit)

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        parser = self._parser(emit)
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
        """The HelixError of an HTTP error: ``{"id", "message"}`` (ERR-01/02)."""
        message, _ = describe_error(await response.aread())
        status = response.status_code
        message = f"cohere: HTTP {status}: {redact(message, self._api_key)}"  # ERR-07
        code, retryable = classify_status(status)
        cause = httpx.HTTPStatusError(message, request=response.request, response=response)
        return HelixError(message, code=code, retryable=retryable, status_code=status, cause=cause)


spec = AdapterSpec(
    name="cohere",
    factory=lambda ctx: CohereAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout),
    wire_profile="cohere-chat",
    model="command-a-03-2025",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "abort"}),
    description="The reference adapter: Cohere v2 chat, streamed, over httpx.",
    servers=frozenset({"cohere"}),  # every server of the profile, as every reference declares
)
