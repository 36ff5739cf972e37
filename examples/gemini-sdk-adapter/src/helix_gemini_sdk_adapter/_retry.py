"""How long to wait before retrying, as the provider asked (CFG-05).

The SDK retries nothing unless ``HttpOptions.retry_options`` is set, and then with its own loop (tenacity),
unabortable and blind to the contract's per-step ``config.max_retries``: this adapter leaves it unset and
retries itself. Gemini says how long to wait in a ``google.rpc.RetryInfo`` detail of the error body
(``"retryDelay": "34s"``); gateways in front of it use ``retry-after`` / ``retry-after-ms`` headers.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from google.genai import errors

BASE_DELAY = 0.1
"""First backoff step in seconds, doubled per attempt, when the provider gives no hint."""
MAX_DELAY = 2.0
"""No wait is longer than this, whatever the provider asks for (CFG-05: honoured, but bounded)."""
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"


def retry_delay(attempt: int, error: BaseException | None) -> float:
    """Seconds to wait before retry number ``attempt + 1``."""
    hinted = None
    if isinstance(error, errors.APIError):
        hinted = _header_hint(getattr(error.response, "headers", None))
        if hinted is None:
            hinted = _retry_info(error.details)
    delay = hinted if hinted is not None else BASE_DELAY * 2**attempt
    return max(0.0, min(delay, MAX_DELAY))


def _retry_info(body: Any) -> float | None:
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, dict) and detail.get("@type") == _RETRY_INFO:
            delay = detail.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):  # a protobuf Duration in JSON: "34s", "0.5s"
                return _number(delay[:-1])
    return None


def _header_hint(headers: object) -> float | None:
    get = getattr(headers, "get", None)
    if get is None:
        return None
    milliseconds = _number(get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = get("retry-after") or ""
    seconds = _number(value)
    if seconds is not None or not value:
        return seconds
    try:  # an HTTP date
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    when = when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
    return (when - datetime.now(timezone.utc)).total_seconds()


def _number(value: object) -> float | None:
    try:
        number = float(str(value)) if value not in (None, "") else math.nan
    except ValueError:
        return None
    return number if math.isfinite(number) else None
