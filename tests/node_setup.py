"""Node.js for the tests of ``node:`` adapters: find a usable ``node``, and install an npm package folder of the
repository (an example, a fixture) on first use with ``npm ci`` (exactly its package-lock.json, from npm's cache
when it has the packages). Every test that cannot get them is skipped saying what is missing, never silently."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

MIN_NODE = (20, 6)
INSTALL_TIMEOUT_S = 600


def node_or_skip() -> str:
    """``HELIX_NODE`` or ``node`` on PATH, at least MIN_NODE; the test is skipped saying so otherwise."""
    node = shutil.which(os.environ.get("HELIX_NODE") or "node")
    if node is None:
        pytest.skip("Node.js >= 20.6 is not on PATH (nor HELIX_NODE): the node: adapter tests need it")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    found = re.match(r"v(\d+)\.(\d+)", version)
    if found is None or (int(found.group(1)), int(found.group(2))) < MIN_NODE:
        pytest.skip(
            f"Node.js >= 20.6 is needed for the node: adapter tests; {node} is {version or 'unknown'}"
        )
    return node


def npm_or_skip(why: str) -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not on PATH: {why}")
    return npm


def node_run(folder: Path, *arguments: str | Path) -> subprocess.CompletedProcess[str]:
    """``node ARGUMENTS`` in ``folder`` (its output captured as text): a script, or a tool such as tsc."""
    return subprocess.run(
        [node_or_skip(), *map(str, arguments)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )


def npm_installed(folder: Path, *wanted: str) -> None:
    """``npm ci`` in ``folder`` unless every path of ``wanted`` (relative to it) exists; xdist workers install
    it once. Skips the test with npm's error when the install fails (no registry, no cache)."""
    node_or_skip()
    if all((folder / p).exists() for p in wanted):
        return
    npm = npm_or_skip(f"{folder.name} cannot be installed (`npm ci` there)")
    with open(folder / ".npm-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all((folder / p).exists() for p in wanted):
            return
        done = subprocess.run(
            [npm, "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"`npm ci` in {folder} failed: {done.stderr.strip()[-500:]}")
