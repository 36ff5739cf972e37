"""One root cause, one failure: what a scenario's run lacks, which clause owns that, and what is not judged.

A run that produced no result, sent no request, or got no response cannot be judged by the clauses that read
them: judging them anyway turns one missing dependency into hundreds of failures with false statements ("the
request did not ask for a streamed response" when no request was sent). Such a run has a root cause, reported
once on the clause that owns it; every clause that needs what is missing is not judged on that run, and its
skip says why and where the cause is reported. The same holds for a run that returned an ErrorStepResult for a
complete success response (an exception of the adapter's own, caught and returned): the clauses that read the
result it should have returned (its text against the deltas, its stop reason, its tool calls) lost their input.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from ..clauses import JUDGED_WITHOUT_EXCHANGE, judges_request
from ..contract import ErrorStepResult
from ..language import Said
from ..profiles import KNOWN_PROFILES, get_profile
from ..replay.runner import ScenarioRun
from ..scenarios.model import Reuse, Scenario, Stream
from .common import attempts_request, did_not_return, error_message, short, where_raised
from .context import ScenarioSession
from .harness import NO_REQUEST_HINT, reached_outside

JUDGED_WITHOUT_RESULT = frozenset({"HARN-01", "HARN-02", "HARN-04", "HARN-05"})
"""Clauses still judged when the step gave no result at all. The fault corpus, variant runs and stall checks
would only repeat the cause (and a hang, once per variant), so they wait until the step returns."""


SUCCESS_OWNERS: dict[str, str] = {"text": "RES-02", "tool_calls": "RES-02", "structured_output": "FIN-01"}
"""The clause that owns "a success response must give a success result", by the expected result type: the
check of each already fails on an ErrorStepResult (MUST), so making it the one failure changes no verdict."""

UNEXPECTED_ERROR_HINT = (
    "The provider sent a complete, well-formed response and the adapter returned an error for it: an exception "
    "of the adapter's own (parsing an event, assembling a tool call, a callback) was caught and returned as "
    "the ErrorStepResult. The error and its cause are above; `helix-conformance replay --adapter=NAME SCENARIO "
    "--in-process` shows the run with the traceback."
)


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
    """``no_result`` (the step raised, timed out, or the adapter could not be built), ``no_request``,
    ``no_match`` (every request matched no recording: no response was served) or ``error_result`` (an
    ErrorStepResult for a complete success response: ``unexpected_error``)."""
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
        if self.kind == "error_result":  # the request was sent and is judged as sent
            return clause in JUDGED_WITHOUT_EXCHANGE or judges_request(clause)
        return clause in JUDGED_WITHOUT_EXCHANGE

    def skip_reason(self) -> str:
        return f"not judged on this run: {self.message} (reported once, on {self.clause})"


SETUP_HINT = Said(
    "The adapter could not be built, so no step ran: AdapterSpec.factory gets an AdapterContext (api_key, "
    "base_url, timeout) and must build the adapter from it (a keyword the constructor does not take, a setting "
    "read from the environment, a missing dependency).",
    "The adapter could not be built, so no step ran: `createAdapter(context)` gets an AdapterContext "
    "(`apiKey`, `baseUrl`, `timeoutMs`) and must build the adapter from it (an option the constructor does not "
    "take, a setting read from `process.env`, a package that is not installed).",
)


def root_cause(session: ScenarioSession) -> RootCause | None:
    """The root cause of the scenario's main run, or None when it can be judged clause by clause. Its words
    are the adapter's language's (``settings.language``)."""
    run = session.run()
    language = session.settings.language
    typescript = language == "typescript"
    step = "generateStep" if typescript else "generate_step"
    if run.setup_error:
        return RootCause("NT-01", run.setup_error, "no_result", hint=SETUP_HINT.to(language))
    if run.timed_out:
        timeout = session.settings.timeout
        return RootCause(
            hang_owner(session.scenario.tags),
            did_not_return(
                run, timeout, session.allowed_wait_s, _time_went_to(run, timeout), step, settles=typescript
            ),
            "no_result",
            run.trace.describe(),
            hint=_hang_hint(run, timeout),
        )
    if run.raised is not None:
        raised = f"{type(run.raised).__name__}: {error_message(run.raised)}"
        return RootCause(
            "NT-01",
            f"{step} {'rejected with' if typescript else 'raised'} {raised} (failures must be returned as "
            f"{'an error result' if typescript else 'an ErrorStepResult'})",
            "no_result",
            where_raised(run.raised),
            expected=f"a StepResult ({'an error result' if typescript else 'an ErrorStepResult'} for a failure)",
            actual=raised,
        )
    if not session.profile.replays or not attempts_request(session.scenario, session.profile):
        return None
    if not run.trace.requests and run.unintercepted:
        what, hint = reached_outside(run.unintercepted)
        return RootCause(
            "HARN-01",
            f"{what} ({run.unintercepted[0]}), so no response was served",
            "no_match",
            run.trace.describe(),
            hint=hint.to(language),
        )
    if not run.trace.requests:
        seen = "".join(f"\n  {line}" for line in run.host_seen)
        refused = any(
            e.fault is not None and e.fault.kind == "connect_error" for e in session.scenario.exchanges
        )
        return RootCause(
            "HARN-02",
            f"the step ended before any request was sent, returning {_outcome(run)}",
            "no_request",
            run.trace.describe() + (f"\nwhat the replay host saw:{seen}" if seen else ""),
            hint=(REFUSED_UNSEEN_HINT if refused else NO_REQUEST_HINT).to(language),
        )
    if run.trace.requests and all(r.interaction is None for r in run.trace.requests):
        return RootCause("HARN-01", _unmatched_message(session, run), "no_match", run.trace.describe())
    return unexpected_error(session.scenario, run, session.spec.capabilities)


REFUSED_UNSEEN_HINT = Said(
    "This scenario's base URL refuses the connection (connect_error), so no request reaches the replay: the "
    "worker counts each attempt where Python's sockets connect. None was counted: the step returned without "
    "trying, or its HTTP client connects from native code, out of the harness's sight "
    "(docs/worker-protocol.md, faults as transport behaviour).",
    "This scenario's base URL refuses the connection (connect_error), so no request reaches the replay: the "
    "driver counts each refused connection of a `net` socket (fetch, undici, node:http) and reports it. None "
    "was counted: the step returned without trying, or a driver of another language does not report refused "
    "connections (`rf`: docs/worker-protocol.md, faults as transport behaviour).",
)


IMPORTS_SHARE = 0.5
"""A hang is said to be the imports' when they took at least this share of the limit."""


def _time_went_to(run: ScenarioRun, timeout: float) -> str:
    if run.import_s < IMPORTS_SHARE * timeout:
        return ""
    return (
        f": {run.import_s:.1f} s of it went to importing {run.imported} modules the adapter had not loaded "
        "before this run"
    )


def _hang_hint(run: ScenarioRun, timeout: float) -> str:
    """What the evidence says the time went to, where it contradicts the clause's usual suspects (empty:
    those)."""
    if run.import_s >= IMPORTS_SHARE * timeout:
        return (
            "The time went to imports, not to the adapter's waits: the factory or generate_step imports its "
            "SDK on first use. Import it at the top of the adapter's module (the worker imports that before "
            "any run, outside the limit), or raise --helix-timeout for a first run this slow."
        )
    if run.real_wait_s >= 1.0:
        return (
            f"{run.real_wait_s:.1f} s went to real waits the virtual clock could not skip: a time.sleep or "
            "blocking call (in a thread of the adapter's) instead of an awaited asyncio.sleep or timeout."
        )
    return ""


def unexpected_error(scenario: Scenario, run: ScenarioRun, capabilities: frozenset[str]) -> RootCause | None:
    """An ErrorStepResult for a success scenario whose last response, a complete success stream (no error
    event, fault or abort), reached the adapter (earlier ones, a 429 to retry, were got past), when the adapter
    declares what the scenario needs: owned by ``SUCCESS_OWNERS``. Whether it is a root cause on this run also
    depends on the plan (the owner must be judged there, as MUST): ``suite.SuiteRunner.root_cause``."""
    owner = SUCCESS_OWNERS.get(scenario.expect.type)
    result = run.result
    if owner is None or not isinstance(result, ErrorStepResult) or scenario.abort is not None:
        return None
    if scenario.requires - capabilities or not scenario.exchanges:
        return None  # a typed refusal of an undeclared capability is allowed (HARN-05 judges it)
    last = scenario.exchanges[-1]
    if not isinstance(last.response, (Stream, Reuse)) or last.fault is not None:
        return None
    if not any(r.interaction == len(scenario.exchanges) - 1 for r in run.trace.requests):
        return None  # the success response was never asked for (a retry not made): the owner judges that
    error = result.error
    return RootCause(
        owner,
        "generate_step returned an ErrorStepResult for a complete success response: "
        f"{type(error).__name__}: {error_message(error)}",
        "error_result",
        where_raised(error),
        expected=f"a {scenario.expect.type} result",
        actual=short(result),
        hint=UNEXPECTED_ERROR_HINT,
    )


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
        field = (
            "spec.wireProfile" if session.settings.language == "typescript" else "AdapterSpec.wire_profile"
        )
        message += (
            f". The requests look like wire profile {' or '.join(repr(p) for p in likely)}: is {field} right?"
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
    if len(roots) < FAIL_FAST_AFTER or roots[0] is None or roots[0].kind == "error_result":
        return None  # an error result costs nothing to repeat, and where it happens locates the bug
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
