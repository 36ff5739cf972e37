"""The semantic diff printed after re-recording: meaning that changed, never ids, usage or event counts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from helix_conformance.profiles import get_profile
from helix_conformance.profiles.summary import ResponseSummary, SummaryToolCall
from helix_conformance.recording.diff import compress_events, diff_cassettes, semantic_diff

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"

TEXT = ResponseSummary(
    status=200,
    result_type="text",
    text="The capital of France is Paris.",
    wire_stop="end_turn",
    stop_reason="end_turn",
    events=(
        "message_start",
        "content_block_start",
        "ping",
        *["content_block_delta"] * 12,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ),
    usage={"output_tokens": 12},
)
CALL = SummaryToolCall("toolu_01A", "get_weather", {"city": "Paris"}, True)
TOOLS = replace(
    TEXT,
    result_type="tool_calls",
    text="",
    tool_calls=(CALL,),
    wire_stop="tool_use",
    stop_reason="tool_use",
)


def test_identical_summaries_have_no_diff() -> None:
    assert semantic_diff([TEXT, TOOLS], [TEXT, TOOLS]) == []


def test_ids_usage_pings_and_event_counts_are_not_changes() -> None:
    other_events = (
        "message_start",
        "ping",
        "content_block_start",
        *["content_block_delta"] * 7,
        "ping",
        *["content_block_delta"] * 2,
        "content_block_stop",
        "message_delta",
        "message_stop",
    )
    again = replace(
        TOOLS,
        tool_calls=(replace(CALL, id="toolu_01B"),),
        usage={"output_tokens": 99},
        events=other_events,
    )
    assert semantic_diff([TOOLS], [again]) == []


def test_changed_text_reports_presence_length_and_the_first_short_difference() -> None:
    (line,) = semantic_diff([TEXT], [replace(TEXT, text="The capital of France is Paris, of course.")])
    assert line == (
        "text: present (31 chars) → present (42 chars); first difference: 'Paris.' → 'Paris, of course.'"
    )
    (gone,) = semantic_diff([TEXT], [replace(TEXT, text="")])
    assert gone == "text: present (31 chars) → absent"
    (long,) = semantic_diff([TEXT], [replace(TEXT, text="x" * 50 + " and more")])
    assert long == "text: present (31 chars) → present (59 chars)"


def test_changed_result_type_and_tool_arguments() -> None:
    assert semantic_diff([TEXT], [replace(TOOLS, text=TEXT.text)]) == [
        "result type: text → tool_calls",
        'tool calls: — → get_weather({"city": "Paris"})',
        "stop reason: end_turn → tool_use",
    ]
    more = replace(TOOLS, tool_calls=(replace(CALL, arguments={"city": "Paris", "unit": "c"}),))
    assert semantic_diff([TOOLS], [more]) == [
        'tool calls: get_weather({"city": "Paris"}) → get_weather({"city": "Paris", "unit": "c"})'
    ]
    broken = replace(TOOLS, tool_calls=(replace(CALL, arguments='{"city": "Pa', arguments_valid=False),))
    assert semantic_diff([TOOLS], [broken]) == [
        'tool calls: get_weather({"city": "Paris"}) → get_weather(<invalid JSON \'{"city": "Pa\'>)'
    ]


def test_changed_stop_reason_shows_the_wire_value_where_it_differs() -> None:
    assert semantic_diff([TEXT], [replace(TEXT, wire_stop="max_tokens", stop_reason="max_tokens")]) == [
        "stop reason: end_turn → max_tokens"
    ]
    openai = replace(TOOLS, wire_stop="tool_calls")
    assert semantic_diff([openai], [replace(openai, wire_stop="stop")]) == [
        "stop reason: tool_use (tool_calls) → tool_use (stop)"
    ]


def test_an_error_appearing() -> None:
    error = replace(
        TEXT,
        result_type="error",
        stop_reason="error",
        wire_stop=None,
        error_type="overloaded_error",
        events=(*TEXT.events[:5], "error"),
    )
    lines = semantic_diff([TEXT], [error])
    assert "result type: text → error" in lines
    assert "error: — → overloaded_error" in lines
    assert "stop reason: end_turn → error" in lines
    assert semantic_diff([error], [TEXT])[-2] == "error: overloaded_error → —"


def test_events_are_compressed() -> None:
    assert compress_events(TEXT.events) == (
        "message_start content_block_start content_block_delta×12 content_block_stop message_delta message_stop"
    )
    cut = replace(
        TEXT, events=TEXT.events[:8], wire_stop=None, stop_reason=None, problems=("no message_stop",)
    )
    lines = semantic_diff([TEXT], [cut])
    assert lines[-1] == (
        "events: … content_block_delta×12 content_block_stop message_delta message_stop → "
        "… content_block_delta×5"
    )
    assert "problems: — → no message_stop" in lines
    assert compress_events([f"e{i}" for i in range(12)]).endswith("e9 …")


def test_interactions_added_and_removed() -> None:
    assert semantic_diff([TOOLS], [TOOLS, TEXT]) == [
        "interactions: 1 → 2",
        "interaction 2 added: HTTP 200, text, text (31 chars), stop end_turn",
    ]
    assert semantic_diff([TOOLS, TEXT], [TOOLS]) == [
        "interactions: 2 → 1",
        "interaction 2 removed: HTTP 200, text, text (31 chars), stop end_turn",
    ]
    assert semantic_diff([TOOLS, TEXT], [TOOLS, replace(TEXT, text="")]) == [
        "interaction 2: text: present (31 chars) → absent"
    ]


def _copy_with_body(source: Path, target: Path, old: str, new: str) -> Path:
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    body = data["interactions"][0]["response"]["body"]
    assert old in body["string"]
    body["string"] = body["string"].replace(old, new)
    target.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return target


def test_diff_cassettes(tmp_path: Path) -> None:
    profile = get_profile("anthropic-messages")
    source = CASSETTES / "anthropic-messages" / "tool_call.yaml"
    same = _copy_with_body(source, tmp_path / "same.yaml", "toolu_01", "toolu_02")
    assert diff_cassettes(profile, source, same) == []
    london = _copy_with_body(source, tmp_path / "london.yaml", '\\"Pa"', '\\"Lon"')
    assert diff_cassettes(profile, source, london) == [
        'tool calls: get_weather({"city": "Paris", "unit": "celsius"}) → '
        'get_weather({"city": "Lonris", "unit": "celsius"})'
    ]
    assert diff_cassettes(profile, tmp_path / "missing.yaml", source) == [
        f"no previous cassette at {tmp_path / 'missing.yaml'}"
    ]
    text = CASSETTES / "anthropic-messages" / "text_basic.yaml"
    assert diff_cassettes(profile, source, text) == [
        "result type: tool_calls → text",
        "text: absent → present (32 chars)",
        'tool calls: get_weather({"city": "Paris", "unit": "celsius"}) → —',
        "stop reason: tool_use → end_turn",
    ]
    overloaded = CASSETTES / "anthropic-messages" / "midstream_overloaded.yaml"
    assert diff_cassettes(profile, text, overloaded)[-2:] == [
        "error: — → overloaded_error",
        "events: … content_block_delta×5 content_block_stop message_delta message_stop → "
        "… content_block_delta error",
    ]
