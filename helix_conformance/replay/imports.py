"""The seconds a run spent importing modules: an adapter that imports its SDK inside ``generate_step`` or its
factory pays for it in its first run, and a HARN-03 timeout there is about imports, not about the adapter's
waits (the failure says which: ``checks/root.py``).

CPython looks ``importlib._bootstrap._find_and_load`` up on every import of a module not yet loaded (and only
then), so wrapping it times exactly those, outermost import per thread, without touching loaders or specs.
"""

from __future__ import annotations

import importlib._bootstrap as bootstrap
import threading
import time
from collections.abc import Callable
from typing import Any

_lock = threading.Lock()
_local = threading.local()
_totals = {"seconds": 0.0, "modules": 0}
_ongoing: dict[int, float] = {}
"""Outermost imports under way, by thread: a run cut off by its time limit mid-import counts them too."""
_installed: list[Callable[..., Any]] = []
_jumps: list[Callable[[], float]] = []
"""The virtual seconds the running run's loop has jumped (``count_jumps``): a ``time.sleep`` inside an import
is skipped by virtual time yet counts against the run's limit, so it counts as import time too."""


def count_jumps(source: Callable[[], float] | None) -> None:
    """Add ``source``'s virtual seconds to the imports under way while it jumps (None: no run is under way)."""
    with _lock:
        _jumps[:] = [source] if source is not None else []


def _jumped() -> float:
    return _jumps[0]() if _jumps else 0.0


def install() -> None:
    """Start counting (once per process; the wrapper stays: it costs a clock read per new module)."""
    with _lock:
        if _installed:
            return
        original = bootstrap._find_and_load  # type: ignore[attr-defined]
        _installed.append(original)

        def timed(name: str, import_: Any) -> Any:
            with _lock:
                _totals["modules"] += 1
            if getattr(_local, "inside", False):
                return original(name, import_)  # a nested import: its time is its importer's
            _local.inside = True
            started = time.perf_counter() + _jumped()
            with _lock:
                _ongoing[threading.get_ident()] = started
            try:
                return original(name, import_)
            finally:
                _local.inside = False
                with _lock:
                    _ongoing.pop(threading.get_ident(), None)
                    _totals["seconds"] += time.perf_counter() + _jumped() - started

        bootstrap._find_and_load = timed  # type: ignore[attr-defined]


def totals() -> tuple[float, int]:
    """(seconds spent in outermost imports, those under way included; modules imported) in this process
    since ``install``."""
    with _lock:
        now = time.perf_counter() + _jumped()
        return _totals["seconds"] + sum(now - t for t in _ongoing.values()), int(_totals["modules"])
