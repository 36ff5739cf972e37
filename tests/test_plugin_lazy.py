"""The pytest11 entry point loads in every pytest run where the package is installed: it must stay light."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "pydantic",
    "httpx",
    "httpx2",
    "jsonschema",
    "yaml",
    "helix_conformance.contract",
    "helix_conformance.checks",
)


def test_plugin_module_imports_nothing_heavy() -> None:
    code = (
        "import sys, helix_conformance.plugin as p; "
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"the plugin imported {out.stdout.strip()} at load time"
