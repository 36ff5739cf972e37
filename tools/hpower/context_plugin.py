"""pytest plugin for the coverage run: every check's lines are recorded under its test id.

Loaded with ``-p hpower.context_plugin`` inside ``coverage run``. Lines run outside a check (importing the
adapter, collecting the plan) keep the empty context. The collected test ids are written to the file named
by ``HPOWER_IDS_FILE`` so a mutant's run can select the checks of the scenarios that reach it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import coverage
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)
    yield
    if cov is not None:
        cov.switch_context("")


def pytest_collection_finish(session: pytest.Session) -> None:
    path = os.environ.get("HPOWER_IDS_FILE")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump([item.nodeid for item in session.items], out)
