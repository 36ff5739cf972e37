"""Broken adapters for the errors and retries the suite did not serve before issue 18: a 529 to retry, a retry
hint of an hour, a 504, a cut-off tool call whose arguments happen to parse (CFG-03, CFG-05, ERR-01, RES-10)."""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from helix_conformance.contract import (
    PROVIDER_TIMEOUT,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    StepResult,
)
from reference_adapters._http import (
    RetryableFailure,
    SafeCallbacks,
    StreamGuard,
    aborted_error,
    tls_context,
)

from ._anthropic_base import HookedAnthropicAdapter, broken_anthropic
from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken
from ._gemini_base import HookedGeminiAdapter, broken_gemini

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""A retry list written from the HTTP standard: Anthropic's 529 is not in it."""

# --- CFG-03: 529 --------------------------------------------------------------------------------------------------


class RetriesWithout529(HookedAnthropicAdapter):
    async def _status_error(self, response: httpx.Response) -> HelixError:
        error = await super()._status_error(response)
        error.retryable = response.status_code in RETRY_STATUSES  # Bug: 529 overloaded is never retried
        return error


# --- CFG-05: a retry hint of an hour -----------------------------------------------------------------------------


def _hint_s(headers: httpx.Headers | None) -> float:
    """The provider's retry hint in seconds, taken at its word."""
    headers = headers or httpx.Headers()
    if headers.get("retry-after-ms"):
        return float(headers["retry-after-ms"]) / 1000
    return float(headers.get("retry-after") or 0.05)


class _OwnRetryLoop(HookedAdapter):
    """The hooked adapter with a retry loop of its own, waiting with ``wait`` (the reference bounds the wait)."""

    wait: Callable[[float], Any]

    async def _generate(self, input: LLMGenerateInput, guard: StreamGuard, emit: SafeCallbacks) -> StepResult:
        if guard.aborted:
            return ErrorStepResult(error=aborted_error(guard.abort_reason))
        body = json.dumps(self.build_body(input), ensure_ascii=False).encode("utf-8")
        client = httpx.AsyncClient(timeout=self._timeout, verify=tls_context())
        async with client:
            request = client.build_request("POST", self._url, content=body, headers=self.build_headers(input))
            attempt = functools.partial(self._attempt, client, request, guard, emit)
            for tries_left in range(input.config.max_retries, -1, -1):
                outcome = await guard.run(attempt())
                if not isinstance(outcome, RetryableFailure):
                    return outcome
                if tries_left == 0:
                    return ErrorStepResult(error=outcome.error)
                pause = self.wait(_hint_s(outcome.headers))  # Bug: as long as the provider asks, unbounded
                if asyncio.iscoroutine(pause):
                    await pause
        raise AssertionError("unreachable")


class WaitsAnyRetryAfter(_OwnRetryLoop):
    wait = staticmethod(asyncio.sleep)


class SleepsThroughRetryAfter(_OwnRetryLoop):
    wait = staticmethod(time.sleep)  # Bug upon bug: a blocking sleep inside the event loop


async def _capped(hint_s: float, cap_s: float) -> None:
    await asyncio.sleep(min(hint_s, cap_s))


class CapsRetryAfterAtFiveMinutes(_OwnRetryLoop):
    """Bounds the hint, but too loosely: CFG-05 allows two minutes between attempts."""

    wait = staticmethod(functools.partial(_capped, cap_s=300.0))  # Bug: a cap over the contract's bound


class CapsRetryAfter(_OwnRetryLoop):
    """Not broken: caps the hint at ``cap_s`` (the foreign adapters' 30 s; the bound itself, 120 s)."""

    cap_s = 30.0

    def wait(self, hint_s: float) -> Any:
        return _capped(hint_s, self.cap_s)


# --- ERR-01: 504 ------------------------------------------------------------------------------------------------


class GatewayTimeoutAsTimeout(HookedGeminiAdapter):
    async def _status_error(self, response: httpx.Response) -> tuple[HelixError, httpx.Headers]:
        error, hints = await super()._status_error(response)
        if response.status_code == 504:
            error.code = PROVIDER_TIMEOUT  # Bug: "Gateway Timeout" / DEADLINE_EXCEEDED read as a read timeout
        return error, hints


# --- RES-10: cut off, yet parseable -------------------------------------------------------------------------------


class _TrustsTheParserStream(HookedChatStream):
    async def result(self) -> StepResult:
        if self._finish_reason == "length" and self._calls:
            try:
                self.parse_calls()
            except HelixError:
                pass  # cut mid-JSON: left a text result
            else:
                self._finish_reason = "tool_calls"  # Bug: "the arguments parse, so the call is complete"
        return await super().result()


class ExecutesCutOffCallsThatParse(HookedAdapter):
    stream_class = _TrustsTheParserStream


ADAPTERS: list[BrokenAdapter] = [
    broken_anthropic(
        "anthropic_retries_without_529",
        RetriesWithout529,
        "CFG-03",
        ["retry_529_then_success"],
        "Retries 408/429/500/502/503/504 only: Anthropic's 529 overloaded_error is surfaced, never retried.",
    ),
    broken(
        "waits_any_retry_after",
        WaitsAnyRetryAfter,
        "CFG-05",
        ["retry_after_too_long"],
        "Sleeps for whatever retry-after asks, an hour included (a SHOULD clause: reported as failed).",
    ),
    broken(
        "sleeps_through_retry_after",
        SleepsThroughRetryAfter,
        "CFG-05",
        ["retry_after_too_long"],
        "time.sleep(retry-after) inside the event loop: the hour blocks the loop (the harness gives the "
        "thread up; it is not hung).",
    ),
    broken(
        "caps_retry_after_at_five_minutes",
        CapsRetryAfterAtFiveMinutes,
        "CFG-05",
        ["retry_after_too_long"],
        "Caps a retry hint at five minutes: bounded, but beyond the contract's two (a SHOULD clause).",
    ),
    broken_gemini(
        "gemini_gateway_timeout_as_timeout",
        GatewayTimeoutAsTimeout,
        "ERR-01",
        ["http_504"],
        "Maps 504 (DEADLINE_EXCEEDED) to provider_timeout; ERR-01 makes it provider_error like any other 5xx.",
    ),
    broken(
        "executes_cut_off_calls_that_parse",
        ExecutesCutOffCallsThatParse,
        "RES-10",
        ["tool_call_cut_off_valid_json"],
        "Returns a call cut off by the token limit whenever its arguments happen to parse (SHOULD).",
    ),
]
