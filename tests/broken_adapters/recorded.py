"""Broken adapters that pass every authored scenario and break on real traffic (``cassettes/recorded``).

Each mishandles something a real server sends that no authored scenario renders, so only a recorded
scenario (``recorded/...``, planned from ``cassettes/recorded/expected.yml``) catches it, on the clause the
written outcome breaks: the suite judges adapters on real traffic, not only on what we thought to author.
(When an authored scenario comes to render the same thing, the adapter moves to its family's module.)
"""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.contract import PROVIDER_AUTH_ERROR, PROVIDER_INVALID_REQUEST, HelixError
from reference_adapters._sse import SSEEvent

from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken

GROQ_TOOL_USE_FAILED = "recorded/groq/test_tool_use_failed_error_streaming[0]"
"""Groq ends a 200 stream with ``event: error``, type ``invalid_request_error``, code ``tool_use_failed``:
the model's own tool call failed Groq's validation, after the reasoning was streamed."""

_HTTP_ERROR_TYPES = {
    "invalid_request_error": PROVIDER_INVALID_REQUEST,
    "authentication_error": PROVIDER_AUTH_ERROR,
    "permission_error": PROVIDER_AUTH_ERROR,
}


class _StreamErrorsAsHttpErrorsStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        try:
            return await super()._event(event)
        except HelixError as exc:
            # Bug: an error chunk is classified by its `type` with the HTTP error table, so an error the
            # provider raised mid-generation reads as the caller's bad request (not retryable).
            error = _error_of(event.data)
            code = _HTTP_ERROR_TYPES.get(str(error.get("type")))
            if code is None:
                raise
            raise HelixError(exc.message, code=code, retryable=False, cause=exc.cause) from exc


def _error_of(data: str) -> dict[str, Any]:
    try:
        error = json.loads(data).get("error")
    except (ValueError, AttributeError):
        return {}
    return error if isinstance(error, dict) else {}


class ClassifiesStreamErrorsAsHttpErrors(HookedAdapter):
    stream_class = _StreamErrorsAsHttpErrorsStream


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "classifies_stream_errors_as_http_errors",
        ClassifiesStreamErrorsAsHttpErrors,
        "ERR-03",
        [GROQ_TOOL_USE_FAILED],
        "Maps an error chunk's `type` through the HTTP error table: Groq's in-stream invalid_request_error "
        "(tool_use_failed) becomes provider_invalid_request, where ERR-03 gives provider_error.",
    ),
]
