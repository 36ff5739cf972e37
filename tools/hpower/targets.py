"""What is measured: the reference adapters' files, which adapter's suite judges each, and how the
suite is started (a pytest subprocess in a directory of its own, as a user runs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference_adapters"
TOOLS = ROOT / "tools"

OWN_FILES: dict[str, tuple[str, ...]] = {
    "openai": ("openai_chat.py",),
    "anthropic": ("anthropic.py",),
    "gemini": ("gemini.py", "_gemini_schema.py"),
}
SHARED_FILES = ("_http.py", "_sse.py")
ADAPTERS = tuple(OWN_FILES)


class ToolError(Exception):
    """A problem the developer must fix before measuring (one line, says what to do)."""


@dataclass(frozen=True)
class Pool:
    """Mutants of ``files``; one is killed when the suite of any adapter in ``judges`` fails on it."""

    name: str
    files: tuple[str, ...]
    judges: tuple[str, ...]


def rel(name: str) -> str:
    """A file of the package as reported: ``reference_adapters/<name>``."""
    return f"reference_adapters/{name}"


def pools(adapter: str) -> list[Pool]:
    """One adapter: its files and the shared ones, judged by its suite. ``all``: each adapter's own files,
    and the shared files judged by all three suites."""
    if adapter != "all":
        files = tuple(rel(f) for f in OWN_FILES[adapter] + SHARED_FILES)
        return [Pool(adapter, files, (adapter,))]
    own = [Pool(name, tuple(rel(f) for f in files), (name,)) for name, files in OWN_FILES.items()]
    return [*own, Pool("shared", tuple(rel(f) for f in SHARED_FILES), ADAPTERS)]


def suite_args(adapter: str, examples: int) -> list[str]:
    """The conformance suite as the mutants are judged by it (``-p pytester`` is the project's, not ours)."""
    return [
        sys.executable,
        "-m",
        "pytest",
        f"--adapter={adapter}",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--helix-examples={examples}",
    ]


def prepare_run_dir(directory: Path) -> Path:
    """An empty directory whose ``pytest.ini`` stops pytest from reading any project's configuration."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return directory


def environment(path_first: Path) -> dict[str, str]:
    """The environment of a suite run with ``path_first`` ahead of everything else on ``sys.path``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(path_first), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("COVERAGE_PROCESS_START", None)
    return env


def check_installed() -> None:
    """The suite must import the adapters of this checkout (an editable install), or nothing matches."""
    probe = subprocess.run(
        [sys.executable, "-c", "import reference_adapters; print(reference_adapters.__file__)"],
        capture_output=True,
        text=True,
        cwd=str(TOOLS),
        check=False,
    )
    found = Path(probe.stdout.strip()).parent if probe.returncode == 0 else None
    if found is None or found.resolve() != PACKAGE.resolve():
        raise ToolError(
            f"this Python imports reference_adapters from {found or 'nowhere'}, not {PACKAGE}: "
            f'run `pip install -e ".[dev]"` from {ROOT}'
        )
