"""The openai SDK's exceptions, and the Responses API's in-stream failures, as HelixErrors (ERR-01..05, 07, 08).

The SDK raises; the contract wants every failure returned as an ``ErrorStepResult`` carrying a HelixError with
the right code, ``status_code``, ``retryable`` flag and the SDK exception on ``cause``. This module is the one
place that knows the SDK's exception classes.
"""

from __future__ import annotations

import re

import openai

from helix_conformance.contract import (
    PROVIDER_AUTH_ERROR,
    PROVIDER_ERROR,
    PROVIDER_INVALID_REQUEST,
    PROVIDER_OVERLOADED,
    PROVIDER_RATE_LIMITED,
    PROVIDER_TIMEOUT,
    REQUEST_ABORTED,
    HelixError,
)

_STREAM_CODES: dict[str, tuple[str, bool]] = {  # the codes of `error` events and `response.failed`
    "rate_limit_exceeded": (PROVIDER_RATE_LIMITED, True),
    "insufficient_quota": (PROVIDER_RATE_LIMITED, False),  # ERR-08: quota, not rate
    "server_is_overloaded": (PROVIDER_OVERLOADED, True),
    "slow_down": (PROVIDER_OVERLOADED, True),
    "server_error": (PROVIDER_ERROR, True),
}
_BEARER = re.compile(r"(Bearer\s+)[^\s\"',]+", re.IGNORECASE)


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
    return PROVIDER_INVALID_REQUEST  # 400, 404, 413, 422 and every other 4xx


def from_sdk(exc: Exception, api_key: str) -> HelixError:
    """The HelixError for anything the SDK (or our parsing of its stream) raised; never raises itself."""
    if isinstance(exc, HelixError):
        return exc
    if isinstance(exc, openai.APIStatusError):  # ERR-01, ERR-02: 4xx/5xx before the stream started
        status = exc.status_code
        code = code_for_status(status)
        quota = status == 429 and "insufficient_quota" in f"{exc.code} {exc.type}"  # ERR-08: quota, not rate
        retryable = (status in (408, 429) or status >= 500) and not quota
        return _error(f"HTTP {status}: {exc.message}", api_key, code, retryable, status, exc)
    if isinstance(exc, openai.APITimeoutError):  # ERR-05 (a subclass of APIConnectionError: tested first)
        return _error(f"request timed out: {exc}", api_key, PROVIDER_TIMEOUT, True, None, exc)
    if isinstance(exc, openai.APIConnectionError):  # ERR-04, ERR-05: refused, reset, dropped mid-stream
        return _error(
            f"connection failed: {exc} ({exc.__cause__!r})", api_key, PROVIDER_ERROR, True, None, exc
        )
    if isinstance(exc, openai.APIError):  # ERR-03: an `error` event inside a 200 stream (the SDK raises it)
        return stream_error(str(exc.code or exc.type or ""), exc.message, api_key, exc)
    # ERR-05: invalid JSON in the stream, unexpected shapes: the body is not the provider's format
    return _error(f"unexpected {type(exc).__name__}: {exc}", api_key, PROVIDER_ERROR, False, None, exc)


def stream_error(kind: str, message: str, api_key: str, cause: Exception | None = None) -> HelixError:
    """An in-stream failure (``error`` event or ``response.failed``) coded by its ``code`` (ERR-03, ERR-08)."""
    code, retryable = _STREAM_CODES.get(kind, (PROVIDER_ERROR, False))
    return _error(f"stream error: {kind}: {message}", api_key, code, retryable, None, cause)


def aborted(reason: object) -> HelixError:
    """The terminal error of an aborted step: its own code, never retried (AB-03)."""
    return HelixError(f"request aborted: {reason}", code=REQUEST_ABORTED, retryable=False)


def _error(
    message: str, api_key: str, code: str, retryable: bool, status: int | None, cause: Exception | None
) -> HelixError:
    """A HelixError whose message cannot leak the API key, echoed back in some error bodies (ERR-07)."""
    text = _BEARER.sub(r"\1[REDACTED]", f"openai: {message}")
    if api_key:
        text = text.replace(api_key, "[REDACTED]")
    return HelixError(text, code=code, retryable=retryable, status_code=status, cause=cause)
