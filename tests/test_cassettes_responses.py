"""The openai-responses profile: the official SDK reads each authored stream to the expected outcome, the
stream carries the live traps, error bodies are the API's, and the decoder reads requests as the API does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from helix_conformance.contract import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from helix_conformance.profiles import get_profile
from helix_conformance.profiles.openai_responses_stream import ERROR_BODIES, validate_error_body
from helix_conformance.replay.cassette import load_cassette
from helix_conformance.scenarios import scenarios_for
from helix_conformance.scenarios.failures import HTTP_STATUS_TABLE
from helix_conformance.scenarios.model import HttpError, Stream

ROOT = Path(__file__).resolve().parents[1]
PROFILE = get_profile("openai-responses")
RECORDINGS = ROOT.parent / "shared" / "recordings" / "openai-responses"
FINISHED = [
    s
    for s in scenarios_for("openai-responses")
    if len(s.recorded_exchanges) == 1
    and isinstance(s.recorded_exchanges[0].response, Stream)
    and s.recorded_exchanges[0].response.finish is not None
]


def _body(scenario_id: str) -> bytes:
    return load_cassette(ROOT / "cassettes" / "openai-responses" / f"{scenario_id}.yaml").interactions[0].body


def _final_response(body: bytes) -> Any:
    """Stream ``body`` through the official SDK's own client: the response its terminal event carries."""
    openai = pytest.importorskip("openai")
    httpx = pytest.importorskip("httpx")

    def handler(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = openai.OpenAI(
        api_key="sk-replay",
        base_url="http://127.0.0.1:9/v1",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        max_retries=0,
    )
    events = list(client.responses.create(model="gpt-5-mini", input="hi", stream=True))
    terminal = events[-1]
    assert terminal.type in ("response.completed", "response.incomplete")
    return terminal.response


@pytest.mark.parametrize("scenario", FINISHED, ids=lambda s: s.id)
def test_the_sdk_reads_each_finished_stream_to_the_expected_outcome(scenario: Any) -> None:
    response = _final_response(_body(scenario.id))
    expect = scenario.expect
    texts = "".join(
        c.text
        for item in response.output
        if item.type == "message"
        for c in item.content
        if c.type == "output_text"
    )
    calls = [(i.call_id, i.name, i.arguments) for i in response.output if i.type == "function_call"]
    summary = "\n\n".join(s.text for i in response.output if i.type == "reasoning" for s in i.summary)
    summary += "".join(c.text for i in response.output if i.type == "reasoning" for c in i.content or [])
    if expect.content is not None:
        assert texts == expect.content
    if expect.type == "tool_calls":
        assert [(c[0], c[1], json.loads(c[2] or "{}")) for c in calls] == [
            (c.id, c.name, c.arguments) for c in expect.tool_calls
        ]
    if expect.type == "structured_output":
        assert [json.loads(c[2]) for c in calls if c[1] == "__finish__"] == [expect.output]
    if expect.thinking is not None:
        assert summary == expect.thinking
    finish = scenario.recorded_exchanges[0].response.finish
    incomplete = finish.reason in ("max_tokens", "content_filter") or finish.wire_value("openai-responses")
    assert response.status == ("incomplete" if incomplete else "completed")


def test_the_live_traps_are_in_the_corpus() -> None:
    thinking = _body("thinking_text").decode()
    events = PROFILE.split_events(_body("thinking_text"))
    added = json.loads(events[2].split(b"data: ", 1)[1])
    done = next(
        json.loads(e.split(b"data: ", 1)[1]) for e in events if b'"type":"response.output_item.done"' in e
    )
    # encrypted_content in .added is incomplete; the whole value comes with .done (the SDK's docstring)
    assert added["item"]["encrypted_content"] != done["item"]["encrypted_content"]
    assert done["item"]["encrypted_content"].startswith(added["item"]["encrypted_content"])
    assert "response.reasoning_summary_text.delta" in thinking
    tool_call = _body("tool_call").decode()
    assert '"item_id":"fc_' in tool_call
    assert '"call_id":"call_7hPq2LmX9vRt4KsW1nYb3ZcD"' in tool_call
    assert '"delta":"{\\"ci"' in tool_call  # arguments split mid-token
    numbers = [
        json.loads(e.split(b"data: ", 1)[1])["sequence_number"]
        for e in PROFILE.split_events(_body("text_basic"))
    ]
    assert numbers == list(range(len(numbers)))
    refusal = _body("stop_refusal").decode()
    assert "response.refusal.delta" in refusal
    assert "response.output_text.delta" not in refusal
    cut = _body("tool_call_cut_off").decode()
    assert '"reason":"max_output_tokens"' in cut
    assert "response.function_call_arguments.done" in cut


def test_a_truncated_stream_has_no_terminal_event_and_an_error_stream_ends_on_response_failed() -> None:
    truncated = _body("truncated_stream")
    assert b"response.completed" not in truncated
    assert b"response.output_text.done" not in truncated
    events = PROFILE.split_events(_body("midstream_overloaded"))
    assert events[-2].startswith(b"event: error\ndata: ")
    assert b'"code":"server_is_overloaded"' in events[-2]
    assert events[-1].startswith(b"event: response.failed\ndata: ")


@pytest.mark.parametrize(
    "event",
    [
        b'event: response.completed\ndata: {"type":"response.completed","response":{}}\n\n',
        b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":3}\n\n',
        b'event: response.created\ndata: {"type":"response.completed","sequence_number":0}\n\n',
        b'data: {"type":"response.created","sequence_number":0}\n\n',
    ],
)
def test_validation_rejects_what_the_api_never_sends(event: bytes) -> None:
    pytest.importorskip("openai")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's or our ValueError, either is a rejection
        PROFILE.validate_event(event)


def test_the_recorded_error_event_validates_as_the_live_stream_sends_it() -> None:
    chunks = RECORDINGS / "openai-error.1.chunks.txt"
    if not chunks.exists():
        pytest.skip(f"the shared recordings are not beside the project ({chunks})")
    for line in chunks.read_text().splitlines():
        payload = json.loads(line)
        PROFILE.validate_event(f"event: {payload['type']}\ndata: {line}\n\n".encode())


def test_authored_response_fields_are_the_live_ones_in_order() -> None:
    chunks = RECORDINGS / "openai-error.1.chunks.txt"
    if not chunks.exists():
        pytest.skip(f"the shared recordings are not beside the project ({chunks})")
    live = json.loads(chunks.read_text().splitlines()[0])["response"]
    authored = json.loads(PROFILE.split_events(_body("text_basic"))[0].split(b"data: ", 1)[1])["response"]
    assert list(authored) == list(live)


@pytest.mark.parametrize(("status", "code", "retryable"), HTTP_STATUS_TABLE, ids=str)
def test_error_bodies_for_every_status_have_the_apis_fields(status: int, code: str, retryable: bool) -> None:
    headers, body = PROFILE.error_response(HttpError(status))
    validate_error_body(body)
    assert json.loads(body)["error"]["message"] == ERROR_BODIES[status][0]
    assert headers["content-type"] == "application/json"


# --- the request decoder ---------------------------------------------------------------------------------


def _recorded_requests() -> list[dict[str, Any]]:
    path = RECORDINGS / "test_openai_responses_stream.yaml"
    if not path.exists():
        pytest.skip(f"the shared recordings are not beside the project ({path})")
    return [i["request"]["parsed_body"] for i in yaml.safe_load(path.read_text())["interactions"]]


def test_the_recorded_requests_decode_without_problems() -> None:
    first, second = _recorded_requests()
    decoded = PROFILE.decode_request(json.dumps(first).encode())
    assert decoded.problems == []
    assert decoded.violations == []
    assert decoded.messages == [
        SystemMessage(content=""),
        UserMessage(content="What is the capital of France?"),
    ]
    assert decoded.tools is not None
    assert decoded.tools[0].name == "get_capital"
    assert decoded.tools[0].strict
    assert decoded.streaming
    decoded = PROFILE.decode_request(json.dumps(second).encode())
    assert decoded.problems == []
    assert decoded.violations == []
    assistant, result = decoded.messages[2], decoded.messages[3]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.tool_calls
    assert assistant.tool_calls[0].arguments == {"country": "France"}
    assert isinstance(result, ToolMessage)
    assert result.tool_call_id == assistant.tool_calls[0].id


def test_typed_parts_developer_role_and_reasoning_items_decode() -> None:
    body = {
        "model": "gpt-5-mini",
        "instructions": "Be terse.",
        "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "Use metric."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Look it up."}],
                "encrypted_content": "gAAAA-opaque",
            },
            {"role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"city":"Paris"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
        ],
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 64,
        "stream": True,
    }
    decoded = PROFILE.decode_request(json.dumps(body).encode())
    assert decoded.problems == []
    assert decoded.violations == []
    system, developer, user, assistant, result = decoded.messages
    assert (system.content, developer.content, user.content) == ("Be terse.", "Use metric.", "Weather?")
    assert isinstance(assistant, AssistantMessage)
    assert assistant.content == "Checking."
    assert assistant.thinking is not None
    assert assistant.thinking.signature == "gAAAA-opaque"
    assert assistant.thinking.content == "Look it up."
    assert isinstance(result, ToolMessage)
    assert result.tool_call_id == "call_1"
    assert decoded.config == {"max_output_tokens": 64}
    assert decoded.extra == {"store": False, "include": ["reasoning.encrypted_content"]}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            {"model": "m", "input": "hi", "tools": [{"type": "function", "function": {"name": "f"}}]},
            "nests the function under 'function'",
        ),
        ({"model": "m", "messages": [{"role": "user", "content": "hi"}], "input": "hi"}, "messages is not"),
        ({"model": "m", "input": "hi", "max_tokens": 5}, "max_tokens is not"),
        ({"model": "m", "input": [{"type": "reasoning", "summary": []}]}, "reasoning item without its id"),
    ],
)
def test_the_decoder_reports_what_the_api_rejects(body: dict[str, Any], problem: str) -> None:
    decoded = PROFILE.decode_request(json.dumps(body).encode())
    assert any(problem in p for p in decoded.problems), decoded.problems


@pytest.mark.parametrize(
    "items",
    [
        [
            {"role": "user", "content": "a"},
            {"type": "function_call_output", "call_id": "call_9", "output": "x"},
        ],
        [
            {"role": "user", "content": "a"},
            {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
            {"role": "user", "content": "b"},
        ],
    ],
    ids=["output-without-call", "call-without-output"],
)
def test_unlinked_calls_and_outputs_are_msg_04_violations(items: list[dict[str, Any]]) -> None:
    decoded = PROFILE.decode_request(json.dumps({"model": "m", "input": items}).encode())
    assert decoded.violations_of("MSG-04"), decoded.violations


def test_a_vercel_responses_fixture_imports_with_the_apis_event_framing(tmp_path: Path) -> None:
    from helix_conformance.importing import convert

    fixture = tmp_path / "r.chunks.txt"
    fixture.write_text(
        '{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"gpt-5-nano"}}\n'
        '{"type":"error","sequence_number":1,"error":{"type":"server_error","code":"server_error",'
        '"message":"boom","param":null}}\n'
    )
    imported = convert(fixture)
    (item,) = imported.interactions
    body = item["response"]["body"]["string"]
    assert body.startswith('event: response.created\ndata: {"type":"response.created"')
    assert "\n\nevent: error\ndata: " in body
    assert "[DONE]" not in body  # the Responses API has no [DONE] terminator
    assert item["request"]["uri"].endswith("/responses")
    assert imported.model == "gpt-5-nano"
