"""Reference adapter for Amazon Bedrock's ConverseStream: the example adapter authors copy.

Short comments name the CONTRACT.md clause each piece of code implements. Imports: the public contract, the
standard library and httpx. What differs from the SSE providers: the model is in the URL path
(percent-encoded), requests are SigV4-signed (``_sigv4``, or a Bedrock API key as a bearer token), and the
answer is AWS event-stream binary framing (``_eventstream``: every message's CRCs are checked, so a corrupted
byte is an error and never data), with errors arriving as ``exception`` messages inside the 200 stream.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from helix_conformance.contract import (
    FINISH_TOOL_NAME,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    PROVIDER_OVERLOADED,
    PROVIDER_RATE_LIMITED,
    AdapterContext,
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

from ._eventstream import EventStreamDecoder, EventStreamError, EventStreamMessage
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
from ._sigv4 import AwsCredentials, sign

__all__ = ["AwsCredentials", "BedrockConverseAdapter", "build_request_body", "spec"]

PROVIDER = "bedrock"  # the key of config.provider_options, and the prefix of error messages
MEDIA_TYPE = "application/vnd.amazon.eventstream"
REPLAY_ACCESS_KEY_ID = "AKIAHELIXREPLAY00000"
"""Replay signs with this id and the context's dummy key: the replay accepts any signature."""
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # ToolName in the service model
_REGION = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com")
_STOP_REASONS: dict[str, StopReason] = {  # STOP-01; anything else -> "unknown", never the provider string
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
_STREAM_ERRORS: dict[str, tuple[str, bool]] = {  # ERR-03: exception event -> (code, retryable)
    "throttlingException": (PROVIDER_RATE_LIMITED, True),
    "serviceUnavailableException": (PROVIDER_OVERLOADED, True),
    "internalServerException": (PROVIDER_ERROR, True),
    "modelStreamErrorException": (PROVIDER_ERROR, True),  # "A streaming error occurred. Retry your request."
    "validationException": (PROVIDER_INVALID_REQUEST, False),  # documented as HTTP 400
}

# --- request --------------------------------------------------------------------------------------------


def build_request_body(input: LLMGenerateInput) -> dict[str, Any]:
    """The Converse request body (the model goes in the URL). ``input`` is only read (MSG-07)."""
    config = input.config
    body: dict[str, Any] = {"messages": _turns(input)}
    system = [
        {"text": m.content} for m in input.messages if isinstance(m, SystemMessage) and m.content.strip()
    ]
    if system:  # MSG-01: the system slot, one block per system message; MSG-06: never a blank block
        body["system"] = system
    inference = {  # CFG-01: unset -> absent. top_k, seed and penalties are model-specific: provider_options
        "maxTokens": config.max_output_tokens,
        "temperature": config.temperature,
        "topP": config.top_p,
        "stopSequences": list(config.stop_sequences) if config.stop_sequences is not None else None,
    }
    inference = {name: value for name, value in inference.items() if value is not None}
    if inference:
        body["inferenceConfig"] = inference
    if input.tools:  # TOOL-04: no tools -> no toolConfig
        body["toolConfig"] = {"tools": [_tool(tool) for tool in input.tools]}
    body.update(
        (config.provider_options or {}).get(PROVIDER, {})
    )  # CFG-02 (e.g. additionalModelRequestFields)
    return body


def _turns(input: LLMGenerateInput) -> list[dict[str, Any]]:
    """Alternating user/assistant turns (MSG-05: the service rejects two turns of one role in a row); tool
    results of one assistant turn in the next user turn, before any user text (MSG-04)."""
    turns: list[dict[str, Any]] = []
    for message in input.messages:
        if isinstance(message, SystemMessage):
            continue  # sent in `system` (MSG-01)
        if isinstance(message, AssistantMessage):
            role, blocks = "assistant", _assistant_blocks(message)
        elif isinstance(message, ToolMessage):  # MSG-04: linked by id; an empty result is an empty list
            content = [{"text": message.content}] if message.content.strip() else []
            role, blocks = "user", [{"toolResult": {"toolUseId": message.tool_call_id, "content": content}}]
        else:  # MSG-02: exactly as given; MSG-06: a blank text block is rejected, so it is left out
            role, blocks = "user", [{"text": message.content}] if message.content.strip() else []
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """Reasoning first, then text, then tool uses: the order the model produced and expects back."""
    blocks: list[dict[str, Any]] = []
    thinking = message.thinking
    if thinking is not None:  # MSG-08: signed reasoning and redacted reasoning go back unchanged
        if thinking.signature:
            text = {"text": thinking.content, "signature": thinking.signature}
            blocks.append({"reasoningContent": {"reasoningText": text}})
        blocks.extend({"reasoningContent": {"redactedContent": data}} for data in thinking.redacted)
    if message.content.strip():  # MSG-06
        blocks.append({"text": message.content})
    for call in message.tool_calls or ():  # MSG-03: same ids, names and arguments
        blocks.append({"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}})
    return blocks


def _tool(tool: Tool) -> dict[str, Any]:
    schema = tool.json_schema()
    if schema.get("type") != "object":  # TOOL-03: an object schema
        schema = {**schema, "type": "object"}
    spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": schema}}  # TOOL-01, TOOL-02
    if tool.description:
        spec["description"] = tool.description
    if tool.strict:
        spec["strict"] = True
    return {"toolSpec": spec}


# --- response -------------------------------------------------------------------------------------------


class _Decoder:
    """The event-stream decoder, its failures as the provider errors they are (ERR-04/05)."""

    def __init__(self) -> None:
        self._decoder = EventStreamDecoder()

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        try:
            return self._decoder.feed(chunk)
        except EventStreamError as exc:  # a CRC or length check failed: the bytes cannot be trusted
            raise HelixError(f"bedrock: corrupt event stream: {exc}", code=PROVIDER_ERROR, cause=exc) from exc

    def close(self) -> list[EventStreamMessage]:
        try:
            return self._decoder.close()
        except EventStreamError as exc:  # ERR-04: the body was cut inside a message
            message = f"bedrock: stream ended early: {exc}"
            raise HelixError(message, code=PROVIDER_ERROR, retryable=True, cause=exc) from exc


@dataclass
class _Block:
    """One content block of the streamed message, by its ``contentBlockIndex``."""

    kind: str = ""  # "text", "reasoning", "redacted", "tool", or "" (a server-side tool, a result, unknown)
    call: ToolCallBuffer = field(default_factory=ToolCallBuffer)
    signature: list[str] = field(default_factory=list)
    stopped: bool = False


class _ConverseStream:
    """Accumulates one ConverseStream answer, firing callbacks as each delta arrives (STR-01..04)."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self._emit = emit
        self._blocks: dict[int, _Block] = {}
        self._calls: list[_Block] = []
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._has_thinking = False
        self._signature: str | None = None
        self._redacted: list[str] = []
        self._stop_reason: str | None = None
        self._error: HelixError | None = None

    async def feed(self, messages: list[EventStreamMessage]) -> bool:
        """Apply messages in order; True when reading can stop: ``metadata`` (the last event) or an error."""
        try:
            for message in messages:
                if await self._message(message):
                    return True
        except HelixError as error:
            self._error = error
            return True
        return False

    async def _message(self, message: EventStreamMessage) -> bool:
        kind = message.header(":message-type")
        if kind == "exception":  # ERR-03: a modelled error inside the 200 stream, coded by its type
            raise _stream_error(message.header(":exception-type"), message.payload)
        if kind == "error":  # an unmodelled error: its code and message are headers
            detail = f"{message.header(':error-code')}: {message.header(':error-message')}"
            raise HelixError(f"bedrock: stream error {detail}", code=PROVIDER_ERROR, retryable=True)
        event = message.header(":event-type")
        try:
            payload = json.loads(message.payload)
        except ValueError as exc:  # ERR-05: not the provider's format
            raise HelixError(f"bedrock: {event} payload is not JSON", code=PROVIDER_ERROR, cause=exc) from exc
        if not isinstance(payload, dict):
            raise HelixError(f"bedrock: {event} payload is not a JSON object", code=PROVIDER_ERROR)
        if event == "contentBlockStart":
            self._start(payload)
        elif event == "contentBlockDelta":
            await self._delta(payload)
        elif event == "contentBlockStop":
            block = self._blocks.get(payload.get("contentBlockIndex"))  # type: ignore[arg-type]
            if block is not None:
                await self._close(block)
        elif event == "messageStop":
            reason = payload.get("stopReason")
            self._stop_reason = reason if isinstance(reason, str) else ""
        elif event == "metadata":
            return True  # the last event: usage and latency; the step's output is complete
        # messageStart and unknown event types carry nothing we return (RES-12: ignored)
        return False

    def _block(self, payload: dict[str, Any], kind: str) -> _Block | None:
        index = payload.get("contentBlockIndex")
        if not isinstance(index, int):
            return None
        if index not in self._blocks:  # text and reasoning blocks open with their first delta
            self._blocks[index] = _Block(kind=kind)
        return self._blocks[index]

    def _start(self, payload: dict[str, Any]) -> None:
        start = payload.get("start")
        tool = start.get("toolUse") if isinstance(start, dict) else None
        block = self._block(payload, "")
        if block is None or not isinstance(tool, dict) or tool.get("type") == "server_tool_use":
            return  # a tool the service runs itself, a tool result, a future start: not ours to call
        block.kind = "tool"  # RES-03: the provider's id; RES-06: one call per block, in block order
        block.call.id = tool["toolUseId"] if isinstance(tool.get("toolUseId"), str) else ""
        block.call.name = tool["name"] if isinstance(tool.get("name"), str) else ""
        self._calls.append(block)

    async def _delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if not isinstance(delta, dict):
            return
        if isinstance(delta.get("text"), str):
            self._block(payload, "text")
            await self._text_delta(delta["text"])
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            visible = "text" in reasoning or "signature" in reasoning
            block = self._block(payload, "reasoning" if visible else "redacted")
            if block is not None and visible:
                block.kind = "reasoning"  # a reasoning block shown through on_thinking (STR-03)
            self._has_thinking = True
            await self._thinking_delta(reasoning.get("text"))
            if isinstance(reasoning.get("signature"), str) and block is not None:
                block.signature.append(reasoning["signature"])
            if isinstance(reasoning.get("redactedContent"), str):  # MSG-08: kept to be sent back, not shown
                self._redacted.append(reasoning["redactedContent"])
        tool = delta.get("toolUse")
        block = self._blocks.get(payload.get("contentBlockIndex"))  # type: ignore[arg-type]
        if isinstance(tool, dict) and block is not None and block.kind == "tool":
            piece = tool.get("input")
            if isinstance(piece, str):  # JSON text in pieces, split anywhere: joined at the end (RES-04)
                block.call.arguments.append(piece)
        # RES-12: citations, tool results and future delta members are ignored

    async def _close(self, block: _Block) -> None:
        if block.stopped:
            return
        block.stopped = True
        if block.kind == "reasoning":
            self._signature = "".join(block.signature) or self._signature  # MSG-08: the latest proof
            await self._emit.thinking("", True)  # STR-03: one completion per reasoning block

    async def _text_delta(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # STR-01: no empty deltas (gpt-oss sends an empty text block)
            self._text.append(piece)
            await self._emit.text(piece)  # STR-02

    async def _thinking_delta(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:
            self._thinking.append(piece)
            await self._emit.thinking(piece, False)  # STR-03

    async def result(self) -> StepResult:
        if self._error is not None:
            raise self._error
        if self._stop_reason is None:  # ERR-04: without messageStop the output may be cut
            cause = ProviderResponseError("the stream ended without messageStop")
            raise HelixError("bedrock: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)
        for block in self._blocks.values():  # STR-03: a reasoning block left open still completes
            await self._close(block)
        thinking = None
        if self._has_thinking:  # RES-08, MSG-08
            reasoning = "".join(self._thinking)
            thinking = ThinkingContent(content=reasoning, signature=self._signature, redacted=self._redacted)
        text = "".join(self._text)
        stop = _STOP_REASONS.get(self._stop_reason, "unknown")
        if not self._calls or stop == "max_tokens":  # RES-02, STOP-02; RES-10: cut-off calls do not run
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        calls = parse_tool_calls([block.call for block in self._calls], PROVIDER)  # RES-03..05, FIN-03
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05
        if finish is not None:  # FIN-01, FIN-02, FIN-04
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:  # STR-05: once per call, complete, in result order
            await self._emit.tool_call(call)
        return ToolCallsStepResult(
            tool_calls=calls, sub_agent_calls=[], content=text or None, thinking=thinking
        )


def _stream_error(exception_type: str, payload: bytes) -> HelixError:
    message, _ = describe_error(payload)
    code, retryable = _STREAM_ERRORS.get(exception_type, (PROVIDER_ERROR, True))
    cause = ProviderResponseError(f"{exception_type}: {message}")
    return HelixError(f"bedrock: {exception_type}: {message}", code=code, retryable=retryable, cause=cause)


# --- adapter --------------------------------------------------------------------------------------------


class BedrockConverseAdapter:
    """LLMAdapter for ``POST {base_url}/model/{modelId}/converse-stream``, SigV4-signed or with an API key."""

    def __init__(
        self,
        *,
        region: str = "us-east-1",
        credentials: AwsCredentials | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if credentials is None and not api_key:
            raise ValueError("BedrockConverseAdapter needs AWS credentials or a Bedrock API key")
        self._credentials = credentials
        self._api_key = api_key or ""
        self._secret = credentials.secret_access_key if credentials else self._api_key  # ERR-07
        self._region = region
        self._base = (base_url or f"https://bedrock-runtime.{region}.amazonaws.com").rstrip("/")
        self._timeout = timeout
        self._transport = transport

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        """One provider call -> one StepResult; never raises an Exception (NT-01), cancellation propagates."""
        return await step(
            input, self._generate, provider=PROVIDER, api_key=self._secret, idle_timeout=self._timeout
        )

    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        if guard.aborted:  # AB-01
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        rejected = [tool.name for tool in input.tools if not _TOOL_NAME.fullmatch(tool.name)]
        if rejected:  # TOOL-05
            message = f"bedrock: tool names must match [a-zA-Z0-9_-]{{1,64}}: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        url = f"{self._base}/model/{quote(input.config.model, safe='')}/converse-stream"
        body = json.dumps(self._request_body(input), ensure_ascii=False).encode("utf-8")
        headers = {"content-type": "application/json", "accept": MEDIA_TYPE}
        headers.update({k.lower(): v for k, v in (input.config.headers or {}).items()})  # CFG-02
        if self._credentials is not None:  # signed last: the signature covers every header above
            headers.update(sign("POST", url, headers, body, self._credentials, self._region))
        else:
            headers["authorization"] = f"Bearer {self._api_key}"
        client = httpx.AsyncClient(timeout=self._timeout, transport=self._transport, verify=tls_context())
        async with client:
            request = client.build_request("POST", url, content=body, headers=headers)
            attempt = functools.partial(self._attempt, client, request, guard, emit)
            return await run_attempts(attempt, guard, input.config.max_retries, PROVIDER)

    def _request_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        return build_request_body(input)

    def _parser(self, emit: SafeCallbacks) -> _ConverseStream:
        return _ConverseStream(emit)

    def _decoder(self) -> _Decoder:
        return _Decoder()

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        return await exchange(
            client,
            request,
            guard,
            PROVIDER,
            status_error=self._status_error,
            parser=self._parser(emit),
            decoder=self._decoder(),
            media_type=MEDIA_TYPE,
        )

    async def _status_error(self, response: httpx.Response) -> HelixError:
        """``{"message": …}`` with the type in ``x-amzn-ErrorType`` (ERR-01/02)."""
        message, _ = describe_error(await response.aread())
        kind = response.headers.get("x-amzn-errortype", "").split(":", 1)[0]
        status = response.status_code
        text = f"bedrock: HTTP {status}{f' {kind}' if kind else ''}: {redact(message, self._secret)}"
        code, retryable = classify_status(status)  # ThrottlingException 429, ServiceUnavailable 503, ...
        cause = httpx.HTTPStatusError(text, request=response.request, response=response)
        return HelixError(text, code=code, retryable=retryable, status_code=status, cause=cause)


def region_of(base_url: str) -> str | None:
    match = _REGION.search(urlsplit(base_url).netloc)
    return match.group(1) if match else None


def _factory(ctx: AdapterContext) -> BedrockConverseAdapter:
    """Live: AWS credentials from the environment (SigV4), else the Bedrock API key the harness hands over.
    Replay: SigV4 with a dummy key pair (the replay accepts any signature, and no real credential is read)."""
    region = region_of(ctx.base_url) or os.environ.get("AWS_REGION", "us-east-1")
    common: dict[str, Any] = {"region": region, "base_url": ctx.base_url, "timeout": ctx.timeout}
    if ctx.record_mode == "none":
        return BedrockConverseAdapter(credentials=AwsCredentials(REPLAY_ACCESS_KEY_ID, ctx.api_key), **common)
    key_id, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if key_id and secret:
        credentials = AwsCredentials(key_id, secret, os.environ.get("AWS_SESSION_TOKEN"))
        return BedrockConverseAdapter(credentials=credentials, **common)
    return BedrockConverseAdapter(api_key=ctx.api_key, **common)


spec = AdapterSpec(
    name="bedrock",
    factory=_factory,
    wire_profile="bedrock-converse",
    model="us.anthropic.claude-sonnet-4-20250514-v1:0",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "abort"}),
    description="The reference adapter: Amazon Bedrock ConverseStream (AWS event-stream), over httpx.",
    api_key_env="AWS_BEARER_TOKEN_BEDROCK",
    servers=frozenset({"bedrock"}),  # every server of the profile, as every reference declares
)
