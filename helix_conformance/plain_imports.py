"""Imports that bypass pytest's assertion rewriting, which costs every run dearly when bytecode is not written.

pytest rewrites the asserts of every module of every distribution that registers a pytest plugin: hypothesis
and helix-conformance itself. The rewritten code is cached beside the sources, except when writing bytecode is
off (``PYTHONDONTWRITEBYTECODE=1``, common in CI containers): then every run parses and rewrites all of them
again (hypothesis about 2 s, this package's 140 modules about 0.5 s of each ``pytest --adapter`` start-up), for
asserts that are not the user's to report on. The plain import system reads the installed .pyc files.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def plain_imports() -> Iterator[None]:
    """Inside the block, modules import through the plain import system (no rewriting hook); finders added
    meanwhile are kept. Does nothing when no rewriting hook is installed."""
    saved = list(sys.meta_path)
    plain = [f for f in saved if type(f).__module__ != "_pytest.assertion.rewrite"]
    if len(plain) == len(saved):
        yield
        return
    sys.meta_path[:] = plain
    try:
        yield
    finally:  # the hook goes back in its place
        sys.meta_path[:] = saved + [f for f in sys.meta_path if f not in saved]


def import_without_assertion_rewriting(name: str) -> None:
    """Import ``name`` through the plain import system, even inside a pytest run; nothing if already imported
    (a conftest or a test module got there first)."""
    if name in sys.modules:
        return
    with plain_imports():
        importlib.import_module(name)
