"""Which threads of the adapter's process only wait for someone else: such a thread cannot wake the run's loop
on its own, so the virtual clock (replay/clock.py) may skip time while it waits. Read from each thread's innermost
Python frame (``sys._current_frames``).
"""

from __future__ import annotations

import gc
import select
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

from .link import READ_FUNCTIONS

_IDLE_FRAMES = {
    ("queue.py", None),  # Queue.get: an idle pool worker (anyio's worker threads among them)
    ("selectors.py", None),  # another event loop with nothing to do
    ("thread.py", "_worker"),  # concurrent.futures: a pool thread waiting for work (busy ones are in run)
}
"""Where a thread's innermost Python frame sits when it waits for someone else (threading.py's waits are
told apart from its running code by ``_blocked_in_threading``): such a thread cannot wake the loop on its
own, so skipping time cannot outrun it. Anything else (a sleep, a computation, a blocking
read) counts as work in progress, and the loop waits really."""


_IDLE_CODES: set[CodeType] = set()
"""Functions of the harness's own threads that wait for someone else (``waits_for_others``)."""


def waits_for_others(code: CodeType) -> None:
    """A harness thread blocked in this function (a pipe reader) never wakes the adapter's loop."""
    _IDLE_CODES.add(code)


_TEST_RUNNER_PACKAGES = ("/execnet/", "/xdist/")
"""Threads started by these run pytest itself (pytest-xdist's channel to its controller), never the adapter:
they wait on their pipe, whatever their innermost frame (``--helix-in-process`` under ``-n``)."""


_collector_lock = threading.Lock()


@contextmanager
def _collector_off() -> Iterator[None]:
    """No garbage collection meanwhile, one thread at a time. A collection inside ``sys._current_frames``
    runs finalizers while it holds the interpreter's thread-list lock: a thread then asking for frames, or
    starting or ending, deadlocked Python 3.11 (CPython gh-106883, fixed in 3.12 only), and reading another
    thread's ``f_locals`` segfaulted it in the same stress run."""
    with _collector_lock:
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if enabled:
                gc.enable()


def current_frames() -> dict[int, FrameType]:
    """``sys._current_frames()``, safe to call from any thread (``_collector_off``)."""
    with _collector_off():
        return sys._current_frames()


def _locals(frame: Any, *names: str) -> tuple[Any, ...]:
    """Local variables of another thread's frame, read at once (``_collector_off``)."""
    with _collector_off():
        local = frame.f_locals
        return tuple(local.get(name) for name in names)


_CONDITION_WAIT = threading.Condition.wait.__code__
_JOINS = {
    method.__code__
    for method in (threading.Thread.join, getattr(threading.Thread, "_wait_for_tstate_lock", None))
    if method is not None
}


def _blocked_in_threading(frame: Any) -> bool:
    """Whether a thread whose innermost frame ``frame`` is in threading.py is blocked there: in
    ``Condition.wait`` (under Event.wait, Thread.start, Queue.get, Semaphore, Barrier) and not yet notified,
    or joining a thread that still runs. Any other frame of that module runs: a thread just woken returns
    through ``Event.wait`` and ``Thread.start``, one just started sets its ``_started`` event. Counting those
    idle let another thread's sleep be skipped before they went on (a thread started just before ``return``
    called back before the step returned: STR-10; or was not seen at work after it: STR-07)."""
    code = frame.f_code
    if code is _CONDITION_WAIT:  # f_locals only here: read on another thread's running frame, it can crash
        condition, waiter = _locals(frame, "self", "waiter")
        waiters = getattr(condition, "_waiters", None)
        # notify took the waiter lock out of _waiters: the thread runs as soon as it gets the GIL
        return waiters is not None and waiter is not None and waiter in waiters
    if code in _JOINS:
        (joined,) = _locals(frame, "self")
        handle = getattr(joined, "_handle", None)  # Python 3.13
        if handle is not None and hasattr(handle, "is_done"):
            return not handle.is_done()
        lock = getattr(joined, "_tstate_lock", None)
        return lock is not None and lock.locked()
    return False


_abandoned: list[threading.Thread] = []


def abandon(thread: threading.Thread) -> None:
    """A run's thread the harness gave up on, still alive past the run's limit (an adapter's blocking sleep
    of an hour): its run is over, so it can wake no later run's loop nor send to its host. Counted at work,
    it held every later run in the process to real time, and the host's barriers then waited out their
    patience past the adapter's idle timer (false "no data received" timeouts)."""
    _abandoned[:] = [t for t in _abandoned if t.is_alive()] + [thread]


def abandoned_threads() -> frozenset[int]:
    """The idents of the abandoned threads still alive (``abandon``)."""
    return frozenset(t.ident for t in list(_abandoned) if t.ident is not None and t.is_alive())


def thread_is_idle(frame: Any) -> bool:
    """Whether a thread whose innermost frame is ``frame`` waits for someone else (``_IDLE_FRAMES``,
    ``_IDLE_CODES``, ``_blocked_in_threading``)."""
    if frame is None or frame.f_code in _IDLE_CODES:
        return True
    name = frame.f_code.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
    if name == "threading.py":
        return _blocked_in_threading(frame) or _runs_the_test_runner(frame)
    if (name, None) in _IDLE_FRAMES or (name, frame.f_code.co_name) in _IDLE_FRAMES:
        return True
    return _runs_the_test_runner(frame)


def _runs_the_test_runner(frame: Any) -> bool:
    """Whether the thread was started by pytest's runner (``_TEST_RUNNER_PACKAGES``), never the adapter."""
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
    (sock,) = _locals(frame, "self")
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (OSError, TypeError, ValueError):  # closed meanwhile: it returns at once
        return False
