"""The pytest11 entry point. Loaded in every pytest run where helix-conformance is installed, so it imports
nothing heavy: the suite, pydantic models and HTTP libraries load only when ``--adapter`` is given."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from .settings import add_options, requested_adapter, resolve


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under ``-n`` (xdist's default ``load`` distribution), send each scenario whole to one worker, so it
    is run once (scheduling.py); an explicit ``--dist`` is the user's choice and kept."""
    name, _ = requested_adapter(config)
    if not name or config.getoption("dist", None) != "load":
        return None
    from .scheduling import ScenarioScheduling

    return ScenarioScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "helix_conformance: a clause x scenario check of the conformance suite"
    )
    name, _ = requested_adapter(config)
    if not name:
        return  # not a conformance run: no other setting is read, nothing heavy is imported
    from .plain_imports import plain_imports

    with plain_imports():
        _configure(config, str(name))


def _configure(config: pytest.Config, name: str) -> None:
    options = resolve(config)
    from .adapters import AdapterNotFound, resolve_adapter

    opened: Any = None
    replaying = options["helix_record_mode"][0] == "none"
    try:
        if str(name).startswith(("node:", "cmd:")):
            from .worker.launch import start_for_session as start_driver

            if options["helix_in_process"][0] or not replaying:
                raise AdapterNotFound(
                    f"--adapter={name}: a {str(name)[:4]}: adapter always runs in its driver process, replaying; "
                    "--helix-in-process and --helix-record-mode are for Python adapters"
                )
            with _loading_checks():
                opened = start_driver(config, str(name))
            resolved = opened.resolved
        elif options["helix_in_process"][0]:
            resolved = resolve_adapter(str(name))
        else:
            from .worker.launch import start_for_session

            with _loading_checks():
                opened = start_for_session(config, str(name), _workers(config, options) if replaying else 1)
            resolved = opened.resolved
            if not replaying:
                resolved = resolve_adapter(str(name))  # recording live calls the factory in this process
    except AdapterNotFound as exc:
        raise pytest.UsageError(str(exc)) from None
    from .pytest_suite import ConformancePlugin

    plugin = ConformancePlugin(config, resolved, options)
    if opened is not None and replaying:  # a driver never records
        pool = opened.pool(_workers(config, options))  # closed with ``opened`` (start_for_session)
        plugin.settings.executor, plugin.settings.submit = pool.run_scenario, pool.submit
        plugin.stop_adapter = pool.close
    elif opened is not None:
        plugin.settings.executor = opened.worker.run_scenario
        plugin.stop_adapter = opened.worker.close
    config.pluginmanager.register(plugin, "helix-conformance-suite")


def _workers(config: pytest.Config, options: dict[str, Any]) -> int:
    """The adapter's processes for this session: ``--helix-workers``, else ``default_size``; one where
    nothing runs (``--collect-only``, pytest-xdist's controller: the first resolves the adapter)."""
    from .worker.launch import xdist_controller
    from .worker.pool import default_size

    if config.option.collectonly or xdist_controller(config):
        return 1
    return int(options["helix_workers"][0] or default_size(config))


@contextmanager
def _loading_checks() -> Iterator[None]:
    """Import the suite and its checks on a thread of their own while the block waits for the adapter's worker
    to start (it imports the adapter meanwhile): the two start-ups overlap. Nothing is lost if the thread
    fails: collection imports the same modules again and reports what goes wrong there."""

    def load() -> None:
        try:
            from .checks.registry import load_all_checks
            from .pytest_suite import ConformancePlugin  # noqa: F401

            load_all_checks()
        except BaseException:  # the main thread's own import reports it
            return

    loader = threading.Thread(target=load, name="helix-load-checks", daemon=True)
    loader.start()
    try:
        yield
    finally:
        loader.join()
    properties = sys.modules.get(f"{__package__}.checks.properties")
    if properties is not None:  # the heap is small now: Hypothesis's per-thread Random for the main thread
        properties.register_hypothesis_random()
