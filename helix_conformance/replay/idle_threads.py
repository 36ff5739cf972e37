"""Which threads of the adapter's process only wait for someone else: such a thread cannot wake the run's loop
on its own, so the virtual clock (replay/clock.py) may skip time while it waits. Read from each thread's innermost
Python frame (``sys._current_frames``).
"""

from __future__ import annotations

import select
from types import CodeType
from typing import Any

from .link import READ_FUNCTIONS

_IDLE_FRAMES = {
    ("threading.py", None),  # Event.wait, Condition.wait, Thread.join, Lock.acquire through threading
    ("queue.py", None),  # Queue.get: an idle pool worker (anyio's worker threads among them)
    ("selectors.py", None),  # another event loop with nothing to do
    ("thread.py", "_worker"),  # concurrent.futures: a pool thread waiting for work (busy ones are in run)
}
"""Where a thread's innermost Python frame sits when it waits for someone else: such a thread cannot wake
the loop on its own, so skipping time cannot outrun it. Anything else (a sleep, a computation, a blocking
read) counts as work in progress, and the loop waits really."""


_IDLE_CODES: set[CodeType] = set()
"""Functions of the harness's own threads that wait for someone else (``waits_for_others``)."""


def waits_for_others(code: CodeType) -> None:
    """A harness thread blocked in this function (a pipe reader) never wakes the adapter's loop."""
    _IDLE_CODES.add(code)


_TEST_RUNNER_PACKAGES = ("/execnet/", "/xdist/")
"""Threads started by these run pytest itself (pytest-xdist's channel to its controller), never the adapter:
they wait on their pipe, whatever their innermost frame (``--helix-in-process`` under ``-n``)."""


def _woken(frame: Any) -> bool:
    """Whether ``frame`` is ``threading.Condition.wait`` (under Event.wait, Thread.start, Queue.get...) of a
    thread already notified: ``notify`` took its waiter lock out of ``_waiters``, so it runs as soon as it
    gets the GIL. Its frame still shows the wait until then; counting it idle let another thread's sleep be
    skipped before it ran (a thread started just before ``return`` called back before the step returned)."""
    if frame.f_code.co_name != "wait":
        return False
    local = frame.f_locals
    waiters = getattr(local.get("self"), "_waiters", None)
    waiter = local.get("waiter")
    if waiters is None:
        return False
    return waiter is None or waiter not in waiters  # not yet waiting, or notified (or timed out)


def thread_is_idle(frame: Any) -> bool:
    """Whether a thread whose innermost frame is ``frame`` waits for someone else (``_IDLE_FRAMES``,
    ``_IDLE_CODES``) and was not woken yet (``_woken``)."""
    if frame is None or frame.f_code in _IDLE_CODES:
        return True
    name = frame.f_code.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
    if name == "threading.py" and _woken(frame):
        return False
    if (name, None) in _IDLE_FRAMES or (name, frame.f_code.co_name) in _IDLE_FRAMES:
        return True
    while frame is not None:
        if any(package in frame.f_code.co_filename.replace("\\", "/") for package in _TEST_RUNNER_PACKAGES):
            return True
        frame = frame.f_back
    return False


def waits_for_the_host(frame: Any) -> bool:
    """Whether a thread whose innermost frame is ``frame`` is blocked reading a counted connection that has
    nothing to read yet: it waits for the host's bytes (the host knows whether any are in flight), as a sync
    client in ``asyncio.to_thread`` (boto3) does. A read whose socket is readable already (bytes, the end, a
    reset) is about to return: that thread is at work."""
    if frame.f_code not in READ_FUNCTIONS:
        return False
    sock = frame.f_locals.get("self")
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (OSError, TypeError, ValueError):  # closed meanwhile: it returns at once
        return False
