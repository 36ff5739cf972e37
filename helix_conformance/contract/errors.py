"""HelixError and the error codes adapters return inside an ErrorStepResult (ERR clauses)."""

from __future__ import annotations

from typing import Final

PROVIDER_AUTH_ERROR: Final = "provider_auth_error"
PROVIDER_RATE_LIMITED: Final = "provider_rate_limited"
PROVIDER_TIMEOUT: Final = "provider_timeout"
PROVIDER_INVALID_REQUEST: Final = "provider_invalid_request"
PROVIDER_OVERLOADED: Final = "provider_overloaded"
PROVIDER_ERROR: Final = "provider_error"
REQUEST_ABORTED: Final = "request_aborted"

ERROR_CODES: Final = (
    PROVIDER_AUTH_ERROR,
    PROVIDER_RATE_LIMITED,
    PROVIDER_TIMEOUT,
    PROVIDER_INVALID_REQUEST,
    PROVIDER_OVERLOADED,
    PROVIDER_ERROR,
    REQUEST_ABORTED,
)


class HelixError(Exception):
    """A classified failure: ``code`` says what happened, ``category`` is the code's prefix before '_'."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        retryable: bool = False,
        status_code: int | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.retryable = retryable
        self.status_code = status_code
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause

    @property
    def category(self) -> str:
        return self.code.split("_", 1)[0]

    def __repr__(self) -> str:
        return (
            f"HelixError(code={self.code!r}, status_code={self.status_code!r}, "
            f"retryable={self.retryable!r}, message={self.message!r})"
        )
