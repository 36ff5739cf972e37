"""What a check sees: the scenario, the profile, the adapter spec and lazily computed runs of the scenario."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..clauses import JUDGED_WITHOUT_EXCHANGE, RETRY_AFTER_BOUND_S
from ..contract import AdapterSpec, ParsedToolCall, StepResult
from ..language import Language
from ..profiles.base import DecodedRequest, WireProfile
from ..profiles.servers import declared_servers
from ..replay.delivery import EventPlan, SplitPlan
from ..replay.faults import FaultVariant
from ..replay.interactions import CassetteCache, ReplayInteraction, build_interactions
from ..replay.judging import run_scenario
from ..replay.runner import LATE_WORK_WAIT_S, RunOptions, ScenarioRun
from ..replay.trace import SentRequest
from ..scenarios.fault_kinds import DEFAULT_EXAMPLES
from ..scenarios.model import Scenario
from .common import endpoint_requests


class RunTicket(Protocol):
    """A run sent ahead to the adapter's workers (worker/pool.py)."""

    def result(self) -> ScenarioRun: ...

    def cancel(self) -> None: ...


@dataclass
class HarnessSettings:
    timeout: float = 10.0
    examples: int = DEFAULT_EXAMPLES
    """Hypothesis examples per property check (STR-10, NT-02); derandomized unless a seed is given."""
    seed: int | None = None
    executor: Callable[..., ScenarioRun] | None = None
    """Runs a scenario: ``run_scenario`` in this process when None, or an adapter worker's (worker/)."""
    submit: Callable[..., RunTicket] | None = None
    """Sends a run ahead (worker/pool.py), so the adapter runs it while pytest judges; None: every run
    happens when a check asks for it."""
    real_time: bool = False
    """Wait out the adapter's timers for real instead of skipping them (``--helix-real-time``)."""
    language: Language = "python"
    """The adapter's language (``adapters.language_of``): hints and messages speak it."""
    totals: RunTotals = field(default_factory=lambda: RunTotals())  # noqa: PLW0108 (defined below)
    """Every run of this process, summed: what virtual time skipped, and what it had to wait."""

    def execute(self, *args: Any, **kwargs: Any) -> ScenarioRun:
        """Run a scenario with the configured executor and count it in ``totals``."""
        run = (self.executor or run_scenario)(*args, **kwargs)
        self.totals.add(run)
        return run


@dataclass
class RunTotals:
    """Adapter runs, the adapter's timer seconds skipped on the virtual clock, and real waits that were not."""

    runs: int = 0
    skipped_s: float = 0.0
    real_wait_s: float = 0.0

    def add(self, run: ScenarioRun) -> None:
        self.runs += 1
        self.skipped_s += run.skipped_s
        self.real_wait_s += run.real_wait_s


@dataclass(frozen=True)
class Applicability:
    """What the adapter's request makes of a scenario (``scenarios/preconditions.py``): the reason its response
    is not what the provider sends to that request (its response-side checks are then not applicable), and
    the servers whose quirk the response is when the adapter targets none of them (judged for the
    compatibility matrix, not the gate)."""

    unmet: str | None = None
    matrix: frozenset[str] = frozenset()
    still_judged: frozenset[str] = frozenset()
    """Response-side clauses judged all the same where ``unmet`` (the retry clauses, on a declined retry)."""


@dataclass
class ScenarioSession:
    """All runs of one scenario against one adapter, computed once and shared by that scenario's clauses."""

    scenario: Scenario
    profile: WireProfile
    spec: AdapterSpec
    cassettes: CassetteCache
    settings: HarnessSettings
    scripted: tuple[Any, ...] = ()
    recorded_live: bool = False
    """The scenario's cassette was recorded live: its expectations come from the recording, ids included."""
    variants: dict[str, ScenarioSession] = field(default_factory=dict)
    """Sessions of generated inputs (``checks/generated.py``), shared by the clauses judged on them."""
    generated_reports: dict[tuple[str, ...], dict[str, str]] = field(default_factory=dict)
    """Failures found on generated inputs, by the clauses explored together, then by clause."""
    _runs: dict[RunOptions, ScenarioRun] = field(default_factory=dict)
    _interactions: list[ReplayInteraction] | None = None
    _decoded: list[DecodedRequest] | None = None
    _variant_runs: dict[str, ScenarioRun] = field(default_factory=dict)
    drawn: dict[tuple[str, str, int | None], list[Any]] = field(default_factory=dict)
    """The Hypothesis examples of each property clause, drawn once (``properties.examples_of``)."""
    fault_corpus: list[FaultVariant] | None = None
    """The scenario's fault variants, built once for the clauses judged on them (``faults.variants``)."""
    _ahead_runs: dict[RunOptions, RunTicket] = field(default_factory=dict)
    _ahead_variants: dict[str, RunTicket] = field(default_factory=dict)
    _applicability: Applicability | None = None
    _normal: dict[RunOptions | None, RunOptions] = field(default_factory=dict)

    @property
    def allowed_wait_s(self) -> float:
        """The wait the contract allows on this scenario on top of ``--helix-timeout``, in the loop's seconds
        (CFG-05: a retry hint capped at its bound is waited for)."""
        return RETRY_AFTER_BOUND_S if "retry_after_bound" in self.scenario.tags else 0.0

    @property
    def limit(self) -> float:
        """The scenario's limit on the step, in the loop's (virtual) seconds."""
        return self.settings.timeout + self.allowed_wait_s

    last_read: ScenarioRun | None = None
    """The run a check asked for last: a failure shows what the adapter printed during it (suite.py)."""

    def interactions(self) -> list[ReplayInteraction]:
        if self._interactions is None and not self.profile.replays:
            self._interactions = []
        if self._interactions is None:
            self._interactions = build_interactions(self.scenario, self.profile, self.cassettes)
        return self._interactions

    def run(self, options: RunOptions | None = None, *, keep: bool = True) -> ScenarioRun:
        """The run with these options, computed once; ``keep=False`` for one-off property-test runs."""
        options = self._normalized(options)
        if options in self._runs:
            self.last_read = self._runs[options]
            return self.last_read
        ticket = self._ahead_runs.pop(options, None)
        if ticket is not None:
            run = self._collect(ticket)
        else:
            run = self.settings.execute(
                self.scenario,
                self.spec,
                self.profile,
                self.interactions() * options.steps,
                options,
                scripted=self.scripted,
            )
        if keep:
            self._runs[options] = run
        self.last_read = run
        return run

    def run_variant(self, key: str, scenario: Scenario, interactions: list[ReplayInteraction]) -> ScenarioRun:
        """A run of a generated variant of this scenario (the fault corpus, replay/faults.py) served
        ``interactions``; computed once per ``key`` and shared by the clauses that judge it."""
        if key not in self._variant_runs:
            ticket = self._ahead_variants.pop(key, None)
            if ticket is not None:
                self._variant_runs[key] = self._collect(ticket)
            else:
                self._variant_runs[key] = self.settings.execute(
                    scenario,
                    self.spec,
                    self.profile,
                    interactions,
                    self._variant_options(scenario),
                    scripted=self.scripted,
                )
        self.last_read = self._variant_runs[key]
        return self.last_read

    # --- runs sent ahead: hints, never a different result ---------------------------------------------

    def ahead(self, options: RunOptions | None = None) -> None:
        """Send the run ``run(options)`` will ask for ahead to the adapter's workers, when they take runs
        ahead (``settings.submit``); the check then finds it done, or waits less."""
        if self.settings.submit is None:
            return
        options = self._normalized(options)
        if options in self._runs or options in self._ahead_runs:
            return
        interactions = self.interactions() * options.steps
        self._ahead_runs[options] = self.settings.submit(
            self.scenario, self.spec, self.profile, interactions, options, scripted=self.scripted
        )

    def ahead_variant(self, key: str, scenario: Scenario, interactions: list[ReplayInteraction]) -> None:
        """``ahead`` for ``run_variant(key, scenario, interactions)``."""
        if self.settings.submit is None or key in self._variant_runs or key in self._ahead_variants:
            return
        options = self._variant_options(scenario)
        self._ahead_variants[key] = self.settings.submit(
            scenario, self.spec, self.profile, interactions, options, scripted=self.scripted
        )

    def close(self) -> None:
        """Cancel the runs sent ahead that no check asked for (the scenario's checks are over, or its root
        cause leaves them unjudged), its generated inputs' included."""
        for variant in self.variants.values():
            variant.close()
        for ticket in [*self._ahead_runs.values(), *self._ahead_variants.values()]:
            ticket.cancel()
        self._ahead_runs.clear()
        self._ahead_variants.clear()

    def _collect(self, ticket: RunTicket) -> ScenarioRun:
        run = ticket.result()
        self.settings.totals.add(run)
        return run

    def _normalized(self, options: RunOptions | None) -> RunOptions:
        """``options`` with the session's limits and clock, made once per distinct options (every check asks
        for the main run, and ``dataclasses.replace`` is not free)."""
        found = self._normal.get(options)
        if found is None:
            found = self._normal[options] = replace(
                options or RunOptions(late_wait_s=LATE_WORK_WAIT_S),
                timeout=self.settings.timeout,
                allowed_wait_s=self.allowed_wait_s,
                virtual_time=not self.settings.real_time,
            )
        return found

    def _variant_options(self, variant: Scenario) -> RunOptions:
        """A fault variant's run: its body in one piece, as a client that reads after the server has sent it
        all gets it (the corpus judges results and hangs, never how callbacks interleave with the pieces:
        STR-10 judges the pieces); a variant aborted after an event gets one piece per event, so the abort
        lands between two."""
        return RunOptions(
            plan=EventPlan(yield_between=False) if variant.abort is not None else SplitPlan(()),
            timeout=self.settings.timeout,
            allowed_wait_s=self.allowed_wait_s,
            virtual_time=not self.settings.real_time,
        )

    def applicability(self) -> Applicability:
        """The scenario's precondition read on the main run's first request to the provider, once: the
        request's options (the profile's decoder) and the server its URL addresses, beside the servers the
        adapter declares. A run that sent no request is judged as it is (its root cause says why)."""
        if self._applicability is None:
            self._applicability = self._applicable()
        return self._applicability

    def _applicable(self) -> Applicability:
        declined = self._declined_retry_hint()
        if declined is not None:
            # what holds of any run, and the bound itself; not that every exchange was used (HARN-02, CFG-03)
            return Applicability(declined, still_judged=(JUDGED_WITHOUT_EXCHANGE - {"HARN-02"}) | {"CFG-05"})
        precondition = self.scenario.precondition(self.profile.name)
        if precondition is None or not self.profile.replays or self.profile.by_regression:
            return Applicability()
        sent, decoded = self.endpoint_requests(), self.decoded_requests()
        # no request, or only refused connections (connect_error): nothing said to read the options from
        if not sent or not decoded:
            return Applicability()
        unmet = precondition.unmet_by(decoded[0].request_options())
        if precondition.servers is None:
            return Applicability(unmet)
        targeted = set(declared_servers(self.spec, self.profile.name))
        addressed = self.profile.server_of(sent[0].url)  # a URL of a server's own shape says it is targeted
        if addressed is not None:
            targeted.add(addressed)
        return Applicability(unmet, frozenset() if precondition.servers & targeted else precondition.servers)

    def _declined_retry_hint(self) -> str | None:
        """Where a retry hint lies past CFG-05's bound, surfacing the 429 is allowed instead of the retry (the
        openai SDK declines any hint over two minutes): the success after the retry is then nobody's to judge."""
        if "retry_after_bound" not in self.scenario.tags or not self.profile.replays:
            return None
        result = self.run().result
        error = getattr(result, "error", None)
        if (
            getattr(result, "type", None) != "error"
            or getattr(error, "code", None) != "provider_rate_limited"
        ):
            return None
        if len(self.endpoint_requests()) != 1:
            return None
        # retryable either way: the 429 is retryable, and CFG-04 makes an error the adapter's retry policy gave up
        # on retryable=False (the openai SDK's loop declines the hint, then the adapter surfaces the error)
        return (
            "the adapter returned the 429 as a provider_rate_limited error instead of retrying after the hour its "
            "hint asks for, which CFG-05 allows for a hint over its two-minute bound: the response after a retry "
            "was never asked for"
        )

    def decoded_requests(self) -> list[DecodedRequest]:
        if self._decoded is None:
            self._decoded = [
                self.profile.decode_request(r.body, r.url) for r in self.endpoint_requests() if not r.refused
            ]
        return self._decoded

    def endpoint_requests(self, run: ScenarioRun | None = None) -> list[SentRequest]:
        """The requests of ``run`` (the main run by default) to the provider's endpoint; see
        ``common.endpoint_requests``."""
        return endpoint_requests(run or self.run(), self.profile)


@dataclass
class CheckContext:
    """Handed to every check function."""

    clause: str
    session: ScenarioSession

    @property
    def scenario(self) -> Scenario:
        return self.session.scenario

    @property
    def profile(self) -> WireProfile:
        return self.session.profile

    @property
    def spec(self) -> AdapterSpec:
        return self.session.spec

    @property
    def language(self) -> Language:
        return self.session.settings.language

    @property
    def main(self) -> ScenarioRun:
        return self.session.run()

    @property
    def result(self) -> StepResult:
        return self.main.result  # type: ignore[no-any-return]

    def requests(self) -> list[DecodedRequest]:
        """The decoded requests to the provider's endpoint, in the order sent."""
        return self.session.decoded_requests()

    def sent(self) -> list[SentRequest]:
        """The main run's requests to the provider's endpoint, as sent (headers, times)."""
        return self.session.endpoint_requests()

    def expected_tool_calls(self) -> list[ParsedToolCall]:
        """The scenario's expected tool calls, with the ids the profile's authored stream carries."""
        if self.session.recorded_live or self.scenario.sends_call_ids:
            return list(self.scenario.expect.tool_calls)
        return [
            c.model_copy(update={"id": self.profile.response_tool_call_id(c.id)}) if c.id else c
            for c in self.scenario.expect.tool_calls
        ]
