"""The adapter: one ``aiohttp.ClientSession`` per step, one streamed ``POST /chat/completions`` per attempt."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import re
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import aiohttp

from helix_conformance.contract import (
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    AbortSignal,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    LLMStreamCallbacks,
    ParsedToolCall,
    StepResult,
    invoke_callback,
)

from ._errors import ProviderSaid, aborted, describe, for_http, for_transport, redact
from ._request import PROVIDER, request_body
from ._sse import Decoder
from ._stream import Completion

T = TypeVar("T")
logger = logging.getLogger(__name__)
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
FIRST_BACKOFF_S = 0.05
"""The first wait between attempts; it doubles, never beyond MAX_BACKOFF_S, whatever retry-after asks (CFG-05)."""
MAX_BACKOFF_S = 2.0


class _Aborted(Exception):
    """The abort signal fired while waiting: the work was cancelled and its response closed."""


@dataclass
class _Retry:
    """A retryable failure before the stream was accepted (nothing was streamed: safe to try again)."""

    error: HelixError
    headers: Mapping[str, str] | None = None


class AiohttpChatAdapter:
    """Helix LLMAdapter for OpenAI Chat Completions over aiohttp."""

    def __init__(
        self, *, api_key: str, base_url: str = "https://api.openai.com/v1", timeout: float = 60.0
    ) -> None:
        self._api_key = api_key
        self._url = f"{base_url.rstrip('/')}/chat/completions"
        self._timeout = timeout  # per socket read: a stalled stream ends here (NT-04)

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        """Never raises an Exception (NT-01); errors are redacted (ERR-07) and reported once (STR-06);
        cancellation propagates (NT-03)."""
        callbacks = _Callbacks(input.callbacks, input.abort_signal)
        try:
            result = await self._generate(input, callbacks)
        except Exception as exc:
            message = f"{PROVIDER}: unexpected {type(exc).__name__}: {exc}"
            result = ErrorStepResult(error=HelixError(message, code=PROVIDER_ERROR, cause=exc))
        if isinstance(result, ErrorStepResult):
            error = result.error
            if isinstance(error, HelixError):
                error.message = redact(error.message, self._api_key)
                error.args = (error.message,)
            await callbacks.error(error)
        return result

    async def _generate(self, input: LLMGenerateInput, callbacks: _Callbacks) -> StepResult:
        signal = input.abort_signal
        if signal is not None and signal.aborted:  # AB-01: nothing is sent
            return ErrorStepResult(error=aborted(signal.reason))
        rejected = [tool.name for tool in input.tools if not _TOOL_NAME.fullmatch(tool.name)]
        if rejected:  # TOOL-05: refused before any request
            message = f"{PROVIDER}: tool names must match ^[a-zA-Z0-9_-]{{1,64}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        body = json.dumps(request_body(input), ensure_ascii=False).encode("utf-8")
        headers = {
            "Authorization": f"Bearer {self._api_key}",  # MSG-09
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            **(input.config.headers or {}),  # CFG-02
        }
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self._timeout, sock_read=self._timeout)
        retries = max(0, input.config.max_retries)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            for attempt in range(retries + 1):
                try:
                    outcome = await _until_aborted(self._attempt(session, body, headers, callbacks), signal)
                    if not isinstance(outcome, _Retry):
                        return outcome
                    if attempt == retries:  # CFG-04: it survived our retries, so it is final
                        outcome.error.retryable = outcome.error.retryable and retries == 0
                        return ErrorStepResult(error=outcome.error)
                    await _until_aborted(asyncio.sleep(_backoff(attempt, outcome.headers)), signal)  # CFG-05
                except _Aborted:  # AB-02, AB-03: terminal, never retried
                    return ErrorStepResult(error=aborted(signal.reason if signal is not None else None))
        raise AssertionError("unreachable")

    async def _attempt(
        self, session: aiohttp.ClientSession, body: bytes, headers: dict[str, str], callbacks: _Callbacks
    ) -> StepResult | _Retry:
        try:
            response = await session.post(self._url, data=body, headers=headers)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:  # ERR-05: before any byte: retryable
            return _Retry(for_transport(exc))
        try:
            if response.status >= 400:  # ERR-01, ERR-02
                error = for_http(response.status, await response.read(), self._api_key)
                return _Retry(error, response.headers) if error.retryable else ErrorStepResult(error=error)
            kind = response.headers.get("content-type", "")
            if kind and "text/event-stream" not in kind.lower():  # ERR-05: an HTML page, JSON, plain text
                detail, _ = describe(await response.read())
                message = f"{PROVIDER}: expected an event stream, got {kind}: {detail}"
                error = HelixError(
                    message, code=PROVIDER_ERROR, status_code=response.status, cause=ProviderSaid(detail)
                )
                return ErrorStepResult(error=error)
            completion = Completion(callbacks.text, callbacks.tool_call)
            decoder = Decoder()
            async for chunk in response.content.iter_any():  # STR-02: handled as it arrives
                if await completion.feed(decoder.feed(chunk)) or callbacks.aborted:
                    break  # NT-04: after [DONE] nothing more is read, even if the body stays open
            else:
                await completion.feed(decoder.close())
            return await completion.result()
        except HelixError as error:
            return ErrorStepResult(error=error)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:  # ERR-04: mid-stream, not retried
            return ErrorStepResult(error=for_transport(exc))
        finally:
            response.close()  # AB-02: also when the abort cancels this task


async def _until_aborted(work: Coroutine[Any, Any, T], signal: AbortSignal | None) -> T:
    """``work``'s result, unless the signal fires first (or meanwhile): then _Aborted, the work cancelled."""
    task = asyncio.ensure_future(work)
    if signal is None:
        return await task
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if signal.aborted:
            raise _Aborted
        return task.result()
    finally:
        for pending in (task, waiter):
            if not pending.done():
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending


def _backoff(attempt: int, headers: Mapping[str, str] | None) -> float:
    """``retry-after-ms``, ``retry-after`` (seconds or a date), else exponential; within [0, MAX_BACKOFF_S]."""
    hinted = _hint(headers) if headers is not None else None
    delay = hinted if hinted is not None else FIRST_BACKOFF_S * 2**attempt
    return max(0.0, min(delay, MAX_BACKOFF_S))


def _hint(headers: Mapping[str, str]) -> float | None:
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after") or ""
    seconds = _number(value)
    if seconds is not None or not value:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    from datetime import datetime, timezone

    return (when - datetime.now(when.tzinfo or timezone.utc)).total_seconds()


def _number(value: str | None) -> float | None:
    try:
        number = float(value or "nan")
    except ValueError:
        return None
    return number if math.isfinite(number) else None


class _Callbacks:
    """The caller's callbacks: awaited in turn (STR-08), never breaking the step (STR-11), silent once the
    signal fired (AB-02) but for ``error``, which reports the abort itself (STR-06)."""

    def __init__(self, callbacks: LLMStreamCallbacks | None, signal: AbortSignal | None) -> None:
        self._callbacks = callbacks or LLMStreamCallbacks()
        self._signal = signal

    @property
    def aborted(self) -> bool:
        return self._signal is not None and self._signal.aborted

    async def text(self, delta: str) -> None:
        await self._call(self._callbacks.on_text_delta, delta)

    async def tool_call(self, call: ParsedToolCall) -> None:
        await self._call(self._callbacks.on_tool_call, call)

    async def error(self, error: Exception) -> None:
        await self._call(self._callbacks.on_error, error, always=True)

    async def _call(self, callback: Any, *args: Any, always: bool = False) -> None:
        if callback is None or (self.aborted and not always):
            return
        try:
            await invoke_callback(callback, *args)
        except Exception:
            logger.warning("stream callback %r raised; ignored", callback, exc_info=True)
