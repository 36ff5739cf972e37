"""What is measured: the reference adapters' files, which adapter's suite judges each, and how the
suite is started (a pytest subprocess in a directory of its own, as a user runs it)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference_adapters"
TOOLS = ROOT / "tools"


class ToolError(Exception):
    """A problem the developer must fix before measuring (one line, says what to do)."""


@dataclass(frozen=True)
class Pool:
    """Mutants of ``files``. A mutant of a file is killed when the suite of any adapter in ``judges[file]``
    (the adapters that import it) fails on it."""

    name: str
    files: tuple[str, ...]
    judges: dict[str, tuple[str, ...]]

    @property
    def adapters(self) -> tuple[str, ...]:
        found = [a for f in self.files for a in self.judges[f]]
        return tuple(dict.fromkeys(found))


def rel(path: Path) -> str:
    """A file of the package as reported: ``reference_adapters/<name>``."""
    return f"{PACKAGE.name}/{path.name}"


@dataclass(frozen=True)
class Package:
    """The reference adapters as found in the package: each adapter's name (its ``AdapterSpec(name=...)``)
    and module, and the files each one runs (its module and what it imports from the package)."""

    modules: dict[str, str]
    closures: dict[str, tuple[str, ...]]

    @property
    def adapters(self) -> tuple[str, ...]:
        return tuple(self.modules)

    def files_of(self, adapter: str) -> tuple[str, ...]:
        """What the adapter runs, without other adapters' modules (measured under their own suites)."""
        others = {m for a, m in self.modules.items() if a != adapter}
        return tuple(f for f in self.closures[adapter] if f not in others)

    def judges(self, file: str) -> tuple[str, ...]:
        """The adapters whose suite runs ``file``."""
        return tuple(a for a in self.adapters if file in self.closures[a])

    def shared(self) -> tuple[str, ...]:
        """Files that are no adapter's own module and that several adapters run."""
        own = set(self.modules.values())
        files = dict.fromkeys(f for a in self.adapters for f in self.closures[a])
        return tuple(f for f in files if f not in own and len(self.judges(f)) > 1)


def discover() -> Package:
    """Every module of the package with a module-level ``spec = AdapterSpec(name="...")`` is an adapter."""
    imports: dict[str, set[str]] = {}
    modules: dict[str, str] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports[rel(path)] = {
            f"{PACKAGE.name}/{node.module}.py"
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }
        name = _spec_name(tree)
        if name is not None:
            modules[name] = rel(path)
    if not modules:
        raise ToolError(f"no adapter found in {PACKAGE}: no module defines `spec = AdapterSpec(name=...)`")
    closures: dict[str, tuple[str, ...]] = {}
    for name, module in modules.items():
        seen: dict[str, None] = {}
        todo = [module]
        while todo:
            file = todo.pop(0)
            if file not in seen and file in imports:
                seen[file] = None
                todo.extend(sorted(imports[file]))
        closures[name] = tuple(seen)
    return Package(modules, closures)


def _spec_name(tree: ast.Module) -> str | None:
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "spec" for t in node.targets)
            and isinstance(node.value, ast.Call)
        ):
            for keyword in node.value.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return None


def pools(package: Package, adapter: str) -> list[Pool]:
    """One adapter: its module and the package files it runs, judged by its suite alone. ``all``: each adapter's module with the
    files only it runs, judged by every adapter that imports them; then the shared files, judged by all
    the adapters that run them."""
    if adapter != "all":
        files = package.files_of(adapter)
        return [Pool(adapter, files, dict.fromkeys(files, (adapter,)))]
    shared = package.shared()
    chosen: list[Pool] = []
    for name in package.adapters:
        own = tuple(f for f in package.closures[name] if f not in shared and package.judges(f)[0] == name)
        chosen.append(Pool(name, own, {f: package.judges(f) for f in own}))
    chosen.append(Pool("shared", shared, {f: package.judges(f) for f in shared}))
    return [pool for pool in chosen if pool.files]


def suite_args(adapter: str, examples: int) -> list[str]:
    """The conformance suite as the mutants are judged by it. Strict: a SHOULD clause that fails has noticed
    the mutant too (without ``--helix-strict`` it is reported as xfailed and the gate passes)."""
    return [
        sys.executable,
        "-m",
        "pytest",
        f"--adapter={adapter}",
        "--helix-strict",
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


def environment(path_first: Path, harness: Path | None = None) -> dict[str, str]:
    """The environment of a suite run with ``path_first`` ahead of everything else on ``sys.path``, then
    ``harness`` (a checkout of another commit's ``helix_conformance``: the before of a before/after)."""
    env = dict(os.environ)
    first = [str(p) for p in (path_first, harness) if p is not None]
    env["PYTHONPATH"] = os.pathsep.join([*first, *filter(None, [env.get("PYTHONPATH")])])
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
