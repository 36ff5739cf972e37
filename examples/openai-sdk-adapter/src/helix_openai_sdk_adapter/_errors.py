"""The openai SDK's exceptions as HelixErrors (CONTRACT ERR-01..05, ERR-07, ERR-08).

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

_RETRYABLE = frozenset({PROVIDER_RATE_LIMITED, PROVIDER_OVERLOADED, PROVIDER_TIMEOUT, PROVIDER_ERROR})
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
    if isinstance(exc, openai.APIError):  # ERR-03: an error chunk inside a 200 stream
        # OpenRouter: no type, and a numeric code that is an HTTP status (the SDK's `.code` makes it a str)
        status = exc.body.get("code") if isinstance(exc.body, dict) else None
        if isinstance(status, int) and not exc.type and 400 <= status <= 599:
            code = code_for_status(status)
            retryable = status in (408, 429) or status >= 500
            return _error(f"stream error: {exc.message}", api_key, code, retryable, None, exc)
        kind = f"{exc.type} {exc.code}".lower()
        code = (
            PROVIDER_RATE_LIMITED
            if "rate_limit" in kind
            else PROVIDER_OVERLOADED
            if "overloaded" in kind
            else PROVIDER_ERROR
        )
        return _error(f"stream error: {exc.message}", api_key, code, code in _RETRYABLE, None, exc)
    transport = _transport_code(exc)
    if transport is not None:  # ERR-04, ERR-05 under openai 2.x: a reset or read timeout while streaming
        return _error(f"connection failed: {type(exc).__name__}: {exc}", api_key, transport, True, None, exc)
    # ERR-05: invalid JSON in the stream, unexpected shapes: the body is not the provider's format
    return _error(f"unexpected {type(exc).__name__}: {exc}", api_key, PROVIDER_ERROR, False, None, exc)


def _transport_code(exc: Exception) -> str | None:
    """The code of an HTTP client's own transport error, or None. openai 3.x wraps an error raised while the
    stream is read as APITimeoutError/APIConnectionError (``openai/_streaming.py``); openai 2.x lets httpx's
    ``ReadTimeout``/``ReadError``/``RemoteProtocolError`` through as they are. httpx (2.x) and httpx2 (3.x)
    have the same exception tree, so both are read by name."""
    for cls in type(exc).__mro__:
        if cls.__module__.split(".")[0] in ("httpx", "httpx2"):
            if cls.__name__ == "TimeoutException":
                return PROVIDER_TIMEOUT
            if cls.__name__ == "TransportError":
                return PROVIDER_ERROR
    return None


def aborted(reason: object) -> HelixError:
    """The terminal error of an aborted step: its own code, never retried (AB-03)."""
    return HelixError(f"request aborted: {reason}", code=REQUEST_ABORTED, retryable=False)


def _error(
    message: str, api_key: str, code: str, retryable: bool, status: int | None, cause: Exception
) -> HelixError:
    """A HelixError whose message cannot leak the API key, echoed back in some error bodies (ERR-07)."""
    text = _BEARER.sub(r"\1[REDACTED]", f"openai: {message}")
    if api_key:
        text = text.replace(api_key, "[REDACTED]")
    return HelixError(text, code=code, retryable=retryable, status_code=status, cause=cause)
