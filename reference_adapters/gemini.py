"""Reference adapter for Google's Generative Language API (Gemini), streamed: the example adapter authors copy.

Short comments name the CONTRACT.md clause each piece of code implements. Imports: the public contract,
the standard library and httpx. Gemini differs from the other two reference wire formats on both sides:
turns are ``user``/``model`` and strictly alternate, tool results are linked to calls by name and order
(calls usually carry no id), tool schemas must be an OpenAPI subset (no ``$ref``), reasoning comes back as
``thought`` parts with an opaque ``thoughtSignature``, and an error in the middle of a stream is written as
raw JSON rather than as an event.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import re
from typing import Any
from urllib.parse import quote

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

from ._gemini_schema import UnsupportedSchema, gemini_schema
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

__all__ = ["GeminiAdapter", "build_request_body", "gemini_schema", "spec"]

PROVIDER = "gemini"  # the key of config.provider_options, and the prefix of error messages
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
_VERSIONED = re.compile(r"/v1(?:alpha|beta)?$")  # a base URL that already names the API version
_TOOL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}")
_STOP_REASONS: dict[str, StopReason] = {  # STOP-01; anything else -> "unknown", never the provider string
    "STOP": "end_turn",  # -> tool_use when the response carries function calls (RES-09)
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MODEL_ARMOR": "content_filter",
}  # OTHER, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, LANGUAGE, ... -> "unknown"
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_RAW_LIMIT = 65536
"""Most characters of raw (non-``data:``) JSON kept while waiting for a mid-stream error object to complete."""
_JSON = json.JSONDecoder()
"""One decoder for every event: ``json.loads`` would look up the default decoder on each call."""

# --- request --------------------------------------------------------------------------------------------


def build_request_body(input: LLMGenerateInput) -> dict[str, Any]:
    """The JSON body of ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse``.

    ``input`` is only read, never mutated (MSG-07): everything taken from it is copied. Raises a HelixError
    ``provider_invalid_request`` for a tool schema Gemini cannot express (TOOL-05).
    """
    config = input.config
    body: dict[str, Any] = {}
    system = [{"text": m.content} for m in input.messages if isinstance(m, SystemMessage) and m.content]
    if system:  # MSG-01: the systemInstruction slot, one part per system message, never a content turn
        body["systemInstruction"] = {"parts": system}
    body["contents"] = _contents(input.messages)
    if input.tools:  # TOOL-04: no tools -> neither `tools` nor `toolConfig`
        body["tools"] = [{"functionDeclarations": [_declaration(tool) for tool in input.tools]}]
    generation = {  # CFG-01: unset -> absent
        "maxOutputTokens": config.max_output_tokens,
        "temperature": config.temperature,
        "topP": config.top_p,
        "topK": config.top_k,
        "presencePenalty": config.presence_penalty,
        "frequencyPenalty": config.frequency_penalty,
        "stopSequences": list(config.stop_sequences) if config.stop_sequences is not None else None,
        "seed": config.seed,
    }
    generation = {name: value for name, value in generation.items() if value is not None}
    if generation:
        body["generationConfig"] = generation
    # CACHE-04: caching='auto' changes nothing. Gemini caches implicitly; explicit caches (cachedContent)
    # are resources created beforehand, which a caller passes through provider_options.
    for key, value in copy.deepcopy((config.provider_options or {}).get(PROVIDER, {})).items():  # CFG-02
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}  # e.g. generationConfig.thinkingConfig beside our fields
        else:
            body[key] = value
    return body


def _contents(messages: list[Message]) -> list[dict[str, Any]]:
    """The conversation as strictly alternating ``user``/``model`` turns (MSG-05).

    User text and tool results share user turns: consecutive user-side messages become one turn, so all
    results of a model turn sit together in the user turn right after it, in order (MSG-04). Consecutive
    assistant messages become one model turn. A message with nothing to send (empty text, an assistant
    message without text or calls) is dropped and its neighbours merge: Gemini rejects turns with no parts.
    """
    turns: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue  # sent as systemInstruction (MSG-01)
        if isinstance(message, AssistantMessage):
            role, parts = "model", _model_parts(message)
        elif isinstance(message, ToolMessage):  # MSG-04: linked to its call by name and position
            response = {"name": message.tool_name, "response": {"result": message.content}}
            role, parts = "user", [{"functionResponse": response}]
        else:  # MSG-02: user text exactly as given; MSG-06: never an empty text part
            role, parts = "user", [{"text": message.content}] if message.content else []
        if not parts:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["parts"].extend(parts)
        else:
            turns.append({"role": role, "parts": parts})
    return turns


def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    """Text (if any), then one functionCall part per call; the thought signature rides on the first call.

    MSG-03: names and arguments unchanged. Canonical call ids are not sent: Gemini links results by name and
    order, and an id it did not issue means nothing to it. MSG-08: the reasoning text is not sent back, only
    its ``thoughtSignature``, on the first functionCall part (or the first part without calls), as the API
    returned it.
    """
    parts: list[dict[str, Any]] = []
    if message.content:  # MSG-06: no empty text part beside function calls
        parts.append({"text": message.content})
    for call in message.tool_calls or ():
        parts.append({"functionCall": {"name": call.name, "args": copy.deepcopy(call.arguments)}})
    signature = message.thinking.signature if message.thinking is not None else None
    if signature and parts:
        target = next((part for part in parts if "functionCall" in part), parts[0])
        target["thoughtSignature"] = signature
    return parts


def _declaration(tool: Tool) -> dict[str, Any]:
    """A function declaration: name and description unchanged, ``__finish__`` like any other (TOOL-01)."""
    try:
        parameters = gemini_schema(tool.json_schema())
    except UnsupportedSchema as exc:  # TOOL-05: refused before any request is sent
        message = f"gemini: the input schema of tool {tool.name!r} cannot be sent to Gemini: {exc}"
        raise HelixError(message, code=PROVIDER_INVALID_REQUEST) from exc
    return {"name": tool.name, "description": tool.description, "parameters": parameters}


# --- response -------------------------------------------------------------------------------------------


class _GeminiStream:
    """Accumulates one streamed GenerateContentResponse sequence, firing callbacks as parts arrive."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self._emit = emit
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._has_thinking = False
        self._in_thinking = False
        self._signature: str | None = None
        self._calls: list[ToolCallBuffer] = []
        self._response_id = ""
        self._finish_reason: str | None = None
        self._blocked = False
        self._raw: list[str] = []  # lines of raw JSON (a mid-stream error) not complete yet
        self._error: HelixError | None = None
        self._streaming: tuple[ToolCallBuffer, dict[str, Any]] | None = None  # a call whose arguments stream

    @property
    def _done(self) -> bool:
        return self._finish_reason is not None or self._blocked

    async def feed(self, events: list[SSEEvent]) -> bool:
        """Apply parsed events in order; True when reading can stop: a finishReason, a block or an error."""
        try:
            for event in events:
                if await self._event(event):
                    return True
        except HelixError as error:  # kept for result(): it is raised there, after the body is drained
            self._error = error
            return True
        return False

    async def _event(self, event: SSEEvent) -> bool:
        if event.stray:  # ERR-03: Gemini writes a mid-stream error as raw JSON, not as a data: event
            return self._raw_line(event.data)
        if self._raw:  # raw text that never became a JSON value, then events again
            raise HelixError("gemini: the stream holds text that is not an event", code=PROVIDER_ERROR)
        data = event.data
        if not data or event.event not in (None, "message", "error") or data.isspace():
            return False  # RES-12: unknown event types are ignored
        try:
            payload = _JSON.decode(data)
        except ValueError as exc:  # ERR-05: not the provider's format
            raise HelixError("gemini: stream event is not JSON", code=PROVIDER_ERROR, cause=exc) from exc
        if not isinstance(payload, dict):
            raise HelixError("gemini: stream event is not a JSON object", code=PROVIDER_ERROR)
        if payload.get("error") is not None or event.event == "error":  # ERR-03, as a data: event
            raise _stream_error(payload)
        if not self._response_id and isinstance(payload.get("responseId"), str):
            self._response_id = payload["responseId"]
        candidates = payload.get("candidates")
        if isinstance(candidates, list) and candidates:
            # One candidate is asked for; the first is candidate 0 (its `index` may be omitted).
            first = candidates[0]
            candidate = (
                first
                if isinstance(first, dict) and first.get("index", 0) == 0
                else next((c for c in candidates if isinstance(c, dict) and c.get("index", 0) == 0), None)
            )
            if candidate is not None:
                await self._candidate(candidate)
        else:
            feedback = payload.get("promptFeedback")
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                self._blocked = True  # STOP-02: the prompt was blocked, nothing was generated
        return self._done  # the terminal chunk: nothing after it is needed (RES-12: usage etc. ignored)

    def _raw_line(self, line: str) -> bool:
        if not self._raw and not line.lstrip().startswith(("{", "[")):  # ERR-05: HTML, plain text...
            snippet = " ".join(line.split())[:200]
            raise HelixError(
                f"gemini: the stream holds text that is not an event: {snippet}", code=PROVIDER_ERROR
            )
        self._raw.append(line)
        text = "\n".join(self._raw)
        try:
            value = json.loads(text)
        except ValueError:
            if len(text) > _RAW_LIMIT:
                raise HelixError(
                    "gemini: the stream holds text that is not an event", code=PROVIDER_ERROR
                ) from None
            return False  # an object spread over several lines: wait for the rest
        if isinstance(value, list) and value:
            value = value[0]
        if not isinstance(value, dict) or value.get("error") is None:
            raise HelixError(
                "gemini: the stream holds a JSON value that is not an event", code=PROVIDER_ERROR
            )
        raise _stream_error(value)

    async def _candidate(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else ():  # MAX_TOKENS, SAFETY...: often no parts
            if isinstance(part, dict):
                await self._part(part)
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            self._finish_reason = reason

    async def _part(self, part: dict[str, Any]) -> None:
        signature = part.get("thoughtSignature")
        if isinstance(signature, str) and signature:
            self._signature = signature  # MSG-08: the latest proof, whichever part carries it
        text = part.get("text")
        if part.get("thought") is True:  # RES-08, STR-03: reasoning, streamed as it arrives
            self._has_thinking = True
            if isinstance(text, str) and text:
                self._in_thinking = True
                self._thinking.append(text)
                await self._emit.thinking(text, False)
            return
        call = part.get("functionCall")
        if isinstance(call, dict):  # RES-06: a whole call per part, in the order the parts arrive
            await self._end_thinking()  # STR-04: the thinking block closes before what follows it
            self._function_call(call)
        elif isinstance(text, str) and text:  # STR-01: the final chunk's {"text": ""} is no delta
            await self._end_thinking()
            self._text.append(text)
            await self._emit.text(text)  # STR-02: as it arrives, never buffered
        # RES-12: other parts (inlineData, executableCode, ...) and unknown fields are ignored

    def _function_call(self, call: dict[str, Any]) -> None:
        """One ``functionCall`` part: a whole call, or a piece of one whose arguments stream (Vertex: the name
        with ``willContinue``, then name-less parts of ``partialArgs``, then an empty part closing it)."""
        name, call_id, args = call.get("name"), call.get("id"), call.get("args")
        if not name and self._streaming is not None:
            streamed, so_far = self._streaming
            pieces = call.get("partialArgs")
            for piece in pieces if isinstance(pieces, list) else ():
                _apply_partial_arg(so_far, piece)
            streamed.arguments = [json.dumps(so_far)]
            if not call.get("willContinue"):
                self._streaming = None
            return
        buffer = ToolCallBuffer(
            id=call_id if isinstance(call_id, str) else "",
            name=name if isinstance(name, str) else "",
            # RES-05: absent args -> {}; RES-04: non-objects are refused
            arguments=[args if isinstance(args, str) else json.dumps(args)] if args is not None else [],
        )
        self._calls.append(buffer)
        self._streaming = None
        if call.get("willContinue"):  # its arguments follow in later parts
            self._streaming = (buffer, dict(args) if isinstance(args, dict) else {})

    async def _end_thinking(self) -> None:
        if self._in_thinking:  # STR-03: exactly one completion call per thinking block
            self._in_thinking = False
            await self._emit.thinking("", True)

    def _call_buffers(self) -> list[ToolCallBuffer]:
        """RES-03: the provider's id when it sent one; else an id that is unique in the step. Ours is also
        stable (derived from responseId and position), which makes logs easier to read; random ids are allowed
        too, as the harness compares minted ids by position across runs (STR-09/10)."""
        seed = (
            self._response_id
            or hashlib.sha256(json.dumps([[c.name, c.arguments] for c in self._calls]).encode()).hexdigest()[
                :16
            ]
        )
        taken: set[str] = set()
        buffers = []
        for position, call in enumerate(self._calls):
            call_id = call.id
            if not call_id or call_id in taken:
                call_id = f"call_{seed}_{position}"
            taken.add(call_id)
            buffers.append(ToolCallBuffer(call_id, call.name, call.arguments))
        return buffers

    async def result(self) -> StepResult:
        """The StepResult of the finished stream; the last callbacks (thinking end, tool calls) fire here."""
        if self._error is not None:
            raise self._error
        if not self._done or self._raw:  # ERR-04: no finishReason: the output may be cut, no success
            cause = ProviderResponseError("the stream ended without a finishReason")
            raise HelixError("gemini: stream ended early", code=PROVIDER_ERROR, retryable=True, cause=cause)
        await self._end_thinking()
        thinking = None
        if self._has_thinking or self._signature:  # RES-08, MSG-08: with what Gemini needs back
            thinking = ThinkingContent(content="".join(self._thinking), signature=self._signature)
        text = "".join(self._text)
        stop: StopReason = "content_filter" if self._blocked else "unknown"
        stop = _STOP_REASONS.get(self._finish_reason or "", stop)
        if not self._calls or stop == "max_tokens":
            # RES-02, STOP-02: truncated and filtered text keep their stop reason (often with no text at
            # all). RES-10: calls that came with the token limit are not executed.
            return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
        # RES-09: function calls make a tool-calls result whatever the finish reason (STOP is usual)
        calls = parse_tool_calls(self._call_buffers(), PROVIDER)  # RES-03..05, FIN-03
        finish = next((call for call in calls if call.name == FINISH_TOOL_NAME), None)  # FIN-05: exact name
        if finish is not None:  # FIN-01, FIN-02: wins over its siblings; FIN-04: thinking kept
            return StructuredOutputStepResult(output=finish.arguments, thinking=thinking)
        for call in calls:  # STR-05: once per call, arguments complete, in result order
            await self._emit.tool_call(call)
        content = text or None  # RES-07: accompanying text is kept. RES-11: sub_agent_calls is a list
        return ToolCallsStepResult(tool_calls=calls, sub_agent_calls=[], content=content, thinking=thinking)


_PATH_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _apply_partial_arg(arguments: dict[str, Any], piece: Any) -> None:
    """One ``partialArgs`` entry into the arguments: ``jsonPath`` ``$.a.b``, string values in fragments."""
    path = piece.get("jsonPath") if isinstance(piece, dict) else None
    keys = path[2:].split(".") if isinstance(path, str) and path.startswith("$.") else []
    if not keys or not all(_PATH_KEY.fullmatch(key) for key in keys):
        raise HelixError(f"gemini: streamed argument path {path!r} is not supported", code=PROVIDER_ERROR)
    target = arguments
    for key in keys[:-1]:
        target = target.setdefault(key, {})
        if not isinstance(target, dict):
            raise HelixError(
                f"gemini: streamed argument path {path!r} runs into a value", code=PROVIDER_ERROR
            )
    last = keys[-1]
    if "stringValue" in piece:
        target[last] = str(target.get(last, "")) + str(piece["stringValue"])
    for kind in ("numberValue", "boolValue"):
        if kind in piece:
            target[last] = piece[kind]
    if "nullValue" in piece:
        target[last] = None


def _stream_error(payload: dict[str, Any]) -> HelixError:
    """ERR-03: ``{"error": {code, message, status}}`` in a 200 stream, coded by its gRPC status."""
    message, _ = describe_error(payload)
    body = payload.get("error")
    body = body if isinstance(body, dict) else {}
    status, code = str(body.get("status", "")).upper(), body.get("code")
    if status == "RESOURCE_EXHAUSTED" or code == 429:
        kind = PROVIDER_RATE_LIMITED
    elif status == "UNAVAILABLE" or code == 503:
        kind = PROVIDER_OVERLOADED
    else:
        kind = PROVIDER_ERROR
    client_fault = isinstance(code, int) and 400 <= code < 500 and code not in (408, 429)
    return HelixError(
        f"gemini: stream error: {status or code or 'error'}: {message}",
        code=kind,
        retryable=not client_fault,
        cause=ProviderResponseError(message),
    )


def retry_info_delay(body: Any) -> float | None:
    """Seconds of a ``google.rpc.RetryInfo`` detail in an error body (``"retryDelay": "34.4s"``) (CFG-05)."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else ():
        if not isinstance(detail, dict) or detail.get("@type") != _RETRY_INFO:
            continue
        delay = detail.get("retryDelay")
        if isinstance(delay, str) and delay.endswith("s"):  # protobuf Duration in JSON: "34s", "0.150s"
            try:
                seconds = float(delay[:-1])
            except ValueError:
                return None
            return seconds if math.isfinite(seconds) and seconds >= 0 else None
        if isinstance(delay, dict):  # {"seconds": 34, "nanos": 400000000}
            try:
                return float(delay.get("seconds", 0)) + float(delay.get("nanos", 0)) / 1e9
            except (TypeError, ValueError):
                return None
    return None


# --- adapter --------------------------------------------------------------------------------------------


class GeminiAdapter:
    """LLMAdapter for ``POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse``."""

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api_key = api_key
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._base = base if _VERSIONED.search(base) else f"{base}/v1beta"
        self._timeout = timeout  # httpx timeouts, and the idle timeout of the stream (NT-04)
        self._transport = transport  # tests pass an httpx.MockTransport

    def url(self, model: str) -> str:
        """The streaming endpoint of ``model``; the key goes in a header, never in the URL (ERR-07)."""
        name = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
        return f"{self._base}/{quote(name, safe='/')}:streamGenerateContent?alt=sse"  # MSG-10

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
            message = f"gemini: tool names must match ^[a-zA-Z_][a-zA-Z0-9_.-]{{0,63}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        try:
            payload = build_request_body(input)
        except HelixError as error:  # TOOL-05: a schema Gemini cannot express, before any request
            return ErrorStepResult(error=error)
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers = httpx.Headers(
            {
                "x-goog-api-key": self._api_key,
                "content-type": "application/json",
                "accept": "text/event-stream",
            }
        )
        headers.update(input.config.headers or {})  # CFG-02 (case-insensitively over our defaults)
        client = httpx.AsyncClient(timeout=self._timeout, transport=self._transport, verify=tls_context())
        async with client:  # CFG-03..05, AB-02/03, NT-04: retries, abort and stall handling in run_attempts
            request = client.build_request(
                "POST", self.url(input.config.model), content=body, headers=headers
            )
            attempt = functools.partial(self._attempt, client, request, guard, emit)
            return await run_attempts(attempt, guard, input.config.max_retries, PROVIDER)

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        """One HTTP exchange: the provider-neutral part (statuses, transport errors, feeding the stream as it
        arrives, abort, closing) is ``_http.exchange``; this adapter brings its status errors and its parser."""
        parser = _GeminiStream(emit)  # ERR-03: raw JSON errors are not skipped
        return await exchange(
            client,
            request,
            guard,
            PROVIDER,
            status_error=self._status_error,
            parser=parser,
            decoder=SSEDecoder(keep_stray_lines=True),
        )

    async def _status_error(self, response: httpx.Response) -> tuple[HelixError, httpx.Headers]:
        """The HelixError of an HTTP error, ``{"error": {code, message, status, details}}`` or HTML
        (ERR-01/02), and the retry hints: ``retry-after`` headers, else the body's RetryInfo (CFG-05)."""
        raw = await response.aread()
        message, _ = describe_error(raw)
        status = response.status_code
        message = f"gemini: HTTP {status}: {redact(message, self._api_key)}"  # ERR-07: keys get echoed
        code, retryable = classify_status(status)
        cause = httpx.HTTPStatusError(message, request=response.request, response=response)
        error = HelixError(message, code=code, retryable=retryable, status_code=status, cause=cause)
        hints = httpx.Headers(response.headers)
        delay = retry_info_delay(raw)
        if delay is not None and "retry-after" not in hints and "retry-after-ms" not in hints:
            hints["retry-after-ms"] = f"{delay * 1000:.0f}"
        return error, hints


spec = AdapterSpec(
    name="gemini",
    factory=lambda ctx: GeminiAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout),
    wire_profile="gemini",
    model="gemini-2.5-flash",
    # "caching": caching='auto' is honoured by sending nothing for it (CACHE-04: Gemini caches implicitly).
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="The reference adapter: Google Gemini (Generative Language API), streamed, over httpx.",
    # Every server of the profile: the reference is the proof that each scenario can be passed (Vertex's
    # streamed arguments included: it assembles partialArgs whenever its request asks for them).
    servers=frozenset({"gemini-api", "vertex"}),
)
