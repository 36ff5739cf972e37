"""Find the AdapterSpec behind ``--adapter=NAME``: built-in, entry point, module, or ``pkg.module:attr``."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from .contract.spec import AdapterSpec

ENTRY_POINT_GROUP = "helix_conformance.adapters"
BUILTINS: dict[str, str] = {
    "openai": "reference_adapters.openai_chat:spec",
    "anthropic": "reference_adapters.anthropic:spec",
    "gemini": "reference_adapters.gemini:spec",
    "openai-responses": "reference_adapters.openai_responses:spec",
    "mock": "helix_conformance.testing:mock_spec",
}


class AdapterNotFound(Exception):
    """The name resolves to nothing usable; the message says why and what is available."""


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
        raise AdapterNotFound(f"--adapter={name}: cannot import {module_name!r}: {exc}") from exc
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


def _as_spec(obj: Any, name: str, target: str) -> AdapterSpec:
    if isinstance(obj, AdapterSpec):
        return obj
    if callable(obj) and not isinstance(obj, type):
        try:
            made = obj()
        except Exception as exc:
            raise AdapterNotFound(
                f"--adapter={name}: calling {target}() to get the AdapterSpec raised {type(exc).__name__}: {exc}"
            ) from exc
        if isinstance(made, AdapterSpec):
            return made
        obj = made
    raise AdapterNotFound(
        f"--adapter={name}: {target} is of type {type(obj).__name__}, not a helix_conformance.contract.AdapterSpec "
        "(or a function returning one)"
    )


def resolve_adapter(name: str) -> ResolvedAdapter:
    names = available()
    if name in names:
        target = names[name]
        origin = "built-in" if name in BUILTINS else "entry point"
        return ResolvedAdapter(_as_spec(_load_target(target, name), name, target), name, target, origin)
    if ":" in name:
        return ResolvedAdapter(_as_spec(_load_target(name, name), name, name), name, name, "module:attr")
    if "." in name or importlib.util.find_spec(name) is not None:
        return ResolvedAdapter(_as_spec(_load_target(name, name), name, name), name, name, "module")
    listing = ", ".join(sorted(names))
    raise AdapterNotFound(
        f"--adapter={name}: unknown adapter. Available: {listing}. You can also pass an importable module "
        f"exposing `spec` (mypkg.adapter), an attribute (mypkg.adapter:spec), or register an entry point in "
        f"group {ENTRY_POINT_GROUP!r}."
    )
