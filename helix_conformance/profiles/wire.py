"""What a replay host serves by, of a wire profile, as data: how a body splits into events (its framing) and
which requests reach a recorded endpoint.

Standard library only, like ``servers.py`` and ``eventstream.py``: the replay service (replay/service.py)
unpickles it with every staged run, and a profile's own module pulls in the contract's models, which cost the
service 0.3 s of CPU to import each time it starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from . import eventstream, servers

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def split_sse_events(body: bytes) -> list[bytes]:
    """Split an SSE body after each blank line, keeping every byte (the last piece may be unterminated)."""
    pieces: list[bytes] = []
    start = 0
    for match in _EVENT_END.finditer(body):
        pieces.append(body[start : match.end()])
        start = match.end()
    if start < len(body):
        pieces.append(body[start:])
    return pieces


@dataclass(frozen=True)
class WireRules:
    """A profile's endpoint and framing. A request reaches the endpoint when its method is ``method`` and its
    path ends with ``tail`` (the recorded path itself when None), or matches ``pattern`` where one is given,
    or is exactly the recorded path where ``exact``; or when it addresses one of ``servers`` by that server's
    own URL shape (servers.py)."""

    profile: str
    method: str = "POST"
    tail: str | None = None
    pattern: str | None = None
    exact: bool = False
    servers: tuple[str, ...] = ()
    framing: Literal["sse", "aws-eventstream"] = "sse"

    def matches(self, method: str, path: str, recorded_path: str) -> bool:
        if method.upper() != self.method:
            return False
        path = path.rstrip("/")
        if self.exact:
            return path == recorded_path.rstrip("/")
        if self.pattern is not None:
            reached = re.search(self.pattern, path) is not None
        else:
            reached = path.endswith(self.tail if self.tail is not None else recorded_path)
        return reached or (bool(self.servers) and servers.server_of(self.profile, path) in self.servers)

    def split_events(self, body: bytes) -> list[bytes]:
        """The body cut after each event (each message, for AWS event-stream), every byte kept."""
        if self.framing == "aws-eventstream":
            return eventstream.split_messages(body)
        return split_sse_events(body)
