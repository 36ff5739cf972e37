"""The replay server (replay/server.py): real HTTP on loopback, the same deliveries, faults and trace as the
in-process replay, and the same verdicts for the same adapters (replay/over_http.py runs them through it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from broken_adapters import BROKEN_ADAPTERS

from helix_conformance.adapters import resolve_adapter
from helix_conformance.checks.context import HarnessSettings
from helix_conformance.contract import AdapterSpec
from helix_conformance.profiles import get_profile
from helix_conformance.replay import server as server_module
from helix_conformance.replay.delivery import EventPlan, SplitPlan
from helix_conformance.replay.interactions import ReplayInteraction
from helix_conformance.replay.over_http import run_scenario_over_http
from helix_conformance.replay.server import ReplayServer
from helix_conformance.replay.trace import Trace
from helix_conformance.replay.transport import STALL_EXPIRED
from helix_conformance.scenarios.model import Fault
from helix_conformance.suite import SuiteRunner, plan_suite

PROFILE = get_profile("openai-chat")
EVENTS = [b'data: {"n":%d}\n\n' % i for i in range(5)] + [b"data: [DONE]\n\n"]
BODY = b"".join(EVENTS)
PATH = "/v1/chat/completions"


def interaction(fault: Fault | None = None, body: bytes = BODY) -> ReplayInteraction:
    headers = {"content-type": "text/event-stream", "content-length": "999"}
    return ReplayInteraction("POST", PATH, 200, headers, body, fault, False, "test")


@pytest.fixture
def trace() -> Trace:
    return Trace()


def serve(trace: Trace, *items: ReplayInteraction, **kwargs: Any) -> ReplayServer:
    kwargs.setdefault("read_timeout", 1.0)
    return ReplayServer(list(items), PROFILE, trace, kwargs.pop("plan", EventPlan()), **kwargs).start()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=httpx.Timeout(5.0, read=2.0)) as c:
        yield c


def read_all(client: httpx.Client, url: str) -> tuple[list[bytes], BaseException | None]:
    pieces: list[bytes] = []
    try:
        with client.stream("POST", url + PATH, content=b'{"stream":true}') as response:
            for piece in response.iter_raw():
                pieces.append(piece)
    except httpx.HTTPError as exc:
        return pieces, exc
    return pieces, None


def test_serves_one_event_per_chunk_and_traces_like_the_transport(trace: Trace, client: httpx.Client) -> None:
    server = serve(trace, interaction())
    try:
        pieces, error = read_all(client, server.origin)
    finally:
        server.close()
    assert error is None
    assert b"".join(pieces) == BODY
    assert pieces == EVENTS  # paced: the client read each event apart
    chunks = trace.of("chunk")
    assert [c.args[0] for c in chunks] == EVENTS
    assert [c.last for c in chunks] == [False] * 5 + [True]
    request = trace.requests[0]
    assert (request.method, request.path, request.interaction, request.body) == (
        "POST",
        PATH,
        0,
        b'{"stream":true}',
    )
    assert [e.kind for e in trace.events][:2] == ["request", "chunk"]
    assert trace.of("response_closed")
    assert server.unused() == []


def test_split_plan_cuts_the_body_at_the_offsets(trace: Trace, client: httpx.Client) -> None:
    server = serve(trace, interaction(), plan=SplitPlan((3, 20, 21)))
    try:
        pieces, error = read_all(client, server.origin)
    finally:
        server.close()
    assert error is None
    assert b"".join(pieces) == BODY
    assert [c.args[0] for c in trace.of("chunk")] == [BODY[:3], BODY[3:20], BODY[20:21], BODY[21:]]


def test_truncation_ends_the_body_cleanly_at_the_cut(trace: Trace, client: httpx.Client) -> None:
    server = serve(trace, interaction(Fault("truncate", 2)))
    try:
        pieces, error = read_all(client, server.origin)
    finally:
        server.close()
    assert error is None
    assert b"".join(pieces) == b"".join(EVENTS[:2])
    assert [e.name for e in trace.of("fault")] == ["truncate"]
    assert not any(c.last for c in trace.of("chunk"))


def test_reset_is_a_connection_reset_after_the_prefix(trace: Trace, client: httpx.Client) -> None:
    server = serve(trace, interaction(Fault("reset", 3)))
    try:
        pieces, error = read_all(client, server.origin)
    finally:
        server.close()
    assert isinstance(error, (httpx.ReadError, httpx.RemoteProtocolError)), error
    assert b"".join(pieces) == b"".join(EVENTS[:3])
    assert [e.name for e in trace.of("fault")] == ["reset"]


def test_connect_error_drops_the_connection_before_any_response(trace: Trace, client: httpx.Client) -> None:
    server = serve(trace, interaction(Fault("connect_error")))
    try:
        pieces, error = read_all(client, server.origin)
    finally:
        server.close()
    assert isinstance(error, httpx.TransportError)
    assert pieces == []
    assert trace.requests[0].interaction == 0
    assert [e.name for e in trace.of("fault")] == ["connect_error"]


def test_read_timeout_holds_the_connection_silent_until_the_client_gives_up(trace: Trace) -> None:
    server = serve(trace, interaction(Fault("read_timeout", 2)), read_timeout=0.4)
    started = time.monotonic()
    try:
        with httpx.Client(timeout=httpx.Timeout(5.0, read=0.4)) as client:
            pieces, error = read_all(client, server.origin)
    finally:
        server.close()
    assert isinstance(error, httpx.ReadTimeout)
    assert b"".join(pieces) == b"".join(EVENTS[:2])
    assert 0.35 < time.monotonic() - started < 3
    assert [e.name for e in trace.of("fault")] == ["read_timeout"]  # not a stall: no stall_expired mark


def test_a_stall_read_until_the_timeout_is_marked_expired(trace: Trace) -> None:
    server = serve(trace, interaction(Fault("stall", 2)), read_timeout=0.4)
    try:
        with httpx.Client(timeout=httpx.Timeout(5.0, read=0.45)) as client:
            _, error = read_all(client, server.origin)
        time.sleep(0.1)
    finally:
        server.close()
    assert isinstance(error, httpx.ReadTimeout)
    assert [e.name for e in trace.of("fault")] == ["stall", STALL_EXPIRED]
    assert trace.of("response_closed")[0].seq > trace.of("fault", STALL_EXPIRED)[0].seq


def test_a_stall_the_client_leaves_early_is_not_marked_expired(trace: Trace) -> None:
    server = serve(trace, interaction(Fault("stall", 2)), read_timeout=2.0)
    try:
        with httpx.Client(timeout=httpx.Timeout(5.0, read=0.1)) as client:
            _, error = read_all(client, server.origin)
        deadline = time.monotonic() + 2
        while not trace.of("response_closed") and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        server.close()
    assert isinstance(error, httpx.ReadTimeout)
    assert [e.name for e in trace.of("fault")] == ["stall"]
    assert trace.of("response_closed")


def test_an_unmatched_request_is_traced_for_harn_01_and_dropped(trace: Trace, client: httpx.Client) -> None:
    server = serve(trace, interaction())
    try:
        response_error: BaseException | None = None
        try:
            client.get(server.origin + "/v1/models")
        except httpx.HTTPError as exc:
            response_error = exc
    finally:
        server.close()
    assert isinstance(response_error, httpx.TransportError)
    assert trace.requests[0].interaction is None
    assert server.unused() == [0]


def test_abort_plan_fires_before_its_chunk_and_slows_the_rest(trace: Trace, client: httpx.Client) -> None:
    fired: list[tuple[int, int]] = []

    def on_abort(index: int, chunk_index: int) -> None:
        fired.append((index, chunk_index))
        trace.add("abort", interaction=index, chunk_index=chunk_index)

    server = serve(trace, interaction(), abort_after_events=2, on_abort=on_abort)
    try:
        _pieces, error = read_all(client, server.origin)
    finally:
        server.close()
    assert error is None
    assert fired == [(0, 2)]
    kinds = [(e.kind, e.chunk_index) for e in trace.events if e.kind in ("chunk", "abort")]
    assert kinds[:3] == [("chunk", 0), ("chunk", 1), ("abort", 2)]
    chunks = trace.of("chunk")
    assert chunks[3].at - chunks[2].at >= server_module.SLOW_AFTER_ABORT_S * 0.9


def test_holding_waits_for_the_first_text_delta_and_no_longer(
    trace: Trace, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_module, "HOLD_S", 0.5)
    server = serve(trace, interaction(), hold={0: 4})
    try:
        read_all(client, server.origin)
    finally:
        server.close()
    chunks = trace.of("chunk")
    assert chunks[4].at - chunks[3].at >= 0.45  # nobody reported a delta: held for the whole bound
    trace2 = Trace()
    server = serve(trace2, interaction(), hold={0: 4})

    def streaming_consumer() -> None:
        deadline = time.monotonic() + 2
        while not trace2.of("chunk") and time.monotonic() < deadline:
            time.sleep(0.001)
        trace2.add("callback", name="on_text_delta", args=("x",))

    helper = threading.Thread(target=streaming_consumer)
    helper.start()
    try:
        read_all(client, server.origin)
    finally:
        helper.join()
        server.close()
    chunks = trace2.of("chunk")
    assert chunks[4].at - chunks[3].at < 0.3
    assert trace2.callbacks("on_text_delta")[0].seq < chunks[4].seq


# --- verdict parity ------------------------------------------------------------------------------------


def verdicts(
    spec: AdapterSpec, scenarios: set[str], executor: Any, clause: str | None = None
) -> dict[str, str]:
    planned = [
        p
        for p in plan_suite(spec)
        if p.scenario.id in scenarios and (clause is None or p.clause == clause) and p.clause != "NT-03"
    ]
    runner = SuiteRunner(spec, HarnessSettings(timeout=6.0, examples=1, executor=executor))
    runner.expect(planned)
    return {p.test_id: runner.run(p).outcome for p in planned}


@pytest.mark.parametrize(
    ("adapter", "scenarios"),
    [
        ("openai", {"text_basic", "tool_call_parallel", "abort_midstream", "stall_midstream", "http_429"}),
        ("anthropic", {"thinking_text", "connection_reset", "read_timeout_midstream"}),
        ("gemini", {"text_basic", "tool_call"}),
    ],
)
def test_reference_adapters_get_the_same_verdicts_over_http(adapter: str, scenarios: set[str]) -> None:
    spec = resolve_adapter(adapter).spec
    in_process = verdicts(spec, scenarios, None)
    over_http = verdicts(spec, scenarios, run_scenario_over_http)
    assert len(in_process) > 20
    assert over_http == in_process


CAUGHT_OVER_HTTP = (
    "flushes_text_at_finish_reason",
    "buffers_whole_body",
    "gemini_splits_on_lf_lf_only",
    "polls_abort_between_chunks",
    "abort_checked_only_before_sending",
    "callbacks_after_abort",
    "reads_past_done",
    "partial_text_on_dropped_stream",
    "reports_error_twice",
    "does_not_await_callbacks",
    "probes_models_endpoint",
)


OVER_HTTP_SCENARIOS = {"partial_text_on_dropped_stream": {"connection_reset", "truncated_stream"}}
"""Its bug sits on httpx's ReadTimeout path. In-process the replay raises ReadTimeout at once; over HTTP the
adapter's own idle timer (reference_adapters/_http.py) races httpx's, both set to AdapterContext.timeout, and
wins: the step returns provider_timeout and the bug is not reached on read_timeout_midstream (a documented
difference of real timeouts, docs/worker-protocol.md)."""


@pytest.mark.parametrize("name", CAUGHT_OVER_HTTP)
def test_broken_adapters_fail_their_clause_over_http(name: str) -> None:
    broken = next(b for b in BROKEN_ADAPTERS if b.name == name)
    scenarios = OVER_HTTP_SCENARIOS.get(name, set(broken.scenarios))
    outcomes = verdicts(broken.spec, scenarios, run_scenario_over_http, broken.caught_by)
    assert outcomes
    assert all(o == "failed" for o in outcomes.values()), outcomes
