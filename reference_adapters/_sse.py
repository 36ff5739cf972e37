"""Incremental Server-Sent Events parser: the same events however the bytes are split into chunks (STR-10).

Provider-neutral (OpenAI, Anthropic and Gemini all stream SSE) and deliberately small. It follows the
WHATWG event-stream rules the providers rely on:

* bytes are decoded with an *incremental* UTF-8 decoder, so a multi-byte character split across two
  chunks is decoded once both halves have arrived (invalid bytes become U+FFFD, as browsers do);
* a line ends with ``\\n``, ``\\r\\n`` or a lone ``\\r``, and a ``\\r\\n`` split across chunks is one break;
* an event is dispatched at a blank line; several ``data:`` lines are joined with ``\\n``;
* one space after the field's colon is dropped (``data:x`` and ``data: x`` are equal);
* lines starting with ``:`` are comments (OpenRouter's ``: OPENROUTER PROCESSING`` keep-alives);
* unknown fields (``id:``, ``retry:``) are ignored.

Two tolerances beyond the standard: ``close()`` also dispatches a final event that lacks its trailing
blank line, and the ``event:`` name is stripped of surrounding whitespace. One opt-in extension:
``SSEDecoder(keep_stray_lines=True)`` returns each line that is not an SSE field (neither ``data``,
``event``, ``id``, ``retry`` nor a comment) as an event with ``stray=True``, in stream order, instead of
ignoring it: Gemini writes a mid-stream error as raw JSON lines between its ``data:`` events (ERR-03).

``data`` is kept verbatim (Anthropic pads its JSON with trailing spaces, which ``json.loads`` accepts), so
callers compare ``data.strip()`` with sentinels such as ``[DONE]``.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

__all__ = ["SSEDecoder", "SSEEvent", "aiter_sse"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BOM = "\ufeff"
_FIELDS = frozenset({"data", "event", "id", "retry"})


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: its ``event:`` name (``None`` when absent) and its joined ``data:`` lines.

    ``stray`` marks a line that is not an SSE field at all (only with ``keep_stray_lines``): ``data`` is
    that line, verbatim.
    """

    event: str | None
    data: str
    stray: bool = False


class SSEDecoder:
    """Turns a byte stream into SSEEvents: ``feed`` each received chunk, then ``close`` at end of stream."""

    def __init__(self, *, keep_stray_lines: bool = False) -> None:
        self._keep_stray = keep_stray_lines
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail = ""  # text after the last line break: an incomplete line
        self._skip_lf = False  # the previous text ended with '\r': a leading '\n' completes that '\r\n'
        self._started = False  # the byte-order mark is only stripped at the very start
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume one chunk of bytes; return the events it completed (often none, sometimes several)."""
        return self._feed_text(self._decoder.decode(chunk))

    def close(self) -> list[SSEEvent]:
        """Flush at end of stream: undecoded bytes, the unterminated last line and the pending event."""
        events = self._feed_text(self._decoder.decode(b"", final=True))
        tail, self._tail = self._tail, ""
        if tail:
            events.extend(self._process_lines([tail]))
        if self._data:
            events.append(self._dispatch())
        self._event = None
        return events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if not text:
            return []
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        if self._tail:
            text = self._tail + text
        # str.splitlines would also split on U+2028, \x1c and others that may legally appear inside JSON.
        lines = _LINE_BREAK.split(text) if "\r" in text else text.split("\n")
        self._tail = lines.pop()
        if text.endswith("\r"):
            self._skip_lf = True
        return self._process_lines(lines)

    def _process_lines(self, lines: list[str]) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        for line in lines:
            if not line:  # blank line: dispatch
                if self._data:
                    events.append(self._dispatch())
                self._event = None
                continue
            if line[0] == ":":  # comment
                continue
            name, colon, value = line.partition(":")
            if colon and value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value.strip() or None
            elif self._keep_stray and name not in _FIELDS:
                if self._data:  # an event left open by the stray line ends before it, keeping the order
                    events.append(self._dispatch())
                events.append(SSEEvent(None, line, stray=True))
        return events

    def _dispatch(self) -> SSEEvent:
        event = SSEEvent(self._event, "\n".join(self._data))
        self._event = None
        self._data = []
        return event


async def aiter_sse(byte_iter: AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    """Yield the SSE events of an async byte stream (e.g. ``response.aiter_bytes()``) as they complete."""
    decoder = SSEDecoder()
    async for chunk in byte_iter:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.close():
        yield event
