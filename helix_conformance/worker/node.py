"""``--adapter=node:path/to/adapter.mjs``: find Node and the driver package, start the driver for the session.

A missing ``node``, a Node older than 20.6 or a missing driver is a one-line usage error saying what to install.
The driver ships inside the package (``_drivers/node``), so nothing is installed with npm to run an adapter. NT-03 and HARN-04 are judged the Node way (docs/contract.md): cancellation through the step's AbortSignal, and
the timers the adapter leaves scheduled (the driver's ``leftovers.js``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..adapters import NODE_PREFIX as PREFIX
from ..adapters import AdapterNotFound

MIN_NODE = (20, 6)
"""The driver's ``engines.node`` (>= 20.6: ``import.meta.dirname``, stable ``--import``)."""
DRIVER_PACKAGE = "@helix-conformance/driver"
"""The npm name of the driver (``drivers/node``), for its types and ``HelixError``; not on the registry yet
(docs/typescript-adapters.md: installing it from the tarball ``helix-conformance driver --pack`` writes)."""
DRIVER_BIN = Path("bin") / "helix-driver.mjs"


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


def bundled_driver() -> Path:
    """The driver's package folder: inside the wheel as ``helix_conformance/_drivers/node`` (its JavaScript
    sources and type declarations, no npm dependencies), at ``drivers/node`` in a checkout."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "_drivers" / "node"
    return installed if (installed / DRIVER_BIN).is_file() else package.parent / "drivers" / "node"


def driver_script() -> Path:
    """The driver's entry point: ``HELIX_DRIVER`` (a driver folder or its ``bin/helix-driver.mjs``), else the
    driver of this installation of helix-conformance, which speaks its protocol version."""
    override = os.environ.get("HELIX_DRIVER")
    if override:
        script = Path(override)
        if script.is_dir():
            script = script / DRIVER_BIN
        if not script.is_file():
            raise AdapterNotFound(f"node: adapters: HELIX_DRIVER={override} is not the driver's {DRIVER_BIN}")
        _check_installed(script.parent.parent)
        return script
    package = bundled_driver()
    if not (package / DRIVER_BIN).is_file():
        raise AdapterNotFound(
            f"node: adapters: this installation of helix-conformance has no Node driver ({package / DRIVER_BIN} "
            "is missing): reinstall helix-conformance, or set HELIX_DRIVER to a checkout's drivers/node"
        )
    _check_installed(package)
    return package / DRIVER_BIN


def _check_installed(package: Path) -> None:
    """A driver package with dependencies must have them installed (``npm install`` there); the bundled one
    has none (tests/test_driver_package.py)."""
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


def node_command() -> list[str]:
    """How the driver is started: Node and the driver's entry point (usage errors when either is missing)."""
    return [node_binary(), str(driver_script())]
