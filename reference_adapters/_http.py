"""Provider-neutral plumbing shared by the reference adapters: everything that is not a wire format.

Error classification (ERR-01..05); retries with bounded, header-honouring delays (CFG-03..05); secret
redaction (ERR-07); ``StreamGuard``, which races a request against the abort signal and an idle timeout
(AB-02, NT-04); ``SafeCallbacks``, which call the caller's callbacks as the STR clauses demand; and tool-call
assembly (RES-03..06). Nothing here knows a wire format beyond the common ``{"error": {...}}`` envelope.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import re
import ssl
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, TypeVar

import httpx

from helix_conformance.contract import (
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
    invoke_callback,
)

T = TypeVar("T")
E = TypeVar("E")
logger = logging.getLogger(__name__)

BASE_RETRY_DELAY = 0.05
"""First backoff step in seconds; doubles per attempt. Small on purpose: retries are replayed offline."""
MAX_RETRY_DELAY = 2.0
"""Upper bound of any wait between attempts, whatever the provider asks for (CFG-05 'bounded')."""

_RETRYABLE_CODES = frozenset({PROVIDER_RATE_LIMITED, PROVIDER_OVERLOADED, PROVIDER_TIMEOUT, PROVIDER_ERROR})


class ProviderResponseError(Exception):
    """The provider's own account of a failure (error body, error event): the ``cause`` of a HelixError."""


class StreamAborted(Exception):
    """Raised by ``StreamGuard`` when the abort signal fired (AB-02)."""


class StreamStalled(Exception):
    """Raised by ``StreamGuard`` when no data arrived for longer than the idle timeout (NT-04)."""


# --- classification -------------------------------------------------------------------------------


def classify_status(status: int) -> tuple[str, bool]:
    """HTTP status -> (HelixError code, retryable) (ERR-01, ERR-02)."""
    if status in (401, 403):
        return PROVIDER_AUTH_ERROR, False
    if status == 429:
        return PROVIDER_RATE_LIMITED, True
    if status == 408:
        return PROVIDER_TIMEOUT, True
    if status in (503, 529):
        return PROVIDER_OVERLOADED, True
    if status >= 500:
        return PROVIDER_ERROR, True
    return PROVIDER_INVALID_REQUEST, False  # 400, 404, 413, 422 and any other 4xx


def error_for_stream_event(payload: Any, provider: str) -> HelixError:
    """A HelixError for an error delivered inside a 200 stream, coded by its type (ERR-03)."""
    message, kind = describe_error(payload)
    if "rate_limit" in kind.lower():
        code = PROVIDER_RATE_LIMITED
    elif "overloaded" in kind.lower():
        code = PROVIDER_OVERLOADED
    else:
        code = PROVIDER_ERROR
    retryable, cause = code in _RETRYABLE_CODES, ProviderResponseError(message)
    return HelixError(f"{provider}: stream error: {message}", code=code, retryable=retryable, cause=cause)


def error_for_transport(exc: Exception, provider: str) -> HelixError:
    """A HelixError for a failure below HTTP: timeouts, refused connections, dropped streams (ERR-04/05)."""
    detail = f"{provider}: {type(exc).__name__}: {exc}".rstrip(": ")
    if isinstance(exc, httpx.TimeoutException):  # ConnectTimeout, ReadTimeout, WriteTimeout, PoolTimeout
        return HelixError(f"request timed out ({detail})", code=PROVIDER_TIMEOUT, retryable=True, cause=exc)
    if isinstance(exc, httpx.TransportError):  # ConnectError, ReadError, RemoteProtocolError, ...
        return HelixError(f"connection failed ({detail})", code=PROVIDER_ERROR, retryable=True, cause=exc)
    return HelixError(f"HTTP client error ({detail})", code=PROVIDER_ERROR, retryable=False, cause=exc)


async def require_event_stream(
    response: httpx.Response, provider: str, media_type: str = "text/event-stream"
) -> None:
    """Raise a provider_error HelixError if a successful response is not the provider's stream (ERR-05):
    ``text/event-stream`` (SSE) unless the provider streams another media type (AWS event-stream)."""
    content_type = response.headers.get("content-type", "")
    if content_type and media_type not in content_type.lower():
        detail, _ = describe_error(await response.aread())
        message = f"{provider}: expected an event stream, got {content_type}: {detail}"
        cause = ProviderResponseError(detail)
        raise HelixError(message, code=PROVIDER_ERROR, status_code=response.status_code, cause=cause)


def aborted_error(reason: Any = None) -> HelixError:
    """The terminal error of an aborted step: distinguishable and never retried (AB-03)."""
    suffix = f": {reason}" if reason not in (None, "") else ""
    return HelixError(f"request aborted{suffix}", code=REQUEST_ABORTED, retryable=False)


def describe_error(body: Any, limit: int = 500) -> tuple[str, str]:
    """(message, kind) of an error body, JSON or not; ``kind`` joins its type, code and status fields."""
    if isinstance(body, (bytes, str)):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            body = json.loads(text)
        except ValueError:
            snippet = " ".join(text.split())[:limit]
            return snippet or "(empty body)", ""
    if isinstance(body, dict) and "error" in body and body["error"] is not None:
        body = body["error"]
    if isinstance(body, dict):
        message = body.get("message") or body.get("detail") or json.dumps(body)[:limit]
        kind = " ".join(str(body[key]) for key in ("type", "code", "status") if body.get(key) is not None)
        return str(message)[:limit], kind
    return str(body)[:limit], ""


# --- retries --------------------------------------------------------------------------------------


def retry_delay(attempt: int, headers: Mapping[str, str] | None = None) -> float:
    """Seconds before retry ``attempt + 1``: ``retry-after-ms``, ``retry-after`` (seconds or HTTP date) or
    exponential backoff from BASE_RETRY_DELAY, always within [0, MAX_RETRY_DELAY] (CFG-05)."""
    hinted = _header_delay(httpx.Headers(headers)) if headers else None
    delay = hinted if hinted is not None else BASE_RETRY_DELAY * (2**attempt)
    return max(0.0, min(delay, MAX_RETRY_DELAY))


def _header_delay(headers: httpx.Headers) -> float | None:
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = headers.get("retry-after", "")
    seconds = _number(value)
    if seconds is not None or not value:
        return seconds
    try:  # an HTTP date
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    when = when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
    return (when - datetime.now(timezone.utc)).total_seconds()


def _number(value: str | None) -> float | None:
    try:
        number = float(value or "nan")
    except ValueError:
        return None
    return number if math.isfinite(number) else None


@dataclass
class RetryableFailure:
    """A retryable failure that happened before a response stream was accepted: safe to retry (CFG-03)."""

    error: HelixError
    headers: httpx.Headers | None = None


def retry_or_fail(error: HelixError, headers: httpx.Headers | None = None) -> RetryableFailure | StepResult:
    """What an attempt returns for a failure before streaming: retried if retryable (CFG-03), else final."""
    return RetryableFailure(error, headers) if error.retryable else ErrorStepResult(error=error)


async def run_attempts(
    attempt: Callable[[], Coroutine[Any, Any, StepResult | RetryableFailure]],
    guard: StreamGuard,
    max_retries: int,
    provider: str,
) -> StepResult:
    """Run ``attempt()`` under the guard; retry a RetryableFailure at most ``max_retries`` times (CFG-03).

    Failures after a response stream was accepted are the attempt's own ErrorStepResult and are not retried:
    callbacks may already have fired, so a retry would repeat them.
    """
    retries_left = max(0, max_retries)
    while True:
        try:
            if guard.aborted:  # AB-01, AB-03: nothing is sent after an abort, it is never retried
                raise StreamAborted
            outcome = await guard.run(attempt())
            if not isinstance(outcome, RetryableFailure):
                return outcome
            if retries_left == 0:
                # CFG-04: an error that survived our retries is final; with max_retries=0 it is left as is.
                outcome.error.retryable = outcome.error.retryable and max_retries <= 0
                return ErrorStepResult(error=outcome.error)
            delay = retry_delay(max_retries - retries_left, outcome.headers)  # CFG-05: as asked, bounded
            await guard.run(asyncio.sleep(delay), idle=False)  # the wait is abortable too
            retries_left -= 1
        except StreamAborted:  # AB-02: the attempt was cancelled and its response closed
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        except StreamStalled as exc:  # NT-04
            error = HelixError(f"{provider}: {exc}", code=PROVIDER_TIMEOUT, retryable=True, cause=exc)
            return ErrorStepResult(error=error)


# --- secrets --------------------------------------------------------------------------------------

_BEARER = re.compile(r"(Bearer\s+)[^\s\"',]+", re.IGNORECASE)
_QUERY_KEY = re.compile(r"([?&](?:key|api_key|api-key)=)[^&\s\"']+", re.IGNORECASE)
REDACTED = "[REDACTED]"


def redact(text: str, secret: str) -> str:
    """``text`` without ``secret``, bearer tokens or ``?key=`` query values (ERR-07)."""
    if secret:
        text = text.replace(secret, REDACTED)
    return _QUERY_KEY.sub(rf"\1{REDACTED}", _BEARER.sub(rf"\1{REDACTED}", text))


def redact_error(error: BaseException, secret: str) -> None:
    """Scrub a HelixError's message in place, so neither ``message`` nor ``str(error)`` leaks (ERR-07)."""
    if isinstance(error, HelixError):
        error.message = redact(error.message, secret)
        error.args = (error.message,)


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """One verified TLS context for every client: building one costs ~60 ms, a client per step costs ~0."""
    return httpx.create_ssl_context()


# --- abort and stall ------------------------------------------------------------------------------


BACKSTOP_READ_TIMEOUTS = 2.0
"""The guard's idle timer fires this many read timeouts after the last data: the client's own read timeout
(httpx's, on the same clock) ends a stall first, with the exception the adapter maps (ERR-04, ERR-05, NT-04);
the guard ends what no read of the client's covers."""


class StreamGuard:
    """Runs a request as a task and races it against the abort signal and an idle timeout.

    The work never outlives ``run``: on abort, stall or our own cancellation the task is cancelled and
    awaited (its ``finally`` closes the response) before ``run`` returns or raises (AB-02, HARN-04, NT-03).
    The work calls ``touch()`` whenever data arrives; ``aborted`` lets it stay silent once the signal fired.
    """

    def __init__(self, signal: AbortSignal | None, idle_timeout: float | None) -> None:
        """``idle_timeout``: the client's read timeout, which the guard backs up (``BACKSTOP_READ_TIMEOUTS``);
        None: no idle timer at all."""
        self._signal = signal
        self._idle_timeout = None if idle_timeout is None else idle_timeout * BACKSTOP_READ_TIMEOUTS
        self._clock = asyncio.get_running_loop().time  # asyncio's own timeouts keep this clock too
        self._last_activity = self._clock()

    @property
    def aborted(self) -> bool:
        return self._signal is not None and self._signal.aborted

    @property
    def abort_reason(self) -> Any:
        return self._signal.reason if self._signal is not None else None

    def touch(self) -> None:
        """Record progress: restarts the idle timer."""
        self._last_activity = self._clock()

    async def run(self, work: Coroutine[Any, Any, T], *, idle: bool = True) -> T:
        """Return ``work``'s result; raise StreamAborted / StreamStalled instead if those come first."""
        task = asyncio.ensure_future(work)
        waiter = asyncio.ensure_future(self._signal.wait()) if self._signal is not None else None
        watched = {task} if waiter is None else {task, waiter}
        self.touch()
        try:
            while True:
                if self.aborted:  # checked first: an abort wins even over a result finished meanwhile
                    raise StreamAborted
                if task.done():
                    break
                limit = self._idle_timeout if idle else None
                remaining = None if limit is None else self._last_activity + limit - self._clock()
                if remaining is not None and remaining <= 0:
                    raise StreamStalled(f"no data received for {limit:g} s")
                await asyncio.wait(watched, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            if task.cancelled():  # cancelled by someone else (e.g. a callback raising CancelledError)
                raise RuntimeError("the request task was cancelled")
            return task.result()
        finally:
            await _settle(task)
            if waiter is not None:
                await _settle(waiter)


class StreamDecoder(Protocol[E]):
    """Turns a body's chunks into events however they are split (STR-10): ``SSEDecoder``, or an event-stream
    decoder for binary framing."""

    def feed(self, chunk: bytes) -> list[E]: ...

    def close(self) -> list[E]: ...


class EventParser(Protocol[E]):
    """One provider's stream accumulator, as ``exchange`` drives it."""

    async def feed(self, events: list[E]) -> bool:
        """Apply events in order; True when reading can stop (the terminal event, or an error)."""

    async def result(self) -> StepResult:
        """The StepResult of the finished stream; raises HelixError when the stream is not a valid one."""


StatusError = Callable[[httpx.Response], Awaitable[HelixError | tuple[HelixError, httpx.Headers]]]
"""Turns an HTTP error response into its HelixError, optionally with the retry hints to honour (CFG-05)."""


async def exchange(
    client: httpx.AsyncClient,
    request: httpx.Request,
    guard: StreamGuard,
    provider: str,
    *,
    status_error: StatusError,
    parser: EventParser[T],
    decoder: StreamDecoder[T],
    media_type: str = "text/event-stream",
) -> StepResult | RetryableFailure:
    """One streamed HTTP exchange, the same for every provider. Runs inside ``guard.run`` (via
    ``run_attempts``), so an abort cancels it wherever it waits."""
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:  # ERR-05: connect errors and timeouts before any byte: retryable
        return retry_or_fail(error_for_transport(exc, provider))
    try:
        if response.status_code >= 400:  # ERR-01, ERR-02
            failure = await status_error(response)
            error, hints = failure if isinstance(failure, tuple) else (failure, response.headers)
            return retry_or_fail(error, hints)
        await require_event_stream(response, provider, media_type)  # ERR-05: HTML, JSON, text/plain bodies
        chunks = response.aiter_bytes()
        async for chunk in chunks:  # STR-02: fed as it arrives; STR-10: the decoder copes with any chunking
            guard.touch()
            if await parser.feed(decoder.feed(chunk)) or guard.aborted:
                break
        else:
            await parser.feed(decoder.close())  # a last event without its trailing blank line
        if not guard.aborted:  # AB-02: after an abort nothing more is read
            await drain(chunks)
        return await parser.result()
    except HelixError as error:
        return ErrorStepResult(error=error)
    except httpx.HTTPError as exc:  # ERR-04: dropped mid-stream; not retried, output may have streamed
        return ErrorStepResult(error=error_for_transport(exc, provider))
    finally:
        await response.aclose()  # AB-02: also runs when the guard cancels this task


async def drain(chunks: AsyncIterator[bytes], limit: float = 0.05) -> None:
    """Read what is left of a body we stopped using (after ``[DONE]`` or an error), for at most ``limit`` s.

    The official SDK does the same after ``[DONE]``. Ending httpx's chain of async generators here, by
    exhaustion or by the timeout's cancellation, leaves no finalizer tasks pending after the step (HARN-04);
    a server that keeps the stream open costs ``limit``, never a hang. Nothing read here is used.
    """

    async def consume() -> None:
        async for _ in chunks:
            pass

    try:
        await asyncio.wait_for(consume(), limit)
    except Exception:  # a timeout or a transport error: either way the body is done with
        return


async def _settle(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` if still running and wait for it; never swallows our own cancellation."""
    if not task.done():
        task.cancel()
        await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # mark retrieved: no "exception was never retrieved" warnings


class SafeCallbacks:
    """The caller's callbacks, invoked safely: awaited (STR-08), errors logged (STR-11), silent after abort.

    Adapters call these as data arrives (STR-02). Once the guard's signal has fired nothing is called any
    more (AB-02), except ``error``: the abort itself is returned as an ErrorStepResult (STR-06).
    """

    def __init__(self, callbacks: LLMStreamCallbacks | None, guard: StreamGuard) -> None:
        self._callbacks = callbacks or LLMStreamCallbacks()
        self._guard = guard

    async def text(self, delta: str) -> None:
        await self._call(self._callbacks.on_text_delta, delta)

    async def thinking(self, delta: str, is_complete: bool) -> None:
        await self._call(self._callbacks.on_thinking, delta, is_complete)

    async def tool_call(self, call: ParsedToolCall) -> None:
        await self._call(self._callbacks.on_tool_call, call)

    async def error(self, error: Exception) -> None:
        await self._call(self._callbacks.on_error, error, after_abort=True)

    async def _call(self, callback: Callable[..., Any] | None, *args: Any, after_abort: bool = False) -> None:
        if callback is None or (self._guard.aborted and not after_abort):
            return
        try:
            await invoke_callback(callback, *args)  # sync or async; a coroutine is awaited before we go on
        except Exception:  # STR-11: a broken callback must not break the step
            logger.warning("stream callback %r raised; ignored", callback, exc_info=True)


# --- tool calls -----------------------------------------------------------------------------------


Generate = Callable[[LLMGenerateInput, StreamGuard, SafeCallbacks], Awaitable[StepResult]]
"""An adapter's own step: everything from the abort check to the parsed result, possibly raising."""


async def step(
    input: LLMGenerateInput, generate: Generate, *, provider: str, api_key: str, idle_timeout: float
) -> StepResult:
    """Run ``generate`` as a contract step: one StepResult, never an Exception (NT-01); cancellation
    propagates (NT-03), every error is redacted (ERR-07) and reported once through ``on_error`` (STR-06)."""
    guard = StreamGuard(input.abort_signal, idle_timeout=idle_timeout)
    emit = SafeCallbacks(input.callbacks, guard)
    try:
        result = await generate(input, guard, emit)
    except Exception as exc:  # asyncio.CancelledError is a BaseException: not caught
        message = f"{provider}: unexpected {type(exc).__name__}: {exc}"
        result = ErrorStepResult(error=HelixError(message, code=PROVIDER_ERROR, cause=exc))
    if isinstance(result, ErrorStepResult):
        redact_error(result.error, api_key)  # every error passes through here
        await emit.error(result.error)  # once, and only for an error result
    return result  # STR-07: the request task is finished, no callback can follow


@dataclass
class ToolCallBuffer:
    """A tool call being assembled from streamed pieces: its id, its name and its argument fragments."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def parse_tool_calls(buffers: list[ToolCallBuffer], provider: str) -> list[ParsedToolCall]:
    """Completed buffers as ParsedToolCalls, in order (RES-06); HelixError(provider_error) if unusable."""
    calls: list[ParsedToolCall] = []
    for position, buffer in enumerate(buffers):
        if not buffer.name:
            raise HelixError(f"{provider}: a tool call has no name", code=PROVIDER_ERROR)
        call_id = buffer.id  # RES-03: the provider's id; a generated one if it is missing, empty or repeated
        if not call_id or any(call.id == call_id for call in calls):
            call_id = f"call_{position}_{uuid.uuid4().hex[:8]}"
        arguments = _parse_arguments("".join(buffer.arguments), f"{provider}: tool call {buffer.name!r}")
        calls.append(ParsedToolCall(id=call_id, name=buffer.name, arguments=arguments))
    return calls


def _parse_arguments(raw: str, what: str) -> dict[str, Any]:
    if not raw.strip():
        return {}  # RES-05: absent or empty arguments are {}
    try:
        value = json.loads(raw)
    except ValueError as exc:  # FIN-03: also for __finish__, an error result rather than an exception
        raise HelixError(f"{what}: arguments are not valid JSON", code=PROVIDER_ERROR, cause=exc) from exc
    if not isinstance(value, dict):  # RES-04: a JSON object, never a string
        raise HelixError(f"{what}: arguments are not a JSON object", code=PROVIDER_ERROR)
    return value
