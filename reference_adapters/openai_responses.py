"""Reference adapter for OpenAI's Responses API (``POST /v1/responses``, streamed typed SSE events).

Short comments name the CONTRACT.md clause each piece of code implements. Imports: the public contract, the
standard library and httpx (and the provider-neutral ``_http``/``_sse`` plumbing the other references share).
Stateless: every step sends the whole history with ``store: false`` and asks for the reasoning's
``encrypted_content``, which is kept as ``ThinkingContent.signature`` and sent back as a ``reasoning`` item.
Reasoning summaries (requested with ``provider_options={"openai": {"reasoning": {"summary": "auto"}}}``)
stream to ``on_thinking``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import OrderedDict
from typing import Any

import httpx

from helix_conformance.contract import (
    FINISH_TOOL_NAME,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    PROVIDER_OVERLOADED,
    PROVIDER_RATE_LIMITED,
    AdapterSpec,
    AssistantMessage,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    Message,
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
from .openai_chat import strict_schema

__all__ = ["OpenAIResponsesAdapter", "build_request_body", "spec"]

PROVIDER = "openai"  # the key of config.provider_options, and the prefix of error messages
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_INCOMPLETE: dict[str, StopReason] = {  # STOP-01; any other reason -> "unknown", never the provider string
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}
_STREAM_ERROR_CODES: dict[str, tuple[str, bool]] = {  # ERR-03: in-stream error code -> (code, retryable)
    "rate_limit_exceeded": (PROVIDER_RATE_LIMITED, True),
    "insufficient_quota": (PROVIDER_RATE_LIMITED, False),  # ERR-08: quota, not rate
    "server_is_overloaded": (PROVIDER_OVERLOADED, True),
    "slow_down": (PROVIDER_OVERLOADED, True),
    "server_error": (PROVIDER_ERROR, True),
}
_SEEN_REASONING = 256
"""How many reasoning item ids the adapter remembers by their encrypted content (to send them back)."""

# --- request --------------------------------------------------------------------------------------------


def build_request_body(
    input: LLMGenerateInput, reasoning_ids: dict[str, str] | None = None
) -> dict[str, Any]:
    """The JSON body of ``POST /responses``. ``input`` is only read, never mutated (MSG-07)."""
    config = input.config
    messages = list(input.messages)
    body: dict[str, Any] = {"model": config.model}
    if messages and isinstance(messages[0], SystemMessage):  # MSG-01: the leading system prompt
        body["instructions"] = messages.pop(0).content
    items: list[dict[str, Any]] = []
    for message in messages:
        items.extend(_items(message, reasoning_ids or {}))
    body["input"] = items
    if input.tools:  # TOOL-04: no tools -> neither `tools` nor `tool_choice`
        body["tools"] = [_tool(tool) for tool in input.tools]
    generation = {  # CFG-01: unset -> absent; the Responses API has no stop, seed, penalties or top_k
        "max_output_tokens": config.max_output_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
    }
    body.update((name, value) for name, value in generation.items() if value is not None)
    if config.caching == "auto":  # CACHE-03: stable for the session; CACHE-01: no cache field otherwise
        body["prompt_cache_key"] = f"helix-{input.agent_id}"
    # Stateless: nothing kept server-side, and the reasoning comes back encrypted so it can be sent again.
    body["store"] = False
    body["include"] = ["reasoning.encrypted_content"]
    body.update((config.provider_options or {}).get(PROVIDER, {}))  # CFG-02
    body["stream"] = True  # MSG-10 (kept over provider_options: this adapter parses a stream)
    return body


def _items(message: Message, reasoning_ids: dict[str, str]) -> list[dict[str, Any]]:
    """One contract message as Responses input items, content unchanged (MSG-01..04, MSG-08)."""
    if isinstance(message, ToolMessage):  # MSG-04: linked to its call by call_id
        return [{"type": "function_call_output", "call_id": message.tool_call_id, "output": message.content}]
    if not isinstance(message, AssistantMessage):  # a later system message stays in place (MSG-05)
        return [{"role": message.role, "content": message.content}]
    items: list[dict[str, Any]] = []
    thinking = message.thinking
    if thinking is not None and thinking.signature:  # MSG-08: the reasoning goes back, encrypted
        signature = thinking.signature
        item_id = reasoning_ids.get(signature) or "rs_" + hashlib.sha256(signature.encode()).hexdigest()[:48]
        summary = [{"type": "summary_text", "text": thinking.content}] if thinking.content else []
        items.append({"type": "reasoning", "id": item_id, "summary": summary, "encrypted_content": signature})
    if message.content or not message.tool_calls:  # MSG-02 (an empty turn is kept: MSG-05)
        items.append({"role": "assistant", "content": message.content})
    for call in message.tool_calls or []:  # MSG-03: same ids, names, arguments
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": json.dumps(call.arguments),
            }
        )
    return items


def _tool(tool: Tool) -> dict[str, Any]:
    """A flat function tool: name and description unchanged, ``__finish__`` like any other (TOOL-01..03)."""
    parameters = tool.json_schema()
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": strict_schema(parameters) if tool.strict else parameters,
        "strict": bool(tool.strict),
    }


# --- response -------------------------------------------------------------------------------------------


class _ResponsesStream:
    """Accumulates one streamed response, firing callbacks as each event arrives (STR-01..05)."""

    def __init__(self, emit: SafeCallbacks, reasoning_ids: dict[str, str]) -> None:
        self._emit = emit
        self._reasoning_ids = reasoning_ids
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._thinking_open = False
        self._signature: str | None = None
        self._refused = False
        self._calls: dict[str, ToolCallBuffer] = {}  # by output item id (fc_…): RES-06
        self._status: str | None = None
        self._reason: str | None = None
        self._error: HelixError | None = None

    async def feed(self, events: list[SSEEvent]) -> bool:
        """Apply parsed SSE events in order; True when reading can stop: the terminal event or an error."""
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
        if data == "[DONE]":  # OpenRouter ends a Responses stream as Chat Completions does: the end, no event
            return True
        try:
            payload = json.loads(data)
        except ValueError as exc:  # ERR-05: not the provider's format
            raise HelixError("openai: stream event is not JSON", code=PROVIDER_ERROR, cause=exc) from exc
        if not isinstance(payload, dict):
            raise HelixError("openai: stream event is not a JSON object", code=PROVIDER_ERROR)
        kind = payload.get("type") or event.event
        if kind in ("error", "response.failed"):  # ERR-03: an error inside a 200 stream
            raise _stream_error(payload)
        if kind in ("response.completed", "response.incomplete"):
            response = payload.get("response")
            details = response.get("incomplete_details") if isinstance(response, dict) else None
            self._status = "completed" if kind == "response.completed" else "incomplete"
            self._reason = details.get("reason") if isinstance(details, dict) else None
            return True
        await self._content(kind, payload)
        return False  # RES-12: unknown event types are ignored

    async def _content(self, kind: Any, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if kind == "response.reasoning_summary_part.added":
            if self._thinking:  # summary parts are joined by a blank line, streamed too (STR-03)
                await self._reasoning("\n\n")
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            await self._reasoning(
                delta
            )  # a summary, or the reasoning text itself (gpt-oss servers, OpenRouter)
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            await self._visible(delta, refusal=kind == "response.refusal.delta")
        elif kind == "response.function_call_arguments.delta":
            buffer = self._calls.get(str(payload.get("item_id")))
            if buffer is not None and isinstance(delta, str):
                buffer.arguments.append(delta)
        elif kind == "response.function_call_arguments.done":  # the whole arguments replace the deltas
            buffer = self._calls.get(str(payload.get("item_id")))
            if buffer is not None and isinstance(payload.get("arguments"), str):
                buffer.arguments = [payload["arguments"]]
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = payload.get("item")
            if isinstance(item, dict):
                await self._item(item, done=kind == "response.output_item.done")

    async def _item(self, item: dict[str, Any], *, done: bool) -> None:
        item_id = str(item.get("id"))
        if item.get("type") == "function_call":
            await self._end_thinking()
            buffer = self._calls.setdefault(item_id, ToolCallBuffer())
            buffer.id = str(item.get("call_id") or buffer.id)  # RES-03: the call_id, never the item id
            buffer.name = str(item.get("name") or buffer.name)
            if done and isinstance(item.get("arguments"), str):
                buffer.arguments = [item["arguments"]]
        elif item.get("type") == "reasoning" and done:
            encrypted = item.get("encrypted_content")
            if isinstance(encrypted, str) and encrypted:  # MSG-08: the final value, not the one of .added
                self._signature = encrypted
                self._reasoning_ids[encrypted] = item_id
                while len(self._reasoning_ids) > _SEEN_REASONING:
                    self._reasoning_ids.pop(next(iter(self._reasoning_ids)))
            await self._end_thinking()

    async def _reasoning(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:  # RES-08
            self._thinking_open = True
            self._thinking.append(piece)
            await self._emit.thinking(piece, False)  # STR-03

    async def _visible(self, piece: Any, *, refusal: bool) -> None:
        if isinstance(piece, str) and piece:  # STR-01: no empty deltas
            await self._end_thinking()  # STR-04: the thinking block closes before the text
            self._refused = self._refused or refusal
            self._text.append(piece)
            await self._emit.text(piece)  # STR-02: as it arrives, never buffered

    async def _end_thinking(self) -> None:
        if self._thinking_open:  # STR-03: exactly one completion call per reasoning item
            self._thinking_open = False
            await self._emit.thinking("", True)

    async def result(self) -> StepResult:
        """The StepResult of the finished stream; the last callbacks (thinking end, tool calls) fire here."""
        if self._error is not None:
            raise self._error
        if self._status is None:  # ERR-04: partial output is not a success
            cause = ProviderResponseError(
                "the stream ended without response.completed or response.incomplete"
            )
            raise HelixError("openai: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)
        await self._end_thinking()
        thinking = None
        if self._thinking or self._signature:  # RES-08; MSG-08: the encrypted reasoning rides along
            thinking = ThinkingContent(content="".join(self._thinking), signature=self._signature)
        text = "".join(self._text)
        stop: StopReason = "end_turn"
        if self._refused:
            stop = "refusal"
        elif self._status == "incomplete":
            stop = _INCOMPLETE.get(self._reason or "", "unknown")
        # RES-02, STOP-02: truncated, filtered and refused text keep their stop reason. RES-10: calls of an
        # incomplete response were cut off and are not executable.
        if not self._calls or self._status == "incomplete":
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        calls = parse_tool_calls(list(self._calls.values()), PROVIDER)  # RES-03..06, FIN-03
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05: exact name
        if finish is not None:  # FIN-01, FIN-02: wins over its siblings; FIN-04: thinking kept
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:  # STR-05: once per call, arguments complete, in result order
            await self._emit.tool_call(call)
        content = text or None  # RES-07: accompanying text is kept. RES-11: sub_agent_calls is a list
        return ToolCallsStepResult(tool_calls=calls, sub_agent_calls=[], content=content, thinking=thinking)


def _stream_error(payload: dict[str, Any]) -> HelixError:
    """ERR-03: an ``error`` event (its ``error`` nested, as live streams send it, or flat, as the SDK types it)
    or ``response.failed`` (``response.error``), coded by its ``code``."""
    error = payload.get("error")
    response = payload.get("response")
    if not isinstance(error, dict) and isinstance(response, dict):
        error = response.get("error")
    if not isinstance(error, dict):
        error = payload
    message = str(error.get("message") or "response failed")
    kind = str(error.get("code") or error.get("type") or "")
    code, retryable = _STREAM_ERROR_CODES.get(kind, (PROVIDER_ERROR, False))
    cause = ProviderResponseError(f"{kind}: {message}" if kind else message)
    return HelixError(f"{PROVIDER}: stream error: {message}", code=code, retryable=retryable, cause=cause)


# --- adapter --------------------------------------------------------------------------------------------


class OpenAIResponsesAdapter:
    """LLMAdapter for ``POST {base_url}/responses`` with ``stream: true``."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str = "https://api.openai.com/v1",
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api_key = api_key
        self._url = f"{base_url.rstrip('/')}/responses"
        self._timeout = timeout  # httpx timeouts, and the idle timeout of the stream (NT-04)
        self._transport = transport  # tests pass an httpx.MockTransport
        self._reasoning_ids: dict[str, str] = OrderedDict()  # encrypted_content -> its reasoning item id

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
        body = json.dumps(self._body(input), ensure_ascii=False).encode("utf-8")
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
        """One HTTP exchange (``_http.exchange``) with this API's status errors and stream parser."""
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

    def _body(self, input: LLMGenerateInput) -> dict[str, Any]:
        """The request body of this step (its own method so that a subclass can change one decision)."""
        return build_request_body(input, self._reasoning_ids)

    def _parser(self, emit: SafeCallbacks) -> _ResponsesStream:
        """The stream parser of one attempt."""
        return _ResponsesStream(emit, self._reasoning_ids)

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
    name="openai-responses",
    factory=lambda ctx: OpenAIResponsesAdapter(
        api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout
    ),
    wire_profile="openai-responses",
    model="gpt-5-mini",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="The reference adapter for OpenAI's Responses API, streamed, over httpx.",
    servers=frozenset(
        {"openai", "azure-openai", "openrouter"}
    ),  # every server of the profile, as every reference declares
)
