"""Fixtures shared by the end-to-end tests of the plugin (helpers live in ``plugin_runs``)."""

from __future__ import annotations

import os
import resource
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# yaml is imported here, before any in-process pytest run, which drops the modules it imported: PyYAML's C parser
# keeps the first yaml module's node classes, and a run that imported yaml again would tag no node
import yaml  # noqa: F401
from hypothesis import settings
from plugin_runs import ADAPTERS, clear_helix_environment

# --- bytecode for the processes the tests start -----------------------------------------------------------------
# With PYTHONDONTWRITEBYTECODE=1 (this project's machines and CI sandboxes set it) every Python process the tests
# start (`pytest --adapter=...` runs, the adapter workers, the CLI) compiled every module of this checkout and of
# the editable examples from source again: measured, 5.3 s of CPU per `pytest --adapter` run, 3.7 s with bytecode
# cached. Several hundred such processes run, so they share one cache outside the checkout (PYTHONPYCACHEPREFIX:
# nothing is written beside the sources or in the runs' directories, which tests look at). What they compile and
# run is the same code; only the compiling is done once (this process read the variable at start-up and keeps
# it; the xdist workers, started after this, share the cache too). A prefix already set is kept: writing there is
# what it is for (with both set, every process the tests start compiled everything from source again).
if os.environ.get("PYTHONDONTWRITEBYTECODE"):
    os.environ.setdefault(
        "PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / f"helix-tests-pycache-{os.getuid()}")
    )
    del os.environ["PYTHONDONTWRITEBYTECODE"]

# --- no test is timed: Hypothesis's deadline (200 ms an example by default) failed a test of what schemas are
# valid when tox -e py310 and .ci/run shared the machine (282 ms, then 111 ms). Tests that time out a run say so
# themselves; the harness sets its own Hypothesis settings.
settings.register_profile("helix-tests", deadline=None)
settings.load_profile("helix-tests")

# --- where the CPU goes: TESTS_CPU_LOG=FILE appends "nodeid<TAB>cpu s<TAB>wall s" per test -----------------------
# CPU is this process's and that of the children it reaped during the test (pytest runs, workers, npm): on the
# shared machine the wall time of a test says as much about the other sessions' load as about the test. Only this
# run and its xdist workers write: the pytest runs a test starts inherit the variable, and their items' CPU is
# already counted in that test's. (Adapter workers kept for a later run_conformance call are reaped, and counted,
# later: at the end of the xdist worker, which is counted nowhere.)
if os.environ.get("TESTS_CPU_LOG"):
    os.environ.setdefault("TESTS_CPU_LOG_OWNER", str(os.getpid()))


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _cpu_log(config: pytest.Config) -> str | None:
    owner = os.environ.get("TESTS_CPU_LOG_OWNER")
    this_run = str(os.getpid()) == owner or (hasattr(config, "workerinput") and str(os.getppid()) == owner)
    return os.environ.get("TESTS_CPU_LOG") if this_run else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    log = _cpu_log(item.config)
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{item.nodeid}\t{_cpu_seconds() - cpu:.3f}\t{time.perf_counter() - wall:.3f}\n")


# --- slow tests: run by `tox -e slow` (and by .ci/run after the README's command) or `pytest --slow`, not by a plain `pytest` ---

SLOW_REASON = (
    "a whole adapter suite, an end-to-end run of what rarely changes (packaging, the Node toolchain, xdist, shards, "
    "--lf, recording, the sandbox's and hostile adapters' attacks, screenshots) or the guide's walkthrough: "
    "seconds to minutes each; `pytest -n auto -m slow` (tox -e slow, and .ci/run after the README's command) runs "
    "them, `--slow` adds them, naming one by id runs it"
)
EXHAUSTIVE_REASON = (
    "exhaustive where the gate and the other tests sample (every fault at every position of every cassette), a "
    "second proof of what CI already proves once (packaging from a fresh install, a second Node, the examples on "
    "the SDKs a foreign adapter uses) or a smoke run of a developer's tool (the benchmark script): minutes, "
    "outside CI's 15-minute budget; `pytest -n auto -m exhaustive` (tox -e exhaustive) runs them, before a release "
    "and at the end of every working session, with the zoo; naming one by id runs it"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow", action="store_true", help="also run the tests marked slow (tox -e slow: only them)"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"slow: {SLOW_REASON}")
    config.addinivalue_line("markers", f"exhaustive: {EXHAUSTIVE_REASON}")
    config.addinivalue_line("markers", "long: a minute or more (a whole suite, a fresh install): run first")


@pytest.hookimpl(optionalhook=True)  # a run with -p no:xdist has no such hook
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the CPUs. A third of this suite's time is spent waiting (subprocesses
    starting, a hang cut off at its limit in real time, npm), and an extra worker fills it (measured on 2 cores,
    `.ci/run`: 14 min 38 s with 2 workers, 13 min 59 s with 3)."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the slow tests out unless asked for: --slow, a -m expression, or named by id. When they run, they
    run first, the long ones (minutes) first of all: pytest-xdist hands tests out in order, and a few long ones
    left for the end keep one worker busy while the others have nothing left (longest first shortens the run)."""
    items.sort(key=lambda item: (_mark_absent(item, "fresh_install", "long"), _mark_absent(item, "slow")))
    left_out = {"exhaustive"} if _exhaustive_left_out(config) else set()
    if _slow_left_out(config):
        left_out.add("slow")
    kept = [item for item in items if _mark_absent(item, *left_out)]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def _mark_absent(item: pytest.Item, *marks: str) -> bool:
    return not any(item.get_closest_marker(mark) for mark in marks)


def _named(config: pytest.Config) -> bool:
    return any("::" in str(arg) for arg in config.args)


def _slow_left_out(config: pytest.Config) -> bool:
    return not (config.getoption("--slow") or config.option.markexpr or _named(config))


def _exhaustive_left_out(config: pytest.Config) -> bool:
    """Only a ``-m`` that names them (``-m exhaustive``) or an id brings them in; ``--slow`` and ``-m slow`` do
    not (some are slow too), nor does CI."""
    return not ("exhaustive" in (config.option.markexpr or "") or _named(config))


def pytest_report_header(config: pytest.Config) -> list[str]:
    if hasattr(config, "workerinput"):
        return []
    lines = ["helix-conformance's own tests: how long they take is in the README's 'Developing' section"]
    if _slow_left_out(config):
        lines.append(f"the tests marked slow are left out of this run: {SLOW_REASON}")
    if _exhaustive_left_out(config):
        lines.append(f"the tests marked exhaustive are left out of this run: {EXHAUSTIVE_REASON}")
    return lines


@pytest.fixture(autouse=True)
def _no_helix_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings of the developer's shell (or the CI's terminal width) must not leak into the runs under test."""
    clear_helix_environment(monkeypatch)
    monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture
def adapters(pytester: pytest.Pytester) -> pytest.Pytester:
    """The pytester directory with the third-party module ``my_adapter`` importable (the cwd is on sys.path)."""
    pytester.makepyfile(my_adapter=ADAPTERS)
    return pytester


# --- the mutation score: every broken adapter and the clause that caught it ---------------------------------

BROKEN_TEST = "test_broken_adapters.py::test_broken_adapter_fails_its_clause["
_broken_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if BROKEN_TEST in report.nodeid and (report.when == "call" or not report.passed):
        name = report.nodeid.split(BROKEN_TEST, 1)[1].rstrip("]")
        _broken_outcomes[name] = "caught" if report.passed else ("gap" if report.skipped else "MISSED")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say that the slow tests were left out (so a green run of the fast ones is not read as all of them), and
    print the score of the broken-adapter library, grouped by the clause that catches each adapter."""
    if _slow_left_out(terminalreporter.config):
        terminalreporter.write_line(
            "the tests marked slow were left out of this run: `pytest -n auto -m slow` runs them (.ci/run does)"
        )
    if _exhaustive_left_out(terminalreporter.config):
        terminalreporter.write_line(
            "the tests marked exhaustive were left out of this run: `pytest -n auto -m exhaustive` runs them "
            "(tox -e exhaustive; not CI)"
        )
    if not _broken_outcomes:
        return
    from broken_adapters import BROKEN_ADAPTERS

    by_clause: dict[str, list[str]] = {}
    for broken in BROKEN_ADAPTERS:
        if broken.name in _broken_outcomes:
            mark = {"caught": "", "gap": " (known gap)", "MISSED": " (MISSED)"}[_broken_outcomes[broken.name]]
            by_clause.setdefault(broken.caught_by, []).append(f"{broken.name}{mark}")
    caught = sum(1 for outcome in _broken_outcomes.values() if outcome == "caught")
    write = terminalreporter.write_line
    write("")
    write(
        f"broken adapters: {caught} of {len(_broken_outcomes)} caught on their clause "
        f"(mutation score {100 * caught / len(_broken_outcomes):.0f}%)"
    )
    for clause in sorted(by_clause, key=lambda c: (c.split("-")[0], c)):
        write(f"  {clause:<8} {', '.join(by_clause[clause])}")
