"""Failures as the contract's HelixErrors: HTTP statuses (ERR-01/02), error events in a 200 stream (ERR-03),
aiohttp's exceptions below HTTP (ERR-04/05), an abort (AB-03); and keys kept out of every message (ERR-07)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp

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

from ._request import PROVIDER

RETRYABLE = frozenset({PROVIDER_RATE_LIMITED, PROVIDER_OVERLOADED, PROVIDER_TIMEOUT, PROVIDER_ERROR})


class ProviderSaid(Exception):
    """The provider's own words about a failure: the ``cause`` of the HelixError made from them."""


def for_status(status: int) -> tuple[str, bool]:
    """(code, retryable) of an HTTP error status."""
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
    return PROVIDER_INVALID_REQUEST, False


def describe(body: Any, limit: int = 500) -> tuple[str, str]:
    """(message, kind) of an error body, JSON or not; ``kind`` joins its type, code and status."""
    if isinstance(body, (bytes, str)):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            body = json.loads(text)
        except ValueError:
            return " ".join(text.split())[:limit] or "(empty body)", ""
    if isinstance(body, dict) and body.get("error") is not None:
        body = body["error"]
    if isinstance(body, dict):
        message = body.get("message") or body.get("detail") or json.dumps(body)[:limit]
        kind = " ".join(str(body[key]) for key in ("type", "code", "status") if body.get(key) is not None)
        return str(message)[:limit], kind
    return str(body)[:limit], ""


def for_http(status: int, body: bytes, api_key: str) -> HelixError:
    message, kind = describe(body)
    code, retryable = for_status(status)
    retryable = retryable and not (status == 429 and "insufficient_quota" in kind)  # ERR-08: a quota is final
    text = f"{PROVIDER}: HTTP {status}: {redact(message, api_key)}"
    return HelixError(text, code=code, retryable=retryable, status_code=status, cause=ProviderSaid(text))


def for_event(payload: dict[str, Any]) -> HelixError:
    """An error event inside the stream. OpenAI's names its ``type``; OpenRouter's carries only a numeric
    ``code``, which its docs define as the HTTP status it stands for."""
    message, kind = describe(payload)
    error = payload.get("error")
    status = error.get("code") if isinstance(error, dict) and not error.get("type") else None
    if isinstance(status, int) and not isinstance(status, bool) and 400 <= status <= 599:
        code, retryable = for_status(status)
    elif "rate_limit" in kind.lower():
        code, retryable = PROVIDER_RATE_LIMITED, True
    elif "overloaded" in kind.lower():
        code, retryable = PROVIDER_OVERLOADED, True
    else:
        code, retryable = PROVIDER_ERROR, True
    return HelixError(
        f"{PROVIDER}: stream error: {message}", code=code, retryable=retryable, cause=ProviderSaid(message)
    )


def for_transport(exc: BaseException) -> HelixError:
    """A failure below HTTP: a timeout, a refused or dropped connection."""
    detail = f"{PROVIDER}: {type(exc).__name__}: {exc}".rstrip(": ")
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return HelixError(f"request timed out ({detail})", code=PROVIDER_TIMEOUT, retryable=True, cause=exc)
    return HelixError(f"connection failed ({detail})", code=PROVIDER_ERROR, retryable=True, cause=exc)


def aborted(reason: Any) -> HelixError:
    suffix = f": {reason}" if reason not in (None, "") else ""
    return HelixError(f"request aborted{suffix}", code=REQUEST_ABORTED, retryable=False)


_BEARER = re.compile(r"(Bearer\s+)[^\s\"',]+", re.IGNORECASE)


def redact(text: str, api_key: str) -> str:
    if api_key:
        text = text.replace(api_key, "[REDACTED]")
    return _BEARER.sub(r"\1[REDACTED]", text)
