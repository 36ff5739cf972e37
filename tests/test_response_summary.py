"""Reading responses back (``WireProfile.summarise_response``): every bundled cassette, authored and recorded,
summarises to what its scenario or ``expected.yml`` says, and garbage gives problems, never an exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix_conformance.importing.recorded import EXPECTED_FILE, Recording, load_expectations
from helix_conformance.importing.replay import compare
from helix_conformance.profiles import KNOWN_PROFILES, get_profile
from helix_conformance.profiles.scripted import PROFILE as SCRIPTED
from helix_conformance.profiles.summary import ResponseSummary
from helix_conformance.replay.cassette import load_cassette
from helix_conformance.scenarios import get_scenario

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"
RECORDED = CASSETTES / "recorded"
AUTHORED = sorted(p for name in KNOWN_PROFILES for p in (CASSETTES / name).glob("*.yaml"))
PROFILE_OF_ADAPTER = {
    "openai": "openai-chat",
    "anthropic": "anthropic-messages",
    "gemini": "gemini",
    "openai-responses": "openai-responses",
    "bedrock": "bedrock-converse",
    "cohere": "cohere-chat",
}

# Cassettes whose scenario expects something other than what the wire says, and what the summary says.
SPECIAL = {
    "abort_midstream": "the expected error is the adapter's own abort; the wire is a complete text stream",
    "truncated_stream": "the expected error (ERR-04) is the adapter's verdict on a stream with no terminator",
    "midstream_error": "an error event in a 200 stream: the summary is an error with the provider's type",
    "midstream_overloaded": "as midstream_error",
    "midstream_rate_limit": "as midstream_error",
    "midstream_error_data_event": "as midstream_error (Gemini's error as a data: event)",
    "midstream_model_stream_error": "as midstream_error (Bedrock's modelStreamErrorException)",
    "midstream_validation_error": "as midstream_error (Bedrock's validationException)",
    "midstream_error_flat": "as midstream_error (Responses' error event with its fields flat)",
    "retry_not_after_output": "as midstream_error: the overload arrives after text (the retry is optional)",
    "compat_duplicate_tool_ids": "the wire's ids, one id twice: the adapter makes them unique (RES-03)",
    "compat_error_after_finish": "OpenRouter: an error chunk after a finish_reason: still an error",
    "finish_tool_invalid_json": "the expected error (FIN-03) is the adapter's: the wire has invalid arguments",
    "tool_call_cut_off": "RES-10: a call cut off by max_tokens makes a text result; its arguments are broken",
    "tool_call_cut_off_valid_json": "RES-10: as tool_call_cut_off, though the cut arguments parse",
    "stop_refusal": "OpenAI's refusal text is the answer text; the scenario leaves content unchecked",
}
STRUCTURED = frozenset({"finish_tool", "finish_tool_with_sibling", "thinking_finish_tool"})
"""``structured_output`` expectations: on the wire a ``__finish__`` tool call whose arguments are the output."""


def _summaries(profile_name: str, path: Path) -> list[ResponseSummary]:
    profile = get_profile(profile_name)
    return [profile.summarise_response(i.status, i.headers, i.body) for i in load_cassette(path).interactions]


def _authored_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("path", AUTHORED, ids=_authored_id)
def test_authored_cassette_summarises_to_its_scenario(path: Path) -> None:
    profile = get_profile(path.parent.name)
    scenario = get_scenario(path.stem)
    expect = scenario.expect
    (summary,) = _summaries(profile.name, path)
    assert summary.status == 200
    if scenario.id in SPECIAL:
        _check_special(scenario.id, summary, profile.name)
        return
    assert summary.problems == ()
    want_type = "tool_calls" if expect.type == "structured_output" else expect.type
    assert summary.result_type == want_type
    assert summary.stop_reason == expect.stop_for(profile.name)
    assert summary.thinking == (expect.thinking or "")
    if expect.type == "structured_output":  # a structured result has no content; text beside it is dropped
        finish = [c for c in summary.tool_calls if c.name == "__finish__"]
        assert [c.arguments for c in finish] == [expect.output]
        return
    assert summary.text == (expect.content or "")
    assert [(c.name, c.arguments) for c in summary.tool_calls] == [
        (c.name, c.arguments) for c in expect.tool_calls
    ]
    assert all(c.arguments_valid for c in summary.tool_calls)
    assert [c.id for c in summary.tool_calls] == [  # Gemini 3 sends ids of its own (CALL_IDS)
        c.id if scenario.sends_call_ids else profile.response_tool_call_id(c.id) or None
        for c in expect.tool_calls
    ]


def _check_special(scenario_id: str, summary: ResponseSummary, profile: str) -> None:
    if scenario_id == "abort_midstream":
        assert (summary.result_type, summary.stop_reason, summary.problems) == ("text", "end_turn", ())
        assert summary.text.startswith("word0 word1")
    elif scenario_id == "truncated_stream":
        assert summary.stop_reason is None
        assert summary.wire_stop is None
        assert any("ended without" in problem for problem in summary.problems)
    elif scenario_id in (
        "midstream_error",
        "midstream_overloaded",
        "midstream_rate_limit",
        "midstream_error_data_event",
        "midstream_model_stream_error",
        "midstream_validation_error",
        "midstream_error_flat",
        "retry_not_after_output",
    ):
        assert (summary.result_type, summary.stop_reason, summary.problems) == ("error", "error", ())
        assert summary.error_type
        # the first error ends it (Responses: before response.failed); Bedrock's is an exception message,
        # Cohere's a message-end with finish_reason ERROR
        last = {"bedrock-converse": "exception:", "cohere-chat": "message-end"}.get(profile, "error")
        assert summary.events[-1].startswith(last)
    elif scenario_id == "compat_error_after_finish":
        assert (summary.result_type, summary.error_type, summary.wire_stop) == ("error", "400", "length")
        assert summary.events[-2:] == ("error", "[DONE]")
    elif scenario_id == "compat_duplicate_tool_ids":
        assert (summary.result_type, summary.problems) == ("tool_calls", ())
        assert [(c.id, c.arguments) for c in summary.tool_calls] == [
            ("call_00_dS1Dnxavoyj3671yVxnr4217", {"city": "Paris"}),
            ("call_00_dS1Dnxavoyj3671yVxnr4217", {"city": "London"}),
        ]
    elif scenario_id == "finish_tool_invalid_json":
        (call,) = summary.tool_calls
        assert (call.name, call.arguments_valid, call.arguments) == (
            "__finish__",
            False,
            '{"answer": "Paris}',
        )
    elif scenario_id in ("tool_call_cut_off", "tool_call_cut_off_valid_json"):
        assert (summary.result_type, summary.stop_reason) == ("text", "max_tokens")
        parses = scenario_id == "tool_call_cut_off_valid_json"  # the call is on the wire, not in the result
        assert [(c.name, c.arguments_valid) for c in summary.tool_calls] == [("get_weather", parses)]
    elif scenario_id == "stop_refusal":
        assert (summary.result_type, summary.stop_reason) == ("text", "refusal")
        assert summary.wire_stop in ("stop", "completed")  # Chat's finish_reason; Responses' terminal event
        assert summary.text.startswith("I can't help")
        assert any(label in ("refusal", "response.refusal.delta") for label in summary.events)
    else:  # pragma: no cover - SPECIAL and this function are kept together
        raise AssertionError(f"no check for special cassette {scenario_id}")


def test_every_special_case_names_a_bundled_cassette() -> None:
    stems = {path.stem for path in AUTHORED}
    assert set(SPECIAL) <= stems
    assert stems >= STRUCTURED


# --- real traffic ------------------------------------------------------------------------------------


RECORDINGS = [r for r in load_expectations(RECORDED / EXPECTED_FILE) if not r.excluded]


def _outcome(summary: ResponseSummary, expected: dict[str, Any]) -> dict[str, Any]:
    """The summary in ``expected.yml``'s vocabulary (error codes are the adapter's: only the status counts)."""
    if summary.result_type == "error":
        return {
            "type": "error",
            "error_code": expected.get("error_code"),
            "status_code": summary.status if summary.status >= 400 else None,
        }
    return {
        "type": summary.result_type,
        "stop_reason": summary.stop_reason,
        "thinking": summary.thinking or None,
        "content": summary.text,
        "tool_calls": [
            {"id": call.id or "(the adapter's own)", "name": call.name, "arguments": call.arguments}
            for call in summary.tool_calls
        ],
    }


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda r: r.key)
def test_recorded_cassette_summarises_to_its_expected_outcome(recording: Recording) -> None:
    assert recording.adapter is not None
    summaries = _summaries(PROFILE_OF_ADAPTER[recording.adapter], RECORDED / recording.cassette)
    assert len(summaries) >= len(recording.interactions)
    for index, expected in enumerate(recording.interactions):
        if expected is None:
            continue  # not replayed (a non-streaming body, see expected.yml)
        summary = summaries[index]
        if expected["type"] == "error" and summary.status < 400 and summary.result_type != "error":
            # A 200 body that is no event stream (ERR-05): the adapter's error, the summary's problems.
            assert summary.problems, f"interaction {index}: {summary}"
            continue
        if expected["type"] != "error":
            assert summary.problems == (), f"interaction {index}: {summary.problems}"
        problems = compare(_outcome(summary, expected), expected)
        assert not problems, f"interaction {index}: {problems}"


# --- garbage -----------------------------------------------------------------------------------------

GARBAGE = {
    "empty": b"",
    "binary": bytes(range(256)),
    "html": b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
    "not json": b"data: {not json\n\n",
    "json array": b"data: [1, 2]\n\nevent: error\ndata: null\n\n",
    "open raw json": b'data: {"candidates": []}\r\n\r\n{\n  "error": {\n',
    "raw non-error": b"[1]\n",
    "stray text": b"hello\nworld\n",
    "bad tool deltas": b'data: {"choices":[{"delta":{"tool_calls":[1,{"index":"x","function":7}]}}]}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":7}\n\n'
    b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a[0]"}]}}]}}]}'
    b"\n\n",
}


@pytest.mark.parametrize("profile_name", KNOWN_PROFILES)
@pytest.mark.parametrize("body", GARBAGE.values(), ids=list(GARBAGE))
def test_garbage_gives_problems_never_an_exception(profile_name: str, body: bytes) -> None:
    profile = get_profile(profile_name)
    summary = profile.summarise_response(200, {"content-type": "text/event-stream"}, body)
    assert summary.problems
    json.dumps(summary.as_dict())
    error = profile.summarise_response(502, {"content-type": "text/html"}, body)
    assert error.result_type == "error"
    assert error.stop_reason == "error"
    assert error.problems


@pytest.mark.parametrize("profile_name", KNOWN_PROFILES)
def test_a_truncated_stream_is_a_problem(profile_name: str) -> None:
    (interaction,) = load_cassette(CASSETTES / profile_name / "text_basic.yaml").interactions
    body = interaction.body[: len(interaction.body) * 2 // 3]
    summary = get_profile(profile_name).summarise_response(200, interaction.headers, body)
    assert any("ended without" in problem for problem in summary.problems)


@settings(max_examples=60, deadline=None)
@given(
    profile_name=st.sampled_from(KNOWN_PROFILES),
    status=st.sampled_from([200, 400, 429, 500]),
    body=st.binary(max_size=300)
    | st.text(alphabet=st.sampled_from(list('data: {}[]"\r\n:,errorevent')), max_size=200).map(str.encode),
)
def test_random_bodies_never_raise(profile_name: str, status: int, body: bytes) -> None:
    summary = get_profile(profile_name).summarise_response(status, {}, body)
    json.dumps(summary.as_dict())


_KEYS = [
    "choices",
    "delta",
    "tool_calls",
    "index",
    "id",
    "function",
    "name",
    "arguments",
    "content",
    "reasoning",
    "refusal",
    "finish_reason",
    "type",
    "content_block",
    "partial_json",
    "thinking",
    "signature",
    "stop_reason",
    "message",
    "usage",
    "error",
    "status",
    "code",
    "candidates",
    "parts",
    "text",
    "thought",
    "functionCall",
    "args",
    "partialArgs",
    "jsonPath",
    "stringValue",
    "willContinue",
    "finishReason",
    "promptFeedback",
    "blockReason",
    "usageMetadata",
    "thoughtSignature",
    "input",
]
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "$.a", "$.a.b", "x", "text", "0"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    profile_name=st.sampled_from(KNOWN_PROFILES),
    payloads=st.lists(_JSON, max_size=6),
    names=st.lists(
        st.sampled_from(["", "error", "content_block_start", "content_block_delta", "message_delta"])
    ),
)
def test_events_of_any_shape_never_raise(profile_name: str, payloads: list[Any], names: list[str]) -> None:
    events = [
        (f"event: {names[i]}\n" if i < len(names) and names[i] else "") + f"data: {json.dumps(p)}\n\n"
        for i, p in enumerate(payloads)
    ]
    summary = get_profile(profile_name).summarise_response(200, {}, "".join(events).encode())
    json.dumps(summary.as_dict())


@settings(max_examples=40, deadline=None)
@given(cut=st.floats(min_value=0, max_value=1), path=st.sampled_from(AUTHORED))
def test_any_prefix_of_a_bundled_cassette_is_read_without_raising(cut: float, path: Path) -> None:
    (interaction,) = load_cassette(path).interactions
    body = interaction.body[: int(len(interaction.body) * cut)]
    get_profile(path.parent.name).summarise_response(200, interaction.headers, body)


def test_as_dict_is_plain_data() -> None:
    (summary,) = _summaries("openai-chat", CASSETTES / "openai-chat" / "tool_call_parallel.yaml")
    data = summary.as_dict()
    assert data["tool_calls"][1] == {
        "id": "call_q9DkE3sLpA6uZw0HnC7xYt1M",
        "name": "get_weather",
        "arguments": {"city": "London"},
        "arguments_valid": True,
    }
    assert data["events"][-1] == "[DONE]"
    assert data["stop_reason"] == "tool_use"
    assert json.loads(json.dumps(data)) == data


def test_event_labels() -> None:
    (anthropic,) = _summaries(
        "anthropic-messages", CASSETTES / "anthropic-messages" / "stop_refusal_no_content.yaml"
    )
    assert anthropic.events == ("message_start", "message_delta", "message_stop")
    (gemini,) = _summaries("gemini", CASSETTES / "gemini" / "thinking_tool_call.yaml")
    assert gemini.events == ("thought", "thought", "functionCall", "finish")
    (openai,) = _summaries("openai-chat", CASSETTES / "openai-chat" / "compat_tool_calls_without_index.yaml")
    assert openai.events == ("tool_calls", "tool_calls+finish", "[DONE]")  # no usage chunk: not asked for
    (usage,) = _summaries("openai-chat", CASSETTES / "openai-chat" / "text_usage_chunk.yaml")
    assert usage.events[-3:] == ("finish", "usage", "[DONE]")  # asked for: stream_options.include_usage


def test_a_profile_without_a_reader_says_so() -> None:
    with pytest.raises(NotImplementedError, match="scripted"):
        SCRIPTED.summarise_response(200, {}, b"")
