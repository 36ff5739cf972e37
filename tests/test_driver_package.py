"""The Node driver as users get it: inside the wheel (no npm step to run a ``node:`` adapter), and as the npm
tarball ``helix-conformance driver --pack`` writes (its types and ``HelixError``, until it is on the registry)."""

from __future__ import annotations

import json
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from node_setup import node_or_skip, node_run, npm_installed, npm_or_skip

from helix_conformance.cli import main
from helix_conformance.worker.node import DRIVER_PACKAGE, bundled_driver

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "drivers" / "node"
TYPESCRIPT_FIXTURE = DRIVER / "test" / "typescript"
TIMEOUT_S = 300


def test_the_driver_needs_no_npm_install_and_has_the_package_version() -> None:
    """The wheel carries the driver's sources as they are: that only works while it has no runtime dependency."""
    manifest = json.loads((DRIVER / "package.json").read_text())
    assert manifest["name"] == DRIVER_PACKAGE
    assert not manifest.get("dependencies"), "the wheel ships the driver without node_modules"
    assert sorted(manifest["files"]) == ["bin", "src"]
    assert manifest["version"] == version("helix-conformance")
    pyproject = (ROOT / "pyproject.toml").read_text()
    for part in ("bin", "src", "package.json"):
        assert f'"drivers/node/{part}" = "helix_conformance/_drivers/node/{part}"' in pyproject


def test_driver_command_prints_the_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["driver"]) == 0
    assert capsys.readouterr().out.strip() == str(bundled_driver())


@pytest.mark.exhaustive  # npm pack and install: packaging, rarely changed (and again in test_fresh_install)
def test_the_npm_tarball_installs_and_gives_types_and_helix_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`npm pack` of the driver, installed into a TypeScript project: an adapter typechecks against its types
    (tsc --strict) and imports HelixError at run time."""
    node_or_skip()
    npm = npm_or_skip("the driver's npm tarball cannot be packed or installed")
    npm_installed(TYPESCRIPT_FIXTURE, "node_modules/typescript")
    assert main(["driver", "--pack", str(tmp_path)]) == 0
    tarball = Path(capsys.readouterr().out.strip())
    assert tarball.name == "helix-conformance-driver-0.1.0.tgz"
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text('{"name": "my-adapter", "private": true, "type": "module"}')
    installed = subprocess.run(
        [npm, "install", "--save-dev", "--offline", "--no-audit", "--no-fund", str(tarball)],
        cwd=project, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-2000:]
    assert "file:" in json.loads((project / "package.json").read_text())["devDependencies"][DRIVER_PACKAGE]
    (project / "adapter.ts").write_text(ADAPTER_TS)
    (project / "tsconfig.json").write_text(TSCONFIG)
    tsc = TYPESCRIPT_FIXTURE / "node_modules" / "typescript" / "bin" / "tsc"
    typed = node_run(project, tsc, "-p", ".")
    assert typed.returncode == 0, typed.stdout[-3000:]
    ran = node_run(project, "dist/adapter.js")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads(ran.stdout) == {
        "name": "HelixError",
        "message": "slow down",
        "code": "provider_rate_limited",
        "category": "provider",
        "retryable": True,
        "statusCode": 429,
    }
    broken = ADAPTER_TS.replace("wireProfile: 'openai-chat'", "wire_profile: 'openai-chat'")
    (project / "adapter.ts").write_text(broken)
    mistyped = node_run(project, tsc, "-p", ".")
    assert mistyped.returncode != 0
    assert "wire_profile" in mistyped.stdout


ADAPTER_TS = """\
import { HelixError, type AdapterContext, type AdapterSpec, type LLMAdapter, type StepResult } from '@helix-conformance/driver';

export const spec: AdapterSpec = { name: 'typed', wireProfile: 'openai-chat', model: 'gpt-4o-mini', capabilities: ['abort'] };

export function createAdapter(context: AdapterContext): LLMAdapter {
  return {
    async generateStep(input): Promise<StepResult> {
      await input.callbacks?.onTextDelta?.(context.baseUrl);
      return { type: 'error', error: new HelixError('slow down', { code: 'provider_rate_limited', retryable: true, statusCode: 429 }), shouldStop: true, stopReason: 'error' };
    },
  };
}

const error = new HelixError('slow down', { code: 'provider_rate_limited', retryable: true, statusCode: 429 });
console.log(JSON.stringify(error));
"""

TSCONFIG = """\
{"compilerOptions": {"target": "es2022", "module": "nodenext", "moduleResolution": "nodenext", "strict": true,
  "outDir": "dist", "types": [], "skipLibCheck": false}, "include": ["adapter.ts"]}
"""
