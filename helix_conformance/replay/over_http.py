"""Run a Python adapter against the replay server over real HTTP, instead of the in-process transport patch.

The same run as ``runner.run_scenario`` (thread, callbacks, timeouts, abort plan), but the adapter's HTTP client
really connects to ``server.ReplayServer`` on loopback: the proof that the server serves what the in-process
replay serves (tests/test_replay_server.py compares verdicts), and where STR-02 holding is decided
(``hold_points``), which the driver client (worker/driver.py) shares.
"""

from __future__ import annotations

import json
import threading
from types import ModuleType
from typing import Any

from ..contract import AdapterContext, AdapterSpec
from ..profiles.base import WireProfile
from ..scenarios.model import Scenario, Stream, StreamError, Text
from .delivery import EventPlan
from .hidden_keys import provider_keys_hidden
from .interactions import ReplayInteraction
from .runner import REPLAY_API_KEY, RunOptions, ScenarioRun, _execute, abort_controller, adapter_timeout
from .server import ReplayServer
from .trace import Trace
from .transport import original_method


def last_text_event(
    scenario: Scenario, profile: WireProfile, interactions: list[ReplayInteraction]
) -> tuple[int, int] | None:
    """(interaction, event index) of the event carrying the script's last text delta (STR-02's boundary)."""
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
    """Where the server holds for the first on_text_delta: STR-02's boundary, in runs with callbacks and one
    event per chunk (the runs STR-02 reads); nowhere else, so no other run pays for it."""
    if options.callbacks == "none" or not isinstance(options.plan, EventPlan):
        return {}
    found = last_text_event(scenario, profile, interactions)
    return {found[0]: found[1]} if found else {}


class _PassThrough:
    """The transport patch's Server that forwards to the real transports: the requests really reach the
    replay server (loopback), while connections elsewhere stay refused."""

    def __init__(self) -> None:
        self.unintercepted: list[str] = []
        self.stall_release = threading.Event()

    async def handle_async(self, lib: ModuleType, transport: Any, request: Any) -> Any:
        return await original_method(lib.AsyncHTTPTransport, "handle_async_request")(transport, request)

    def handle_sync(self, lib: ModuleType, transport: Any, request: Any) -> Any:
        return original_method(lib.HTTPTransport, "handle_request")(transport, request)


def run_scenario_over_http(
    scenario: Scenario,
    spec: AdapterSpec,
    profile: WireProfile,
    interactions: list[ReplayInteraction],
    options: RunOptions,
    *,
    base_url: str | None = None,
    scripted: tuple[Any, ...] = (),
) -> ScenarioRun:
    """Same signature and meaning as ``runner.run_scenario`` (a ``HarnessSettings.executor``)."""
    trace = Trace()
    run = ScenarioRun(options=options, trace=trace, interactions=interactions)
    controller = abort_controller(scenario, options, trace)
    abort = scenario.abort

    def on_abort(index: int, chunk_index: int) -> None:
        trace.add("abort", interaction=index, chunk_index=chunk_index)
        if controller is not None:
            controller.abort("aborted by the harness mid-stream")

    timeout = adapter_timeout(options.timeout)
    server = ReplayServer(
        interactions,
        profile,
        trace,
        options.plan,
        read_timeout=timeout,
        abort_after_events=None if abort is None or abort.before else abort.after_events,
        on_abort=on_abort if controller is not None else None,
        hold=hold_points(scenario, profile, interactions, options),
    )
    with server:
        context = AdapterContext(
            api_key=REPLAY_API_KEY,
            base_url=server.base_url(base_url or profile.default_base_url),
            scripted_responses=scripted,
            timeout=timeout,
        )
        with provider_keys_hidden((spec.api_key_env,)):
            _execute(run, scenario, spec, context, controller, _PassThrough(), block_network=True)
    run.unused_interactions = server.unused()
    return run
