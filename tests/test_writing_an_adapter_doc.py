"""docs/writing-an-adapter.md, done the way a new user does it: every command run, every file written.

The guide is executed, not paraphrased. Its fenced blocks are read in order:

- a block whose info string has ``title="PATH"`` is a file: it is written to PATH, relative to the current
  directory of the walkthrough (a later block with the same title replaces it, as the reader would);
- a ``sh`` block is run with bash from the current directory; a ``cd`` in it carries over to the next block.
  It must exit 0, or the code given by an ``<!-- exit: N -->`` comment on the line before the block;
- a ``text`` block is output the guide shows: its first line must appear in the output of the last command,
  so the excerpts cannot drift from what the harness prints.

The walkthrough runs in a fresh virtual environment in a temporary directory, as on a new machine, except
for two things the test cannot do offline and fast: the environment sees the project's installed packages
(helix-conformance, openai: what the guide's section 0 installs) through a ``.pth`` file, and ``pytest`` /
``helix-conformance`` in it are two-line shims running that environment's Python, since the packages' own
console scripts live in the project's environment. ``pip install -e .`` of the guide's package is real and
goes into the fresh environment. A ``helix-conformance`` checkout sits next to the package, as section 0 asks.
``PYTEST_ADDOPTS=--assert=plain -p no:cacheprovider`` only saves the recompilation of every plugin module per
pytest process (see ``plugin_runs``); it does not change what runs.

Cost: one venv, one editable install, a few selected runs and one full suite run, about 40 s.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from plugin_runs import HELIX_ENV

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "writing-an-adapter.md"
FENCE = re.compile(r"^```(\S*)([^\n]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="([^"]+)"')
EXIT = re.compile(r"<!--\s*exit:\s*(\d+)\s*-->\s*$")
COMMAND_TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    """One fenced block of the guide."""

    lang: str
    title: str | None
    body: str
    exit_code: int
    line: int


def blocks(text: str) -> list[Block]:
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        expected = EXIT.search(before)
        title = TITLE.search(match.group(2))
        found.append(
            Block(
                lang=match.group(1),
                title=title.group(1) if title else None,
                body=match.group(3),
                exit_code=int(expected.group(1)) if expected else 0,
                line=text[: match.start()].count("\n") + 1,
            )
        )
    return found


def test_the_guide_has_commands_files_and_expected_failures() -> None:
    """The parser sees what the walkthrough needs (cheap; fails before the slow test if the format drifts)."""
    found = blocks(GUIDE.read_text(encoding="utf-8"))
    commands = [b for b in found if b.lang == "sh"]
    assert len(commands) >= 8
    assert any(b.exit_code == 1 for b in commands)
    assert {"pyproject.toml", "src/acme_llm/__init__.py", "src/acme_llm/adapter.py"} <= {
        b.title for b in found
    }
    assert all(b.lang in ("sh", "text", "yaml", "python", "toml") for b in found)


def _environment(work: Path) -> dict[str, str]:
    """A fresh venv that also sees the project's packages; PATH leads to it."""
    venv = work / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    project_site = sysconfig.get_paths()["purelib"]
    Path(site, "_helix_project.pth").write_text(f"import site; site.addsitedir({project_site!r})\n")
    shims = {
        name: f'exec "{python}" -c "import sys, {module}; sys.exit({module}.main())" "$@"'
        for name, module in (("pytest", "pytest"), ("helix-conformance", "helix_conformance.cli"))
    }
    shims["pip"] = f'exec "{sys.executable}" -m pip --python "{python}" "$@"'  # no pip bootstrap: 8 s saved
    for name, command in shims.items():
        shim = venv / "bin" / name
        shim.write_text(f"#!/bin/sh\n{command}\n")
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in HELIX_ENV and k != "VIRTUAL_ENV"}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        PYTEST_ADDOPTS="--assert=plain -p no:cacheprovider",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.pop("PYTHONPATH", None)
    return env


TIMING = re.compile(r"\d+(?:\.\d+)? ?(?:ms|s)\b")
"""Times in an excerpt (a trace's milliseconds) differ from run to run: any text matches there, as at ``…``."""


def _assert_shown(block: Block, output: str, where: str) -> None:
    """Every line of an excerpt the guide shows is a line of the output (``...`` stands for lines left out),
    numbers included, but for times."""
    lines = [" ".join(line.split()) for line in output.splitlines()]
    for shown in block.body.splitlines():
        wanted = " ".join(shown.split())
        if not wanted or wanted in ("...", "…"):
            continue
        parts = [re.escape(part) for piece in TIMING.split(wanted) for part in piece.split("…")]
        pattern = re.compile("^.*" + ".*".join(parts) + ".*$")
        assert any(pattern.match(line) for line in lines), (
            f"{where}: {shown.strip()!r} is not in the output:\n{output[-5000:]}"
        )


@pytest.mark.long
@pytest.mark.slow
def test_every_command_of_the_guide_runs_as_shown(tmp_path: Path) -> None:
    (tmp_path / "helix-conformance").symlink_to(ROOT, target_is_directory=True)
    env = _environment(tmp_path)
    cwd, last_output = tmp_path, ""
    for block in blocks(GUIDE.read_text(encoding="utf-8")):
        where = f"docs/writing-an-adapter.md line {block.line}"
        if block.title:
            target = cwd / block.title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body, encoding="utf-8")
        elif block.lang == "sh":
            started = time.monotonic()
            state = tmp_path / ".cwd"
            script = f'{block.body}\nstatus=$?\npwd > "{state}"\nexit $status\n'
            done = subprocess.run(
                ["bash", "-c", script],
                check=False,
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT,
            )
            last_output = done.stdout + done.stderr
            assert done.returncode == block.exit_code, (
                f"{where}: `{block.body.strip()}` exited {done.returncode}, the guide says "
                f"{block.exit_code}\n{last_output[-5000:]}"
            )
            print(f"{time.monotonic() - started:5.1f} s  {block.body.strip()}")
            if state.exists():
                cwd = Path(state.read_text().strip())
        elif block.lang == "text":
            _assert_shown(block, last_output, where)
    assert (cwd / "helix-report.md").exists(), "the guide's last run writes its report"
