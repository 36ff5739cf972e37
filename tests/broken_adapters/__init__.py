"""A library of deliberately broken LLM adapters, each registered with the clause that must catch it.

Every entry is a small, realistic mistake, mostly the OpenAI Chat reference adapter with one method overridden
or its result post-processed (``_base.HookedAdapter`` exposes the reference's decisions as hooks); ``naive``
holds from-scratch adapters whose naivety is the point. ``tests/test_broken_adapters.py`` runs each one with
``run_conformance`` and requires its ``caught_by`` clause to fail on every listed scenario, while the
reference adapter and the un-broken ``BASELINE`` pass the very same selections.

An entry with ``harness_gap`` is a bug the harness should catch but does not (yet): its test is a strict
xfail whose reason says what the check misses. (None is open: the five gaps found so far are fixed.)

Modules, by clause family: ``results`` (RES, FIN, STOP), ``streaming`` (STR), ``naive`` (STR, NT),
``requests`` (MSG, TOOL, CFG-01/02, CACHE), ``errors`` (ERR, CFG-03, NT, AB, HARN), ``coverage`` (the
remaining clauses, so that every registered check is tripped by at least one adapter).
"""

from __future__ import annotations

from . import coverage, errors, naive, requests, results, streaming
from ._base import BASELINE, BrokenAdapter

__all__ = ["BASELINE", "BROKEN_ADAPTERS", "FAMILIES", "BrokenAdapter"]

FAMILIES: tuple[str, ...] = (
    "RES",
    "FIN",
    "STOP",
    "STR",
    "MSG",
    "TOOL",
    "CFG",
    "ERR",
    "NT",
    "AB",
    "CACHE",
    "HARN",
)
"""The clause families the library must cover, each with at least one adapter the harness catches."""

BROKEN_ADAPTERS: list[BrokenAdapter] = [
    *results.ADAPTERS,
    *streaming.ADAPTERS,
    *naive.ADAPTERS,
    *requests.ADAPTERS,
    *errors.ADAPTERS,
    *coverage.ADAPTERS,
]
