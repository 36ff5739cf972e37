"""One root cause, one failure: what a scenario's run lacks, which clause owns that, and what is not judged.

A run that produced no result, sent no request, or got no response cannot be judged by the clauses that read
them: judging them anyway turns one missing dependency into hundreds of failures with false statements ("the
request did not ask for a streamed response" when no request was sent). Such a run has a root cause, reported
once on the clause that owns it; every clause that needs what is missing is not judged on that run, and its
skip says why and where the cause is reported.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..profiles import KNOWN_PROFILES, get_profile
from ..replay.runner import ScenarioRun
from .common import error_message, sends_request, short
from .context import ScenarioSession
from .harness import NO_REQUEST_HINT, UNINTERCEPTED_HINT

JUDGED_WITHOUT_EXCHANGE = frozenset(
    {
        "RES-01",  # the return value is a StepResult whatever happened
        "ERR-06",  # an error result stops
        "ERR-07",  # no key in the error
        "STR-06",  # on_error once with the returned error
        "STR-07",  # nothing after return
        "STR-08",  # coroutine callbacks awaited
        "STR-11",  # raising callbacks do not make the step raise
        "MSG-07",  # the input is not mutated
        "NT-01",
        "HARN-01",
        "HARN-02",
        "HARN-03",
        "HARN-04",
        "HARN-05",
    }
)
"""Clauses that judge a run on its own terms, with no request or response needed: still judged when the
run sent no request or got no response."""

JUDGED_WITHOUT_RESULT = frozenset({"HARN-01", "HARN-02", "HARN-04", "HARN-05"})
"""Clauses still judged when the step gave no result at all. The fault corpus, variant runs and stall checks
would only repeat the cause (and a hang, once per variant), so they wait until the step returns."""


HANG_OWNERS: dict[str, str] = {"stall": "NT-04", "retry_after_bound": "CFG-05"}
"""A scenario about what must end a wait owns its hang: a stalled stream nothing ended is NT-04's failure, a
retry hint of an hour waited for is CFG-05's; anywhere else a step that did not return is HARN-03's."""


def hang_owner(tags: frozenset[str]) -> str:
    """The clause a step that did not return in time is reported on, for a scenario with these tags."""
    return next((clause for tag, clause in HANG_OWNERS.items() if tag in tags), "HARN-03")


@dataclass(frozen=True)
class RootCause:
    """Why a scenario's run cannot be judged by most clauses: reported once, on ``clause``."""

    clause: str
    message: str
    """Independent of the scenario where possible, so the summary groups the same cause across scenarios."""
    kind: str
    """``no_result`` (the step raised, timed out, or the adapter could not be built), ``no_request`` or
    ``no_match`` (every request matched no recording: no response was served)."""
    details: str = ""
    expected: str | None = None
    actual: str | None = None
    hint: str = ""
    """What to look at, where the clause's common mistakes would not fit what happened (empty: those)."""

    def judges(self, clause: str) -> bool:
        """Whether ``clause`` is still judged on a run with this root cause."""
        if self.kind == "no_result":
            return clause in JUDGED_WITHOUT_RESULT
        if self.kind == "no_match" and clause == "HARN-02":
            return False  # every recording unused is the same cause seen from the other side
        return clause in JUDGED_WITHOUT_EXCHANGE

    def skip_reason(self) -> str:
        return f"not judged on this run: {self.message} (reported once, on {self.clause})"


def root_cause(session: ScenarioSession) -> RootCause | None:
    """The root cause of the scenario's main run, or None when it can be judged clause by clause."""
    run = session.run()
    if run.setup_error:
        return RootCause(
            "NT-01",
            run.setup_error,
            "no_result",
            hint="The adapter could not be built, so no step ran: AdapterSpec.factory gets an AdapterContext "
            "(api_key, base_url, timeout) and must build the adapter from it (a keyword the constructor does "
            "not take, a setting read from the environment, a missing dependency).",
        )
    if run.timed_out:
        return RootCause(
            hang_owner(session.scenario.tags),
            f"generate_step did not return within {session.settings.timeout} s",
            "no_result",
            run.trace.describe(),
        )
    if run.raised is not None:
        return RootCause(
            "NT-01",
            f"generate_step raised {type(run.raised).__name__}: {error_message(run.raised)} (failures must be "
            "returned as an ErrorStepResult)",
            "no_result",
            _where(run.raised),
            expected="a StepResult (an ErrorStepResult for a failure)",
            actual=f"{type(run.raised).__name__}: {error_message(run.raised)}",
        )
    if not session.profile.replays or not sends_request(session.scenario, session.profile):
        return None
    if not run.trace.requests and run.unintercepted:
        return RootCause(
            "HARN-01",
            "the adapter reached for the network elsewhere than its replay host (AdapterContext.base_url) "
            f"({run.unintercepted[0]}), so no response was served",
            "no_match",
            run.trace.describe(),
            hint=UNINTERCEPTED_HINT,
        )
    if not run.trace.requests:
        return RootCause(
            "HARN-02",
            f"the step ended before any request was sent, returning {_outcome(run)}",
            "no_request",
            run.trace.describe(),
            hint=NO_REQUEST_HINT,
        )
    if run.trace.requests and all(r.interaction is None for r in run.trace.requests):
        return RootCause("HARN-01", _unmatched_message(session, run), "no_match", run.trace.describe())
    return None


def _where(error: BaseException, frames: int = 6) -> str:
    """The last frames of the traceback: where the adapter raised."""
    stack = traceback.extract_tb(error.__traceback__)[-frames:]
    lines = [
        f"{frame.filename}:{frame.lineno} in {frame.name}: {frame.line or ''}".rstrip() for frame in stack
    ]
    return "raised at (innermost last):\n" + "\n".join(lines) if lines else ""


def _outcome(run: ScenarioRun) -> str:
    result = run.result
    if result is None:
        return "nothing"
    error = getattr(result, "error", None)
    if isinstance(error, BaseException):
        return f"an ErrorStepResult: {type(error).__name__}: {error_message(error)}"
    return short(result)


def _unmatched_message(session: ScenarioSession, run: ScenarioRun) -> str:
    sent = sorted({f"{r.method} {urlsplit(r.url).path}" for r in run.trace.requests})
    expected = sorted({f"{i.method} {i.path}" for i in session.interactions()})
    message = (
        f"no request matched a recording of wire profile {session.profile.name!r}: the adapter sent "
        f"{', '.join(sent)}; the recordings answer {', '.join(expected) or 'nothing'}, so no response was "
        "served"
    )
    likely = likely_profiles(run, exclude=session.profile.name)
    if likely:
        message += (
            f". The requests look like wire profile {' or '.join(repr(p) for p in likely)}: is "
            "AdapterSpec.wire_profile right?"
        )
    return message


def likely_profiles(run: ScenarioRun, *, exclude: str) -> list[str]:
    """Known profiles whose endpoint every request of the run would have matched."""
    likely = []
    for name in KNOWN_PROFILES:
        if name == exclude:
            continue
        profile = get_profile(name)
        recorded = urlsplit(profile.endpoint_url("model")).path
        if all(profile.matches(r.method, urlsplit(r.url).path, recorded) for r in run.trace.requests):
            likely.append(name)
    return likely


FAIL_FAST_AFTER = 3
"""Scenarios that must all fail with the same root cause, and nothing else, before the run stops early."""


def common_cause(roots: list[RootCause | None]) -> RootCause | None:
    """The root cause every scenario run so far shares, once ``FAIL_FAST_AFTER`` of them have run: a wrong
    wire profile, an adapter that cannot be built, a missing dependency. Running the rest would only repeat it
    (and, for a hang, cost the timeout once per scenario)."""
    if len(roots) < FAIL_FAST_AFTER or roots[0] is None:
        return None
    first = roots[0]
    same = all(r is not None and (r.clause, r.message) == (first.clause, first.message) for r in roots)
    return first if same else None


def stop_message(cause: RootCause, scenarios: int) -> str:
    return (
        f"helix-conformance stopped early: the first {scenarios} scenarios all failed the same way, before "
        f"anything else could be judged ({cause.clause}): {cause.message}"
        f"{'' if cause.message.endswith(('.', '?', '!')) else '.'} Every other scenario would fail "
        "the same way; fix this and run again."
    )
