"""The trace: requests, delivered chunks and callbacks, interleaved in the order they happened.

Checks read it to judge incrementality (STR-02), order (STR-04), nothing after return (STR-07), awaiting
(STR-08), closing (AB-02) and requests (HARN-01/02, MSG/TOOL/CFG via the profile decoder).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

EventKind = Literal[
    "request",  # the adapter sent a request (matched or not)
    "chunk",  # a chunk of a response body was handed to the adapter
    "response_closed",  # the adapter closed a response stream
    "callback",  # a callback was invoked
    "callback_done",  # an awaitable returned by a callback finished (async callbacks)
    "abort",  # the harness aborted the signal
    "fault",  # the harness injected a fault
    "returned",  # generate_step returned
]


class TraceEvent(NamedTuple):
    """One thing that happened. A named tuple: a run records hundreds (one per chunk and callback), and the
    parent rebuilds every one from the worker's answer; a frozen dataclass took four times as long to build."""

    seq: int
    at: float
    kind: EventKind
    name: str = ""
    """Callback name, fault kind, or request method+path."""
    args: tuple[Any, ...] = ()
    interaction: int | None = None
    chunk_index: int | None = None
    last: bool = False
    """For chunks: the last chunk of that response."""


@dataclass(frozen=True)
class SentRequest:
    method: str
    url: str
    path: str
    headers: dict[str, str]
    body: bytes
    interaction: int | None
    """Index of the matched interaction, None when nothing recorded matched (HARN-01)."""
    at: float
    library: str
    refused: bool = False
    """A connection attempt the run's base URL refused (``connect_error``): no request line, headers or body
    ever left the adapter; its link reported the attempt."""

    @property
    def line(self) -> str:
        """The request in a failure message: method and URL, or the refused connection it was."""
        return f"a connection to {self.url} (refused)" if self.refused else f"{self.method} {self.url}"


@dataclass
class Trace:
    events: list[TraceEvent] = field(default_factory=list)
    requests: list[SentRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _start: float = field(default_factory=time.monotonic, repr=False)
    _clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Time events by ``clock`` from now on (the replay loop's virtual clock: replay/clock.py), keeping
        the times already recorded continuous."""
        with self._lock:
            self._start = clock() - (self._clock() - self._start)
            self._clock = clock

    def add(self, kind: EventKind, **fields: Any) -> TraceEvent:
        with self._lock:
            event = TraceEvent(seq=len(self.events), at=self._clock() - self._start, kind=kind, **fields)
            self.events.append(event)
            return event

    def add_chunk(self, data: bytes, interaction: int, chunk_index: int, last: bool) -> None:
        """``add("chunk", ...)`` without the keywords: a run delivers up to thousands (STR-10's byte-by-byte
        split), and this is most of the harness's cost per chunk."""
        with self._lock:
            events = self.events
            events.append(
                TraceEvent(
                    len(events),
                    self._clock() - self._start,
                    "chunk",
                    "",
                    (data,),
                    interaction,
                    chunk_index,
                    last,
                )
            )

    def add_request(self, request: SentRequest) -> None:
        with self._lock:
            self.requests.append(request)
        self.add("request", name=f"{request.method} {request.path}", interaction=request.interaction)

    def now(self) -> float:
        return self._clock() - self._start

    # --- queries used by the checks -----------------------------------------------------------------

    def of(self, kind: EventKind, name: str | None = None) -> list[TraceEvent]:
        return [e for e in self.events if e.kind == kind and (name is None or e.name == name)]

    def callbacks(self, name: str | None = None) -> list[TraceEvent]:
        """The callbacks made while the step ran. One made after it returned (by a task or thread the adapter
        left) is STR-07's alone (``late_callbacks``): no other clause counts it."""
        returned = self.of("returned")
        end = returned[-1].seq if returned else None
        return [e for e in self.of("callback", name) if end is None or e.seq < end]

    def late_callbacks(self) -> list[TraceEvent]:
        """The callbacks made after generate_step returned (STR-07)."""
        returned = self.returned_at()
        return [] if returned is None else [e for e in self.of("callback") if e.seq > returned]

    def returned_at(self) -> int | None:
        returned = self.of("returned")
        return returned[0].seq if returned else None

    def text_deltas(self) -> list[str]:
        return [str(e.args[0]) for e in self.callbacks("on_text_delta")]

    def describe(self, limit: int = 40) -> str:
        """A compact, human-readable listing for failure messages."""
        lines = []
        for e in self.events[:limit]:
            detail = e.name
            if e.kind == "chunk":
                detail = f"interaction {e.interaction} chunk {e.chunk_index}{' (last)' if e.last else ''}"
            elif e.kind in ("callback", "callback_done") and e.args:
                detail += "(" + ", ".join(repr(a)[:50] for a in e.args) + ")"
            lines.append(f"  #{e.seq:<3} {e.at * 1000:7.1f} ms  {e.kind:<16} {detail}")
        if len(self.events) > limit:
            lines.append(f"  … {len(self.events) - limit} more events")
        return "\n".join(lines)
