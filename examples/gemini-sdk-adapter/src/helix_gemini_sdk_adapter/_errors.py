"""The google-genai SDK's exceptions as HelixErrors (CONTRACT ERR-01..05, ERR-07).

Traps: an error object inside a 200 stream (``{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}``) is
raised as the same ``ClientError``/``ServerError`` as an HTTP error, with the body's code as ``code``; only its
``response`` tells them apart (the SDK's own stream wrapper, whose ``status_code`` is 200). The SDK wraps no
transport error: httpx's ``ConnectError``/``ReadTimeout`` escape as they are, before and during the stream.
"""

from __future__ import annotations

import re

import httpx
from google.genai import errors

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

_KEY_PARAM = re.compile(r"(key=)[^\s&\"',]+", re.IGNORECASE)


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


def http_status(exc: errors.APIError) -> int | None:
    """The HTTP status of an error response; None for an error object inside a 200 stream."""
    status = getattr(exc.response, "status_code", None)
    return status if isinstance(status, int) and status >= 400 else None


def from_sdk(exc: Exception, api_key: str) -> HelixError:
    """The HelixError for anything the SDK (or our parsing of its stream) raised; never raises itself."""
    if isinstance(exc, HelixError):
        return exc
    if isinstance(exc, errors.APIError):
        status = http_status(exc)
        if status is None:  # ERR-03: coded by the error's gRPC status, not by an HTTP status
            return _stream_error(exc, api_key)
        retryable = status in (408, 429) or status >= 500  # ERR-01, ERR-02
        message = f"HTTP {status}: {exc.status or ''} {exc.message or ''}".rstrip()
        return _error(message, api_key, code_for_status(status), retryable, status, exc)
    if isinstance(exc, httpx.TimeoutException):  # ERR-05
        return _error(f"timed out: {type(exc).__name__}: {exc}", api_key, PROVIDER_TIMEOUT, True, None, exc)
    if isinstance(exc, httpx.TransportError):  # ERR-04, ERR-05: refused, reset, dropped mid-stream
        return _error(
            f"connection failed: {type(exc).__name__}: {exc}", api_key, PROVIDER_ERROR, True, None, exc
        )
    # ERR-05: UnknownApiResponseError (not JSON), pydantic ValidationError (not the API's shape), ...
    return _error(f"unexpected {type(exc).__name__}: {exc}", api_key, PROVIDER_ERROR, False, None, exc)


def _stream_error(exc: errors.APIError, api_key: str) -> HelixError:
    status = str(exc.status or "").upper()
    code = exc.code if isinstance(exc.code, int) else None
    if status == "RESOURCE_EXHAUSTED" or code == 429:
        kind = PROVIDER_RATE_LIMITED
    elif status == "UNAVAILABLE" or code == 503:
        kind = PROVIDER_OVERLOADED
    else:
        kind = PROVIDER_ERROR
    client_fault = code is not None and 400 <= code < 500 and code not in (408, 429)
    message = f"stream error: {status or code or 'error'}: {exc.message or ''}".rstrip()
    return _error(message, api_key, kind, not client_fault, None, exc)


def aborted(reason: object) -> HelixError:
    """The terminal error of an aborted step: its own code, never retried (AB-03)."""
    return HelixError(f"request aborted: {reason}", code=REQUEST_ABORTED, retryable=False)


def _error(
    message: str, api_key: str, code: str, retryable: bool, status: int | None, cause: Exception
) -> HelixError:
    """A HelixError whose message cannot leak the API key, echoed back in some error bodies (ERR-07)."""
    text = _KEY_PARAM.sub(r"\1[REDACTED]", f"gemini: {message}")
    if api_key:
        text = text.replace(api_key, "[REDACTED]")
    return HelixError(text, code=code, retryable=retryable, status_code=status, cause=cause)
