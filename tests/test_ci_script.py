""".ci/run is exactly the README's test command, install included, and that command runs every test: the slow
ones are marked, not listed, and ``--slow`` adds them (issue 33)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _readme_test_command() -> str:
    quick_start = README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    (command,) = [line for line in quick_start.splitlines() if line.endswith("pytest -n auto --slow")]
    return command


def test_ci_runs_the_readme_test_command_verbatim_and_fails_when_it_fails() -> None:
    command = _readme_test_command()
    assert command.startswith('pip install -e ".[test]"')
    assert command in CI.splitlines()
    assert "set -euo pipefail" in CI


def test_the_slow_tests_have_their_tox_env_too() -> None:
    tox = (ROOT / "tox.ini").read_text(encoding="utf-8")
    section = tox.split("[testenv:slow]", 1)[1].split("\n[", 1)[0]
    assert "pytest -m slow" in section


def test_ci_installs_the_browser_the_screenshot_tests_need() -> None:
    assert "apt-get install -y -q chromium" in CI
    assert "HELIX_CI_NO_BROWSER" in CI
