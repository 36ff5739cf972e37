"""A costly fixture value made once per test session, not once per pytest-xdist worker that asks for it.

A module fixture is made again on every xdist worker that runs one of its tests, and xdist's ``loadgroup``,
which would keep such tests together, does not work with pytest 9 (it renames items through an attribute pytest
no longer reads). This is pytest-xdist's documented recipe instead: the first worker to ask makes the value in
the directory the workers share, under a lock, and the others wait for it and read it.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def once_per_session(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> tuple[Path, T]:
    """``make(folder)`` once for the session, in a folder of its own; every caller gets the folder and the value
    (which must pickle). Outside xdist, a plain temporary folder."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = factory.mktemp(name)
        return folder, make(folder)
    shared = factory.getbasetemp().parent  # the session's: each worker's basetemp is a folder in it
    folder, value = shared / name, shared / f"{name}.pickle"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not value.exists():
            folder.mkdir(exist_ok=True)  # left by a make that raised: made again
            value.write_bytes(pickle.dumps(make(folder)))
    made: T = pickle.loads(value.read_bytes())
    return folder, made
