"""Where an exception was raised, as lines a report can show: the innermost frames of its traceback, ending at
the first frame of the standard library (``json.loads``), not deep inside it."""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

FRAMES = 6
"""Frames kept: enough to see the adapter's own call that failed."""
LINE_LIMIT = 300

_STDLIB = tuple(str(Path(sysconfig.get_paths()[name]).resolve()) for name in ("stdlib", "platstdlib"))


def where_lines(exc: BaseException, frames: int = FRAMES) -> list[str]:
    """``file:line in function: source`` for the innermost frames of ``exc``'s traceback (none without one)."""
    if exc.__traceback__ is None:
        return []
    try:
        stack = list(traceback.extract_tb(exc.__traceback__))
    except Exception:
        return []
    while len(stack) >= 2 and _in_stdlib(stack[-1].filename) and _in_stdlib(stack[-2].filename):
        stack.pop()  # keep the one standard-library frame the adapter called, not what it calls in turn
    return [
        f"{f.filename}:{f.lineno} in {f.name}: {f.line or ''}".rstrip()[:LINE_LIMIT] for f in stack[-frames:]
    ]


def _in_stdlib(filename: str) -> bool:
    return filename.startswith(_STDLIB) and "site-packages" not in filename
