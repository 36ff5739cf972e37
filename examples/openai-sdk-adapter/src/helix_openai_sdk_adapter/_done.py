"""Whether the server ended the stream with ``data: [DONE]``: the SDK stops there without telling.

``AsyncStream`` ends its iteration at ``[DONE]`` and also when the body simply stops, so a stream cut between
two events (ERR-04: an error) and a stream some servers end with ``[DONE]`` and no ``finish_reason``
(Snowflake Cortex, Novita: a complete step) look the same from the chunks. A response event hook on the
SDK's HTTP client lets ``DoneWatch`` see the bytes on their way to the SDK's SSE decoder.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from typing import Any

_KEY = "helix.done_watch"
_LINE_END = re.compile(rb"\r\n|\r|\n")
_DONE_LINES = (b"data: [DONE]", b"data:[DONE]")
_LONGEST = max(len(line) for line in _DONE_LINES) + 8  # a longer line (allowing blanks) is no [DONE] line


class DoneWatch:
    """Scans the bytes of one response for a ``data: [DONE]`` line, however the chunks split it."""

    def __init__(self) -> None:
        self.saw_done = False
        self._line = b""  # the start of the current line (only a short line can be the [DONE] line)

    def feed(self, chunk: bytes) -> None:
        lines = _LINE_END.split(self._line + chunk)
        self._line = lines.pop()[: _LONGEST + 1]
        self.saw_done = self.saw_done or any(line.strip() in _DONE_LINES for line in lines)

    def close(self) -> None:
        self.saw_done = self.saw_done or self._line.strip() in _DONE_LINES

    def wrap(self, aiter_bytes: Callable[..., AsyncIterator[bytes]]) -> Callable[..., AsyncIterator[bytes]]:
        async def watched(*args: Any, **kwargs: Any) -> AsyncIterator[bytes]:
            async for chunk in aiter_bytes(*args, **kwargs):
                self.feed(chunk)
                yield chunk
            self.close()

        return watched


async def watch_for_done(response: Any) -> None:
    """The HTTP client's response hook: the body the SDK reads passes through a ``DoneWatch`` first."""
    watch = DoneWatch()
    response.aiter_bytes = watch.wrap(response.aiter_bytes)
    response.extensions[_KEY] = watch


def saw_done(response: Any) -> bool:
    """Whether ``response`` (the SDK stream's ``.response``) carried a ``data: [DONE]`` line."""
    watch = getattr(response, "extensions", {}).get(_KEY)
    return isinstance(watch, DoneWatch) and watch.saw_done
