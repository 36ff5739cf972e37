"""The gemini cassettes and error bodies: google-genai reads each finished stream to the expected outcome, and
they carry the traps of the live stream (CRLF framing, no call ids, empty last part, raw JSON errors)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gemini_sdk import skip_when_the_sdk_predates

from helix_conformance.profiles import get_profile
from helix_conformance.profiles.gemini_stream import validate_error_body
from helix_conformance.replay.cassette import load_cassette
from helix_conformance.scenarios import get_scenario, scenarios_for
from helix_conformance.scenarios.failures import HTTP_STATUS_TABLE
from helix_conformance.scenarios.model import HttpError, Stream

ROOT = Path(__file__).resolve().parents[1]
PROFILE = get_profile("gemini")
FINISHED = [
    s
    for s in scenarios_for("gemini")
    if len(s.recorded_exchanges) == 1
    and isinstance(s.recorded_exchanges[0].response, Stream)
    and s.recorded_exchanges[0].response.finish is not None
]


def _body(scenario_id: str) -> bytes:
    return load_cassette(ROOT / "cassettes" / "gemini" / f"{scenario_id}.yaml").interactions[0].body


def _responses(body: bytes) -> list[Any]:
    types = pytest.importorskip("google.genai.types")
    payloads = [json.loads(event[len(b"data: ") :]) for event in PROFILE.split_events(body)]
    for payload in payloads:
        payload.pop("x_helix_future_field", None)  # RES-12's unknown field: the SDK model forbids extras
    return [types.GenerateContentResponse.model_validate(payload) for payload in payloads]


@pytest.mark.parametrize("scenario", FINISHED, ids=lambda s: s.id)
def test_the_sdk_reads_each_finished_stream_to_the_expected_outcome(scenario: Any) -> None:
    texts, thoughts, calls, finish, blocked = [], [], [], None, None
    pytest.importorskip("google.genai")
    skip_when_the_sdk_predates(_body(scenario.id))
    for response in _responses(_body(scenario.id)):
        blocked = response.prompt_feedback.block_reason if response.prompt_feedback else blocked
        for candidate in response.candidates or []:
            finish = candidate.finish_reason or finish
            for part in (candidate.content.parts if candidate.content else None) or []:
                call = part.function_call
                if call and (call.name or not calls):  # a call (absent args are {}: RES-05)
                    calls.append((call.id, call.name, dict(call.args or {})))
                elif call:  # Vertex's streamed arguments (partial_args): pieces of the latest call
                    for piece in call.partial_args or []:
                        key = piece.json_path.removeprefix("$.")
                        if piece.number_value is not None or piece.bool_value is not None:
                            calls[-1][2][key] = (
                                piece.bool_value if piece.bool_value is not None else piece.number_value
                            )
                        else:
                            calls[-1][2][key] = calls[-1][2].get(key, "") + (piece.string_value or "")
                elif part.text is not None:
                    (thoughts if part.thought else texts).append(part.text)
    expect = scenario.expect
    if expect.content is not None:
        assert "".join(texts) == expect.content
    if expect.thinking is not None:
        assert "".join(thoughts) == expect.thinking
    if expect.type == "tool_calls":
        ids = [c.id if scenario.sends_call_ids else None for c in expect.tool_calls]  # Gemini 3 sends its own
        assert calls == [(i, c.name, c.arguments) for i, c in zip(ids, expect.tool_calls)]
    if expect.type == "structured_output":
        assert [c[2] for c in calls if c[1] == "__finish__"] == [expect.output]
    wire = scenario.recorded_exchanges[0].response.finish.wire_value("gemini")
    if wire == "PROMPT_BLOCKED":
        assert blocked is not None
        assert finish is None
    else:
        assert finish is not None


def test_the_live_traps_are_in_the_corpus() -> None:
    text = _body("text_basic").decode()
    assert text.count("\r\n\r\n") == len(PROFILE.split_events(_body("text_basic")))
    assert '{"candidates": [{"content": {"parts": [{"text": "Hello"}],"role": "model"}' in text  # the spacing
    assert text.endswith(
        '"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}],'
        + text.split('"finishReason": "STOP","index": 0}],')[1]
    )
    assert '"finishReason": "MAX_TOKENS"' in _body("stop_max_tokens").decode()
    assert '{"content": {"role": "model"},"finishReason": "MAX_TOKENS"' in _body("stop_max_tokens").decode()
    assert '"id"' not in _body("tool_call_parallel").decode()
    assert '"thoughtSignature": "' in _body("thinking_tool_call").decode()
    assert "candidates" not in _body("stop_prompt_blocked").decode()
    raw_error = PROFILE.split_events(_body("midstream_overloaded"))[-1]
    assert raw_error.startswith(b'{\n  "error": {\n    "code": 503')


@pytest.mark.parametrize(
    "event",
    [
        b'data: {"candidates": [{"finishReason": "DONE"}]}\r\n\r\n',
        b'data: {"candidates": [{"content": {"parts": [{"txt": "a"}]}}]}\r\n\r\n',
        b'data: {"candidate": []}\r\n\r\n',
        b'{"candidates": []}',
    ],
)
def test_validation_rejects_what_the_api_never_sends(event: bytes) -> None:
    pytest.importorskip("google.genai")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's, the SDK's enum warning, or our ValueError
        PROFILE.validate_event(event)


@pytest.mark.parametrize(("status", "code", "retryable"), HTTP_STATUS_TABLE, ids=str)
def test_error_bodies_for_every_status_are_googles(status: int, code: str, retryable: bool) -> None:
    headers, body = PROFILE.error_response(HttpError(status))
    validate_error_body(body)
    assert json.loads(body)["error"]["code"] == status
    assert headers["content-type"].startswith("application/json")


def test_a_429_carries_retry_info_in_seconds() -> None:
    retry = get_scenario("retry_429_then_success").exchanges[0].response
    assert isinstance(retry, HttpError)
    _, body = PROFILE.error_response(retry)
    details = json.loads(body)["error"]["details"]
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"} in details
