"""Failures as the contract's HelixErrors: botocore's ClientError by HTTP status (ERR-01/02), exception events
in the 200 stream (ERR-03), botocore's and urllib3's exceptions below HTTP (ERR-04/05), keys kept out (ERR-07)."""

from __future__ import annotations

from typing import Any

import urllib3.exceptions
from botocore import eventstream
from botocore import exceptions as boto

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

STREAM_ERRORS: dict[str, tuple[str, bool]] = {  # ERR-03: ConverseStreamOutput's exception events
    "throttlingException": (PROVIDER_RATE_LIMITED, True),
    "serviceUnavailableException": (PROVIDER_OVERLOADED, True),
    "internalServerException": (PROVIDER_ERROR, True),
    "modelStreamErrorException": (PROVIDER_ERROR, True),  # "A streaming error occurred. Retry your request."
    "validationException": (PROVIDER_INVALID_REQUEST, False),
}
TIMEOUTS = (boto.ConnectTimeoutError, boto.ReadTimeoutError, urllib3.exceptions.TimeoutError, TimeoutError)
BELOW_HTTP = (
    boto.HTTPClientError,
    boto.ConnectionError,  # EndpointConnectionError: the connection was refused
    urllib3.exceptions.HTTPError,
    eventstream.ParserError,
    OSError,
)


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


def for_client_error(exc: boto.ClientError, secret: str) -> HelixError:
    """A modelled error: an HTTP status before the stream, or an exception event inside it (EventStreamError)."""
    error: dict[str, Any] = exc.response.get("Error", {})
    kind, said = str(error.get("Code", "")), redact(str(error.get("Message", "")), secret)
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if isinstance(exc, boto.EventStreamError):
        code, retryable = STREAM_ERRORS.get(kind, (PROVIDER_ERROR, True))
        message = f"bedrock: stream error {kind}: {said}"
        return HelixError(message, code=code, retryable=retryable, cause=ProviderSaid(message))
    code, retryable = for_status(status) if isinstance(status, int) else (PROVIDER_ERROR, False)
    message = f"bedrock: HTTP {status} {kind}: {said}"
    return HelixError(
        message, code=code, retryable=retryable, status_code=status, cause=ProviderSaid(message)
    )


def for_exception(exc: BaseException, secret: str) -> HelixError:
    """Anything boto3, urllib3 or the event-stream parser raised below HTTP, or a bug of ours (not retryable)."""
    detail = redact(f"{type(exc).__name__}: {exc}", secret)
    if isinstance(exc, boto.ClientError):
        return for_client_error(exc, secret)
    if isinstance(exc, boto.ParamValidationError):  # boto3 refused the request before sending it
        return HelixError(f"bedrock: invalid request: {detail}", code=PROVIDER_INVALID_REQUEST, cause=exc)
    if isinstance(exc, TIMEOUTS):
        return HelixError(
            f"bedrock: request timed out ({detail})", code=PROVIDER_TIMEOUT, retryable=True, cause=exc
        )
    if isinstance(exc, eventstream.ParserError):  # a CRC or length check failed: the bytes cannot be trusted
        return HelixError(f"bedrock: corrupt event stream ({detail})", code=PROVIDER_ERROR, cause=exc)
    if isinstance(exc, BELOW_HTTP):  # refused, reset, cut short
        return HelixError(
            f"bedrock: connection failed ({detail})", code=PROVIDER_ERROR, retryable=True, cause=exc
        )
    return HelixError(f"bedrock: unexpected {detail}", code=PROVIDER_ERROR, cause=exc)


def aborted(reason: object) -> HelixError:
    """AB-03: the abort as a terminal, non-retryable error."""
    suffix = f": {reason}" if reason not in (None, "") else ""
    return HelixError(f"bedrock: request aborted{suffix}", code=REQUEST_ABORTED, retryable=False)


def redact(text: str, secret: str) -> str:
    """ERR-07: the secret key never appears in an error message."""
    return text.replace(secret, "[redacted]") if secret else text
