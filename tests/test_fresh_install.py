"""A TypeScript author's first run, on a machine with only Python, Node and npm: the wheel built from this tree,
installed into a fresh virtual environment (no checkout on any path), and `pytest --adapter=node:...` from an
empty folder against a `.ts` adapter on tsx and the same adapter compiled to `.js` by tsc. The adapter is the
fetch template copied out of the repository the way its README says, its driver types installed from the
tarball `helix-conformance driver --pack` writes.

Slow (a wheel build, a virtual environment, npm installs: about a minute or two from warm pip and npm caches): it
is marked exhaustive: `tox -e exhaustive` runs it, at the end of every working session and before a release, not CI
(whose budget it took a minute and a half of; the wheel's Python side is tried the same way by ../shared/tools/
fresh-check, and the driver's sources in the wheel by tests/test_driver_package.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from node_setup import node_or_skip, npm_or_skip

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "examples" / "fetch-template-adapter"
TIMEOUT_S = 900
SLICE = "openai-chat:: and (text_basic or tool_call_parallel or http_429 or abort_midstream or stall_read_timeout)"

pytestmark = [pytest.mark.fresh_install, pytest.mark.exhaustive]  # a wheel built and installed: minutes


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _clean_environment(venv: Path) -> dict[str, str]:
    """The user's shell: the fresh environment first on PATH, nothing of this checkout or of the test run."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HELIX_", "PYTEST_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.pop("ADAPTER", None)
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return env


def test_a_ts_adapter_and_its_compiled_js_run_green_from_a_pip_install(tmp_path: Path) -> None:
    node_or_skip()
    npm = npm_or_skip("the fresh-install test installs the template's npm packages")
    wheels, venv, adapter, empty = (tmp_path / name for name in ("wheels", "venv", "my-adapter", "empty"))
    empty.mkdir()
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        ROOT,
        dict(os.environ),
    )
    wheel = next(wheels.glob("helix_conformance-*.whl"))
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, dict(os.environ))
    env = _clean_environment(venv)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], tmp_path, env)

    driver = _run([str(venv / "bin" / "helix-conformance"), "driver"], empty, env).stdout.strip()
    assert Path(driver).is_relative_to(venv), driver  # the wheel's own driver, not this checkout's

    # docs/typescript-adapters.md's steps for a copy of the template
    shutil.copytree(
        TEMPLATE, adapter, ignore=shutil.ignore_patterns("node_modules", "dist", "package-lock.json")
    )
    _run([npm, "pkg", "delete", "devDependencies.@helix-conformance/driver"], adapter, env)
    tarball = _run(
        [str(venv / "bin" / "helix-conformance"), "driver", "--pack", "."], adapter, env
    ).stdout.strip()
    quiet = ["--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"]
    _run([npm, "install", "--save-dev", *quiet, tarball], adapter, env)
    _run([npm, "install", *quiet], adapter, env)
    installed = json.loads((adapter / "package.json").read_text())["devDependencies"]
    assert installed["@helix-conformance/driver"].endswith(".tgz"), installed
    _run(
        [npm, "exec", "--", "tsc", "-p", "tsconfig.json", "--noEmit", "false", "--outDir", "dist"],
        adapter,
        env,
    )
    assert (adapter / "dist" / "adapter.js").is_file()

    for module in (adapter / "adapter.ts", adapter / "dist" / "adapter.js"):
        command = [str(venv / "bin" / "pytest"), "-p", "no:cacheprovider", "-q", f"--adapter=node:{module}"]
        done = subprocess.run(
            [*command, "-k", SLICE], cwd=empty, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{module}:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
        assert "VERDICT: PASS" in done.stdout
        assert "fetch-template" in done.stdout
    assert list(empty.iterdir()) == []  # nothing written where the user ran it
