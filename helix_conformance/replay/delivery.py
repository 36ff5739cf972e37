"""Delivery plans: how a replayed body is cut into the chunks the adapter receives.

vcrpy hands a streamed body over in one piece; real networks do not. The default plan sends one SSE event
per chunk with a yield to the event loop between chunks, so incremental callbacks can be observed (STR-02);
``SplitPlan`` cuts at arbitrary byte offsets (Hypothesis, STR-10); ``MutatedPlan`` truncates and corrupts (NT-02).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

EventSplitter = Callable[[bytes], list[bytes]]


@dataclass(frozen=True)
class EventPlan:
    """One provider event per chunk (the default), with a turn of the event loop before each chunk so
    that callbacks fired as data arrives interleave with deliveries in the trace (STR-02)."""

    yield_between: bool = True

    def chunks(self, body: bytes, split_events: EventSplitter) -> list[bytes]:
        return split_events(body) or [body]


@dataclass(frozen=True)
class SplitPlan:
    """Cut the body at these byte offsets (sorted, deduplicated, out-of-range ones ignored)."""

    cuts: tuple[int, ...]
    yield_between: bool = False

    def chunks(self, body: bytes, split_events: EventSplitter) -> list[bytes]:
        points = sorted({c for c in self.cuts if 0 < c < len(body)})
        edges = [0, *points, len(body)]
        return [body[a:b] for a, b in itertools.pairwise(edges) if b > a] or [body]


@dataclass(frozen=True)
class MutatedPlan:
    """NT-02: the body truncated at ``truncate_at`` with bytes overwritten at ``flips``, one event per chunk."""

    truncate_at: int
    flips: tuple[tuple[int, int], ...] = ()
    yield_between: bool = False

    def chunks(self, body: bytes, split_events: EventSplitter) -> list[bytes]:
        mutated = bytearray(body[: self.truncate_at])
        for offset, value in self.flips:
            if offset < len(mutated):
                mutated[offset] = value
        return split_events(bytes(mutated)) or [b""]


DeliveryPlan = EventPlan | SplitPlan | MutatedPlan


def event_boundaries(body: bytes, split_events: EventSplitter) -> list[int]:
    """Byte offsets at which each event ends; fault positions are counted in events, whatever the plan."""
    offsets, total = [], 0
    for piece in split_events(body):
        total += len(piece)
        offsets.append(total)
    return offsets


def cut_at_events(chunks: Sequence[bytes], limit: int) -> list[bytes]:
    """The prefix of ``chunks`` that holds exactly ``limit`` bytes (splitting the last chunk if needed)."""
    out, used = [], 0
    for chunk in chunks:
        if used >= limit:
            break
        take = chunk[: limit - used]
        out.append(take)
        used += len(take)
    return out
