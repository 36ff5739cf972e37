"""Shards of the suite (``--helix-shard=I/N``): each CI machine runs one, ``helix-conformance report merge``
joins their JSON reports into one verdict.

A shard is a set of whole scenarios (every clause of a scenario in one shard, so its runs are shared), chosen
from the full plan before any ``-k``/``--lf`` narrowing: which shard a scenario lands in depends only on the
plan (adapter, profile, cassettes, helix-conformance version), never on the machine, the run or the selection.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

SHARD_SYNTAX = "I/N, e.g. 1/4: shard I (from 1 to N) of N"


@dataclass(frozen=True)
class Shard:
    index: int
    """1-based."""
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def as_data(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}


def parse_shard(text: str) -> Shard:
    """``"2/4"`` -> Shard(2, 4); anything else is a ValueError saying what to write."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise ValueError(f"expected {SHARD_SYNTAX}; got {text!r}")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"expected {SHARD_SYNTAX} (1 <= I <= N); got {text!r}")
    return Shard(index, count)


def assign(weights: Iterable[tuple[str, int]], count: int) -> dict[str, int]:
    """Scenario id -> shard (1-based), balancing the shards' checks: the heaviest scenario first (ties by id)
    goes to the lightest shard (ties: the lowest index). ``weights``: (scenario id, checks that run)."""
    load = [0] * count
    shard_of: dict[str, int] = {}
    for scenario, weight in sorted(weights, key=lambda sw: (-sw[1], sw[0])):
        lightest = min(range(count), key=lambda i: (load[i], i))
        load[lightest] += weight
        shard_of[scenario] = lightest + 1
    return shard_of
