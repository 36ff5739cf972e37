"""``time.sleep`` under virtual time: on the loop's own thread (a sync sleep that blocks the loop), and in another
thread (a sync client retrying inside ``asyncio.to_thread``) when every other thread only waits, the sleep is
skipped from the moment nothing real can end it first; the host grants the jump (replay/clock.py ``grant``).
Anything else sleeps really.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, SupportsIndex

if TYPE_CHECKING:
    from .clock import VirtualTimeLoop

SETTLE_S = 0.001
"""The real wait before a jump of the clock (see ``VirtualSelector.select``), and a sleep's first look again."""
_active: dict[int, VirtualTimeLoop] = {}
_real_sleep = time.sleep
_patch_lock = threading.Lock()
_patch_users = 0


SLEEP_RECHECK_MAX_S = 0.05
"""A sleep that cannot be skipped yet looks again after SETTLE_S, doubling up to this."""


def sleep_until_skippable(
    seconds: float,
    skippable: Callable[[float], bool],
    skip: Callable[[float], float],
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Sleep ``seconds``: really while ``skippable(left)`` says no, then skip what is left (``skip`` says how
    much it could; the host may grant part, up to its own next timer). A thread just woken (the loop that
    handed a job out, not yet back in its selector) is busy for a moment: looking again after a short real
    wait, as the selector does, keeps that moment from costing the whole sleep. ``clock``: real time as the
    run's clock counts it (less the machine's load, replay/starvation.py), so that the sleep lasts ``seconds``
    there. Returns the seconds really slept, on ``clock``."""
    seconds = max(0.0, seconds)
    started = clock()
    skipped = 0.0
    wait = SETTLE_S
    while (left := seconds - skipped - (clock() - started)) > 0:
        if skippable(left):
            got = skip(left)
            skipped += got
            if got >= left:
                break
            if got > 0:
                wait = SETTLE_S
                continue
        _real_sleep(min(wait, left))
        wait = min(wait * 2, SLEEP_RECHECK_MAX_S)
    return min(clock() - started, seconds)


SLEEP_CODE = sleep_until_skippable.__code__
"""A thread in this function sleeps (``time.sleep``) and looks again itself: it never holds a jump up."""


def _virtual_sleep(seconds: float | SupportsIndex) -> None:
    try:
        length = float(seconds)
    except (TypeError, ValueError, OverflowError):
        length = -1.0
    if not length >= 0:  # negative, NaN, not a number: time.sleep's own error, as without us
        _real_sleep(seconds)
        return
    own = _active.get(threading.get_ident())
    if own is not None and not own.virtual:
        _real_sleep(seconds)
        return
    if own is not None:
        if own.sleep_on_loop_thread(length):
            return
    elif len(_active) == 1:  # another thread of the one running loop (several: whose clock? sleep really)
        for loop in list(_active.values()):
            if loop.sleep_in_a_thread(length):
                return
    _real_sleep(seconds)


@contextmanager
def sleep_patched(loop: VirtualTimeLoop) -> Iterator[None]:
    """``time.sleep`` skips on the loop's thread while the loop runs; every other caller sleeps really."""
    global _patch_users
    with _patch_lock:
        _active[threading.get_ident()] = loop
        _patch_users += 1
        time.sleep = _virtual_sleep
    try:
        yield
    finally:
        with _patch_lock:
            _active.pop(threading.get_ident(), None)
            _patch_users -= 1
            if _patch_users == 0:
                time.sleep = _real_sleep
