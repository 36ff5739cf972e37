"""The numbers the docs state about the code, each with where the code keeps it (``doc_numbers.Fact``).

A fact's pattern finds the number in its doc (its first group); the test compares it with ``value()``. When the
code changes, the doc must follow: the test names the doc, the number written and the number now.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path

from doc_numbers import ROOT, Fact


def _g(number: float) -> str:
    """A number as the docs write it: 10.0 -> "10", 0.25 -> "0.25"."""
    return f"{number:g}"


def _ms(seconds: float) -> str:
    return _g(round(seconds * 1000, 3))


def _const(module: str, name: str) -> Callable[[], str]:
    def value() -> str:
        import importlib

        return _g(getattr(importlib.import_module(module), name))

    return value


def _python() -> str:
    found = re.search(r'^requires-python = ">=(\d+\.\d+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert found, "requires-python in pyproject.toml"
    return found.group(1)


def _option_default(name: str) -> Callable[[], str]:
    def value() -> str:
        from helix_conformance.settings import OPTIONS

        (option,) = [o for o in OPTIONS if o.name == name]
        return _g(float(option.default))

    return value


def _node() -> str:
    from helix_conformance.worker.node import MIN_NODE

    return ".".join(map(str, MIN_NODE))


def _default_workers(xdist: bool) -> Callable[[], str]:
    def value() -> str:
        from types import SimpleNamespace

        from helix_conformance.worker.pool import default_size

        config = SimpleNamespace(option=SimpleNamespace(numprocesses=2 if xdist else None))
        from helix_conformance.worker.pool import default_workers

        source = inspect.getsource(default_workers)
        assert "cpu_count() or 1) >= 2" in source, "the docs say: two workers on two or more CPUs"
        return str(default_size(config)) if xdist else "2"

    return value


def _tool_default(option: str) -> Callable[[], str]:
    def value() -> str:
        import sys

        sys.path.insert(0, str(ROOT / "tools"))
        try:
            from hpower.cli import parser
        finally:
            sys.path.remove(str(ROOT / "tools"))
        return str(parser().get_default(option))

    return value


def _clauses_in(area: str | None) -> Callable[[], str]:
    def value() -> str:
        from helix_conformance.clauses import CLAUSES

        return str(sum(1 for c in CLAUSES.values() if area is None or c.area == area))

    return value


def _areas() -> str:
    from helix_conformance.clauses import AREAS

    return str(len(AREAS))


def _replayed_recordings() -> str:
    from helix_conformance.importing.recorded import EXPECTED_FILE, load_expectations

    recordings = load_expectations(ROOT / "cassettes" / "recorded" / EXPECTED_FILE)
    return str(sum(1 for r in recordings if not r.excluded))


def _all_recordings() -> str:
    from helix_conformance.importing.recorded import EXPECTED_FILE, load_expectations

    return str(len(load_expectations(ROOT / "cassettes" / "recorded" / EXPECTED_FILE)))


def _exit(name: str) -> Callable[[], str]:
    def value() -> str:
        import pytest

        return str(int(pytest.ExitCode[name]))

    return value


def _excluded(prefix: str) -> Callable[[], str]:
    def value() -> str:
        from helix_conformance.importing.recorded import EXPECTED_FILE, load_expectations

        recordings = load_expectations(ROOT / "cassettes" / "recorded" / EXPECTED_FILE)
        return str(
            sum(1 for r in recordings if r.excluded and " ".join(r.excluded.split()).startswith(prefix))
        )

    return value


def _sources(folder: Path) -> Callable[[], str]:
    def value() -> str:
        import pytest

        from helix_conformance.importing.common import read_sources

        if not (folder / "SOURCES.md").is_file():
            pytest.skip(f"{folder} is not beside the project")
        return str(len(read_sources(folder / "SOURCES.md")))

    return value


def _openai_sdk_timeout() -> str:
    import openai

    return _g(openai.DEFAULT_TIMEOUT.read or 0)


def _read_timeout_share() -> str:
    from helix_conformance.replay.runner import ADAPTER_TIMEOUT_SHARE

    assert ADAPTER_TIMEOUT_SHARE == 0.2, "the docs say: a fifth"
    return _option_default("helix-timeout")() and _g(10 * ADAPTER_TIMEOUT_SHARE)


def _mib(module: str, name: str) -> Callable[[], str]:
    def value() -> str:
        import importlib

        return _g(getattr(importlib.import_module(module), name) / (1024 * 1024))

    return value


def _percent(module: str, name: str) -> Callable[[], str]:
    def value() -> str:
        import importlib

        return _g(round(getattr(importlib.import_module(module), name) * 100, 6))

    return value


def _ms_of(module: str, name: str) -> Callable[[], str]:
    def value() -> str:
        import importlib

        return _ms(getattr(importlib.import_module(module), name))

    return value


def _protocol(module: str) -> Callable[[], str]:
    return _const(module, "PROTOCOL_VERSION")


def _fault_sweep() -> str:
    from helix_conformance.scenarios.fault_kinds import FULL_SWEEP_EXAMPLES

    return str(FULL_SWEEP_EXAMPLES)


def _clause_count_rows() -> list[Fact]:
    from helix_conformance.clauses import AREAS

    return [
        Fact("docs/contract.md", rf"— {area}\]\([^)]*\) \((\d+) clauses\)", _clauses_in(area))
        for area in AREAS
    ]


FACTS: list[Fact] = [
    # README.md
    Fact("README.md", r"Python (\d+\.\d+)\+", _python),
    Fact("README.md", r"default (\d+); above 0 and at most \d+\)", _option_default("helix-timeout")),
    Fact("README.md", r"default \d+; above (0) and at most", lambda: "0"),
    Fact("README.md", r"and at most (\d+)\)", _const("helix_conformance.settings", "MAX_TIMEOUT_S")),
    Fact(
        "README.md", r"how deep the generated checks go \(default (\d+)\)", _option_default("helix-examples")
    ),
    Fact(
        "README.md",
        r"(\d+)× that many generated histories",
        _const("helix_conformance.checks.generated", "GENERATED_EXAMPLES_FACTOR"),
    ),
    Fact("README.md", r"the positions the fault corpus tries \((\d+) or more", _fault_sweep),
    Fact("README.md", r"default (\d+) on a machine with two or more CPUs", _default_workers(xdist=False)),
    Fact("README.md", r"two or more CPUs, (\d+) in each pytest-xdist worker", _default_workers(xdist=True)),
    Fact(
        "README.md", r"slow \((\d+) ms each", _ms_of("helix_conformance.replay.callbacks", "SLOW_CALLBACK_S")
    ),
    Fact("README.md", r"The (\d+) replayed live recordings", _replayed_recordings),
    Fact("README.md", r"shared modules \(default (\d+);", _tool_default("sample")),
    Fact("docs/harness-power.md", r"runs mutants in parallel \(default (\d+):", _tool_default("jobs")),
    Fact("README.md", r"Exit codes are pytest's: (\d) when", _exit("OK")),
    Fact("README.md", r"HARN-05\), (\d) when a clause fails", _exit("TESTS_FAILED")),
    Fact("README.md", r", (\d) for a usage error", _exit("USAGE_ERROR")),
    Fact("docs/ci.md", r"(?m)^\| (\d) \| every executed MUST clause holds", _exit("OK")),
    Fact("docs/ci.md", r"(?m)^\| (\d) \| a clause failed", _exit("TESTS_FAILED")),
    Fact("docs/ci.md", r"(?m)^\| (\d) \| interrupted", _exit("INTERRUPTED")),
    Fact("docs/ci.md", r"(?m)^\| (\d) \| usage error", _exit("USAGE_ERROR")),
    Fact("docs/real-traffic.md", r"\*\*recorded\*\* traffic: (\d+) exchanges", _all_recordings),
    Fact("docs/real-traffic.md", r"lists all (\d+) recordings", _all_recordings),
    Fact(
        "docs/real-traffic.md",
        r"`\.\./shared/recordings/SOURCES\.md` \((\d+)\)",
        _sources(ROOT.parent / "shared" / "recordings"),
    ),
    Fact(
        "docs/real-traffic.md",
        r"`tests/recordings/SOURCES\.md` \((\d+),",
        _sources(ROOT / "tests" / "recordings"),
    ),
    Fact("docs/real-traffic.md", r"never send them one; (\d+) recordings\)", _excluded("non-streaming")),
    Fact(
        "docs/real-traffic.md",
        r"without `alt=sse` \((\d+)\)",
        _excluded("streamGenerateContent without alt=sse"),
    ),
    Fact(
        "docs/typescript-adapters.md",
        r"\[worker-protocol\.md\]\([^)]*\), version (\d+)",
        _protocol("helix_conformance.worker.driver"),
    ),
    # docs/writing-an-adapter.md
    Fact("docs/writing-an-adapter.md", r"Python (\d+\.\d+) or later", _python),
    Fact("docs/writing-an-adapter.md", r"a fifth of `--helix-timeout`, (\d+) s\)", _read_timeout_share),
    # docs/ci.md
    Fact("docs/ci.md", r"the official\s+SDKs default to (\d+) s", _openai_sdk_timeout),
    # docs/recording.md
    Fact(
        "docs/recording.md",
        r"random-looking tokens \((\d+) to \d+",
        _const("helix_conformance.recording.scan", "ENTROPY_MIN_LENGTH"),
    ),
    Fact(
        "docs/recording.md",
        r"random-looking tokens \(\d+ to (\d+)",
        _const("helix_conformance.recording.scan", "MAX_TOKEN_LENGTH"),
    ),
    # docs/typescript-adapters.md and the driver protocol
    Fact("docs/typescript-adapters.md", r"Node\.js >= (\d+\.\d+)", _node),
    Fact("docs/worker-protocol.md", r"on PATH \(>= (\d+\.\d+)\)", _node),
    Fact("docs/typescript-adapters.md", r"The driver needs (\d+\.\d+)", _node),
    Fact(
        "docs/worker-protocol.md",
        r"back to back once with its count, (\d+) lines at most",
        _const("helix_conformance.replay.output", "SHOWN_LINES"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"plan fires before chunk (\d+)",
        _const("helix_conformance.checks.errors", "CANCEL_AFTER_CHUNKS"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"worker protocol \(version (\d+);",
        _protocol("helix_conformance.worker.protocol"),
    ),
    Fact(
        "docs/worker-protocol.md", r"version (\d+) for drivers", _protocol("helix_conformance.worker.driver")
    ),
    Fact(
        "docs/worker-protocol.md",
        r"size bound \((\d+) MiB per message\)",
        _mib("helix_conformance.worker.protocol", "MAX_MESSAGE_BYTES"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"nested deeper than (\d+) levels",
        _const("helix_conformance.worker.snapshot", "MAX_DEPTH"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"larger than (\d+) MB in all",
        _mib("helix_conformance.worker.snapshot", "MAX_BUDGET"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"sends `shutdown`, waits (\d+) s",
        _const("helix_conformance.worker.client", "STOP_GRACE_S"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"asks the keeper, waits (\d+(?:\.\d+)?) s",
        _const("helix_conformance.worker.client", "KEEPER_GRACE_S"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"\(default (\d+) on a machine with two or more CPUs",
        _default_workers(xdist=False),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"two or more CPUs, (\d+) in each pytest-xdist worker\)",
        _default_workers(xdist=True),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"\(\+(\d+(?:\.\d+)?) s for the pipe\)",
        _const("helix_conformance.worker.driver", "RETURN_GRACE_S"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"`lateWaitMs` \+ (\d+) s to send",
        _const("helix_conformance.worker.driver", "DONE_GRACE_S"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"the host\s+pauses (\d+) ms",
        _ms_of("helix_conformance.replay.host_state", "PACE_S"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"`BARRIER_PATIENCE_S` \((\d+) s, real\)",
        _const("helix_conformance.replay.host_state", "BARRIER_PATIENCE_S"),
    ),
    Fact(
        "README.md",
        r"in at most (\d+) more runs of the adapter",
        _const("helix_conformance.checks.generated", "SHRINK_RUNS"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"`BEGIN_WAIT_S`\s+\((\d+) s\)",
        _const("helix_conformance.replay.host_state", "BEGIN_WAIT_S"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"`UNLINKED_AFTER_REPORTS` \((\d+)\)",
        _const("helix_conformance.replay.host_state", "UNLINKED_AFTER_REPORTS"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"still open after (\d+)% of",
        _percent("helix_conformance.replay.stage", "STALL_EXPIRY_SHARE"),
    ),
    Fact(
        "docs/worker-protocol.md",
        r"trickle at (\d+) ms each",
        _ms_of("helix_conformance.replay.stage", "SLOW_AFTER_ABORT_S"),
    ),
    Fact("docs/worker-protocol.md", r"`AdapterContext\.timeout` \((\d+) s by default\)", _read_timeout_share),
    # docs/speed.md
    Fact("docs/speed.md", r"\(`--helix-timeout`, (\d+) s[;)]", _option_default("helix-timeout")),
    Fact(
        "docs/speed.md",
        r"plus the (\d+) s CFG-05 allows",
        _const("helix_conformance.clauses", "RETRY_AFTER_BOUND_S"),
    ),
    Fact(
        "docs/speed.md",
        r"the loop waits (\d+) ms for real",
        _ms_of("helix_conformance.replay.virtual_sleep", "SETTLE_S"),
    ),
    Fact(
        "docs/speed.md",
        r"limit \+ (\d+) s, the step",
        _const("helix_conformance.replay.runner", "THREAD_GRACE_S"),
    ),
    Fact(
        "docs/speed.md",
        r"looks again after (\d+) ms",
        _ms_of("helix_conformance.replay.virtual_sleep", "SETTLE_S"),
    ),
    Fact(
        "docs/speed.md",
        r"up to (\d+) ms, and skips",
        _ms_of("helix_conformance.replay.virtual_sleep", "SLEEP_RECHECK_MAX_S"),
    ),
    Fact(
        "docs/speed.md",
        r"`--helix-workers=N`; (\d+) in each\s+pytest-xdist worker",
        _default_workers(xdist=True),
    ),
    Fact(
        "docs/speed.md",
        r"polls once in (\d+) busy turns",
        _const("helix_conformance.replay.virtual_selector", "POLL_EVERY_BUSY_TURNS"),
    ),
    # docs/contract.md
    Fact("docs/contract.md", r"(\d+) clauses in\s+\d+ areas", _clauses_in(None)),
    Fact("docs/contract.md", r"\d+ clauses in\s+(\d+) areas", _areas),
    Fact(
        "docs/contract.md",
        r"in replay a fifth of `--helix-timeout` \((\d+) s by default\)",
        _read_timeout_share,
    ),
    Fact(
        "docs/contract.md",
        r"`--helix-timeout` plus a (\d+) s grace",
        _const("helix_conformance.replay.runner", "THREAD_GRACE_S"),
    ),
    *_clause_count_rows(),
]
"""Kept in the order of the docs; ``test_doc_numbers`` fails on a fact whose pattern finds nothing."""
