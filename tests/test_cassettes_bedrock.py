"""The bedrock-converse cassettes and error bodies: boto3's own reader (botocore's ``EventStream`` over the
``bedrock-runtime`` service model) reads each stream to the expected outcome, the streams carry the live
framing (padding, header order, blocks opened by their first delta, ``metadata`` last), and the validator
refuses what the service never sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helix_conformance.profiles import eventstream, get_profile
from helix_conformance.profiles.bedrock_stream import (
    ERROR_BODIES,
    STREAM_ERRORS,
    event_message,
    exception_message,
)
from helix_conformance.replay.cassette import load_cassette
from helix_conformance.scenarios import scenarios_for
from helix_conformance.scenarios.failures import HTTP_STATUS_TABLE
from helix_conformance.scenarios.model import HttpError, Stream, StreamError

ROOT = Path(__file__).resolve().parents[1]
PROFILE = get_profile("bedrock-converse")
RECORDED = ROOT / "cassettes" / "recorded" / "bedrock"
FINISHED = [
    s
    for s in scenarios_for("bedrock-converse")
    if len(s.recorded_exchanges) == 1
    and isinstance(s.recorded_exchanges[0].response, Stream)
    and s.recorded_exchanges[0].response.finish is not None
]
ERRORS = [
    s
    for s in scenarios_for("bedrock-converse")
    if any(isinstance(e.response, StreamError) for e in s.exchanges)
]


def _body(scenario_id: str) -> bytes:
    return load_cassette(ROOT / "cassettes" / "bedrock-converse" / f"{scenario_id}.yaml").interactions[0].body


class _Raw:
    """The raw stream botocore's EventStream reads, in uneven chunks like a socket's."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self) -> Any:
        for start in range(0, len(self.body), 37):
            yield self.body[start : start + 37]


def _events(body: bytes) -> list[dict[str, Any]]:
    """The events of ``body`` as boto3 hands them to a caller of ``converse_stream``."""
    botocore_session = pytest.importorskip("botocore.session")
    from botocore.eventstream import EventStream
    from botocore.parsers import EventStreamJSONParser

    model = botocore_session.get_session().get_service_model("bedrock-runtime")
    output = model.operation_model("ConverseStream").output_shape.members["stream"]
    return list(EventStream(_Raw(body), output, EventStreamJSONParser(), "ConverseStream"))


@pytest.mark.parametrize("scenario", FINISHED, ids=lambda s: s.id)
def test_boto3_reads_each_finished_stream_to_the_expected_outcome(scenario: Any) -> None:
    events = _events(_body(scenario.id))
    text, thinking, calls, stop = [], [], {}, None
    for event in events:
        if "contentBlockStart" in event and "toolUse" in event["contentBlockStart"]["start"]:
            tool = event["contentBlockStart"]["start"]["toolUse"]
            if tool.get("type") != "server_tool_use":
                calls[event["contentBlockStart"]["contentBlockIndex"]] = [tool["toolUseId"], tool["name"], []]
        elif "contentBlockDelta" in event:
            delta, index = (
                event["contentBlockDelta"]["delta"],
                event["contentBlockDelta"]["contentBlockIndex"],
            )
            text.append(delta.get("text", ""))
            thinking.append(delta.get("reasoningContent", {}).get("text", ""))
            if "toolUse" in delta and index in calls:
                calls[index][2].append(delta["toolUse"]["input"])
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
    assert "metadata" in events[-1], "metadata is the last event, as recorded"
    expect = scenario.expect
    if expect.content is not None:
        assert "".join(text) == expect.content
    if expect.thinking is not None:
        assert "".join(thinking) == expect.thinking
    if expect.type in ("tool_calls", "structured_output"):  # the others' arguments are cut or invalid
        got = [(c[0], c[1], json.loads("".join(c[2]) or "{}")) for c in calls.values()]
    if expect.type == "tool_calls":
        assert got == [(PROFILE.response_tool_call_id(c.id), c.name, c.arguments) for c in expect.tool_calls]
    if expect.type == "structured_output":
        assert [c[2] for c in got if c[1] == "__finish__"] == [expect.output]
    finish = scenario.recorded_exchanges[0].response.finish
    assert stop == (
        finish.wire_value("bedrock-converse")
        or {"content_filter": "content_filtered"}.get(finish.reason, finish.reason)
    )


@pytest.mark.parametrize("scenario", ERRORS, ids=lambda s: s.id)
def test_boto3_raises_each_exception_event_with_its_type(scenario: Any) -> None:
    pytest.importorskip("botocore")
    from botocore.exceptions import EventStreamError

    response = next(e.response for e in scenario.exchanges if isinstance(e.response, StreamError))
    with pytest.raises(EventStreamError) as raised:
        _events(_body(scenario.id))
    assert raised.value.response["Error"]["Code"] == STREAM_ERRORS[response.kind][0]


def test_the_live_framing_is_in_the_corpus() -> None:
    body = _body("thinking_tool_call")
    messages = [eventstream.decode(m) for m in eventstream.split_messages(body)]
    assert all(m is not None for m in messages)
    kinds = [m.event_type for m in messages if m is not None]
    assert kinds[0] == "messageStart"
    assert kinds[-2:] == ["messageStop", "metadata"]
    assert (
        kinds.count("contentBlockStart") == 1
    )  # only the toolUse block opens with a start; reasoning does not
    assert all(list(m.headers) == [":event-type", ":content-type", ":message-type"] for m in messages if m)
    payloads = [json.loads(m.payload) for m in messages if m is not None]
    assert all(
        isinstance(p.get("p"), str) and "abcdefghijklmnopqrstuvwxyz".startswith(p["p"][:26]) for p in payloads
    )
    assert all(list(p) == sorted(p) for p in payloads)  # keys sorted, as the service writes them
    signature = [p for p in payloads if "signature" in p.get("delta", {}).get("reasoningContent", {})]
    assert signature
    assert "text" not in signature[0]["delta"]["reasoningContent"]
    assert b'"toolUse":{"input":"{\\"city\\": \\"Paris\\"}"}' in body  # input as JSON text pieces


def test_recorded_bodies_are_read_by_the_same_reader() -> None:
    """The live recordings (boto3, through pydantic-ai) are read by botocore as the authored ones are."""
    for path in sorted(RECORDED.glob("test_*.yaml")):
        for interaction in load_cassette(path).interactions:
            if interaction.status == 200:
                assert "metadata" in _events(interaction.body)[-1], path.name


@pytest.mark.parametrize(
    "message",
    [
        eventstream.payload_flipped(event_message("messageStart", {"role": "assistant", "p": "ab"})),
        event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"bogus": "x"}}),
        event_message("messageStop", {"stopReason": "finished"}),
        event_message("contentBlockStop", {}),
        event_message("throttlingException", {"message": "sent as an event"}),
        exception_message("messageStop", {"stopReason": "end_turn"}),
        event_message(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "a", "toolUse": {"input": ""}}}
        ),
    ],
    ids=["crc", "unknown-member", "enum", "required", "exception-as-event", "event-as-exception", "union"],
)
def test_validation_rejects_what_the_service_never_sends(message: bytes) -> None:
    pytest.importorskip("botocore")
    with pytest.raises(Exception):  # noqa: B017 - botocore's ChecksumMismatch or our ValueError
        PROFILE.validate_event(message)


@pytest.mark.parametrize(("status", "code", "retryable"), HTTP_STATUS_TABLE, ids=str)
def test_error_bodies_for_every_status_are_read_by_botocore(status: int, code: str, retryable: bool) -> None:
    pytest.importorskip("botocore")
    from botocore.parsers import create_parser

    headers, body = PROFILE.error_response(HttpError(status))
    assert set(json.loads(body)) == {"message"}
    parsed = create_parser("rest-json").parse({"status_code": status, "headers": headers, "body": body}, None)
    assert parsed["Error"]["Code"] == ERROR_BODIES[status][0]
    assert parsed["Error"]["Message"] == ERROR_BODIES[status][1]


def test_the_endpoint_matches_any_model_id_encoded_or_not() -> None:
    path = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream"
    recorded = "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
    assert PROFILE.matches("POST", path, recorded)
    assert PROFILE.matches(
        "POST", "/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse-stream", recorded
    )
    assert PROFILE.matches(
        "POST", "/model/arn:aws:bedrock:us-east-1:1:inference-profile/us.x/converse-stream", recorded
    )
    assert not PROFILE.matches(
        "POST", "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse", recorded
    )
    assert not PROFILE.matches("GET", path, recorded)
    assert PROFILE.endpoint_url("us.anthropic.claude-sonnet-4-20250514-v1:0").endswith(recorded)
