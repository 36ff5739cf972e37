"""Broken adapters that mishandle failures, retries, aborts and their own tasks: ERR, CFG-03, NT, AB, HARN."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx

from helix_conformance.contract import (
    PROVIDER_AUTH_ERROR,
    PROVIDER_ERROR,
    REQUEST_ABORTED,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    StepResult,
    TextStepResult,
)
from reference_adapters._http import (
    RetryableFailure,
    SafeCallbacks,
    StreamAborted,
    StreamGuard,
    aborted_error,
    error_for_stream_event,
)
from reference_adapters._sse import SSEEvent
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken

T = TypeVar("T")
USAGE_REPORT_DELAY_S = 0.5

# --- ERR: classification of failures --------------------------------------------------------------------------


class OverloadedOnlyFor503(OpenAIChatAdapter):
    async def _status_error(self, response: httpx.Response) -> HelixError:
        error = await super()._status_error(response)
        if response.status_code == 529:
            error.code = PROVIDER_ERROR  # Bug: the table was written before 529 (Anthropic, proxies) existed
        return error


class ErrorWithoutStatusCode(OpenAIChatAdapter):
    async def _status_error(self, response: httpx.Response) -> HelixError:
        error = await super()._status_error(response)
        # Bug: re-raised as a "clean" HelixError: the HTTP status and the cause are lost on the way.
        return HelixError(error.message, code=error.code, retryable=error.retryable)


class _IgnoresErrorEventsStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        data = event.data.strip()
        if data.startswith("{") and "error" in json.loads(data):
            return False  # Bug: a chunk without `choices` is skipped, error chunks included
        return await super()._event(event)


class IgnoresStreamErrorEvents(HookedAdapter):
    stream_class = _IgnoresErrorEventsStream


class _ErrorTypeOnlyStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        data = event.data.strip()
        payload = json.loads(data) if data.startswith("{") else None
        if isinstance(payload, dict) and payload.get("error") is not None:
            # Bug: classified by `type` alone; OpenRouter's numeric `code` (an HTTP status) is ignored.
            raise error_for_stream_event(payload, "openai")
        return await super()._event(event)


class StreamErrorsByTypeOnly(HookedAdapter):
    stream_class = _ErrorTypeOnlyStream


class AuthErrorsAsText(OpenAIChatAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ErrorStepResult) and result.error.code == PROVIDER_AUTH_ERROR:
            # Bug: "the user should see this", so a rejected key becomes the assistant's answer.
            return TextStepResult(
                content="Please check your API key.", should_stop=True, stop_reason="end_turn"
            )
        return result


class _PartialTextStream(HookedChatStream):
    def on_incomplete(self) -> None:
        self._finish_reason = "stop"  # Bug: no [DONE]? "the model must have finished": return what we have


class PartialTextOnDroppedStream(HookedAdapter):
    stream_class = _PartialTextStream

    async def midstream_failure(self, stream: HookedChatStream, exc: httpx.HTTPError) -> StepResult:
        return await stream.result()  # Bug: a dropped connection returns the partial text as a success


class TimeoutsAsConnectionErrors(HookedAdapter):
    def transport_error(self, exc: Exception) -> HelixError:
        if isinstance(exc, httpx.TransportError):  # Bug: tested first, but ConnectTimeout/ReadTimeout are
            return HelixError(
                f"openai: connection failed: {exc}", code=PROVIDER_ERROR, retryable=True, cause=exc
            )
        return super().transport_error(exc)  # TransportErrors too, so no timeout is ever provider_timeout


class RetryableErrorsKeepGoing(OpenAIChatAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ErrorStepResult) and getattr(result.error, "retryable", False):
            return result.model_copy(update={"should_stop": False})  # Bug: "the agent may try again"
        return result


class ReconnectsAfterConnectError(OpenAIChatAdapter):
    """LiteLLM 1.106's HTTP handler (litellm/llms/custom_httpx/http_handler.py:851) sends the request again
    with a new client after httpx.ConnectError, whatever max_retries says: a refused connection is retried."""

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        result = await super()._attempt(client, request, guard, emit)
        if isinstance(result, RetryableFailure) and isinstance(result.error.cause, httpx.ConnectError):
            return await super()._attempt(client, request, guard, emit)  # Bug: "connecting is not a request"
        return result


class ApiKeyInErrorMessage(HookedAdapter):
    async def _status_error(self, response: httpx.Response) -> HelixError:
        error = await super()._status_error(response)  # the provider's message, already redacted here...
        error.message += f" (request headers: {dict(response.request.headers)})"  # Bug: ...then this
        error.args = (error.message,)
        return error

    def scrub(self, error: BaseException) -> None:
        pass  # Bug: "_status_error already redacts", so the final pass was removed


class QuotaErrorsRetryable(OpenAIChatAdapter):
    async def _status_error(self, response: httpx.Response) -> HelixError:
        error = await super()._status_error(response)
        if response.status_code == 429:
            error.retryable = True  # Bug: every 429 is a rate limit, insufficient_quota included
        return error


# --- CFG-03: retries --------------------------------------------------------------------------------------------


class RetriesEverything(HookedAdapter):
    def retry_or_fail(
        self, error: HelixError, headers: httpx.Headers | None = None
    ) -> RetryableFailure | StepResult:
        return RetryableFailure(error, headers)  # Bug: a 401 is retried like a 503


class IgnoresMaxRetries(HookedAdapter):
    def max_retries(self, input: LLMGenerateInput) -> int:
        return 0  # Bug: declares the `retries` capability, never retries


# --- NT: never throw, cancellation, stalls ----------------------------------------------------------------------


class _AssertingStream(HookedChatStream):
    def on_incomplete(self) -> None:
        raise AssertionError("stream ended before [DONE]")  # Bug: an assert where an error result belongs


class AssertsStreamComplete(HookedAdapter):
    stream_class = _AssertingStream
    catches = (HelixError, httpx.HTTPError, ValueError)  # Bug: only "the errors we know about"


class SwallowsCancellation(HookedAdapter):
    catches = (
        BaseException,
    )  # Bug: `except BaseException` (or a bare except) turns CancelledError into a result


class _PollingGuard(StreamGuard):
    async def run(self, work: Coroutine[Any, Any, T], *, idle: bool = True) -> T:
        # Bug: the read is not raced against the signal or an idle timer; the abort is only noticed when
        # the next chunk arrives, and a stalled stream delivers none.
        result = await work
        if self.aborted:
            raise StreamAborted
        return result


class PollsAbortBetweenChunks(HookedAdapter):
    def make_guard(self, input: LLMGenerateInput) -> StreamGuard:
        return _PollingGuard(input.abort_signal, idle_timeout=self._timeout)


# --- AB: abort ---------------------------------------------------------------------------------------------------


class IgnoresAbortSignal(HookedAdapter):
    def make_guard(self, input: LLMGenerateInput) -> StreamGuard:
        return StreamGuard(None, idle_timeout=self._timeout)  # Bug: input.abort_signal is never wired in


class AbortCheckedOnlyBeforeSending(IgnoresAbortSignal):
    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        signal = input.abort_signal
        if signal is not None and signal.aborted:  # checked once, up front; never while streaming
            return ErrorStepResult(error=aborted_error(signal.reason))
        return await super()._generate(input, guard, emit)


class AbortErrorRetryable(OpenAIChatAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ErrorStepResult) and getattr(result.error, "code", None) == REQUEST_ABORTED:
            result.error.retryable = True  # type: ignore[attr-defined]  # Bug: "it did not fail: try again"
        return result


# --- HARN: the run itself ----------------------------------------------------------------------------------------


class ProbesModelsEndpoint(HookedAdapter):
    async def before_request(self, client: httpx.AsyncClient, input: LLMGenerateInput) -> None:
        # Bug: an unrecorded warm-up request, failures ignored ("best effort").
        with contextlib.suppress(httpx.HTTPError):
            await client.get(self._url.replace("/chat/completions", f"/models/{input.config.model}"))


class LeavesUsageTaskPending(OpenAIChatAdapter):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._background: set[asyncio.Task[None]] = set()

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        task = asyncio.create_task(self._report_usage())  # Bug: still running after the step returned
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return result

    async def _report_usage(self) -> None:
        await asyncio.sleep(USAGE_REPORT_DELAY_S)


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "overloaded_only_for_503",
        OverloadedOnlyFor503,
        "ERR-01",
        ["http_529"],
        "Maps HTTP 529 to provider_error instead of provider_overloaded.",
    ),
    broken(
        "error_without_status_code",
        ErrorWithoutStatusCode,
        "ERR-02",
        ["http_401", "http_500", "http_529"],
        "Builds the HelixError without status_code and cause.",
    ),
    broken(
        "ignores_stream_error_events",
        IgnoresStreamErrorEvents,
        "ERR-03",
        ["midstream_rate_limit", "midstream_overloaded"],
        "Skips error chunks inside a 200 stream (they have no `choices`).",
    ),
    broken(
        "stream_errors_by_type_only",
        StreamErrorsByTypeOnly,
        "ERR-03",
        ["compat_error_after_finish"],
        "Classifies an in-stream error by its `type` only: OpenRouter's `code` 400 becomes provider_error.",
    ),
    broken(
        "partial_text_on_dropped_stream",
        PartialTextOnDroppedStream,
        "ERR-04",
        ["connection_reset", "truncated_stream", "read_timeout_midstream"],
        "Returns the text received so far as a success when the stream drops or ends early.",
    ),
    broken(
        "timeouts_as_connection_errors",
        TimeoutsAsConnectionErrors,
        "ERR-05",
        ["connect_timeout", "read_timeout"],
        "Tests isinstance(TransportError) first, so timeouts become provider_error.",
    ),
    broken(
        "retryable_errors_keep_going",
        RetryableErrorsKeepGoing,
        "ERR-06",
        ["http_429", "http_500", "connect_error"],
        "Returns retryable errors with should_stop=False.",
    ),
    broken(
        "reconnects_after_connect_error",
        ReconnectsAfterConnectError,
        "HARN-01",
        ["connect_error"],
        "Tries a refused connection once more whatever max_retries says (LiteLLM's reconnect).",
    ),
    broken(
        "auth_errors_as_text",
        AuthErrorsAsText,
        "ERR-06",
        ["no_retry_401"],
        "Answers a rejected key with a text result; no other clause judges that scenario's outcome.",
    ),
    broken(
        "api_key_in_error_message",
        ApiKeyInErrorMessage,
        "ERR-07",
        ["http_401", "http_500"],
        "Appends the request headers (Authorization included) to HTTP error messages.",
    ),
    broken(
        "quota_errors_retryable",
        QuotaErrorsRetryable,
        "ERR-08",
        ["http_429_insufficient_quota"],
        "Treats 429 insufficient_quota as a retryable rate limit (a SHOULD clause: reported as failed).",
    ),
    broken(
        "retries_everything",
        RetriesEverything,
        "CFG-03",
        ["no_retry_401"],
        "Retries non-retryable errors such as 401 (HARN-01 fails too: the retry matches no recording).",
    ),
    broken(
        "ignores_max_retries",
        IgnoresMaxRetries,
        "CFG-03",
        ["retry_429_then_success", "retry_exhausted"],
        "Never retries although it declares the `retries` capability.",
    ),
    broken(
        "asserts_stream_complete",
        AssertsStreamComplete,
        "NT-02",
        ["text_basic", "tool_call"],
        "`assert` that the stream reached [DONE]; AssertionError is not among the errors it converts.",
    ),
    broken(
        "swallows_cancellation",
        SwallowsCancellation,
        "NT-03",
        ["text_basic", "tool_call_parallel"],
        "`except BaseException` turns the task's CancelledError into an ErrorStepResult.",
    ),
    broken(
        "polls_abort_between_chunks",
        PollsAbortBetweenChunks,
        "AB-02",
        ["stall_midstream"],
        "Checks the abort signal only when a chunk arrives and has no idle timeout: a stall ends only when "
        "the read times out, not at the abort.",
    ),
    broken(
        "ignores_abort_signal",
        IgnoresAbortSignal,
        "AB-01",
        ["abort_before"],
        "Never looks at input.abort_signal: an already-aborted step still sends its request.",
    ),
    broken(
        "abort_checked_only_before_sending",
        AbortCheckedOnlyBeforeSending,
        "AB-02",
        ["abort_midstream"],
        "Checks the signal once before sending; an abort while streaming is ignored.",
    ),
    broken(
        "abort_error_retryable",
        AbortErrorRetryable,
        "AB-03",
        ["abort_before", "abort_midstream"],
        "Reports request_aborted with retryable=True.",
    ),
    broken(
        "probes_models_endpoint",
        ProbesModelsEndpoint,
        "HARN-01",
        ["text_basic"],
        "Sends an unrecorded GET /models/{model} before each step and ignores its failure.",
    ),
    broken(
        "leaves_usage_task_pending",
        LeavesUsageTaskPending,
        "HARN-04",
        ["text_basic"],
        "Starts a background usage-report task that is still pending when the step returns (SHOULD).",
    ),
]
