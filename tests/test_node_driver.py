"""``--adapter=node:...`` end to end: the Node driver (drivers/node) under pytest — its own suite, its typecheck,
TypeScript loaded through real tsx —, a minimal JavaScript adapter judged both ways, its console kept per run, the
fetch template and the Vercel AI SDK example on a slice each. Skipped, saying what is missing, when Node.js >=
20.6 or npm is absent; npm packages are installed on first use (tests/node_setup.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from node_setup import node_or_skip, node_run, npm_installed

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "drivers" / "node"
EXAMPLE = ROOT / "examples" / "vercel-ai-adapter"
MINIMAL = "node:tests/node_adapters/minimal_openai.mjs"
TIMEOUT_S = 600


def _node() -> str:
    return node_or_skip()


def _example_installed() -> None:
    """The example's npm packages, installed here on first use (``npm ci``; `npm ci` also builds dist/), so the
    README's one test command needs no npm step of its own."""
    npm_installed(EXAMPLE, "node_modules/ai", "dist/openai.js")


def _gate(
    adapter: str, selection: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``pytest --adapter=ADAPTER -k SELECTION`` from the repository root, as a user runs it."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    environment.pop("ADAPTER", None)
    environment.update(env or {})
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--assert=plain", "-q"]
    command += [f"--adapter={adapter}", "-k", selection, *extra]
    return subprocess.run(
        command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


TYPESCRIPT_FIXTURE = DRIVER / "test" / "typescript"
"""TypeScript adapters in a package with tsx and typescript from npm (``npm ci`` there builds dist/ with tsc)."""


def _failures(tap: str) -> str:
    """Each failed test of node's TAP output with the lines that explain it (the tail alone may miss them)."""
    lines = tap.splitlines()
    failed = [i for i, line in enumerate(lines) if line.lstrip().startswith("not ok")]
    names = [lines[i].lstrip().split(" - ", 1)[-1] for i in failed]
    blocks = ["\n".join(lines[i : i + 30]) for i in failed]
    # the names first: pytest's one-line summary of this test shows the start of the message, and nothing else
    return f"node tests failed: {'; '.join(names)}\n" + "\n...\n".join(blocks)[-6000:] + "\n---\n"


def _node_tests(*files: str) -> None:
    """``node --test FILES`` in the driver's folder: all must pass, none skipped."""
    node = _node()
    done = subprocess.run(
        [node, "--test", *files], cwd=DRIVER, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert done.returncode == 0, _failures(done.stdout) + done.stdout[-1500:] + done.stderr[-2000:]
    assert re.search(r"^# fail 0$", done.stdout, re.MULTILINE), _failures(done.stdout) + done.stdout[-1500:]
    assert re.search(r"^# skipped 0$", done.stdout, re.MULTILINE), done.stdout[-2000:]


@pytest.mark.slow
def test_driver_unit_tests_pass() -> None:
    """The driver's own suite (node --test): protocol, callbacks, errors, abort, hostile adapters."""
    tests = sorted(
        str(p.relative_to(DRIVER))
        for p in (DRIVER / "test").glob("*.test.mjs")
        if p.name != "typescript.test.mjs"
    )
    _node_tests(*tests)


@pytest.mark.slow  # tsc over the driver: a toolchain run, rarely changed
def test_driver_javascript_typechecks_against_its_declarations() -> None:
    """`npm run typecheck` (tsc --checkJs, strict): the JSDoc-typed sources against src/index.d.ts."""
    npm_installed(DRIVER, "node_modules/typescript", "node_modules/@types/node")
    done = node_run(DRIVER, DRIVER / "node_modules" / "typescript" / "bin" / "tsc", "-p", "jsconfig.json")
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.slow  # the Node driver end to end: the Node toolchain
def test_typescript_adapters_load_through_real_tsx() -> None:
    """.ts, .mts and .cts adapters through the tsx npm installs today (4.23: its CommonJS API cannot register),
    and tsc's .js and .cjs output, each loaded and run by the driver."""
    npm_installed(TYPESCRIPT_FIXTURE, "node_modules/tsx", "dist/compiled.js", "dist/compiled-cjs.cjs")
    _node_tests("test/typescript.test.mjs")


SLICE = "openai-chat::text_basic:: and (RES-01 or RES-02 or STR-01 or STR-02 or STOP-01 or MSG-01 or MSG-10)"


def test_minimal_javascript_adapter_passes_its_slice() -> None:
    """A correct JavaScript adapter passes through the driver and the replay server: no false failure."""
    _node()
    done = _gate(MINIMAL, SLICE)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "VERDICT: PASS" in done.stdout
    assert "minimal-openai-js" in done.stdout


@pytest.mark.slow  # the Node driver end to end: the Node toolchain
def test_buffering_javascript_adapter_fails_on_str02_only() -> None:
    """The same adapter made to buffer its callbacks until the end fails STR-02, and only STR-02."""
    _node()
    done = _gate(MINIMAL, SLICE, env={"HELIX_TEST_BUFFERED": "1"})
    assert done.returncode == 1, done.stdout[-4000:]
    failed = set(re.findall(r"^FAILED \S+::text_basic::([A-Z]+-\d+)\]", done.stdout, re.MULTILINE))
    assert failed == {"STR-02"}, done.stdout[-4000:]


def test_missing_javascript_module_is_a_usage_error() -> None:
    _node()
    done = _gate("node:tests/node_adapters/no_such_adapter.mjs", "text_basic")
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no_such_adapter.mjs" in done.stdout + done.stderr


def _red(done: subprocess.CompletedProcess[str]) -> str:
    """A red gate's failures in full (their details: the trace, what the replay host saw), then its summary."""
    failures = done.stdout.partition("= FAILURES =")[2][:8000]
    return f"{failures}\n...\n{done.stdout[-3000:]}{done.stderr[-2000:]}"


VERCEL_SLICE = "anthropic-messages:: and (text_basic or tool_call_parallel or finish_tool or thinking_text)"


@pytest.mark.slow
def test_vercel_ai_adapter_gates_on_anthropic_with_its_known_bugs() -> None:
    """The TypeScript Vercel AI SDK adapter, end to end on one profile: the gate passes with its baseline, and the
    Vercel bug the baseline names (reading past message_stop, NT-05) is still seen, not silently gone."""
    _example_installed()
    baseline = "--helix-baseline=examples/vercel-ai-adapter/baselines/anthropic-messages.yaml"
    done = _gate("node:examples/vercel-ai-adapter/anthropic.mjs", VERCEL_SLICE, baseline)
    assert done.returncode == 0, _red(done)
    assert "VERDICT: PASS" in done.stdout
    assert re.search(
        r"known failures \(baseline, not failing the gate\): \d+ check\(s\) in NT-05", done.stdout
    ), done.stdout[-3000:]


@pytest.mark.exhaustive  # three full suites through Node: about a minute (CI runs the anthropic slice above)
@pytest.mark.parametrize(
    ("entry", "profile"),
    [("openai", "openai-chat"), ("anthropic", "anthropic-messages"), ("gemini", "gemini")],
)
def test_each_vercel_example_gates_green_on_its_full_suite_with_its_baseline(
    entry: str, profile: str
) -> None:
    """The commands of the example's README, whole: its baseline lists exactly its known failures. A new failure
    (a scenario added since) or an entry no check judges any more (a plan that changed) turns the gate red; CI runs
    only a slice, so this is where either is seen."""
    _example_installed()
    baseline = f"--helix-baseline=examples/vercel-ai-adapter/baselines/{profile}.yaml"
    done = _gate(f"node:examples/vercel-ai-adapter/{entry}.mjs", f"{profile}::", baseline)
    assert done.returncode == 0, _red(done)
    assert "VERDICT: PASS" in done.stdout


TEMPLATE = ROOT / "examples" / "fetch-template-adapter"
TEMPLATE_SLICE = (
    "text_basic or tool_call_parallel or finish_tool or thinking_text or http_429 or midstream_error or "
    "connection_reset or retry_429_then_success or abort_before or abort_midstream or stall_read_timeout or compat_"
)


@pytest.mark.slow  # npm ci of the template and a gate run: the fresh-install test covers it too
def test_fetch_template_adapter_passes_the_gate_on_its_slice() -> None:
    """The TypeScript template on plain fetch, loaded from adapter.ts through its own tsx: no baseline, no failure
    on a slice of every family (its full run passes too: examples/fetch-template-adapter/README.md)."""
    npm_installed(TEMPLATE, "node_modules/tsx", "node_modules/@helix-conformance/driver")
    done = _gate("node:examples/fetch-template-adapter/adapter.ts", TEMPLATE_SLICE, "--helix-strict")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "VERDICT: PASS" in done.stdout
    abort = re.search(r"^AB Abort\s+(\d+)\s+(\d+)\s+0\s", done.stdout, re.MULTILINE)
    assert abort is not None, done.stdout[-3000:]
    assert int(abort.group(2)) == 3, done.stdout[-3000:]  # AB-01..03 judged, all held


@pytest.mark.slow  # the Node driver end to end: the Node toolchain
def test_console_noise_is_shown_once_with_the_failure_of_its_run_only() -> None:
    """An SDK logging a line per unparsable event floods nothing: each run's stdout/stderr comes back with the
    run, and only a failing check shows it, the repeated line once with its count."""
    _node()
    env = {"HELIX_TEST_NOISY": "1", "HELIX_TEST_BUFFERED": "1"}
    done = _gate(MINIMAL, SLICE, env=env)
    assert done.returncode == 1, done.stdout[-4000:]
    noise = 'Could not parse message into JSON: data: {"broken"'
    assert f"{noise}   [× 300, back to back]" in done.stdout, done.stdout[-4000:]
    failures = len(re.findall(r"^FAILED ", done.stdout, re.MULTILINE))
    assert failures == 1
    assert done.stdout.count(noise) == failures  # once, in the STR-02 failure; the passing checks show none
    assert noise not in done.stderr
    assert "the adapter's stdout/stderr during the run judged here:\n" in done.stdout
    assert "step for Say hello." in done.stdout  # console.log too, after the stderr lines as written
