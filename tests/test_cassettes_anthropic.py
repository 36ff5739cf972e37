"""The anthropic-messages cassettes and error bodies: the official SDK reads them to the expected outcome, and
they carry the traps of the live stream (padded data lines, pings inside blocks, "" argument deltas)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helix_conformance.profiles import get_profile
from helix_conformance.profiles.anthropic_stream import ERROR_BODIES, OFF_SDK_ERROR_TYPES, validate_error_body
from helix_conformance.replay.cassette import load_cassette
from helix_conformance.scenarios import get_scenario, scenarios_for
from helix_conformance.scenarios.failures import HTTP_STATUS_TABLE
from helix_conformance.scenarios.model import HttpError, Stream

ROOT = Path(__file__).resolve().parents[1]
PROFILE = get_profile("anthropic-messages")
CASSETTES = sorted((ROOT / "cassettes" / "anthropic-messages").glob("*.yaml"))
FINISHED = [
    s
    for s in scenarios_for("anthropic-messages")
    if len(s.recorded_exchanges) == 1
    and isinstance(s.recorded_exchanges[0].response, Stream)
    and s.recorded_exchanges[0].response.finish is not None
]


def _body(scenario_id: str) -> bytes:
    return (
        load_cassette(ROOT / "cassettes" / "anthropic-messages" / f"{scenario_id}.yaml").interactions[0].body
    )


def _final_message(body: bytes) -> Any:
    """Stream ``body`` through the official SDK's own client and accumulator."""
    anthropic = pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")

    def handler(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = anthropic.Anthropic(
        api_key="sk-ant-replay",
        base_url="http://127.0.0.1:9",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        max_retries=0,
    )
    with client.messages.stream(
        model="claude-haiku-4-5-20251001", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        return stream.get_final_message()


@pytest.mark.parametrize("scenario", FINISHED, ids=lambda s: s.id)
def test_the_sdk_reads_each_finished_stream_to_the_expected_outcome(scenario: Any) -> None:
    message = _final_message(_body(scenario.id))
    texts = "".join(b.text for b in message.content if b.type == "text")
    calls = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
    thinking = "".join(b.thinking for b in message.content if b.type == "thinking")
    expect = scenario.expect
    if expect.content is not None:
        assert texts == expect.content
    if expect.type == "tool_calls":
        assert calls == [
            (PROFILE.response_tool_call_id(c.id), c.name, c.arguments) for c in expect.tool_calls
        ]
    if expect.type == "structured_output":
        assert [c[2] for c in calls if c[1] == "__finish__"] == [expect.output]
    if expect.thinking is not None:
        assert thinking == expect.thinking
    finish = scenario.recorded_exchanges[0].response.finish
    assert message.stop_reason == (finish.wire_value("anthropic-messages") or finish.reason)


def test_the_live_traps_are_in_the_corpus() -> None:
    bodies = b"".join(load_cassette(p).interactions[0].body for p in CASSETTES)
    assert b"}  \n\n" in bodies  # data lines padded with trailing spaces
    assert b'event: ping\ndata: {"type": "ping"}\n\n' in bodies
    assert b'"partial_json":""' in bodies
    assert b'{"type":"signature_delta"' in bodies
    assert b'"thinking":""}' in bodies  # the empty thinking delta before the signature
    tool_call = _body("tool_call").decode()
    assert '"partial_json":"{\\"ci"' in tool_call  # arguments split mid-token
    between = tool_call[tool_call.index('"type":"tool_use"') : tool_call.index("content_block_stop")]
    assert "event: ping" in between  # a ping inside the block
    refusal = _body("stop_refusal_no_content").decode()
    assert "content_block_start" not in refusal
    assert '"stop_reason":"refusal"' in refusal
    assert '"stop_sequence":"5"' in _body("stop_sequence").decode()


def test_a_truncated_stream_has_no_message_stop_and_an_error_stream_ends_on_the_error() -> None:
    truncated = PROFILE.split_events(_body("truncated_stream"))
    assert b"message_stop" not in truncated[-1]
    assert b"content_block_stop" not in b"".join(truncated)
    error = PROFILE.split_events(_body("midstream_overloaded"))[-1]
    assert error.startswith(b"event: error\ndata: ")
    assert b'"overloaded_error"' in error


@pytest.mark.parametrize(
    "event",
    [
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"finished"},"usage":{}}\n\n',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta"}}\n\n',
        b'event: message_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
        b'data: {"type":"message_stop"}\n\n',
    ],
)
def test_validation_rejects_what_the_api_never_sends(event: bytes) -> None:
    pytest.importorskip("anthropic")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's or our ValueError, either is a rejection
        PROFILE.validate_event(event)


@pytest.mark.parametrize(("status", "code", "retryable"), HTTP_STATUS_TABLE, ids=str)
def test_error_bodies_for_every_status_are_the_apis(status: int, code: str, retryable: bool) -> None:
    pytest.importorskip("anthropic")
    headers, body = PROFILE.error_response(HttpError(status))
    data = json.loads(body)
    assert data["type"] == "error"
    assert data["request_id"] == headers["request-id"]
    assert headers["x-should-retry"] == ("true" if retryable else "false")
    if status == 529:
        assert data["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    if data["error"]["type"] not in OFF_SDK_ERROR_TYPES:
        validate_error_body(body)
    assert ERROR_BODIES[status][0] == data["error"]["type"]


def test_retry_after_is_whole_seconds_as_the_api_sends_it() -> None:
    retry = get_scenario("retry_429_then_success").exchanges[0].response
    assert isinstance(retry, HttpError)
    headers, _ = PROFILE.error_response(retry)
    assert headers["retry-after"] == "1"
