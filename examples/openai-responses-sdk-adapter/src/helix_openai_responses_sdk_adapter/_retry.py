"""How long to wait before retrying, as the provider asked (CFG-05).

The SDK has its own retry loop; this adapter switches it off (``max_retries=0`` on the client) because the
contract's ``config.max_retries`` is per step, a retry must stop when the step is aborted, and an error that
survived our retries must say it is no longer retryable (CFG-03, CFG-04).
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

import openai

BASE_DELAY = 0.1
"""First backoff step in seconds, doubled per attempt, when the provider gives no retry-after hint."""
MAX_DELAY = 2.0
"""No wait is longer than this, whatever the provider asks for (CFG-05: honoured, but bounded)."""


def retry_delay(attempt: int, error: BaseException | None) -> float:
    """Seconds to wait before retry number ``attempt + 1``."""
    hinted = _hint(error.response.headers) if isinstance(error, openai.APIStatusError) else None
    delay = hinted if hinted is not None else BASE_DELAY * 2**attempt
    return max(0.0, min(delay, MAX_DELAY))


def _hint(headers: object) -> float | None:
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
