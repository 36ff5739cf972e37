"""The conformance suite as data: which (profile, scenario, clause) checks exist for an adapter, and running one.

No pytest here: the plugin turns the plan into items, and ``run_conformance`` can run it as a plain function.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from .checks.context import CheckContext, HarnessSettings, ScenarioSession
from .checks.registry import Check, CheckFailed, Failure, NotApplicable, load_all_checks, own_error
from .checks.root import RootCause, common_cause, root_cause, stop_message
from .clauses import get_clause, judges_request
from .contract.spec import AdapterSpec
from .profiles import get_profile
from .profiles.base import WireProfile
from .replay.cassette import CassetteError
from .replay.interactions import CassetteCache
from .replay.output import with_output
from .replay.runner import ScenarioRun
from .scenarios import SCENARIOS, scenarios_for
from .scenarios.model import Scenario
from .scenarios.recorded import RecordedScenario, gap_reason, judged_on

Outcome = Literal["passed", "failed", "skipped", "not_applicable"]
"""``not_applicable``: the scenario's response is not what the provider sends to the request the adapter
made (its precondition, ``scenarios/preconditions.py``), so the check does not judge it."""


def bundled_cassettes() -> Path:
    """Cassettes ship inside the wheel as ``helix_conformance/_cassettes``; in a checkout they are at the top."""
    package = Path(__file__).resolve().parent
    installed = package / "_cassettes"
    return installed if installed.is_dir() else package.parent / "cassettes"


@dataclass(frozen=True)
class PlannedCheck:
    profile: str
    scenario: Scenario
    check: Check
    skip_reason: str | None

    @property
    def clause(self) -> str:
        return self.check.clause

    @property
    def level(self) -> str:
        if self.clause in self.scenario.should:
            return "SHOULD"
        return get_clause(self.clause).level

    @property
    def test_id(self) -> str:
        return f"{self.profile}::{self.scenario.id}::{self.clause}"

    @property
    def servers(self) -> frozenset[str]:
        """The servers whose quirk this check's scenario is (empty: every server of the profile sends it)."""
        precondition = self.scenario.precondition(self.profile)
        return precondition.servers if precondition and precondition.servers is not None else frozenset()


@dataclass
class CheckOutcome:
    outcome: Outcome
    failure: Failure | None = None
    reason: str = ""
    matrix: frozenset[str] = frozenset()
    """Set when the scenario is a quirk of these servers only and the adapter targets none of them: the
    outcome goes to the compatibility matrix, never to the gate."""


def profile_for(spec: AdapterSpec) -> WireProfile:
    if spec.wire_profile == "scripted":
        from .profiles.scripted import PROFILE

        return PROFILE
    return get_profile(spec.wire_profile)


def plan_suite(
    spec: AdapterSpec, cassette_root: Path | None = None, not_applicable: Mapping[str, str] | None = None
) -> list[PlannedCheck]:
    """Every applicable check, grouped by scenario; unmet capabilities become skips that say why. The
    recorded traffic of the profile (``cassette_root``'s and the bundled) comes after the authored scenarios.
    ``not_applicable``: clauses skipped with their reason (a foreign driver's Python-only clauses)."""
    not_applicable = not_applicable or {}
    profile = profile_for(spec)
    registry = load_all_checks()
    planned = []
    # A profile restriction says which wire a scenario's response exists for; a wire-free profile takes all.
    authored = scenarios_for(profile.name) if profile.replays else SCENARIOS
    for scenario in (*authored, *recorded_for(spec, profile, cassette_root)):
        if not profile.runs_scenario(scenario):
            continue
        for check in registry.values():
            if not profile.runs_clause(check.clause) or not check.applies(scenario, profile):
                continue
            if scenario.generated and check.clause not in scenario.generated:
                continue
            if not judged_on(scenario, check.clause):
                continue
            unjudgeable = (
                not_applicable.get(check.clause)
                or profile.clause_skip_reason(check.clause)
                or gap_reason(scenario)
            )
            if unjudgeable:
                planned.append(PlannedCheck(profile.name, scenario, check, unjudgeable))
                continue
            missing = sorted((scenario.requires | check.requires) - spec.capabilities)
            if check.when_undeclared:
                if set(missing) & scenario.requires:
                    planned.append(PlannedCheck(profile.name, scenario, check, None))
                continue
            reason = (
                f"{spec.name} does not declare capability {', '.join(repr(m) for m in missing)} "
                f"(AdapterSpec.capabilities)"
                if missing
                else None
            )
            planned.append(PlannedCheck(profile.name, scenario, check, reason))
    return planned


def recorded_for(
    spec: AdapterSpec, profile: WireProfile, cassette_root: Path | None
) -> tuple[RecordedScenario, ...]:
    """The recorded scenarios of the profile: the bundled corpus, then the user's ``<cassette dir>/recorded``."""
    if not profile.replays or profile.by_regression:
        return ()
    from .replay.recorded import recorded_scenarios

    folders = [bundled_cassettes() / "recorded"]
    root = cassette_root or spec.cassette_dir
    if root is not None and Path(root) / "recorded" != folders[0]:
        folders.append(Path(root) / "recorded")
    return recorded_scenarios(profile, tuple(folders))


def missing_cassettes_problem(
    spec: AdapterSpec, cassette_root: Path | None = None, spelled: str | None = None
) -> str | None:
    """HARN-05 before anything runs: a replaying profile with no cassette at all would fail every scenario
    for the same reason (or, worse, prove nothing), so say so once, with what to do. ``spelled`` is how the
    user set ``cassette_root`` (an environment variable, an ini key), for the message."""
    profile = profile_for(spec)
    if not profile.replays:
        return None
    if profile.by_regression and cassette_root is None and spec.cassette_dir is None:
        return (
            f"HARN-05: adapter {spec.name!r} speaks wire profile 'custom', which has no bundled cassettes: set "
            "AdapterSpec.cassette_dir to the directory you record into (--helix-record-mode=once with the "
            "provider key in AdapterSpec.api_key_env)"
        )
    root = cassette_root or spec.cassette_dir or bundled_cassettes()
    folder = root / profile.name
    if folder.is_dir() and any(folder.glob("*.yaml")):
        return None
    if cassette_root is not None and any((bundled_cassettes() / profile.name).glob("*.yaml")):
        return None  # --helix-cassette-dir falls back to the bundled cassettes
    where = (
        (spelled or f"--helix-cassette-dir={str(root)!r}")
        if cassette_root is not None
        else "the bundled cassettes"
        if spec.cassette_dir is None
        else f"AdapterSpec.cassette_dir={str(root)!r}"
    )
    return (
        f"HARN-05: adapter {spec.name!r} has no cassettes for wire profile {profile.name!r}: {folder} "
        f"{'holds no *.yaml' if folder.is_dir() else 'does not exist'} ({where}). Nothing could be replayed, "
        "so the gate cannot run. Point cassette_dir at a directory holding <profile>/<scenario>.yaml, or "
        "leave it unset to use the cassettes bundled with helix-conformance."
    )


@dataclass
class SuiteRunner:
    """Runs planned checks, sharing one ScenarioSession per scenario and dropping it once its checks ran."""

    spec: AdapterSpec
    settings: HarnessSettings
    cassette_root: Path | None = None
    _sessions: dict[str, ScenarioSession] = field(default_factory=dict)
    _remaining: dict[str, int] = field(default_factory=dict)
    _levels: dict[tuple[str, str], str] = field(default_factory=dict)
    """The level of each (scenario, clause) judged in the whole plan (``expect``)."""
    _chosen: dict[str, set[str]] = field(default_factory=dict)
    """The clauses each scenario is judged on here (a selection may leave out a root cause's owner)."""
    _cassettes: CassetteCache | None = None
    roots: dict[str, RootCause | None] = field(default_factory=dict)
    """The root cause of each scenario run so far (None: judged clause by clause)."""
    _reported: set[str] = field(default_factory=set)
    """Scenarios whose root cause has been reported on an item (what the fail-fast rule counts)."""
    _planned: dict[str, list[PlannedCheck]] = field(default_factory=dict)
    """The checks each scenario will run here, in the order they run: what it sends ahead."""
    _matrix_only: set[str] = field(default_factory=set)
    """Scenarios judged for the compatibility matrix only: their root causes never stop the run."""
    look_ahead: bool = False
    """Also send the next scenario's runs ahead when a scenario starts (when this process runs the items in
    the planned order: not in a pytest-xdist worker, which gets them in batches)."""

    def expect(self, planned: list[PlannedCheck]) -> None:
        for item in planned:
            self._remaining[item.scenario.id] = self._remaining.get(item.scenario.id, 0) + 1
            if item.skip_reason is None:
                self._levels[(item.scenario.id, item.clause)] = item.level
        self.select(planned)

    def select(self, chosen: list[PlannedCheck]) -> None:
        """The checks that will run here, in order (after ``-k``): only their runs are sent ahead, and a
        scenario's runs are dropped after its last chosen check."""
        self._planned.clear()
        self._remaining.clear()
        self._chosen.clear()
        for item in chosen:
            self._remaining[item.scenario.id] = self._remaining.get(item.scenario.id, 0) + 1
            if item.skip_reason is None:
                self._planned.setdefault(item.scenario.id, []).append(item)
                self._chosen.setdefault(item.scenario.id, set()).add(item.clause)

    def cassettes(self) -> CassetteCache:
        if self._cassettes is None:
            # A user's --helix-cassette-dir comes first; what it lacks comes from the bundled cassettes.
            fallback = bundled_cassettes() if self.cassette_root is not None else None
            self._cassettes = CassetteCache(
                self.cassette_root or self.spec.cassette_dir or bundled_cassettes(), fallback
            )
        return self._cassettes

    def session(self, item: PlannedCheck) -> ScenarioSession:
        sid = item.scenario.id
        if sid not in self._sessions:
            self._open(item)
            if self.look_ahead:
                following = self._following(sid)
                if following is not None:
                    self._open(following)
        return self._sessions[sid]

    def _following(self, sid: str) -> PlannedCheck | None:
        """The first check of the scenario planned after ``sid`` that has no session yet."""
        order = list(self._planned)
        if sid not in order:
            return None
        for later in order[order.index(sid) + 1 :]:
            if later not in self._sessions and later not in self.roots:
                return self._planned[later][0]
        return None

    def _open(self, item: PlannedCheck) -> None:
        sid = item.scenario.id
        if sid not in self._sessions:
            profile = profile_for(self.spec)
            cassettes = self.cassettes()
            scenario: Scenario
            if isinstance(item.scenario, RecordedScenario):  # served as recorded; its outcome is written
                from .replay.recorded import ServedRecording

                scenario, live = item.scenario, True
                cassettes = ServedRecording(item.scenario, profile, self.spec.model)
            else:
                scenario, live = judged_form(item.scenario, profile, cassettes)
            self._sessions[sid] = ScenarioSession(
                scenario,
                profile,
                self.spec,
                cassettes,
                self.settings,
                scripted=profile.scripted(item.scenario),
                recorded_live=live,
            )
            self._send_ahead(sid, self._sessions[sid])

    def _send_ahead(self, sid: str, session: ScenarioSession) -> None:
        """Send the runs the scenario's checks will ask for ahead (worker/pool.py): the main run first, the
        root cause waits for it; then each check's, in the order the checks run."""
        if self.settings.submit is None:
            return
        try:
            session.ahead()
        except CassetteError:
            return  # the checks report it
        if session.scenario.generated and self._planned.get(sid):
            from .checks.generated import explore_ahead

            with contextlib.suppress(Exception):  # only a hint, as below
                explore_ahead(session)
        for item in self._planned.get(sid, ()):
            if item.check.ahead is None or item.scenario.generated:
                continue
            with contextlib.suppress(Exception):  # only a hint: the check itself reports what goes wrong
                item.check.ahead(CheckContext(item.clause, session))

    def root_cause(self, scenario_id: str, session: ScenarioSession) -> RootCause | None:
        """The scenario's root cause (checks/root.py), computed once and kept for the fail-fast rule."""
        if scenario_id not in self.roots:
            root = root_cause(session)
            if root is not None and root.kind == "error_result" and not self._owned(scenario_id, root):
                root = None  # nothing judged here would fail on it as MUST: judged clause by clause
            self.roots[scenario_id] = root
            if root is not None:
                session.close()  # most of its checks will not run: what was sent ahead is not needed
        return self.roots[scenario_id]

    def _owned(self, scenario_id: str, root: RootCause) -> bool:
        """Whether the root cause's owner is judged on the scenario in the whole plan, as MUST: only then
        does reporting it there (and not judging the clauses it took the input of) keep the verdict."""
        return self._levels.get((scenario_id, root.clause)) == "MUST"

    def stop_reason(self) -> str | None:
        """Why the run should stop now (checks/root.common_cause), or None to go on. Scenarios judged for the
        compatibility matrix only do not count: what they show cannot fail the gate."""
        settled = [
            root
            for sid, root in self.roots.items()
            if (root is None or sid in self._reported) and sid not in self._matrix_only
        ]
        cause = common_cause(settled)
        return stop_message(cause, len(self.roots)) if cause else None

    def close(self) -> None:
        """Drop what is still sent ahead (a run that stopped early, a selection): a worker kept for the next
        call (``run_conformance``) then starts it with nothing of this run queued."""
        while self._sessions:
            _, session = self._sessions.popitem()
            session.close()

    def run(self, item: PlannedCheck) -> CheckOutcome:
        if item.skip_reason:
            return CheckOutcome("skipped", reason=item.skip_reason)
        try:
            return self._run(item)
        finally:
            left = self._remaining.get(item.scenario.id, 1) - 1
            self._remaining[item.scenario.id] = left
            if left <= 0 and (done := self._sessions.pop(item.scenario.id, None)) is not None:
                done.close()

    def _run(self, item: PlannedCheck) -> CheckOutcome:
        session = self.session(item)
        try:
            applicable = session.applicability()
        except CassetteError as exc:
            return CheckOutcome("failed", self._failure(item, f"cassette problem: {exc}"))
        if applicable.matrix:
            self._matrix_only.add(item.scenario.id)
        if applicable.unmet is not None:
            session.close()  # the response-side runs sent ahead will not be asked for
            if not judges_request(item.clause) and item.clause not in applicable.still_judged:
                return CheckOutcome("not_applicable", reason=applicable.unmet)
        outcome = self._judge(item, session, root_cause=applicable.unmet is None)
        # a quirk of servers the adapter does not target: the scenario's response, or a request shape they reject
        outcome.matrix = applicable.matrix or (outcome.failure.matrix if outcome.failure else frozenset())
        return outcome

    def _judge(self, item: PlannedCheck, session: ScenarioSession, *, root_cause: bool) -> CheckOutcome:
        """The check's outcome on the scenario's runs; ``root_cause``: a run that lacks a result or an exchange
        is reported once (checks/root.py) — not where the response was not the provider's to this request,
        when only the request clauses are judged."""
        ctx = CheckContext(item.clause, session)
        try:
            root = self.root_cause(item.scenario.id, session) if root_cause else None
            if root is not None and item.clause == root.clause:
                self._reported.add(item.scenario.id)
                return CheckOutcome(
                    "failed", _shown_with_output(self._root_failure(item, root), session.run())
                )
            if (
                root is not None
                and root.clause not in self._chosen.get(item.scenario.id, ())
                and not item.check.when_undeclared  # HARN-05 judges a run without a result itself
                and not (root.kind == "error_result" and root.judges(item.clause))
            ):
                # The owner is not judged here (a -k selection, a generated scenario): the scenario's first
                # item to run that the cause leaves unjudged carries it instead, once.
                self._chosen.setdefault(item.scenario.id, set()).add(root.clause)
                self._reported.add(item.scenario.id)
                return CheckOutcome(
                    "failed", _shown_with_output(self._root_failure(item, root), session.run())
                )
            if root is not None and not root.judges(item.clause):
                return CheckOutcome("skipped", reason=root.skip_reason())
            session.last_read = None
            if item.scenario.generated:
                from .checks.generated import judge_generated

                judge_generated(item.check, ctx)
            else:
                item.check.func(ctx)
        except CheckFailed as exc:
            return CheckOutcome("failed", _shown_with_output(exc.failure, session.last_read))
        except NotApplicable as exc:
            return CheckOutcome("skipped", reason=str(exc))
        except CassetteError as exc:
            return CheckOutcome("failed", self._failure(item, f"cassette problem: {exc}"))
        except Exception as exc:  # the check's own error: data on its clause, never a traceback
            return CheckOutcome("failed", own_error(item.clause, item.scenario.id, item.profile, exc))
        return CheckOutcome("passed")

    def _root_failure(self, item: PlannedCheck, root: RootCause) -> Failure:
        language = self.settings.language
        failure = Failure(
            item.clause,
            item.scenario.id,
            item.profile,
            root.message,
            hint=root.hint or get_clause(root.clause, language).common_mistakes,
            details=root.details,
            happening=root.message,
        )
        if root.actual is None:
            return failure
        return replace(failure, expected=root.expected, actual=root.actual)

    def _failure(self, item: PlannedCheck, message: str) -> Failure:
        hint = get_clause(item.clause, self.settings.language).common_mistakes
        return Failure(item.clause, item.scenario.id, item.profile, message, hint=hint)


def judged_form(scenario: Scenario, profile: WireProfile, cassettes: CassetteCache) -> tuple[Scenario, bool]:
    """The scenario as its cassette lets it be judged: a live recording sets the expected text, reasoning and
    arguments (``recording.live.recorded_form``); an authored one leaves the scenario as written."""
    if not profile.replays or not scenario.recorded_exchanges:
        return scenario, False
    try:
        cassette = cassettes.get(profile.name, scenario.id)
    except CassetteError:
        return scenario, False  # the checks report the missing cassette
    if cassette.provenance.get("kind") != "recorded":
        return scenario, False
    from .recording.live import recorded_form, summaries_of
    from .scenarios.live import why_not_live

    if why_not_live(scenario) is not None:
        return scenario, False
    return recorded_form(scenario, summaries_of(cassette, profile)), True


def _shown_with_output(failure: Failure, run: ScenarioRun | None) -> Failure:
    """The failure with what the adapter printed during the run it was judged on (drivers keep it per run)."""
    if run is None or not run.output:
        return failure
    return replace(failure, details=with_output(failure.details, run.output, "the run judged here"))
