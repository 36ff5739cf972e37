"""The cohere-chat cassettes and error bodies: the official ``cohere`` SDK reads each stream to the expected
outcome through its own client, the streams carry the recorded framing, and the validator refuses what the
API never sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helix_conformance.profiles import get_profile
from helix_conformance.profiles.cohere_stream import ERROR_BODIES, validate_error_body
from helix_conformance.replay.cassette import load_cassette
from helix_conformance.scenarios import scenarios_for
from helix_conformance.scenarios.failures import HTTP_STATUS_TABLE
from helix_conformance.scenarios.model import HttpError, Stream

ROOT = Path(__file__).resolve().parents[1]
PROFILE = get_profile("cohere-chat")
FINISHED = [
    s
    for s in scenarios_for("cohere-chat")
    if len(s.recorded_exchanges) == 1
    and isinstance(s.recorded_exchanges[0].response, Stream)
    and s.recorded_exchanges[0].response.finish is not None
]


def _body(scenario_id: str) -> bytes:
    return load_cassette(ROOT / "cassettes" / "cohere-chat" / f"{scenario_id}.yaml").interactions[0].body


def _client(status: int, content_type: str, body: bytes) -> Any:
    cohere = pytest.importorskip("cohere")
    httpx = pytest.importorskip("httpx")

    def handler(request: Any) -> Any:
        return httpx.Response(status, headers={"content-type": content_type}, content=body)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    return cohere.ClientV2(api_key="co-replay", base_url="http://127.0.0.1:9", httpx_client=http)


def _stream(body: bytes) -> list[Any]:
    """The events the SDK's own ``chat_stream`` yields for ``body``."""
    client = _client(200, "text/event-stream", body)
    return list(client.chat_stream(model="command-a-03-2025", messages=[{"role": "user", "content": "hi"}]))


@pytest.mark.parametrize("scenario", FINISHED, ids=lambda s: s.id)
def test_the_sdk_reads_each_finished_stream_to_the_expected_outcome(scenario: Any) -> None:
    text, plan, thinking, calls, finish = [], [], [], {}, None
    for event in _stream(_body(scenario.id)):
        message = getattr(getattr(event, "delta", None), "message", None)
        if event.type == "content-delta":
            text.append(message.content.text or "")
            thinking.append(message.content.thinking or "")
        elif event.type == "tool-plan-delta":
            plan.append(message.tool_plan)
        elif event.type == "tool-call-start":
            call = message.tool_calls
            calls[event.index] = [call.id, call.function.name, [call.function.arguments or ""]]
        elif event.type == "tool-call-delta":
            calls[event.index][2].append(message.tool_calls.function.arguments)
        elif event.type == "message-end":
            finish = event.delta.finish_reason
    expect = scenario.expect
    if expect.content is not None:
        assert "".join(plan or text) == expect.content
    if expect.thinking is not None:
        assert "".join(thinking) == expect.thinking
    if expect.type in ("tool_calls", "structured_output"):  # the others' arguments are cut or invalid
        got = [(c[0], c[1], json.loads("".join(c[2]) or "{}")) for c in calls.values()]
    if expect.type == "tool_calls":
        assert got == [(PROFILE.response_tool_call_id(c.id), c.name, c.arguments) for c in expect.tool_calls]
    if expect.type == "structured_output":
        assert [c[2] for c in got if c[1] == "__finish__"] == [expect.output]
    wire = scenario.recorded_exchanges[0].response.finish
    assert finish == (wire.wire_value("cohere-chat") or PROFILE_STOPS[wire.reason])


PROFILE_STOPS = {
    "end_turn": "COMPLETE",
    "tool_use": "TOOL_CALL",
    "max_tokens": "MAX_TOKENS",
    "stop_sequence": "STOP_SEQUENCE",
}


def test_the_recorded_framing_is_in_the_corpus() -> None:
    body = _body("text_and_tool_call").decode()
    start = body.split("\n\n")[0]
    assert start.startswith('event: message-start\ndata: {"id":"')  # the id before the type, as recorded
    assert '"tool_plan":"","tool_calls":[],"citations":[]' in start
    assert "event: tool-plan-delta" in body
    assert "content-delta" not in body
    assert '"arguments":""}}}}}' in body  # tool-call-start opens with empty arguments
    end = body.rstrip("\n").split("\n\n")[-1]
    assert end.startswith("event: message-end\n")
    assert '"cached_tokens":' in end


def test_an_error_finish_ends_the_stream_with_its_message() -> None:
    events = _stream(_body("midstream_error"))
    assert events[-1].type == "message-end"
    assert (events[-1].delta.finish_reason, bool(events[-1].delta.error)) == ("ERROR", True)


@pytest.mark.parametrize(
    "event",
    [
        b'event: content-delta\ndata: {"type":"content-delta","index":0,"delta":{"message":{"content":{"txt":"a"}}}}\n\n',
        b'event: message-end\ndata: {"type":"content-end","index":0}\n\n',
        b'event: message-start\ndata: {"type":"message-start","delta":{"message":{"role":"user"}}}\n\n',
        b'data: {"type":"message-end"}\n\n',
        b'event: tool-call-start\ndata: {"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"x","function":{"name":"f","args":""}}}}}\n\n',
    ],
    ids=["unknown-field", "name-mismatch", "role", "no-event-line", "unknown-nested-field"],
)
def test_validation_rejects_what_the_api_never_sends(event: bytes) -> None:
    pytest.importorskip("cohere")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's or our ValueError
        PROFILE.validate_event(event)


@pytest.mark.parametrize(("status", "code", "retryable"), HTTP_STATUS_TABLE, ids=str)
def test_error_bodies_for_every_status_are_the_apis(status: int, code: str, retryable: bool) -> None:
    headers, body = PROFILE.error_response(HttpError(status))
    validate_error_body(body)
    assert json.loads(body)["message"] == ERROR_BODIES[status]
    cohere = pytest.importorskip("cohere")
    client = _client(status, headers["content-type"], body)
    with pytest.raises(cohere.core.api_error.ApiError) as raised:  # the SDK's error for the status
        list(client.chat_stream(model="command-a-03-2025", messages=[{"role": "user", "content": "hi"}]))
    assert raised.value.status_code == status
