"""The judging side of a run: stage it on the adapter process's replay host, hand the adapter's side a job
without the plan, and assemble the run the checks read from the host's record and the adapter's account.

Every executor does these three steps — pytest's own process under ``--helix-in-process`` (``run_scenario``
below), the Python workers (worker/client.py, worker/pool.py) and the drivers (worker/driver.py) — so there is
one replay path whatever the adapter runs in. What the checks read of the provider's side (requests, chunks,
faults, aborts, closings, their times, the interactions left unused) comes from the host; the adapter's side
contributes only what is its own to claim: its results, what it raised, its callbacks and returns (placed
where its link reported them), its input before and after, what it left running.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..contract import AdapterSpec
from ..profiles.base import WireProfile
from ..scenarios.model import Scenario, Stream, StreamError, Text
from .delivery import EventPlan
from .interactions import ReplayInteraction
from .link import LinkAddress
from .runner import (
    HARNESS_FAILED,
    THREAD_GRACE_S,
    AdapterJob,
    RunOptions,
    ScenarioRun,
    adapter_options,
    adapter_timeout,
    run_adapter,
)
from .service import COLLECT_GRACE_S, HostAddress, ReplayServiceError, replay_service
from .stage import MergeError, ServedInteraction, StagePlan, StageTrace, merge, new_token


@dataclass(frozen=True)
class Staged:
    """A run staged on a host: what to send the adapter's side, and where to collect the record."""

    host: HostAddress
    token: str
    job: AdapterJob


def stage_run(
    host: HostAddress,
    scenario: Scenario,
    model: str,
    profile: WireProfile,
    interactions: list[ReplayInteraction],
    options: RunOptions,
    *,
    base_url: str | None = None,
    scripted: tuple[Any, ...] = (),
) -> Staged:
    """Stage the run on ``host`` and make the adapter's job for it."""
    token = new_token()
    abort = scenario.abort
    plan = StagePlan(
        token=token,
        interactions=[served(interaction) for interaction in interactions],
        wire=profile.wire,
        plan=options.plan,
        read_timeout=adapter_timeout(options.timeout),
        abort_before=bool(abort is not None and abort.before and options.with_signal),
        abort_after_events=None if abort is None or abort.before else abort.after_events,
        cancel_after_chunks=options.cancel_after_chunks,
        hold=hold_points(scenario, profile, interactions, options),
        virtual_time=options.virtual_time,
        limit_s=options.limit_s * options.steps,
        chunk_bytes=options.chunk_bytes,
    )
    replay_service().stage(host, plan)
    refused = refuses_connections(plan)
    job = AdapterJob(
        scenario_id=scenario.id,
        messages=tuple(scenario.messages),
        tools=tuple(scenario.tools),
        config=scenario.llm_config(model, profile.name),
        options=adapter_options(options),
        abort_before=bool(abort is not None and abort.before),
        cancel_planned=options.cancel_after_chunks is not None,
        base_url=_run_base_url(host, token, base_url or profile.default_base_url, refused=refused),
        scripted=scripted,
        link=LinkAddress(host.http_port, host.control_port, token, host.refusing_port if refused else 0),
    )
    return Staged(host, token, job)


def served(interaction: ReplayInteraction) -> ServedInteraction:
    """The interaction as the host serves it (plain values: stage.ServedInteraction)."""
    fault = interaction.fault
    return ServedInteraction(
        interaction.path,
        interaction.status,
        interaction.headers,
        interaction.body,
        fault.kind if fault is not None else None,
        fault.after_events if fault is not None else 0,
        interaction.optional,
    )


def refuses_connections(plan: StagePlan) -> bool:
    """Whether the run's connections are refused: its first response is a ``connect_error`` (a provider that
    cannot be reached refuses every attempt alike; no scenario recovers from one in the same step)."""
    return bool(plan.interactions) and plan.interactions[0].fault_kind == "connect_error"


def _run_base_url(host: HostAddress, token: str, provider_base_url: str, *, refused: bool) -> str:
    """The run's ``AdapterContext.base_url``: the host's, with the path of the provider's base URL (on the
    host's refusing port when the run's connections are ``refused``). A profile with no base URL of its own
    (``custom``: the adapter knows its provider's URL, the recordings hold its paths) gets none, as before the
    host: the adapter uses its own URL, which the httpx seam sends to the host with the run's prefix
    (replay/transport.py), so the recorded paths match."""
    return host.base_url(token, provider_base_url, refused=refused) if provider_base_url else ""


_LAST_TEXT: dict[
    tuple[int, int, tuple[bytes, ...]], tuple[Scenario, WireProfile, tuple[int, int] | None]
] = {}
"""``last_text_event``'s answers: a scenario's runs (a dozen variants each) stage the same bodies, and splitting
them into events again for every run was a tenth of the judging side's cost per run."""


def last_text_event(
    scenario: Scenario, profile: WireProfile, interactions: list[ReplayInteraction]
) -> tuple[int, int] | None:
    """(interaction, event index) of the event carrying the script's last text delta: STR-02's boundary, where
    the check looks and where the host holds."""
    key = (id(scenario), id(profile), tuple(i.body for i in interactions))
    known = _LAST_TEXT.get(key)
    if known is not None and known[0] is scenario and known[1] is profile:
        return known[2]
    found = _last_text_event(scenario, profile, interactions)
    if len(_LAST_TEXT) > 4096:
        _LAST_TEXT.clear()
    _LAST_TEXT[key] = (scenario, profile, found)
    return found


def _last_text_event(
    scenario: Scenario, profile: WireProfile, interactions: list[ReplayInteraction]
) -> tuple[int, int] | None:
    pieces = [
        c
        for exchange in scenario.exchanges
        if isinstance(exchange.response, (Stream, StreamError))
        for part in exchange.response.parts
        if isinstance(part, Text)
        for c in part.chunks
    ]
    if not pieces:
        return None
    needles = {json.dumps(pieces[-1], ensure_ascii=asc)[1:-1].encode() for asc in (True, False)}
    for index, interaction in reversed(list(enumerate(interactions))):
        events = profile.split_events(interaction.body)
        hits = [i for i, event in enumerate(events) if any(n in event for n in needles)]
        if hits:
            return index, hits[-1]
    return None


def hold_points(
    scenario: Scenario, profile: WireProfile, interactions: list[ReplayInteraction], options: RunOptions
) -> dict[int, int]:
    """Where the host waits for the adapter to be idle before delivering on: STR-02's boundary, in runs with
    callbacks and one event per piece (the runs STR-02 reads); nowhere else, so no other run pays for it."""
    if (
        options.callbacks == "none"
        or not isinstance(options.plan, EventPlan)
        or not options.plan.yield_between
    ):
        return {}
    found = last_text_event(scenario, profile, interactions)
    return {found[0]: found[1]} if found else {}


def collect(staged: Staged, grace_s: float = COLLECT_GRACE_S) -> StageTrace:
    """The host's record of the run (the service ends the run if the adapter's side has not within
    ``grace_s``: 0 for a run whose process is gone)."""
    return replay_service().collect(staged.host, staged.token, grace_s)


def assemble(
    options: RunOptions,
    interactions: list[ReplayInteraction],
    record: StageTrace,
    account: ScenarioRun,
    garbled: Callable[[str], BaseException] = MergeError,
) -> ScenarioRun:
    """The run the checks read: the host's record with the adapter's events in the places its link reported,
    and the adapter's own claims. A run whose events do not fit their marks is garbled (NT-01): ``garbled``
    makes the exception it is reported as."""
    run = account
    try:
        run.trace = merge(record, list(account.trace.events))
    except MergeError as exc:
        run.trace = merge(StageTrace(requests=record.requests), [])
        run.results, run.raised = [], garbled(f"its events do not match its link's reports: {exc}")
    run.options, run.interactions = options, interactions
    run.unused_interactions = list(record.unused)
    run.host_seen = list(record.seen)
    run.skipped_s = record.skipped_s
    if record.elapsed_s > options.limit_s * options.steps + THREAD_GRACE_S:
        run.timed_out = True  # the run's clock says so, whatever the adapter's side claims (HARN-03)
    return run


def run_scenario(
    scenario: Scenario,
    spec: AdapterSpec,
    profile: WireProfile,
    interactions: list[ReplayInteraction],
    options: RunOptions,
    *,
    base_url: str | None = None,
    scripted: tuple[Any, ...] = (),
) -> ScenarioRun:
    """Run the adapter in this process (``--helix-in-process``: debugging, not a gate), served by the replay
    host like any other: a ``HarnessSettings.executor``."""
    try:
        host = _in_process_host()
        staged = stage_run(
            host, scenario, spec.model, profile, interactions, options, base_url=base_url, scripted=scripted
        )
    except ReplayServiceError as exc:
        return _harness_failed(options, interactions, exc)
    account = run_adapter(staged.job, spec)
    try:
        record = collect(staged)
    except ReplayServiceError as exc:
        return _harness_failed(options, interactions, exc)
    return assemble(options, interactions, record, account)


_HOST: list[HostAddress] = []


def _in_process_host() -> HostAddress:
    """The host of this process's own runs (made again if the service restarted)."""
    service = replay_service()
    host = service.host(_HOST[0].id if _HOST else None)
    _HOST[:] = [host]
    return host


def _harness_failed(
    options: RunOptions, interactions: list[ReplayInteraction], exc: Exception
) -> ScenarioRun:
    from .trace import Trace

    run = ScenarioRun(options=options, trace=Trace(), interactions=interactions)
    run.setup_error = f"{HARNESS_FAILED}: {exc}"
    return run
