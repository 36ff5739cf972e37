""".ci/run is exactly the README's test command, install included, then the slow tests that command leaves out
(``tox -e slow``'s command): every test runs in CI, and the README's command stays short (issue 33). The slow ones are
marked, not listed."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _readme_test_command() -> str:
    quick_start = README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    (command,) = [line for line in quick_start.splitlines() if line.endswith("&& pytest -n auto")]
    return command


def _slow_command() -> str:
    tox = (ROOT / "tox.ini").read_text(encoding="utf-8")
    section = tox.split("[testenv:slow]", 1)[1].split("\n[", 1)[0]
    (line,) = [line for line in section.splitlines() if line.startswith("commands = ")]
    return line.removeprefix("commands = ").removesuffix(" {posargs}")


def test_ci_runs_the_readme_test_command_verbatim_then_the_slow_tests_and_fails_when_either_fails() -> None:
    command = _readme_test_command()
    assert command.startswith('pip install -e ".[test]"')
    lines = CI.splitlines()
    assert f"{command} || status=$?" in lines
    assert f"{_slow_command()} || status=$?" in lines
    assert lines.index(f"{command} || status=$?") < lines.index(f"{_slow_command()} || status=$?")
    assert lines[-1] == 'exit "$status"'
    assert "set -euo pipefail" in CI


def test_the_slow_tests_are_the_ones_the_readme_command_leaves_out() -> None:
    assert _slow_command() == "pytest -n auto -m slow"
    assert _readme_test_command().endswith(" && pytest -n auto")


def test_ci_installs_the_browser_the_screenshot_tests_need() -> None:
    assert "apt-get install -y -q chromium" in CI
    assert "HELIX_CI_NO_BROWSER" in CI


def _run_the_test_block(fail: str) -> tuple[int, str]:
    """The script's last lines (the two test commands), with pip and pytest replaced by stand-ins that record their
    arguments and fail when asked to."""
    block = CI.splitlines()[CI.splitlines().index("status=0") :]
    stubs = f"""
pip() {{ :; }}
pytest() {{ echo "pytest $*"; [ "$*" != {shlex.quote(fail)} ]; }}
"""
    done = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + stubs + "\n".join(block)],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout


@pytest.mark.parametrize("fail", ["-n auto", "-n auto -m slow"])
def test_a_failing_tier_fails_the_script_and_the_other_still_runs(fail: str) -> None:
    status, ran = _run_the_test_block(fail)
    assert status == 1
    assert ran.splitlines() == ["pytest -n auto", "pytest -n auto -m slow"]


def test_both_tiers_passing_pass_the_script() -> None:
    assert _run_the_test_block("none") == (0, "pytest -n auto\npytest -n auto -m slow\n")
