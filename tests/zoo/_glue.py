"""What every adapter author writes around a client library, whatever the library: safe callbacks, the abort
race, never raising, exception -> HelixError by status, and the StepResult rules of the contract.

The zoo's shims share it so that a failure they get is the library's, not the glue's: the glue is the same
code the example adapters use (``examples/*/_callbacks.py``, ``_abort.py``), and nothing in it compensates for
what a library does wrong on the wire or in its parsing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from helix_conformance.contract import (
    FINISH_TOOL_NAME,
    PROVIDER_AUTH_ERROR,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    PROVIDER_OVERLOADED,
    PROVIDER_RATE_LIMITED,
    PROVIDER_TIMEOUT,
    REQUEST_ABORTED,
    AbortSignal,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    LLMStreamCallbacks,
    ParsedToolCall,
    StepResult,
    StopReason,
    StructuredOutputStepResult,
    TextStepResult,
    ThinkingContent,
    ToolCallsStepResult,
    invoke_callback,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")
RETRYABLE = frozenset({PROVIDER_RATE_LIMITED, PROVIDER_OVERLOADED, PROVIDER_TIMEOUT, PROVIDER_ERROR})


class SafeCallbacks:
    """Each callback awaited (STR-08); one that raises is logged, not propagated (STR-11); after an abort
    only ``on_error`` (AB-02)."""

    def __init__(self, callbacks: LLMStreamCallbacks | None, signal: AbortSignal | None) -> None:
        self._callbacks = callbacks or LLMStreamCallbacks()
        self._signal = signal

    async def text(self, delta: str) -> None:
        if delta:  # STR-01: never an empty delta
            await self._call(self._callbacks.on_text_delta, delta)

    async def thinking(self, delta: str, is_complete: bool) -> None:
        await self._call(self._callbacks.on_thinking, delta, is_complete)

    async def tool_call(self, call: ParsedToolCall) -> None:
        await self._call(self._callbacks.on_tool_call, call)

    async def error(self, error: Exception) -> None:
        await self._call(self._callbacks.on_error, error, after_abort=True)

    async def _call(self, callback: Callable[..., Any] | None, *args: Any, after_abort: bool = False) -> None:
        if callback is None or (self._signal is not None and self._signal.aborted and not after_abort):
            return
        try:
            await invoke_callback(callback, *args)
        except Exception:
            logger.warning("stream callback %r raised; ignored", callback, exc_info=True)


class ThinkingTracker:
    """Thinking deltas as ``on_thinking`` calls: one completion call when the block ends (STR-03, STR-04)."""

    def __init__(self, emit: SafeCallbacks) -> None:
        self.emit = emit
        self.parts: list[str] = []
        self.signature: str | None = None
        self.redacted: list[str] = []
        self.seen = False
        self._open = False

    async def delta(self, text: str) -> None:
        self.seen = True
        if text:
            self._open = True
            self.parts.append(text)
            await self.emit.thinking(text, False)

    async def end(self) -> None:
        if self._open:
            self._open = False
            await self.emit.thinking("", True)

    def content(self) -> ThinkingContent | None:
        if not (self.seen or self.parts or self.signature or self.redacted):
            return None
        return ThinkingContent(content="".join(self.parts), signature=self.signature, redacted=self.redacted)


class Aborted(Exception):
    """The abort signal fired while the library call was running; the call was cancelled."""


async def until_aborted(work: Coroutine[Any, Any, T], signal: AbortSignal | None) -> T:
    """``await work`` unless ``signal`` fires first: then cancel it and raise Aborted (AB-02, NT-03)."""
    if signal is None:
        return await work
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if signal.aborted:
            raise Aborted
        return task.result()
    finally:
        for pending in (task, waiter):
            if not pending.done():
                pending.cancel()
            await asyncio.wait({pending})
            if not pending.cancelled():
                pending.exception()


def code_for_status(status: int) -> str:
    """HTTP status -> HelixError code (ERR-01)."""
    if status in (401, 403):
        return PROVIDER_AUTH_ERROR
    if status == 429:
        return PROVIDER_RATE_LIMITED
    if status == 408:
        return PROVIDER_TIMEOUT
    if status in (503, 529):
        return PROVIDER_OVERLOADED
    if status >= 500:
        return PROVIDER_ERROR
    return PROVIDER_INVALID_REQUEST


ErrorMapper = Callable[[Exception], HelixError]


STOP_REASONS: dict[str, dict[str, StopReason]] = {
    "openai": {
        "stop": "end_turn",
        "tool_calls": "tool_use",
        "length": "max_tokens",
        "content_filter": "content_filter",
    },
    "anthropic": {
        "end_turn": "end_turn",
        "tool_use": "tool_use",
        "max_tokens": "max_tokens",
        "model_context_window_exceeded": "max_tokens",
        "stop_sequence": "stop_sequence",
        "refusal": "refusal",
        "pause_turn": "end_turn",
    },
    "gemini": {
        "STOP": "end_turn",
        "MAX_TOKENS": "max_tokens",
        **dict.fromkeys(
            (
                "SAFETY",
                "RECITATION",
                "BLOCKLIST",
                "PROHIBITED_CONTENT",
                "SPII",
                "IMAGE_SAFETY",
                "MODEL_ARMOR",
            ),
            "content_filter",
        ),
    },
}
"""Each provider's own finish reasons as Helix stop reasons, for shims that can read them (LangChain, pydantic-ai)."""


TOOL_NAMES = {  # the provider's tool name rule, checked before anything is sent (TOOL-05)
    "openai-chat": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "openai-responses": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "anthropic-messages": re.compile(r"[a-zA-Z0-9_-]{1,128}"),
    "gemini": re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}"),
}


async def run_step(
    input: LLMGenerateInput,
    work: Callable[[SafeCallbacks], Awaitable[StepResult]],
    to_error: ErrorMapper,
    api_key: str,
    profile: str,
) -> StepResult:
    """The adapter's ``generate_step`` around the library call ``work``: never raises (NT-01), an abort
    before or during the call gives ``request_aborted`` (AB-01..03), ``on_error`` once (STR-06), tool names
    the provider refuses are refused first (TOOL-05). Retries are the library's: an error that comes out of
    them is final when the caller allowed retries (CFG-04)."""
    signal = input.abort_signal
    emit = SafeCallbacks(input.callbacks, signal)
    rejected = [t.name for t in input.tools if not TOOL_NAMES[profile].fullmatch(t.name)]
    if signal is not None and signal.aborted:
        result: StepResult = ErrorStepResult(error=_aborted(signal.reason))
    elif rejected:
        message = f"tool names the provider does not accept: {rejected}"
        result = ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
    else:
        try:
            result = await until_aborted(_as_coroutine(work(emit)), signal)
        except Aborted:
            result = ErrorStepResult(error=_aborted(signal.reason if signal else None))
        except Exception as exc:
            error = to_error(exc)
            if error.retryable and input.config.max_retries > 0 and error.code in RETRYABLE:
                error.retryable = False
            error = _redacted(error, api_key)
            result = ErrorStepResult(error=error)
    if isinstance(result, ErrorStepResult):
        await emit.error(result.error)
    return result


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _aborted(reason: object) -> HelixError:
    return HelixError(f"request aborted: {reason}", code=REQUEST_ABORTED, retryable=False)


def _redacted(error: HelixError, api_key: str) -> HelixError:
    if api_key and api_key in str(error):
        return HelixError(
            str(error).replace(api_key, "[REDACTED]"),
            code=error.code,
            retryable=error.retryable,
            status_code=error.status_code,
            cause=error.cause,
        )
    return error


def error_for(exc: Exception, status: int | None, *, timeout: bool = False, what: str = "") -> HelixError:
    """A HelixError coded by the HTTP status the library reported (ERR-01/02), else by the kind of failure."""
    if isinstance(exc, HelixError):
        return exc
    message = f"{what or type(exc).__name__}: {exc}"
    if status is not None and status >= 400:
        code = code_for_status(status)
        retryable = status in (408, 429) or status >= 500
        if status == 429 and "insufficient_quota" in message:  # ERR-08: a quota, not a rate
            retryable = False
        return HelixError(message, code=code, retryable=retryable, status_code=status, cause=exc)
    if timeout:
        return HelixError(message, code=PROVIDER_TIMEOUT, retryable=True, cause=exc)
    return HelixError(message, code=PROVIDER_ERROR, retryable=True, cause=exc)


@dataclass
class Call:
    """A finished tool call as the library handed it over: arguments parsed (dict) or raw (str)."""

    id: str
    name: str
    arguments: Any = field(default=None)


def parse_arguments(name: str, raw: Any) -> dict[str, Any]:
    """RES-04/05, FIN-03: raw JSON text or an already parsed object; anything else is an error result."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise HelixError(
                f"arguments of {name!r} are not valid JSON", code=PROVIDER_ERROR, cause=exc
            ) from exc
    if not isinstance(value, dict):
        raise HelixError(f"arguments of {name!r} are not a JSON object", code=PROVIDER_ERROR)
    return value


async def finish(
    emit: SafeCallbacks,
    *,
    text: str,
    thinking: ThinkingContent | None,
    calls: list[Call],
    stop: StopReason,
) -> StepResult:
    """The StepResult of a complete response (RES-02, RES-09, RES-10, STOP-02, FIN-01/02, STR-05)."""
    if not calls or stop == "max_tokens":
        return TextStepResult(content=text, thinking=thinking, should_stop=True, stop_reason=stop)
    parsed: list[ParsedToolCall] = []
    for call in calls:
        if not call.name:
            raise HelixError("a tool call has no name", code=PROVIDER_ERROR)
        call_id = call.id
        if not call_id or any(p.id == call_id for p in parsed):  # RES-03: the library's id where it has one
            call_id = f"call_{uuid.uuid4().hex}"
        parsed.append(
            ParsedToolCall(id=call_id, name=call.name, arguments=parse_arguments(call.name, call.arguments))
        )
    finish_call = next((c for c in parsed if c.name == FINISH_TOOL_NAME), None)
    if finish_call is not None:
        return StructuredOutputStepResult(output=finish_call.arguments, thinking=thinking)
    for call in parsed:
        await emit.tool_call(call)
    return ToolCallsStepResult(tool_calls=parsed, sub_agent_calls=[], content=text or None, thinking=thinking)
