"""Server-Sent Events, decoded incrementally: the same events however the bytes are cut (STR-10).

A multi-byte UTF-8 character cut in two is decoded once both halves are in; lines end at ``\\n``, ``\\r\\n`` or a
lone ``\\r`` (a ``\\r\\n`` cut in two is one break); an event ends at a blank line; ``data:`` lines join with
``\\n``; one space after the colon is dropped; ``:`` lines are comments.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Event:
    name: str | None
    data: str


class Decoder:
    """``feed`` each chunk as it arrives, ``close`` at the end of the body."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line = ""
        self._after_cr = False
        self._first = True
        self._name: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[Event]:
        return self._text(self._utf8.decode(chunk))

    def close(self) -> list[Event]:
        events = self._text(self._utf8.decode(b"", final=True))
        if self._line:
            events += self._take(self._line)
            self._line = ""
        if self._data:
            events.append(Event(self._name, "\n".join(self._data)))
            self._name, self._data = None, []
        return events

    def _text(self, text: str) -> list[Event]:
        if self._first and text:
            text, self._first = text.removeprefix("\ufeff"), False
        if self._after_cr and text.startswith("\n"):  # the \n of a \r\n cut in two
            text = text[1:]
        if text:
            self._after_cr = text.endswith("\r")
        *lines, self._line = _BREAK.split(self._line + text)
        events: list[Event] = []
        for line in lines:
            events += self._take(line)
        return events

    def _take(self, line: str) -> list[Event]:
        if not line:  # a blank line dispatches
            if not self._data:
                self._name = None
                return []
            event = Event(self._name, "\n".join(self._data))
            self._name, self._data = None, []
            return [event]
        if line.startswith(":"):
            return []
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._name = value.strip()
        return []
