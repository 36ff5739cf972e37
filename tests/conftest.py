"""Fixtures shared by the end-to-end tests of the plugin (helpers live in ``plugin_runs``)."""

from __future__ import annotations

import pytest
from plugin_runs import ADAPTERS, clear_helix_environment


@pytest.fixture(autouse=True)
def _no_helix_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings of the developer's shell must not leak into the runs under test."""
    clear_helix_environment(monkeypatch)


@pytest.fixture
def adapters(pytester: pytest.Pytester) -> pytest.Pytester:
    """The pytester directory with the third-party module ``my_adapter`` importable (the cwd is on sys.path)."""
    pytester.makepyfile(my_adapter=ADAPTERS)
    return pytester
