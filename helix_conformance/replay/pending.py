"""Which tasks left pending after the step are work the adapter started (HARN-04), each named for its author.

Not every task still pending after ``generate_step`` returns is the adapter's. Breaking out of ``async for``
over an async generator (the usual ``break`` on ``[DONE]`` or ``message_stop``), or dropping an SDK stream
without closing it, leaves the generator to the event loop: its finalizer hook schedules ``aclose()`` as a
task of its own. Those tasks are the loop's cleanup, not work left running, and are not reported.

A reported task is named by its coroutine, where it was created (recorded by a task factory installed for
the run, when the adapter installs none of its own) and where it is waiting.
"""

from __future__ import annotations

import asyncio
import os
import sys
import weakref
from collections.abc import Iterable
from types import FrameType
from typing import Any

_ORIGINS: weakref.WeakKeyDictionary[asyncio.Task[Any], tuple[str, int, str]] = weakref.WeakKeyDictionary()
"""Where each task was created: file, line, function. Made readable only for a task that is reported."""
_HARNESS = (os.path.dirname(asyncio.__file__), os.path.dirname(__file__))
"""Frames in these directories are skipped when looking for where a task was created."""


def track_task_origins(loop: asyncio.AbstractEventLoop) -> None:
    """Record where each task created on ``loop`` was created (the first frame outside asyncio)."""

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, **kwargs)
        origin = _caller(sys._getframe(1))
        if origin:
            _ORIGINS[task] = origin
        return task

    loop.set_task_factory(factory)


def _caller(frame: FrameType | None) -> tuple[str, int, str] | None:
    while frame is not None and frame.f_code.co_filename.startswith(_HARNESS):
        frame = frame.f_back
    if frame is None:
        return None
    return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name


def _short(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


def is_generator_cleanup(task: asyncio.Task[Any]) -> bool:
    """An ``aclose()``/``athrow()`` of an async generator: what the loop schedules to finalise one."""
    return type(task.get_coro()).__name__ == "async_generator_athrow"


def describe(task: asyncio.Task[Any]) -> str:
    """The task's coroutine, where it was created if known, and where it is waiting."""
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", None) or type(coro).__name__
    parts = [f"task {task.get_name()!r} running {name}()"]
    origin = _ORIGINS.get(task)
    if origin:
        path, line, function = origin
        parts.append(f"created at {_short(path)}:{line} in {function}")
    frame = getattr(coro, "cr_frame", None)
    if frame is not None and not frame.f_code.co_filename.startswith(_HARNESS):
        parts.append(f"waiting at {_short(frame.f_code.co_filename)}:{frame.f_lineno}")
    return ", ".join(parts)


def adapter_work(tasks: Iterable[asyncio.Task[Any]]) -> list[str]:
    """The pending tasks HARN-04 reports: all but the loop's async-generator finalisation, described."""
    return [describe(t) for t in tasks if not is_generator_cleanup(t)]
