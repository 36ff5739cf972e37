"""``--adapter=node:path/to/adapter.mjs``: find Node and the driver package, start the driver for the session.

A missing ``node``, a Node older than 20 or a driver whose dependencies were never installed is a one-line usage
error saying what to install. Clauses that only exist for Python adapters are planned as not applicable here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..adapters import AdapterNotFound

PREFIX = "node:"
MIN_NODE = (20, 6)
"""The driver's ``engines.node`` (>= 20.6: ``import.meta.dirname``, stable ``--import``)."""
DRIVER_PACKAGE = "@helix-conformance/driver"
"""The npm package of the driver (``drivers/node`` in the repository)."""
DRIVER_BIN = Path("bin") / "helix-driver.mjs"
NOT_APPLICABLE: dict[str, str] = {
    "NT-03": "not applicable to a node: adapter: NT-03 cancels the asyncio task running generate_step; a "
    "JavaScript adapter is cancelled through its AbortSignal, which AB-01..03 judge",
    "HARN-04": "not applicable to a node: adapter: HARN-04 counts asyncio tasks left pending; Node cannot tell "
    "the adapter's leftover timers from its HTTP client's connection-pool timers",
}
"""Clauses planned as skipped, with why, for adapters run by a driver."""


def is_node(name: str) -> bool:
    return name.startswith(PREFIX)


def node_binary() -> str:
    """``HELIX_NODE`` or ``node`` on PATH, at least MIN_NODE; a usage error otherwise."""
    node = os.environ.get("HELIX_NODE") or shutil.which("node")
    if not node:
        raise AdapterNotFound(
            f"node: adapters need Node.js >= {_shown(MIN_NODE)}: `node` was not found on PATH (install Node.js, or set HELIX_NODE "
            "to the node binary)"
        )
    try:
        version = subprocess.run(
            [node, "--version"], check=False, capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise AdapterNotFound(
            f"node: adapters need Node.js >= 20: running {node} --version failed: {exc}"
        ) from None
    found = re.match(r"v(\d+)\.(\d+)", version)
    if found is None or (int(found.group(1)), int(found.group(2))) < MIN_NODE:
        raise AdapterNotFound(
            f"node: adapters need Node.js >= {_shown(MIN_NODE)}; {node} is {version or 'of an unknown version'}"
        )
    return node


def _shown(version: tuple[int, int]) -> str:
    return ".".join(map(str, version))


def driver_script(cwd: Path) -> Path:
    """The driver's entry point: ``HELIX_DRIVER``, the project's ``node_modules``, or this checkout's driver."""
    override = os.environ.get("HELIX_DRIVER")
    if override:
        script = Path(override)
        if script.is_dir():
            script = script / DRIVER_BIN
        if not script.is_file():
            raise AdapterNotFound(f"node: adapters: HELIX_DRIVER={override} is not the driver's {DRIVER_BIN}")
        return script
    candidates = [folder / "node_modules" / DRIVER_PACKAGE for folder in (cwd, *cwd.parents)]
    candidates.append(Path(__file__).resolve().parents[2] / "drivers" / "node")
    for package in candidates:
        if (package / DRIVER_BIN).is_file():
            _check_installed(package)
            return package / DRIVER_BIN
    raise AdapterNotFound(
        f"node: adapters need the driver package: run `npm install --save-dev {DRIVER_PACKAGE}` in your project "
        "(or set HELIX_DRIVER to its bin/helix-driver.mjs)"
    )


def _check_installed(package: Path) -> None:
    """A driver package with dependencies must have them installed (``npm install`` there)."""
    try:
        manifest: Any = json.loads((package / "package.json").read_text())
    except (OSError, ValueError):
        return
    missing = [d for d in (manifest.get("dependencies") or {}) if not _resolvable(package, d)]
    if missing:
        raise AdapterNotFound(
            f"node: adapters: the driver in {package} lacks its dependencies ({', '.join(missing)}): run "
            f"`npm install` in {package}"
        )


def _resolvable(package: Path, dependency: str) -> bool:
    return any((folder / "node_modules" / dependency).is_dir() for folder in (package, *package.parents))


def node_command(cwd: Path) -> list[str]:
    """How the driver is started: Node and the driver's entry point (usage errors when either is missing)."""
    return [node_binary(), str(driver_script(cwd))]
