"""The replay engine against both HTTP libraries: re-streaming, faults as the library's own exceptions,
host-agnostic matching, unmatched requests, and the delivery plans."""

from __future__ import annotations

import asyncio
import importlib
import json
from types import ModuleType
from typing import Any

import pytest

from helix_conformance.profiles import get_profile
from helix_conformance.profiles.base import split_sse_events
from helix_conformance.replay.delivery import (
    EventPlan,
    MutatedPlan,
    SplitPlan,
    cut_at_events,
    event_boundaries,
)
from helix_conformance.replay.interactions import ReplayInteraction
from helix_conformance.replay.trace import Trace
from helix_conformance.replay.transport import Replayer, _refuse_outside_connections, intercept
from helix_conformance.scenarios.model import Fault, FaultKind

BODY = b'data: {"a":1}\n\ndata: {"b":"\xc3\xa9"}\n\ndata: [DONE]\n\n'
PROFILE = get_profile("openai-chat")
LIBRARIES = ["httpx", "httpx2"]


def _lib(name: str) -> ModuleType:
    return pytest.importorskip(name)


def _interaction(fault: Fault | None = None, status: int = 200) -> ReplayInteraction:
    return ReplayInteraction(
        "POST",
        "/v1/chat/completions",
        status,
        {"content-type": "text/event-stream"},
        BODY,
        fault,
        False,
        "test",
    )


async def _fetch(lib: ModuleType, url: str = "https://api.example.test/v1/chat/completions") -> list[bytes]:
    async with lib.AsyncClient() as client, client.stream("POST", url, json={"x": 1}) as response:
        return [chunk async for chunk in response.aiter_raw()]


def _replay(*interactions: ReplayInteraction, plan: Any = None) -> tuple[Replayer, Trace]:
    trace = Trace()
    return Replayer(list(interactions), PROFILE, trace, plan or EventPlan()), trace


@pytest.mark.parametrize("name", LIBRARIES)
def test_body_is_restreamed_one_event_per_chunk(name: str) -> None:
    lib = _lib(name)
    replayer, trace = _replay(_interaction())
    with intercept(replayer):
        chunks = asyncio.run(_fetch(lib))
    assert chunks == split_sse_events(BODY)
    assert len(chunks) == 3
    assert [e.kind for e in trace.events].count("chunk") == 3
    assert trace.of("response_closed")
    assert json.loads(trace.requests[0].body) == {"x": 1}
    assert trace.requests[0].library == name
    assert replayer.unused() == []


@pytest.mark.parametrize("name", LIBRARIES)
def test_matching_is_host_agnostic(name: str) -> None:
    lib = _lib(name)
    replayer, trace = _replay(_interaction())
    with intercept(replayer):
        asyncio.run(_fetch(lib, "http://localhost:9/openrouter/api/v1/chat/completions"))
    assert trace.requests[0].interaction == 0


@pytest.mark.parametrize("name", LIBRARIES)
def test_unmatched_request_raises_connect_error_and_is_traced(name: str) -> None:
    lib = _lib(name)
    replayer, trace = _replay(_interaction())
    with intercept(replayer), pytest.raises(lib.ConnectError, match="no recorded interaction matches"):
        asyncio.run(_fetch(lib, "https://api.example.test/v1/embeddings"))
    assert trace.requests[0].interaction is None
    assert replayer.unused() == [0]


@pytest.mark.parametrize("name", LIBRARIES)
@pytest.mark.parametrize(
    ("kind", "error", "delivered"),
    [
        ("reset", "ReadError", 1),
        ("read_timeout", "ReadTimeout", 1),
        ("truncate", None, 1),
        ("connect_error", "ConnectError", 0),
        ("connect_timeout", "ConnectTimeout", 0),
    ],
)
def test_faults_raise_the_client_librarys_own_exceptions(
    name: str, kind: FaultKind, error: str | None, delivered: int
) -> None:
    lib = _lib(name)
    replayer, trace = _replay(_interaction(Fault(kind, after_events=1)))
    with intercept(replayer):
        if error is None:
            assert asyncio.run(_fetch(lib)) == split_sse_events(BODY)[:1]
        else:
            with pytest.raises(getattr(lib, error)):
                asyncio.run(_fetch(lib))
    assert len(trace.of("chunk")) == delivered


def test_stall_honours_the_clients_read_timeout() -> None:
    lib = _lib("httpx")

    async def fetch() -> None:
        async with (
            lib.AsyncClient(timeout=lib.Timeout(5.0, read=0.05)) as client,
            client.stream("POST", "https://api.example.test/v1/chat/completions") as response,
        ):
            async for _ in response.aiter_raw():
                pass

    replayer, _ = _replay(_interaction(Fault("stall", after_events=1)))
    with intercept(replayer), pytest.raises(lib.ReadTimeout):
        asyncio.run(fetch())


@pytest.mark.parametrize("name", LIBRARIES)
def test_sync_clients_are_intercepted_too(name: str) -> None:
    lib = _lib(name)
    replayer, trace = _replay(_interaction())
    with intercept(replayer), lib.Client() as client:
        response = client.post("https://api.example.test/v1/chat/completions", json={})
    assert response.content == BODY
    assert trace.requests[0].interaction == 0


def test_interception_is_removed_afterwards() -> None:
    lib = _lib("httpx")
    before = lib.AsyncHTTPTransport.__dict__["handle_async_request"]
    with intercept(_replay(_interaction())[0]):
        assert lib.AsyncHTTPTransport.__dict__["handle_async_request"] is not before
    assert lib.AsyncHTTPTransport.__dict__["handle_async_request"] is before


def test_socket_guard_refuses_non_loopback_and_allows_loopback() -> None:
    import socket

    calls: list[Any] = []
    guarded = _refuse_outside_connections(lambda sock, address, *a: calls.append(address))

    class FakeSocket:
        family = socket.AF_INET

    with pytest.raises(ConnectionRefusedError, match="outside httpx/httpx2"):
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
    from helix_conformance.replay.transport import available_libraries

    names = [m.__name__ for m in available_libraries()]
    assert "httpx" in names
    assert ("httpx2" in names) == (importlib.util.find_spec("httpx2") is not None)
