"""Reference adapter for the Anthropic Messages API (streamed): the example adapter authors copy.

Short comments name the CONTRACT.md clause each piece of code implements. Imports: the public contract,
the standard library and httpx. The Messages API is stricter than Chat Completions on the request side
(strict user/assistant alternation, no empty text blocks, ``max_tokens`` required, unknown fields rejected)
and richer on the response side (typed content blocks, signed thinking, errors inside a 200 stream).
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
    error_for_stream_event,
    exchange,
    parse_tool_calls,
    redact,
    run_attempts,
    step,
    tls_context,
)
from ._sse import SSEDecoder, SSEEvent

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicAdapter", "build_request_body", "spec"]

PROVIDER = "anthropic"  # the key of config.provider_options, and the prefix of error messages
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
"""Sent when ``config.max_output_tokens`` is unset: the Messages API requires ``max_tokens``."""
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
_STOP_REASONS: dict[str, StopReason] = {  # STOP-01; anything else -> "unknown", never the provider string
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "end_turn",  # a server tool paused the turn: the step itself ended normally
}
_EPHEMERAL = {"type": "ephemeral"}

# --- request --------------------------------------------------------------------------------------------


def build_request_body(input: LLMGenerateInput) -> dict[str, Any]:
    """The JSON body of ``POST /v1/messages``. ``input`` is only read, never mutated (MSG-07): every block
    is a new dict, so the cache breakpoints added below land on our copies only."""
    config = input.config
    max_tokens = config.max_output_tokens if config.max_output_tokens is not None else DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {"model": config.model, "max_tokens": max_tokens}  # CFG-01: required field
    system = [
        {"type": "text", "text": m.content}
        for m in input.messages
        if isinstance(m, SystemMessage) and m.content  # MSG-06: the API rejects empty text blocks
    ]
    if system:  # MSG-01: the top-level system slot, one block per system message, never a message
        body["system"] = system
    body["messages"] = _turns(input)
    if input.tools:  # TOOL-04: no tools -> neither `tools` nor `tool_choice`
        body["tools"] = [_tool(tool) for tool in input.tools]
    generation = {  # CFG-01: unset -> absent. The API has no penalty or seed fields and rejects unknown ones
        "temperature": config.temperature,
        "top_p": config.top_p,
        "top_k": config.top_k,
        "stop_sequences": list(config.stop_sequences) if config.stop_sequences is not None else None,
    }
    body.update((name, value) for name, value in generation.items() if value is not None)
    if config.caching == "auto":  # CACHE-02: at most 3 breakpoints; CACHE-01: none otherwise
        _mark_cache_breakpoints(body)
    body.update((config.provider_options or {}).get(PROVIDER, {}))  # CFG-02
    body["stream"] = True  # MSG-10 (kept over provider_options: this adapter parses a stream)
    return body


def _turns(input: LLMGenerateInput) -> list[dict[str, Any]]:
    """The conversation as strictly alternating user/assistant turns (MSG-05).

    User text and tool results share user turns: consecutive user-side messages become one turn, so
    consecutive tool results sit in one user message (MSG-04). A message with nothing to send (empty text,
    an empty assistant turn) is dropped, and its neighbours merge (MSG-06: the API rejects empty content).
    """
    turns: list[dict[str, Any]] = []
    for message in input.messages:
        if isinstance(message, SystemMessage):
            continue  # sent in the top-level `system` field (MSG-01)
        if isinstance(message, AssistantMessage):
            role, blocks = "assistant", _assistant_blocks(message)
        elif isinstance(message, ToolMessage):  # MSG-04: linked to its tool_use by id
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            if message.content:  # `content` is optional; an empty string is better left out
                result["content"] = message.content
            role, blocks = "user", [result]
        else:  # MSG-02: user text exactly as given
            role, blocks = "user", [{"type": "text", "text": message.content}] if message.content else []
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """Thinking first, then text, then tool calls: the order the API produced and expects back."""
    blocks: list[dict[str, Any]] = []
    thinking = message.thinking
    if thinking is not None:  # MSG-08: unsigned reasoning cannot be sent back, the API would reject it
        if thinking.signature:
            blocks.append({"type": "thinking", "thinking": thinking.content, "signature": thinking.signature})
        blocks.extend({"type": "redacted_thinking", "data": data} for data in thinking.redacted)
    if message.content:  # MSG-06: no empty text block beside tool calls
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls or ():  # MSG-03: same ids, names and arguments
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return blocks


def _tool(tool: Tool) -> dict[str, Any]:
    """A custom tool: name and description unchanged, ``__finish__`` like any other (TOOL-01, TOOL-02)."""
    schema = tool.json_schema()
    if schema.get("type") != "object":  # TOOL-03: input_schema must be an object schema ($defs are fine)
        schema = {**schema, "type": "object"}
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


def _mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """CACHE-02: the system prompt, the last tool and the conversation boundary; never more than 4."""
    spots: list[dict[str, Any]] = []
    if body.get("system"):
        spots.append(body["system"][-1])
    if body.get("tools"):
        spots.append(body["tools"][-1])
    if body["messages"] and body["messages"][-1]["content"]:
        spots.append(body["messages"][-1]["content"][-1])
    for spot in spots:
        spot["cache_control"] = dict(_EPHEMERAL)


# --- response -------------------------------------------------------------------------------------------


@dataclass
class _Block:
    """One content block of the streamed message, by its ``index``."""

    type: str
    call: ToolCallBuffer = field(default_factory=ToolCallBuffer)  # tool_use only
    initial_input: Any = None  # a tool_use's `input` on content_block_start (the API sends {})
    signature: list[str] = field(default_factory=list)  # thinking only
    stopped: bool = False


class _MessagesStream:
    """Accumulates one streamed message, firing callbacks as each delta arrives (STR-01..04)."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self._emit = emit
        self._blocks: dict[int, _Block] = {}
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._has_thinking = False
        self._signature: str | None = None
        self._redacted: list[str] = []
        self._calls: list[_Block] = []
        self._stop_reason: str | None = None
        self._done = False
        self._error: HelixError | None = None

    async def feed(self, events: list[SSEEvent]) -> bool:
        """Apply parsed SSE events in order; True when reading can stop: ``message_stop`` or an error."""
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
        if not data:
            return False
        try:
            payload = json.loads(data)
        except ValueError as exc:  # ERR-05: not the provider's format
            raise HelixError("anthropic: stream event is not JSON", code=PROVIDER_ERROR, cause=exc) from exc
        if not isinstance(payload, dict):
            raise HelixError("anthropic: stream event is not a JSON object", code=PROVIDER_ERROR)
        kind = payload.get("type", event.event)
        if event.event == "error" or kind == "error":  # ERR-03: an error in a 200 stream, coded by its type
            raise error_for_stream_event(payload, PROVIDER)
        if kind == "content_block_start":
            await self._block_start(payload)
        elif kind == "content_block_delta":
            await self._block_delta(payload)
        elif kind == "content_block_stop":
            await self._block_stop(payload)
        elif kind == "message_delta":
            delta = payload.get("delta")
            reason = delta.get("stop_reason") if isinstance(delta, dict) else None
            if isinstance(reason, str) and reason:
                self._stop_reason = reason
        elif kind == "message_stop":
            self._done = True
            return True
        # message_start, ping and unknown event types carry nothing we return (RES-12: ignored)
        return False

    def _block(self, payload: dict[str, Any]) -> _Block | None:
        index = payload.get("index")
        return self._blocks.get(index) if isinstance(index, int) else None

    async def _block_start(self, payload: dict[str, Any]) -> None:
        index, block = payload.get("index"), payload.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            raise HelixError("anthropic: content_block_start without index or block", code=PROVIDER_ERROR)
        kind = block.get("type")
        state = self._blocks[index] = _Block(type=kind if isinstance(kind, str) else "")
        if kind == "text":
            await self._text_delta(block.get("text"))
        elif kind == "thinking":
            self._has_thinking = True
            await self._thinking_delta(block.get("thinking"))
            if isinstance(block.get("signature"), str):
                state.signature.append(block["signature"])
        elif kind == "redacted_thinking":  # MSG-08: kept verbatim to be sent back; not shown (no callback)
            self._has_thinking = True
            self._redacted.append(str(block.get("data", "")))
        elif kind == "tool_use":  # RES-03: the provider's id; RES-06: one call per block, in block order
            name, call_id = block.get("name"), block.get("id")
            state.call.id = call_id if isinstance(call_id, str) else ""
            state.call.name = name if isinstance(name, str) else ""
            state.initial_input = block.get("input")
            self._calls.append(state)
        # RES-12: other block types (server tools, future ones) are ignored

    async def _block_delta(self, payload: dict[str, Any]) -> None:
        delta, state = payload.get("delta"), self._block(payload)
        if not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if kind == "text_delta":
            await self._text_delta(delta.get("text"))
        elif kind == "thinking_delta":
            await self._thinking_delta(delta.get("thinking"))
        elif kind == "signature_delta" and state is not None and isinstance(delta.get("signature"), str):
            state.signature.append(delta["signature"])
        elif kind == "input_json_delta" and state is not None and state.type == "tool_use":
            piece = delta.get("partial_json")
            if isinstance(piece, str):  # may be "" and may split mid-token: joined at the end (RES-05)
                state.call.arguments.append(piece)
        # RES-12: citations and future delta types are ignored

    async def _block_stop(self, payload: dict[str, Any]) -> None:
        state = self._block(payload)
        if state is not None:
            await self._close(state)

    async def _close(self, state: _Block) -> None:
        if state.stopped:
            return
        state.stopped = True
        if state.type == "thinking":
            signature = "".join(state.signature)
            self._signature = signature or self._signature  # MSG-08: the latest block's proof
            await self._emit.thinking("", True)  # STR-03: exactly one completion call per thinking block

    async def _text_delta(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # STR-01: no empty deltas
            self._text.append(piece)
            await self._emit.text(piece)  # STR-02: as it arrives, never buffered

    async def _thinking_delta(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # live streams end a thinking block with an empty delta
            self._thinking.append(piece)
            await self._emit.thinking(piece, False)  # STR-03

    def _call_buffers(self) -> list[ToolCallBuffer]:
        """The tool_use blocks as complete buffers; an `input` given on block start counts if nothing
        was streamed for it (the API streams {} then deltas; some proxies send the whole input at once)."""
        buffers: list[ToolCallBuffer] = []
        for state in self._calls:
            call = state.call
            if not "".join(call.arguments).strip() and isinstance(state.initial_input, dict):
                call = ToolCallBuffer(call.id, call.name, [json.dumps(state.initial_input)])
            buffers.append(call)
        return buffers

    async def result(self) -> StepResult:
        """The StepResult of the finished stream; the tool-call callbacks fire here."""
        if self._error is not None:
            raise self._error
        if not self._done:  # ERR-04: without message_stop the output may be cut: partial text is no success
            cause = ProviderResponseError("the stream ended without message_stop")
            raise HelixError(
                "anthropic: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause
            )
        for state in self._blocks.values():  # STR-03: a thinking block left open still gets its completion
            await self._close(state)
        thinking = None
        if self._has_thinking:  # RES-08, MSG-08: with what the API needs to accept it back
            reasoning = "".join(self._thinking)
            thinking = ThinkingContent(content=reasoning, signature=self._signature, redacted=self._redacted)
        text = "".join(self._text)
        stop = _STOP_REASONS.get(self._stop_reason or "", "unknown")
        if not self._calls or stop == "max_tokens":
            # RES-02, STOP-02: truncated and refused text keep their stop reason (a refusal may have no
            # content block at all: content ""). RES-10: calls cut off by the token limit are not executable.
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        # RES-09: tool calls make a tool-calls result whatever the stop reason
        calls = parse_tool_calls(self._call_buffers(), PROVIDER)  # RES-03..05, FIN-03
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05: exact name
        if finish is not None:  # FIN-01, FIN-02: wins over its siblings; FIN-04: thinking kept
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:  # STR-05: once per call, arguments complete, in result order
            await self._emit.tool_call(call)
        content = text or None  # RES-07: accompanying text is kept. RES-11: sub_agent_calls is a list
        return ToolCallsStepResult(tool_calls=calls, sub_agent_calls=[], content=content, thinking=thinking)


# --- adapter --------------------------------------------------------------------------------------------


class AnthropicAdapter:
    """LLMAdapter for ``POST {base_url}/v1/messages`` with ``stream: true``."""

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api_key = api_key
        base = (base_url or "https://api.anthropic.com").rstrip("/")
        self._url = f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"
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
            message = f"anthropic: tool names must match ^[a-zA-Z0-9_-]{{1,128}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        body = json.dumps(build_request_body(input), ensure_ascii=False).encode("utf-8")
        headers = httpx.Headers(
            {
                "x-api-key": self._api_key,
                "anthropic-version": API_VERSION,
                "content-type": "application/json",
                "accept": "text/event-stream",
            }
        )
        headers.update(input.config.headers or {})  # CFG-02 (case-insensitively over our defaults)
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
        parser = _MessagesStream(emit)
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
        """The HelixError of an HTTP error: ``{"type":"error","error":{type, message}}``, or HTML (ERR-01/02)."""
        message, _ = describe_error(await response.aread())
        status = response.status_code
        message = f"anthropic: HTTP {status}: {redact(message, self._api_key)}"  # ERR-07: keys get echoed
        code, retryable = classify_status(status)  # 529 overloaded -> provider_overloaded, retryable
        cause = httpx.HTTPStatusError(message, request=response.request, response=response)
        return HelixError(message, code=code, retryable=retryable, status_code=status, cause=cause)


spec = AdapterSpec(
    name="anthropic",
    factory=lambda ctx: AnthropicAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout),
    wire_profile="anthropic-messages",
    model="claude-haiku-4-5-20251001",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="The reference adapter: Anthropic Messages, streamed, over httpx.",
    # Every server of the profile: the reference is the proof that each scenario can be passed.
    servers=frozenset({"anthropic", "vertex-anthropic", "bedrock-anthropic"}),
)
