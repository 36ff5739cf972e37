"""Find the AdapterSpec behind ``--adapter=NAME``: built-in, entry point, module, or ``pkg.module:attr``;
or the ``DriverCommand`` of an adapter in another language (``cmd:COMMAND``, or an attribute naming one)."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import shlex
import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from .contract.spec import AdapterSpec
from .language import Language

ENTRY_POINT_GROUP = "helix_conformance.adapters"
BUILTINS: dict[str, str] = {
    "openai": "reference_adapters.openai_chat:spec",
    "anthropic": "reference_adapters.anthropic:spec",
    "gemini": "reference_adapters.gemini:spec",
    "openai-responses": "reference_adapters.openai_responses:spec",
    "bedrock": "reference_adapters.bedrock_converse:spec",
    "cohere": "reference_adapters.cohere:spec",
    "mock": "helix_conformance.testing:mock_spec",
}


CMD_PREFIX = "cmd:"
"""``--adapter=cmd:COMMAND``: run COMMAND as a protocol-v2 driver (docs/worker-protocol.md)."""
NODE_PREFIX = "node:"
"""``--adapter=node:PATH``: a JavaScript/TypeScript adapter, run by the Node driver (worker/node.py)."""


def language_of(adapter: str) -> Language:
    """The language failures speak to the author of the adapter named ``adapter`` (as on ``--adapter``): the
    seed's TypeScript for ``node:`` and ``cmd:`` drivers (protocol v2 is Helix's camelCase JSON), else Python."""
    return "typescript" if adapter.startswith((NODE_PREFIX, CMD_PREFIX)) else "python"


class AdapterNotFound(Exception):
    """The name resolves to nothing usable; the message says why and what is available."""


@dataclass(frozen=True)
class DriverCommand:
    """An adapter run by a driver of another language: the command that starts a protocol-v2 driver.

    Expose one where an AdapterSpec would go (an entry point, ``pkg.module:attr``, or a function returning it),
    or pass ``--adapter=cmd:"COMMAND ARGS"``. The harness appends ``--fds R,W`` to ``argv`` and sends ``adapter``
    in the driver's ``hello``."""

    argv: tuple[str, ...]
    adapter: str = ""
    """What the driver's ``hello`` names (a module, a file): the driver decides what it means."""
    cwd: str | None = None
    """Where the driver starts; default: the directory the harness runs in."""
    not_applicable: tuple[tuple[str, str], ...] = field(default=())
    """(clause, why) pairs planned as skipped beyond the clauses no driver can serve (NT-03, HARN-04)."""

    def __post_init__(self) -> None:
        argv = tuple(str(part) for part in self.argv) if not isinstance(self.argv, str) else ()
        if not argv or not argv[0]:
            raise ValueError(f"DriverCommand.argv must be a non-empty list of strings, not {self.argv!r}")
        object.__setattr__(self, "argv", argv)


def parse_command(name: str) -> DriverCommand:
    """``cmd:python my_driver.py --flag`` (shell quoting rules) as a DriverCommand; a usage error if empty."""
    text = name[len(CMD_PREFIX) :]
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise AdapterNotFound(f"--adapter={name}: cannot read the command ({exc})") from None
    if not argv:
        raise AdapterNotFound(
            f"--adapter={name}: no command after {CMD_PREFIX!r}; give the driver's command line, "
            f"e.g. --adapter='cmd:python my_driver.py'"
        )
    return DriverCommand(tuple(argv))


@dataclass(frozen=True)
class ResolvedAdapter:
    spec: AdapterSpec
    requested: str
    """The name as passed to --adapter: what a reproduction command must repeat."""
    target: str
    """Where the spec came from, e.g. ``reference_adapters.openai_chat:spec``."""
    origin: str
    """``built-in``, ``entry point``, ``module`` or ``module:attr``; a driver's runtime (``node v20.19.0``)."""
    not_applicable: tuple[tuple[str, str], ...] = ()
    """(clause, why) pairs planned as skipped for this adapter: Python-only clauses of a foreign driver."""


def available() -> dict[str, str]:
    """Adapter names a user can pass, with their targets."""
    names = dict(BUILTINS)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        names.setdefault(ep.name, ep.value)
    return names


def _load_target(target: str, name: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        close = _close_modules(exc.name) if isinstance(exc, ModuleNotFoundError) and exc.name else []
        guess = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise AdapterNotFound(f"--adapter={name}: cannot import {module_name!r}: {exc}{guess}") from exc
    except Exception as exc:  # the adapter's own module failed while loading: say so, do not crash pytest
        raise AdapterNotFound(
            f"--adapter={name}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    if not attr:
        for candidate in ("spec", "adapter_spec"):
            if hasattr(module, candidate):
                return getattr(module, candidate)
        raise AdapterNotFound(
            f"--adapter={name}: module {module_name!r} has no `spec` attribute; expose an AdapterSpec as "
            f"`spec`, or name it explicitly as {module_name}:ATTRIBUTE"
        )
    try:
        obj: Any = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise AdapterNotFound(f"--adapter={name}: {module_name!r} has no attribute {attr!r}") from None
    return obj


def _as_spec(obj: Any, name: str, target: str) -> AdapterSpec | DriverCommand:
    if isinstance(obj, AdapterSpec | DriverCommand):
        return obj
    if callable(obj) and not isinstance(obj, type):
        try:
            made = obj()
        except Exception as exc:
            raise AdapterNotFound(
                f"--adapter={name}: calling {target}() to get the AdapterSpec raised {type(exc).__name__}: {exc}"
            ) from exc
        if isinstance(made, AdapterSpec | DriverCommand):
            return made
        obj = made
    raise AdapterNotFound(
        f"--adapter={name}: {target} is of type {type(obj).__name__}, not a helix_conformance.contract.AdapterSpec "
        "or a helix_conformance.adapters.DriverCommand (or a function returning one)"
    )


@dataclass(frozen=True)
class ResolvedCommand:
    """A name that resolved to a driver command: the adapter runs in that driver (protocol version 2)."""

    command: DriverCommand
    requested: str
    target: str
    origin: str


def resolve_adapter(name: str) -> ResolvedAdapter:
    """The AdapterSpec behind ``name``, imported in this process; a name naming a driver command is an error
    here (it runs in its driver: ``resolve_name``)."""
    found = resolve_name(name)
    if isinstance(found, ResolvedCommand):
        raise AdapterNotFound(
            f"--adapter={name}: {found.target} names a driver command ({shlex.join(found.command.argv)}), "
            "which runs in its own driver process, not in this one"
        )
    return found


def resolve_name(name: str) -> ResolvedAdapter | ResolvedCommand:
    """What ``--adapter=NAME`` names: an AdapterSpec (imported here) or a driver's command."""
    if name.startswith(CMD_PREFIX):
        return ResolvedCommand(parse_command(name), name, name[len(CMD_PREFIX) :], "command")
    names = available()
    if name in names:
        target = names[name]
        origin = "built-in" if name in BUILTINS else "entry point"
        return _resolved(_as_spec(_load_target(target, name), name, target), name, target, origin)
    if ":" in name:
        return _resolved(_as_spec(_load_target(name, name), name, name), name, name, "module:attr")
    if "." in name or importlib.util.find_spec(name) is not None:
        return _resolved(_as_spec(_load_target(name, name), name, name), name, name, "module")
    listing = ", ".join(sorted(names))
    close = close_names(name, names)
    guess = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise AdapterNotFound(
        f"--adapter={name}: unknown adapter.{guess} Available: {listing}. You can also pass an importable module "
        f"exposing `spec` (mypkg.adapter), an attribute (mypkg.adapter:spec), a JavaScript adapter "
        f"(node:adapter.mjs), a driver's command (cmd:'COMMAND ARGS'), or register an entry point in "
        f"group {ENTRY_POINT_GROUP!r}."
    )


def close_names(name: str, adapters: dict[str, str]) -> list[str]:
    """Names close to a mistyped ``name``: adapter names (built-in and entry points) and the top-level
    modules and packages of the import path, which ``--adapter`` takes too (a typo of ``lumen`` is ``lumn``)."""
    return _close(name, {*adapters, *_modules(None)})


def _close_modules(missing: str) -> list[str]:
    """Modules close to ``missing`` (a dotted name that does not import), beside it in its package."""
    parent, _, last = missing.rpartition(".")
    if not parent:
        return _close(missing, _modules(None))
    try:
        package = importlib.import_module(parent)
    except Exception:
        return []  # the parent is missing too: its own error says so
    path = getattr(package, "__path__", None)
    return [f"{parent}.{c}" for c in _close(last, _modules(list(path)))] if path is not None else []


def _modules(path: list[str] | None) -> set[str]:
    import pkgutil

    found = {m.name for m in pkgutil.iter_modules(path) if not m.name.startswith("_")}
    return found | (set(sys.builtin_module_names) if path is None else set())


def _close(name: str, candidates: set[str]) -> list[str]:
    import difflib

    return difflib.get_close_matches(name, sorted(candidates), n=3, cutoff=0.75)


def _resolved(
    found: AdapterSpec | DriverCommand, name: str, target: str, origin: str
) -> ResolvedAdapter | ResolvedCommand:
    if isinstance(found, DriverCommand):
        return ResolvedCommand(found, name, target, origin)
    return ResolvedAdapter(found, name, target, origin)


def name_of(spec: AdapterSpec) -> str | None:
    """A name another process can import ``spec`` by (``pkg.module:attr``, or the built-in / entry-point name
    that points there), found by identity in the module of its factory; None for a spec built at run time
    (a closure, ``dataclasses.replace``, a lambda in a test) or living in a module no import path reaches."""
    module_name = getattr(spec.factory, "__module__", None)
    if not isinstance(module_name, str) or module_name == "__main__":
        return None
    module = sys.modules.get(module_name)
    if module is None or getattr(module, "__spec__", None) is None:
        return None
    attrs = [attr for attr, value in vars(module).items() if value is spec and not attr.startswith("__")]
    if not attrs:
        return None
    top = module_name.partition(".")[0]
    if (
        importlib.machinery.PathFinder.find_spec(top, sys.path) is None
        and top not in sys.builtin_module_names
    ):
        return None  # loaded from a file path (pytest's importlib mode), not importable by name
    target = f"{module_name}:{'spec' if 'spec' in attrs else sorted(attrs)[0]}"
    short = [n for n, t in available().items() if t == target]
    return short[0] if short else target
