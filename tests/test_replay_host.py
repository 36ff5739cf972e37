"""The replay host (replay/host.py), the seam (replay/transport.py) and the link (replay/link.py), through the path
every run takes: staged on the replay service, the adapter's side linked to its host, the host's record merged
with the adapter's account (replay/judging.py). Probe adapters read with a given HTTP client and keep what they
read; the link's protocol is also spoken by hand, to pin down when the host may act and when its clock may jump."""

from __future__ import annotations

import asyncio
import importlib
import json
import pickle
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from types import ModuleType
from typing import Any

import httpx
import pytest

from helix_conformance.contract import (
    AdapterContext,
    AdapterSpec,
    LLMGenerateInput,
    StepResult,
    TextStepResult,
    invoke_callback,
)
from helix_conformance.profiles import get_profile
from helix_conformance.profiles.wire import split_sse_events
from helix_conformance.replay.delivery import (
    EventPlan,
    MutatedPlan,
    SplitPlan,
    cut_at_events,
    event_boundaries,
)
from helix_conformance.replay.host import Host
from helix_conformance.replay.host_state import RUN_PREFIX, ActiveStage
from helix_conformance.replay.interactions import CassetteCache, ReplayInteraction, build_interactions
from helix_conformance.replay.judging import last_text_event, run_scenario, served
from helix_conformance.replay.runner import RunOptions, ScenarioRun
from helix_conformance.replay.service import HostAddress, replay_service
from helix_conformance.replay.stage import SLOW_AFTER_ABORT_S, STALL_EXPIRED, StagePlan, new_token
from helix_conformance.replay.transport import _refuse_outside_connections, available_libraries
from helix_conformance.scenarios import get_scenario
from helix_conformance.scenarios.model import AbortPlan, Fault, FaultKind
from helix_conformance.suite import bundled_cassettes

PROFILE = get_profile("openai-chat")
EVENTS = [b'data: {"n":%d}\n\n' % i for i in range(5)] + [b"data: [DONE]\n\n"]
BODY = b"".join(EVENTS)
PATH = "/v1/chat/completions"
LIBRARIES = ["httpx", "httpx2"]
READ_TIMEOUT = 1.0
"""The probes' read timeout: AdapterContext.timeout for a 5 s limit."""

Read = Callable[[AdapterContext, LLMGenerateInput], Awaitable[list[bytes]]]


def interaction(fault: Fault | None = None, body: bytes = BODY) -> ReplayInteraction:
    headers = {"content-type": "text/event-stream", "content-length": "999"}
    return ReplayInteraction("POST", PATH, 200, headers, body, fault, False, "test")


class _Probe:
    """An adapter that reads the response with ``read`` and keeps what it read (or what it raised)."""

    def __init__(self, ctx: AdapterContext, read: Read, seen: dict[str, Any]) -> None:
        self.ctx, self.read, self.seen = ctx, read, seen

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        try:
            self.seen["pieces"] = await self.read(self.ctx, input)
        except Exception as exc:
            self.seen["error"] = exc
        return TextStepResult(content="read", should_stop=True, stop_reason="end_turn")


def probe_run(
    read: Read,
    *interactions: ReplayInteraction,
    plan: Any = None,
    abort_after: int | None = None,
    callbacks: Any = "none",
) -> tuple[ScenarioRun, dict[str, Any]]:
    seen: dict[str, Any] = {}
    spec = AdapterSpec(
        name="probe", factory=lambda ctx: _Probe(ctx, read, seen), wire_profile="openai-chat", model="m"
    )
    scenario = get_scenario("text_basic")
    if abort_after is not None:
        scenario = replace(scenario, abort=AbortPlan(after_events=abort_after))
    options = RunOptions(plan=plan or EventPlan(), timeout=5.0, callbacks=callbacks, late_wait_s=0.001)
    return run_scenario(scenario, spec, PROFILE, list(interactions), options), seen


def _lib(name: str) -> ModuleType:
    module: ModuleType = pytest.importorskip(name)
    return module


def stream_with(name: str, url: str | None = None) -> Read:
    """A read through the library's async client: the base URL's endpoint, or ``url`` as given."""
    lib = _lib(name)

    async def read(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        target = url or f"{ctx.base_url}/chat/completions"
        timeout = lib.Timeout(5.0, read=ctx.timeout)
        async with (
            lib.AsyncClient(timeout=timeout) as client,
            client.stream("POST", target, json={"x": 1}) as r,
        ):
            return [piece async for piece in r.aiter_raw()]

    return read


# --- delivery -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LIBRARIES)
def test_one_event_per_piece_and_the_trace_is_the_hosts(name: str) -> None:
    run, seen = probe_run(stream_with(name), interaction())
    assert seen["pieces"] == EVENTS  # one event per read of the client's
    chunks = run.trace.of("chunk")
    assert [c.chunk_index for c in chunks] == list(range(6))
    assert [c.last for c in chunks] == [False] * 5 + [True]
    request = run.trace.requests[0]
    assert (request.method, request.path, request.interaction, request.library) == ("POST", PATH, 0, "http")
    assert json.loads(request.body) == {"x": 1}
    assert [e.kind for e in run.trace.events][:2] == ["request", "chunk"]
    assert run.trace.of("response_closed")
    assert run.trace.returned_at() is not None
    assert run.unused_interactions == []


@pytest.mark.parametrize("name", LIBRARIES)
def test_a_url_built_without_the_base_url_is_redirected_to_the_host(name: str) -> None:
    run, seen = probe_run(
        stream_with(name, "https://api.example.test/openrouter/api/v1/chat/completions"), interaction()
    )
    assert seen["pieces"] == EVENTS
    request = run.trace.requests[0]
    assert request.interaction == 0
    assert request.path == "/openrouter/api/v1/chat/completions"  # the run's prefix is not the adapter's
    assert "api.example.test" in request.url


@pytest.mark.parametrize("name", LIBRARIES)
def test_sync_clients_are_served_too(name: str) -> None:
    lib = _lib(name)

    async def read(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        def fetch() -> list[bytes]:
            with lib.Client(timeout=ctx.timeout) as client:
                first = client.post(f"{ctx.base_url}/chat/completions", json={})
                second = client.post("https://api.example.test/v1/chat/completions", json={})
                return [first.content, second.content]

        return await asyncio.to_thread(fetch)

    run, seen = probe_run(read, interaction(), interaction())
    assert seen["pieces"] == [BODY, BODY]
    assert [r.interaction for r in run.trace.requests] == [0, 1]


def test_the_seam_is_in_place_only_while_a_run_replays() -> None:
    before = httpx.AsyncHTTPTransport.__dict__["handle_async_request"]
    during: list[Any] = []

    async def read(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        during.append(httpx.AsyncHTTPTransport.__dict__["handle_async_request"])
        return []

    probe_run(read, interaction())
    assert during
    assert during[0] is not before
    assert httpx.AsyncHTTPTransport.__dict__["handle_async_request"] is before


def test_an_unmatched_request_is_traced_for_harn_01_and_dropped() -> None:
    run, seen = probe_run(stream_with("httpx", "https://api.example.test/v1/embeddings"), interaction())
    assert isinstance(seen["error"], httpx.TransportError)
    assert run.trace.requests[0].interaction is None
    assert run.unused_interactions == [0]


@pytest.mark.parametrize(
    ("kind", "errors", "delivered"),
    [
        ("reset", (httpx.ReadError, httpx.RemoteProtocolError), 2),
        ("truncate", None, 2),
        ("connect_error", (httpx.ConnectError,), 0),
        ("read_timeout", (httpx.ReadTimeout,), 2),
        ("stall", (httpx.ReadTimeout,), 2),
    ],
)
def test_faults_are_transport_behaviour(kind: FaultKind, errors: Any, delivered: int) -> None:
    run, seen = probe_run(stream_with("httpx"), interaction(Fault(kind, after_events=2)))
    if errors is None:
        assert seen["pieces"] == EVENTS[:2]
    else:
        assert isinstance(seen.get("error"), errors), seen
    assert len(run.trace.of("chunk")) == delivered
    assert [e.name for e in run.trace.of("fault")][:1] == [kind]
    if kind in ("read_timeout", "stall"):
        # the client's own read timeout ended the silence, on the run's clock: skipped, not waited out
        assert run.skipped_s >= READ_TIMEOUT * 0.9, run.skipped_s
        assert bool(run.trace.of("fault", STALL_EXPIRED)) == (kind == "stall")


def test_a_refused_connection_is_the_request_it_stood_for_and_each_retry_one_more() -> None:
    """connect_error's base URL is a port where nothing listens: the kernel refuses the connection, as a provider
    that cannot be reached does (not a reset after accept). The link reports each attempt, from any client, in
    its place among the adapter's events: the first stands for the recorded request, a retry is one too many."""
    from urllib.error import URLError
    from urllib.request import urlopen

    async def read(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        assert input.callbacks is not None
        assert input.callbacks.on_text_delta is not None
        failures: list[str] = []
        try:
            await stream_with("httpx")(ctx, input)
        except httpx.ConnectError as exc:
            failures.append(type(exc).__name__)
        await invoke_callback(input.callbacks.on_text_delta, "between")
        try:  # a sync client in a thread
            await asyncio.to_thread(urlopen, f"{ctx.base_url}/chat/completions", b"{}", 5)
        except URLError as exc:
            failures.append(type(exc.reason).__name__)
        return [f.encode() for f in failures]

    run, seen = probe_run(read, interaction(Fault("connect_error")), callbacks="sync")
    assert seen["pieces"] == [b"ConnectError", b"ConnectionRefusedError"], seen
    assert [(r.refused, r.interaction, r.body) for r in run.trace.requests] == [
        (True, 0, b""),
        (True, None, b""),
    ]
    assert [(e.kind, e.name) for e in run.trace.events if e.kind != "returned"] == [
        ("request", "connect (refused)"),
        ("fault", "connect_error"),
        ("callback", "on_text_delta"),
        ("request", "connect (refused)"),
    ]
    assert run.unused_interactions == []
    assert not run.trace.of("chunk")


def test_a_stall_the_client_leaves_early_is_not_marked_expired() -> None:
    async def read(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        timeout = httpx.Timeout(5.0, read=ctx.timeout / 4)
        async with (
            httpx.AsyncClient(timeout=timeout) as client,
            client.stream("POST", f"{ctx.base_url}/chat/completions") as response,
        ):
            return [piece async for piece in response.aiter_raw()]

    run, seen = probe_run(read, interaction(Fault("stall", after_events=2)))
    assert isinstance(seen["error"], httpx.ReadTimeout)
    assert [e.name for e in run.trace.of("fault")] == ["stall"]
    assert run.trace.of("response_closed")


def test_a_read_timeout_longer_than_the_limit_ends_a_stall_on_credit() -> None:
    """NT-04 asks that the adapter's own read timeout end a stall, not that it be short: a 600 s timeout is
    jumped to while the host holds the stall, and that time is not counted against the run's limit."""

    async def read(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        async with (
            httpx.AsyncClient(timeout=httpx.Timeout(600.0)) as client,
            client.stream("POST", f"{ctx.base_url}/chat/completions") as response,
        ):
            return [piece async for piece in response.aiter_raw()]

    run, seen = probe_run(read, interaction(Fault("stall", after_events=2)))
    assert isinstance(seen["error"], httpx.ReadTimeout)
    assert not run.timed_out
    assert run.skipped_s >= 599


def test_split_plans_give_each_cut_its_own_piece() -> None:
    run, seen = probe_run(stream_with("httpx"), interaction(), plan=SplitPlan((3, 20, 21)))
    assert seen["pieces"] == [BODY[:3], BODY[3:20], BODY[20:21], BODY[21:]]
    assert [c.chunk_index for c in run.trace.of("chunk")] == [0, 1, 2, 3]


def test_a_mutated_body_is_delivered_event_by_event() -> None:
    _run, seen = probe_run(
        stream_with("httpx"), interaction(), plan=MutatedPlan(truncate_at=20, flips=((0, 65),))
    )
    assert b"".join(seen["pieces"]) == b"A" + BODY[1:20]


def test_the_abort_plan_fires_before_its_chunk_and_the_rest_trickles() -> None:
    run, _ = probe_run(stream_with("httpx"), interaction(), abort_after=2)
    kinds = [(e.kind, e.chunk_index) for e in run.trace.events if e.kind in ("chunk", "abort")]
    assert kinds[:3] == [("chunk", 0), ("chunk", 1), ("abort", 2)]
    chunks = run.trace.of("chunk")
    assert chunks[3].at - chunks[2].at >= SLOW_AFTER_ABORT_S * 0.9  # on the run's clock


def test_the_adapters_reaction_is_in_the_trace_before_str_02s_boundary() -> None:
    """The chunks up to the one carrying the script's last text delta go back to back; that one waits until the
    adapter is idle, so the callbacks it fired for the earlier ones are in the trace before it (STR-02)."""
    scenario = get_scenario("text_basic")
    interactions = build_interactions(scenario, PROFILE, CassetteCache(bundled_cassettes()))
    found = last_text_event(scenario, PROFILE, interactions)
    assert found is not None
    boundary = found[1]

    async def read(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        pieces = []
        assert input.callbacks is not None
        assert input.callbacks.on_text_delta is not None
        async with (
            httpx.AsyncClient() as client,
            client.stream("POST", f"{ctx.base_url}/chat/completions") as response,
        ):
            async for piece in response.aiter_raw():
                pieces.append(piece)
                await input.callbacks.on_text_delta(str(len(pieces)))  # type: ignore[misc]
        return pieces

    run, seen = probe_run(read, *interactions, callbacks="async")
    assert len(seen["pieces"]) == len(run.trace.of("chunk"))  # still one event per piece
    events = [e for e in run.trace.events if e.kind in ("chunk", "callback")]
    held = next(i for i, e in enumerate(events) if e.kind == "chunk" and e.chunk_index == boundary)
    before = [e.args[0] for e in events[:held] if e.kind == "callback"]
    assert before == [str(n) for n in range(1, boundary + 1)]  # one per chunk delivered before it


def test_a_client_the_link_cannot_count_is_served_in_real_time() -> None:
    """A native client (here the C socket type, which the link does not count) gets the same bytes, paced in
    real time, with no jump of the clock."""
    import _socket

    async def read(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        def fetch() -> list[bytes]:
            port = int(ctx.base_url.split(":")[2].split("/")[0])
            path = ctx.base_url.split(str(port), 1)[1] + "/chat/completions"
            sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            sock.settimeout(5)
            sock.connect(("127.0.0.1", port))
            sock.sendall(f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n".encode())
            data = b""
            while not data.endswith(b"0\r\n\r\n"):
                got = sock.recv(65536)
                if not got:
                    break
                data += got
            sock.close()
            return [data]

        return await asyncio.to_thread(fetch)

    run, seen = probe_run(read, interaction())
    assert all(event in seen["pieces"][0] for event in EVENTS)
    assert [c.chunk_index for c in run.trace.of("chunk")] == list(range(6))
    assert run.skipped_s == 0


# --- the link's protocol, by hand ------------------------------------------------------------------------


class HandLink:
    """The adapter's side of a run spoken by hand: one HTTP connection, one link."""

    def __init__(self, host: HostAddress, token: str) -> None:
        self.token = token
        self.link = socket.create_connection(("127.0.0.1", host.control_port), timeout=5)
        self.http = socket.create_connection(("127.0.0.1", host.http_port), timeout=5)
        self.port = self.http.getsockname()[1]
        self.written = self.read = 0
        self.n = 0
        self.buffer = b""
        assert self.ask("begin")["t"] == "begun"

    def send(self, message: dict[str, Any]) -> None:
        self.link.sendall(json.dumps(message).encode() + b"\n")

    def ask(
        self, kind: str, *, written: int | None = None, more: tuple[list[int], ...] = (), **fields: Any
    ) -> dict[str, Any]:
        self.n += 1
        conns = [[self.port, self.written if written is None else written, self.read], *more]
        self.send({"t": kind, "run": self.token, "n": self.n, "ev": [], "conns": conns, **fields})
        while b"\n" not in self.buffer:
            self.buffer += self.link.recv(65536)
        line, _, self.buffer = self.buffer.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        assert answer["n"] == self.n
        return answer

    def write(self, data: bytes) -> None:
        self.http.sendall(data)
        self.written += len(data)

    def drain(self) -> bytes:
        """Read what has arrived (the host wrote it before answering)."""
        self.http.settimeout(0.5)
        data = b""
        try:
            while True:
                data += self.http.recv(65536)
                self.http.settimeout(0.05)
        except TimeoutError:
            pass
        self.read += len(data)
        return data

    def close(self) -> None:
        self.send({"t": "end", "run": self.token, "ev": []})
        self.http.close()
        self.link.close()


@pytest.fixture
def hand() -> Iterator[Callable[..., HandLink]]:
    service = replay_service()
    host = service.host()
    made: list[HandLink] = []

    def start(*interactions: ReplayInteraction, **plan: Any) -> HandLink:
        token = new_token()
        service.stage(host, StagePlan(token, [served(i) for i in interactions], PROFILE.wire, **plan))
        made.append(HandLink(host, token))
        return made[-1]

    yield start
    for link in made:
        link.close()
    service.close_host(host)


REQUEST = f"POST {RUN_PREFIX}TOKEN/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{{}}"


def test_a_request_still_on_its_way_is_never_taken_for_silence(hand: Callable[..., HandLink]) -> None:
    """The race the link exists for: the client wrote a request (a retry, say) that has not reached the host
    yet and waits on a read timeout. Jumping the clock to it would be a false timeout; the host says busy."""
    run = hand(interaction())
    request = REQUEST.replace("TOKEN", run.token).encode()
    run.write(request[:30])
    in_flight = run.ask("idle", written=len(request), timer=1.0, jump=True)
    assert in_flight["t"] == "busy"  # never "quiet": the rest of the request is still to arrive
    run.write(request[30:])
    answer = run.ask("idle", timer=1.0, jump=True)
    assert answer["t"] == "acted"  # the request recorded, the head and the first chunk sent
    unread = run.ask("idle", timer=1.0, jump=True)
    assert unread["t"] == "busy"  # the response is on its way to the client: not silence either
    assert run.drain().startswith(b"HTTP/1.1 200")
    quiet = run.ask("idle", timer=1.0, jump=True)  # all read, nothing left to send: now only timers
    assert (quiet["t"], quiet["d"]) == ("quiet", 1.0)


def test_a_new_connection_on_a_port_the_host_closed_before_is_waited_for(
    hand: Callable[..., HandLink],
) -> None:
    """The kernel hands a port out again: a connection the adapter's side has made on a port whose earlier
    connection the host closed, and that the host has not accepted yet (a loaded machine), is not taken for the
    closed one, so no jump can outrun the request about to be written on it."""
    run = hand(interaction())
    old = socket.create_connection(("127.0.0.1", run.http.getpeername()[1]), timeout=5)
    port = old.getsockname()[1]
    old.sendall(b"not http\r\n\r\n")  # the host drops it: its port is one the host closed
    assert old.recv(10) == b""
    old.close()
    assert run.ask("idle", timer=1.0, jump=True)["t"] == "quiet"  # the closed connection holds nothing up
    assert run.ask("idle", timer=1.0, jump=True, more=([port, 0, 0],))["t"] == "busy"


def test_a_jump_offered_is_withdrawn_if_anything_happened_since(hand: Callable[..., HandLink]) -> None:
    run = hand(interaction(Fault("stall", after_events=1)), read_timeout=1.0)
    request = REQUEST.replace("TOKEN", run.token).encode()
    run.write(request)
    assert run.ask("idle", timer=1.0, jump=True)["t"] == "acted"
    run.drain()
    assert run.ask("idle", timer=1.0, jump=True)["t"] == "acted"  # the stall begins: nothing more is sent
    offer = run.ask("idle", timer=1.0, jump=True)
    assert offer["t"] == "quiet"
    assert offer["d"] == pytest.approx(0.9, abs=0.05)  # the host's own timer first: the stall's expiry mark
    run.write(b"x")  # something happens after the offer
    assert run.ask("jump", d=offer["d"], s=offer["s"])["t"] == "busy"


def test_the_load_the_adapters_clock_leaves_off_the_hosts_clock_leaves_off_too() -> None:
    """One run clock: a process descheduled between a 429 and its retry (a loaded CI machine) reports the wait
    its clock left off (``st``), and the host stamps the retry on that clock, not its own real time; a claim of
    more load than the run's real time is capped at it."""
    service = replay_service()
    host = service.host()
    token = new_token()
    service.stage(host, StagePlan(token, [served(interaction()), served(interaction())], PROFILE.wire))
    run = HandLink(host, token)
    request = REQUEST.replace("TOKEN", token).encode()
    run.write(request)
    assert run.ask("idle", timer=1.0, jump=True, st=0.0)["t"] == "acted"
    run.drain()
    time.sleep(0.4)  # the process waits for a CPU for 0.3 s of this, as its meter says
    second = socket.create_connection(("127.0.0.1", host.http_port), timeout=5)
    second.sendall(request)
    more = ([second.getsockname()[1], len(request), 0],)
    assert run.ask("idle", timer=1.0, jump=True, st=0.3, more=more)["t"] == "acted"
    assert run.ask("idle", timer=1.0, jump=True, st=1000.0, more=more)["t"] in ("busy", "acted")
    run.close()
    second.close()
    record = service.collect(host, token)
    service.close_host(host)
    first_at, second_at = (r.at for r in record.requests)
    assert 0.05 < second_at - first_at < 0.3  # 0.4 s real, 0.3 s of it load (was 0.4 before)


def test_a_look_at_the_clock_during_the_load_does_not_hold_the_next_stamp_at_it() -> None:
    """The service's loop looks at a run's clock whenever any host wakes it (timers, offers): those looks stamp
    nothing, so the load reported after them still comes off the next stamp (in CI a look in the window kept
    a retry sent at once as late as the load had made it)."""
    stage = ActiveStage(StagePlan(new_token(), [served(interaction())], PROFILE.wire), time.monotonic())
    first = stage.now()
    time.sleep(0.3)
    assert stage.peek() >= first + 0.3  # the service looks, during the load
    stage.leave_off_load(0.25)  # the adapter's side reports it
    assert first + 0.04 < stage.now() < first + 0.2
    stage.leave_off_load(1000.0)  # more than the run's real time: capped, and no stamp goes back
    assert stage.now() >= first + 0.04


def test_no_jump_reaches_the_runs_limit(hand: Callable[..., HandLink]) -> None:
    run = hand(interaction(), limit_s=2.0)
    assert run.ask("idle", timer=5.0, jump=True)["t"] == "wait"  # 5 s ahead is past the limit: real time
    assert run.ask("idle", timer=0.5, jump=True)["t"] == "quiet"


def test_no_jump_without_virtual_time(hand: Callable[..., HandLink]) -> None:
    run = hand(interaction(), virtual_time=False)
    assert run.ask("idle", timer=0.5, jump=True)["t"] == "wait"


# --- pieces that stand alone --------------------------------------------------------------------------------


def test_the_in_process_guard_refuses_non_loopback_and_allows_loopback() -> None:
    calls: list[Any] = []
    guarded = _refuse_outside_connections(lambda sock, address, *a: calls.append(address))

    class FakeSocket:
        family = socket.AF_INET

    with pytest.raises(ConnectionRefusedError, match="real network access is blocked"):
        guarded(FakeSocket(), ("203.0.113.7", 443))
    guarded(FakeSocket(), ("127.0.0.1", 8080))
    assert calls == [("127.0.0.1", 8080)]


def test_delivery_plans_keep_every_byte() -> None:
    assert b"".join(SplitPlan((3, 1, 3, 999)).chunks(BODY, split_sse_events)) == BODY
    assert [len(c) for c in SplitPlan((1,)).chunks(b"abc", split_sse_events)] == [1, 2]
    boundaries = event_boundaries(BODY, split_sse_events)
    assert boundaries[-1] == len(BODY)
    assert (
        b"".join(cut_at_events(SplitPlan((5,)).chunks(BODY, split_sse_events), boundaries[0]))
        == BODY[: boundaries[0]]
    )
    mutated = b"".join(MutatedPlan(truncate_at=10, flips=((0, 65),)).chunks(BODY, split_sse_events))
    assert mutated == b"A" + BODY[1:10]


def test_sse_splitter_handles_crlf_and_unterminated_tails() -> None:
    assert split_sse_events(b"a\r\n\r\nb\n\nc") == [b"a\r\n\r\n", b"b\n\n", b"c"]


def test_optional_libraries_are_imported_only_if_present() -> None:
    names = [m.__name__ for m in available_libraries()]
    assert "httpx" in names
    assert ("httpx2" in names) == (importlib.util.find_spec("httpx2") is not None)


def test_the_service_restarts_after_it_ended() -> None:
    service = replay_service()
    host = service.host()
    assert service.process is not None
    service.process.kill()
    service.process.wait()
    deadline = time.monotonic() + 5
    while service.failure == "" and time.monotonic() < deadline:
        time.sleep(0.01)
    fresh = service.host()
    assert fresh.incarnation == host.incarnation + 1
    _run, seen = probe_run(stream_with("httpx"), interaction())
    assert seen["pieces"] == EVENTS


def test_the_adapters_job_holds_no_plan() -> None:
    """Issue 31: what the adapter's process receives for a run names no fault, no cut, no cancel point and no
    hold, so it cannot answer from the plan; the host alone holds them (the trust table of worker-protocol.md)."""
    from helix_conformance.replay.judging import stage_run

    cuts = (3, 17, 40)
    options = RunOptions(plan=SplitPlan(cuts), timeout=5.0, cancel_after_chunks=2, chunk_bytes=True)
    host = replay_service().host()
    staged = stage_run(
        host, get_scenario("text_basic"), "m", PROFILE, [interaction(Fault("stall", after_events=2))], options
    )
    job = staged.job
    assert job.options.plan == EventPlan()
    assert job.options.cancel_after_chunks is None
    assert not job.options.chunk_bytes
    wire = pickle.dumps(job)
    for secret in (b"stall", b"SplitPlan", b"Fault", b"hold"):
        assert secret not in wire, secret
    assert job.cancel_planned  # only that a cancel will come (NT-03 needs the task), not when


def test_a_counted_socket_closed_by_a_finalizer_under_the_links_lock_does_not_deadlock() -> None:
    """A collection while the link holds its lock may run a finalizer that closes a counted connection (urllib3
    closes its pool's connections so): boto3's runs hung in ``link.connections`` until the harness gave up."""
    import threading

    from helix_conformance.replay import link

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    with link.counting(port):
        client = socket.create_connection(("127.0.0.1", port))
    assert [c[0] for c in link.connections()] == [client.getsockname()[1]]

    def close_under_the_lock() -> None:
        with link._lock:  # where the collector ran urllib3's finalizer
            client.close()

    closer = threading.Thread(target=close_under_the_lock, daemon=True)
    closer.start()
    closer.join(5)
    listener.close()
    assert not closer.is_alive(), "closing a counted socket while the link's lock is held deadlocked"
    assert link.connections() == []


def test_a_begin_that_arrives_after_its_run_was_collected_holds_no_later_run() -> None:
    """The link and the parent's pipe race: a run that made no request (an error step) was collected before
    its ``begin`` reached the host. The host held that begin's link for its stage, and the next run's
    reports behind it, 10 s: past the reference adapter's limit (AB-02 failed on a control under -n 3)."""
    service = replay_service()
    host = service.host()
    try:
        early, late = new_token(), new_token()
        service.stage(host, StagePlan(early, [served(interaction())], PROFILE.wire))
        service.collect(host, early, grace_s=0)  # the parent is done with it: no begin arrived yet
        service.stage(host, StagePlan(late, [served(interaction())], PROFILE.wire))
        link = socket.create_connection(("127.0.0.1", host.control_port), timeout=5)
        for message in (
            {"t": "begin", "run": early, "n": 1},
            {"t": "end", "run": early, "ev": []},
            {"t": "begin", "run": late, "n": 2},
            {"t": "idle", "run": late, "n": 3, "ev": [], "conns": [], "timer": 1.0, "jump": True},
        ):
            link.sendall(json.dumps(message).encode() + b"\n")
        started = time.monotonic()
        answers = link.makefile()
        said = [json.loads(answers.readline()) for _ in range(3)]
        assert [(a["n"], a["t"]) for a in said] == [(1, "over"), (2, "begun"), (3, "quiet")]
        assert time.monotonic() - started < 2
        link.close()
    finally:
        service.close_host(host)


def test_a_begin_whose_stage_never_comes_holds_no_later_run_of_its_link() -> None:
    """A begin still waiting for its stage gives way to the link's next begin (the adapter's side went on)."""
    service = replay_service()
    host = service.host()
    try:
        lost, late = new_token(), new_token()
        service.stage(host, StagePlan(late, [served(interaction())], PROFILE.wire))
        link = socket.create_connection(("127.0.0.1", host.control_port), timeout=5)
        for message in (
            {"t": "begin", "run": lost, "n": 1},
            {"t": "idle", "run": lost, "n": 2, "ev": [], "conns": [], "timer": 1.0, "jump": True},
            {"t": "begin", "run": late, "n": 3},
            {"t": "idle", "run": late, "n": 4, "ev": [], "conns": [], "timer": 1.0, "jump": True},
        ):
            link.sendall(json.dumps(message).encode() + b"\n")
        started = time.monotonic()
        answers = link.makefile()
        said = [json.loads(answers.readline()) for _ in range(4)]
        # the lost run's begin and report: not the host's run
        assert [(a["n"], a["t"]) for a in said] == [(1, "over"), (2, "over"), (3, "begun"), (4, "quiet")]
        assert time.monotonic() - started < 2
        link.close()
    finally:
        service.close_host(host)


def test_a_wakeup_posted_while_the_threads_are_looked_at_is_served_not_reported_idle() -> None:
    """A thread that hands the loop a result and goes back to wait for the host, between the loop's poll and its
    look at the threads, must not be reported idle: the host would offer a jump past the result just posted
    (boto3's reader thread posts a chunk, then reads the host again)."""
    from helix_conformance.replay.clock import VirtualTimeLoop
    from helix_conformance.replay.link import Answer

    class RecordingLink:
        def __init__(self) -> None:
            self.idles = 0

        def idle(self, *args: Any, **kwargs: Any) -> Answer:
            self.idles += 1
            return Answer("wait")

    loop = VirtualTimeLoop()
    link = RecordingLink()
    loop.link = link  # type: ignore[assignment]
    chunk: asyncio.Future[str] = loop.create_future()

    def consumed_after_a_post() -> bool:
        if not chunk.done():  # what the reader thread does in that moment
            loop.call_soon_threadsafe(lambda: chunk.done() or chunk.set_result("chunk"))
        return True

    loop.consumed = consumed_after_a_post  # type: ignore[method-assign]
    try:
        loop.call_later(5.0, lambda: None)  # a timer of the adapter's: the loop would ask the host to jump
        assert loop.run_until_complete(chunk) == "chunk"
        assert link.idles == 0
    finally:
        loop.close()


def test_bytes_read_while_the_threads_are_looked_at_are_not_reported_with_that_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reader thread that takes the host's bytes just after the look at the threads found it waiting must not
    be reported as "every byte read, no thread at work": the host would pass STR-02's hold while the thread still
    parses the chunks before it, and the run read as callbacks buffered (bedrock-boto3 under CI's load). The
    counts go with the report as they were before the look."""
    from helix_conformance.replay import virtual_selector
    from helix_conformance.replay.clock import VirtualTimeLoop
    from helix_conformance.replay.link import Answer

    wire = {"sent": 120, "read": 0}
    monkeypatch.setattr(virtual_selector, "connections", lambda: [[4242, 80, wire["read"]]], raising=False)

    class RecordingLink:
        def __init__(self) -> None:
            self.reports: list[tuple[Any, bool]] = []

        def idle(self, *args: Any, busy: bool = False, conns: Any = None, **kwargs: Any) -> Answer:
            self.reports.append((conns if conns is not None else virtual_selector.connections(), busy))
            return Answer("wait")

    loop = VirtualTimeLoop()
    link = RecordingLink()
    loop.link = link  # type: ignore[assignment]

    def consumed_then_read() -> bool:
        wire["read"] = wire["sent"]  # the reader thread, woken, takes the bytes right after it was looked at
        return True

    loop.consumed = consumed_then_read  # type: ignore[method-assign]
    done = loop.create_future()
    try:
        loop.call_later(0.05, lambda: done.set_result(None))
        loop.run_until_complete(done)
        assert link.reports
        conns, busy = link.reports[0]
        assert (conns, busy) == ([[4242, 80, 0]], False), "the counts were taken after the threads"
    finally:
        loop.close()


def test_a_socket_counted_before_it_connects_is_named_by_its_port_once_it_has_one() -> None:
    """The loop's report may be written while a thread's socket is adopted but not connected yet (boto3 opening
    its next connection): it is reported as being set up, not as port 0 for good (the host never found port 0,
    served the connection unlinked, and the run's reports never settled: a false ERR-04 timeout)."""
    from helix_conformance.replay import link as counted

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        with counted.counting(port):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            counted._adopt(sock)  # what ``connect`` does first, before the kernel binds a port
            try:
                assert [c[0] for c in counted.connections() if c[1:] == [0, 0]] == [None]
                sock.connect(("127.0.0.1", port))
                assert [sock.getsockname()[1], 0, 0] in counted.connections()
            finally:
                sock.close()
    finally:
        server.close()


@pytest.mark.parametrize("profile_name", ["openai-chat", "anthropic-messages", "bedrock-converse", "custom"])
def test_the_service_serves_a_plan_without_the_contract_or_the_scenarios(profile_name: str) -> None:
    """The service starts once per pytest run (and once per pytest run a test starts: 145 in the project's
    tests); a plan that pulled in the contract's models and the scenarios cost it 0.3 s of CPU each time. What
    it imports and unpickles is plain values (stage.ServedInteraction, profiles/wire.py)."""
    import subprocess
    import sys

    profile = get_profile(profile_name)
    served_one = served(
        ReplayInteraction("POST", PATH, 200, {}, BODY, Fault("reset", after_events=1), False, "test")
    )
    plan = pickle.dumps(StagePlan(new_token(), [served_one], profile.wire))
    probe = (
        "import pickle, sys\n"
        "import helix_conformance.replay.service, helix_conformance.replay.host\n"
        "plan = pickle.loads(sys.stdin.buffer.read())\n"
        "plan.wire.matches('POST', plan.interactions[0].path, plan.interactions[0].path)\n"
        "plan.wire.split_events(plan.interactions[0].body)\n"
        "print(' '.join(m for m in sys.modules if m.startswith(('pydantic', 'helix_conformance.contract', "
        "'helix_conformance.scenarios', 'helix_conformance.profiles.base'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], input=plan, capture_output=True, timeout=60, check=True
    )
    assert done.stdout.decode().split() == []
    assert profile.matches("POST", PATH, PATH) is profile.wire.matches("POST", PATH, PATH)


def test_a_request_written_on_a_connection_the_host_closed_is_waited_for(
    hand: Callable[..., HandLink],
) -> None:
    """A kept-alive connection the host closed, whose client has not seen the close yet (undici under load)
    and sends its next request on it: no jump until the client has seen the reset and gone on, else the
    adapter's own timeout fires before any request reached the host (a Node flake seen once)."""
    run = hand(interaction())
    old = socket.create_connection(("127.0.0.1", run.http.getpeername()[1]), timeout=5)
    port = old.getsockname()[1]
    old.sendall(b"not http\r\n\r\n")  # the host reads it, then closes the connection
    assert old.recv(10) == b""
    old.close()
    sent = len(b"not http\r\n\r\n")
    assert run.ask("idle", timer=1.0, jump=True, more=([port, sent, 0],))["t"] == "quiet"
    again = run.ask("idle", timer=1.0, jump=True, more=([port, sent + 40, 0],))
    assert again["t"] == "busy"


class _OrderedReactor:
    """The service's event loop played by hand: the test says which socket the host reads first."""

    def __init__(self) -> None:
        self.readable: dict[socket.socket, Callable[[], None]] = {}

    def watch(self, sock: socket.socket, on_readable: Callable[[], None]) -> None:
        self.readable[sock] = on_readable

    def unwatch(self, sock: socket.socket) -> None:
        self.readable.pop(sock, None)

    def finished(self, host_id: str, token: str, trace: Any) -> None:
        pass


def test_a_request_read_before_its_runs_begin_waits_for_it() -> None:
    """The host reads its sockets in any order: a request naming a run not over is the coming run's, not a late
    one of the run before, even when read before that run's ``begin`` (the adapter's side waits for ``begun``
    before its adapter sends anything, so only a link that does not wait does this). Resetting it left the
    adapter with a request the host had closed and its clock free to jump to its 10 s timeout (a Node flake)."""
    reactor = _OrderedReactor()
    host = Host(reactor, "h")
    token = new_token()
    host.stage(StagePlan(token, [served(interaction())], PROFILE.wire))
    link = socket.create_connection(("127.0.0.1", host.control_port), timeout=5)
    link.sendall(json.dumps({"t": "begin", "run": token, "n": 0}).encode() + b"\n")
    http = socket.create_connection(("127.0.0.1", host.http_port), timeout=5)
    request = REQUEST.replace("TOKEN", token).encode()
    http.sendall(request)

    def read(*listeners: socket.socket) -> None:
        time.sleep(0.05)
        for listener in listeners:
            reactor.readable[listener]()
        time.sleep(0.05)
        for sock, on_readable in list(reactor.readable.items()):
            if sock not in (host.http, host.control):
                on_readable()

    try:
        read(host.http)  # the HTTP side first: the link's listener is not looked at yet
        assert host.active is None
        assert host.conns, "the run's request was reset as a late one"
        read(host.control)  # now the link: its begin
        assert host.active is not None
        assert host.active.plan.token == token
        port = http.getsockname()[1]
        report = {"t": "idle", "run": token, "n": 1, "ev": [], "conns": [[port, len(request), 0]]}
        link.sendall(json.dumps({**report, "timer": 1.0, "jump": True}).encode() + b"\n")
        read()
        answers = link.makefile()
        assert [json.loads(answers.readline())["t"] for _ in range(2)] == ["begun", "acted"]
        assert http.recv(100).startswith(b"HTTP/1.1 200")
    finally:
        http.close()
        link.close()
        host.close()


def test_a_run_whose_stage_comes_late_waits_for_it_off_the_adapters_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parent sends a run's stage before the run, but the host may read the run's ``begin`` first and wait
    for its stage (the service's process not scheduled for a while on a loaded machine). The adapter starts only
    once the host answers ``begun``: when it started at once, that wait ran on its clock, and its read timeout
    fired the moment the host answered (HARN-02 on a correct adapter's first run in a pool, 3 CI runs in 5)."""
    import threading

    from helix_conformance.replay.service import ReplayService

    stage = ReplayService.stage
    late_by = READ_TIMEOUT + 0.5

    def stage_late(self: ReplayService, host: HostAddress, plan: StagePlan) -> None:
        threading.Timer(late_by, stage, (self, host, plan)).start()

    monkeypatch.setattr(ReplayService, "stage", stage_late)
    started = time.monotonic()
    run, seen = probe_run(stream_with("httpx"), interaction())
    assert "error" not in seen, seen
    assert b"".join(seen["pieces"]) == BODY
    assert not run.setup_error
    assert time.monotonic() - started >= late_by


def test_a_run_whose_stage_never_comes_is_the_harnesss_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run the host cannot begin (its stage lost: here, collected before the run began) is not started and
    not blamed on the adapter: its setup error says the replay failed."""
    from helix_conformance.replay.service import ReplayService

    def stage_then_collect(self: ReplayService, host: HostAddress, plan: StagePlan) -> None:
        self._write(("stage", host.id, plan))
        # its record comes back at once; the run's own collect takes it
        self._write(("collect", host.id, plan.token, 0.0))

    monkeypatch.setattr(ReplayService, "stage", stage_then_collect)
    run, seen = probe_run(stream_with("httpx"), interaction())
    assert seen == {}, "the adapter ran"
    assert run.setup_error is not None
    assert run.setup_error.startswith("helix-conformance's replay failed (a harness bug)")
    assert "never received the run's stage" in run.setup_error


def test_a_run_that_records_no_request_says_what_the_host_saw() -> None:
    """HARN-02's evidence: a run the host recorded no request for carries what the host saw (its link's answers,
    its connections and their bytes), so a red run caused on the harness's side can be told from the adapter's."""

    async def no_request(ctx: AdapterContext, input: LLMGenerateInput) -> list[bytes]:
        return []

    run, _ = probe_run(no_request, interaction())
    assert not run.trace.requests
    assert any("the link's answers" in line for line in run.host_seen), run.host_seen
    assert "no connection open on the host's HTTP port" in run.host_seen
