"""The checks registry: one decorated function per clause; a failure is data, not a bare assert."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from ..clauses import get_clause
from ..language import Said, spoken
from ..plain_imports import import_without_assertion_rewriting, plain_imports
from ..profiles.base import WireProfile
from ..scenarios.model import Scenario

_MISSING: Any = object()


@dataclass(frozen=True)
class Failure:
    """Why one clause failed on one scenario: everything a user needs to understand and reproduce it."""

    clause: str
    scenario: str
    profile: str
    message: str
    expected: Any = _MISSING
    actual: Any = _MISSING
    hint: str = ""
    details: str = ""
    """Extra evidence, e.g. the relevant part of the trace."""
    replay: str = ""
    """Arguments of ``helix-conformance replay`` that show the failing run (a property's shrunk example)."""
    happening: str = ""
    """What actually happened, worded the same on every clause and scenario it breaks (an exception, an
    error result for a success response): failures with the same happening are one cause
    (``reporting/causes.py``), whatever clause each is reported on. Empty: the clause's own failure."""
    matrix: frozenset[str] = frozenset()
    """Set when the failure holds only for these servers, none of which the adapter targets (a request shape they
    answer with 400): it goes to the compatibility matrix, not the gate."""

    def has_expected(self) -> bool:
        return self.expected is not _MISSING

    def has_actual(self) -> bool:
        return self.actual is not _MISSING

    def as_dict(self) -> dict[str, Any]:
        """Plain data; ``expected`` and ``actual`` each only when the check gave it (either may come alone)."""
        data: dict[str, Any] = {
            "clause": self.clause,
            "scenario": self.scenario,
            "profile": self.profile,
            "message": self.message,
            "hint": self.hint,
        }
        if self.has_expected():
            data["expected"] = repr(self.expected)
        if self.has_actual():
            data["actual"] = repr(self.actual)
        if self.details:
            data["details"] = self.details
        if self.replay:
            data["replay"] = self.replay
        return data


class CheckFailed(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class NotApplicable(Exception):
    """Raised by a check that finds, at run time, nothing to judge (a skip with this reason)."""


Applies = Callable[[Scenario, WireProfile], bool]


@dataclass(frozen=True)
class Check:
    clause: str
    func: Callable[[Any], None]
    applies: Applies
    requires: frozenset[str] = field(default_factory=frozenset)
    needs_result: bool = True
    """False for checks that judge a run that did not produce a result (NT-01, HARN-03...)."""
    when_undeclared: bool = False
    """Planned only for scenarios needing a capability the adapter does not declare (HARN-05)."""
    ahead: Callable[[Any], None] | None = None
    """Sends the runs the check will ask for ahead when its scenario starts (``ScenarioSession.ahead``), so
    the adapter's workers run them while pytest judges; a hint only, it never changes a verdict."""

    @property
    def name(self) -> str:
        return self.func.__name__


REGISTRY: dict[str, Check] = {}


def _always(scenario: Scenario, profile: WireProfile) -> bool:
    return True


def _origin(func: Callable[..., Any]) -> tuple[str, str]:
    """Where a check is defined: its module and name. A module imported again (a pytest run in-process drops
    the modules it imported; ``importlib.reload``) defines the same check anew."""
    return getattr(func, "__module__", ""), getattr(func, "__qualname__", "")


def check(
    clause: str,
    *,
    applies: Applies = _always,
    requires: tuple[str, ...] = (),
    needs_result: bool = True,
    when_undeclared: bool = False,
    ahead: Callable[[Any], None] | None = None,
) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    """Register ``func`` as the check of ``clause`` (which must exist in the clause catalogue)."""
    get_clause(clause)

    def register(func: Callable[[Any], None]) -> Callable[[Any], None]:
        known = REGISTRY.get(clause)
        if known is not None and _origin(known.func) != _origin(func):  # the same one re-imported replaces it
            raise RuntimeError(f"clause {clause} already has a check: {known.name}")
        REGISTRY[clause] = Check(
            clause, func, applies, frozenset(requires), needs_result, when_undeclared, ahead
        )
        return func

    return register


def fail(
    ctx: Any,
    message: str | Said,
    *,
    expected: Any = _MISSING,
    actual: Any = _MISSING,
    details: str = "",
    replay: str = "",
    hint: str | Said = "",
    happening: str = "",
    matrix: frozenset[str] = frozenset(),
) -> NoReturn:
    """Stop the current check with a Failure for its clause (``replay``: see ``Failure.replay``). ``hint``
    replaces the clause's common mistakes where the check knows what happened; both speak the adapter's
    language (``ctx.language``). ``happening`` words what happened the same way another clause judging the
    same value does (``Failure.happening``); ``matrix``: see ``Failure.matrix``."""
    language = ctx.language
    raise CheckFailed(
        Failure(
            clause=ctx.clause,
            scenario=ctx.scenario.id,
            profile=ctx.profile.name,
            message=spoken(message, language),
            expected=spoken(expected, language) if isinstance(expected, (str, Said)) else expected,
            actual=actual,
            hint=spoken(hint, language) or get_clause(ctx.clause, language).common_mistakes,
            details=details,
            replay=replay,
            happening=happening,
            matrix=matrix,
        )
    )


def own_error(clause: str, scenario: str, profile: str, exc: Exception) -> Failure:
    """A check that met an exception of its own (not the adapter's: a run's errors are data already), as a
    failure of its clause that says so, with where it happened, never a traceback."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = next(
        (f for f in reversed(frames) if "helix_conformance" in f.filename), frames[-1] if frames else None
    )
    at = (
        f" at {where.filename.rsplit('helix_conformance', 1)[-1].lstrip('/')}:{where.lineno}" if where else ""
    )
    return Failure(
        clause=clause,
        scenario=scenario,
        profile=profile,
        message=f"the check of {clause} could not judge this run: {type(exc).__name__}: {exc}"[:2000],
        hint=(
            "The harness met an error of its own while judging what the adapter did, so this verdict says "
            "nothing either way about the adapter: report it to helix-conformance with this message."
        ),
        details=f"raised{at}",
    )


def load_all_checks() -> dict[str, Check]:
    """Import every check module (each registers its clauses) and return the registry."""
    import_without_assertion_rewriting("hypothesis")
    with plain_imports():
        from . import capabilities, errors, harness, requests, results, streaming, thinking  # noqa: F401

    return REGISTRY
