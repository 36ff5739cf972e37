"""The bedrock-converse request decoder reads a Converse request as the service does, and its event-stream
framing (``profiles/eventstream.py``) splits, breaks and mends bodies the way the fault corpus needs."""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.contract import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from helix_conformance.profiles import eventstream, get_profile
from helix_conformance.profiles.bedrock_stream import event_message
from helix_conformance.replay.faults import corpus
from helix_conformance.replay.interactions import ReplayInteraction
from reference_adapters.bedrock_converse import build_request_body

PROFILE = get_profile("bedrock-converse")
URL = "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream"
USE = {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}
RESULT = {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "18°C"}]}}


def _decode(body: dict[str, Any], url: str = URL) -> Any:
    return PROFILE.decode_request(json.dumps(body).encode(), url)


def test_a_converse_request_reads_back_as_canonical_messages() -> None:
    request = _decode(
        {
            "system": [{"text": "Be terse."}, {"cachePoint": {"type": "default"}}],
            "messages": [
                {"role": "user", "content": [{"text": "Weather?"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"reasoningContent": {"reasoningText": {"text": "Look it up.", "signature": "sig"}}},
                        {"reasoningContent": {"redactedContent": "ZGF0YQ=="}},
                        USE,
                    ],
                },
                {"role": "user", "content": [RESULT, {"text": "And in F?"}]},
            ],
            "inferenceConfig": {"maxTokens": 64, "temperature": 0.2, "stopSequences": ["END"]},
            "toolConfig": {
                "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]
            },
            "additionalModelRequestFields": {"top_k": 40},
        }
    )
    assert request.model == "anthropic.claude-3-5-sonnet-20240620-v1:0"  # percent-decoded from the path
    assert request.streaming
    kinds = [type(m) for m in request.messages]
    assert kinds == [SystemMessage, UserMessage, AssistantMessage, ToolMessage, UserMessage]
    assistant = request.messages[2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.thinking is not None
    assert (assistant.thinking.content, assistant.thinking.signature, assistant.thinking.redacted) == (
        "Look it up.",
        "sig",
        ["ZGF0YQ=="],
    )
    assert request.config == {"max_output_tokens": 64, "temperature": 0.2, "stop_sequences": ["END"]}
    assert request.cache == {"cache_points": ["system[1]"]}
    assert request.extra["additionalModelRequestFields"] == {"top_k": 40}
    assert (request.problems, request.violations, request.empty_text) == ([], [], [])
    assert request.tools is not None
    assert request.tools[0].parameters == {"type": "object"}


def test_the_breaches_the_service_answers_with_400_are_reported() -> None:
    request = _decode(
        {
            "messages": [
                {"role": "assistant", "content": [{"text": "Hi."}]},
                {"role": "assistant", "content": [{"text": ""}, USE]},
                {"role": "user", "content": [{"text": "no results"}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_9", "content": []}}]},
            ],
            "model": "claude",
        },
        url="https://bedrock-runtime.us-east-1.amazonaws.com/model/x/converse",
    )
    violations = dict.fromkeys(clause for clause, _ in request.violations)
    assert list(violations) == ["MSG-05", "MSG-04"]
    assert any("must start with a user message" in v for c, v in request.violations if c == "MSG-05")
    assert any("two assistant turns" in v for c, v in request.violations if c == "MSG-05")
    assert any("expected toolResult" in v for c, v in request.violations if c == "MSG-04")
    assert any("answers no toolUse" in v for c, v in request.violations if c == "MSG-04")
    assert any("blank text block" in e for e in request.empty_text)
    assert request.problems == ["model is not a ConverseStream request member"]
    assert not request.streaming
    assert request.model is None


def test_the_reference_body_decodes_to_its_input_with_no_problem() -> None:
    from helix_conformance.scenarios import get_scenario

    scenario = get_scenario("thinking_history")
    from helix_conformance.contract import LLMGenerateInput

    body = build_request_body(
        LLMGenerateInput(
            messages=list(scenario.messages), tools=list(scenario.tools), config=scenario.llm_config("m")
        )
    )
    request = _decode(body)
    assert (request.problems, request.violations, request.empty_text) == ([], [], [])
    assert len(request.messages) == len(PROFILE.expected_history(scenario.messages))


def test_sigv4_needs_the_date_it_signs() -> None:
    signed = {"content-type": "application/json", "authorization": "AWS4-HMAC-SHA256 Credential=AKID/…"}
    assert PROFILE.request_header_problems(signed) == [
        "a SigV4 Authorization without the X-Amz-Date it signs"
    ]
    assert PROFILE.request_header_problems({**signed, "x-amz-date": "20250101T000000Z"}) == []
    assert (
        PROFILE.request_header_problems({"content-type": "application/json", "authorization": "Bearer k"})
        == []
    )
    assert PROFILE.request_header_problems({"content-type": "application/json"})


# --- the framing ---------------------------------------------------------------------------------------------


def _body() -> bytes:
    return b"".join(
        [
            event_message("messageStart", {"role": "assistant"}),
            event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
            event_message("contentBlockStop", {"contentBlockIndex": 0}),
            event_message("messageStop", {"stopReason": "end_turn"}),
            event_message(
                "metadata",
                {
                    "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                    "metrics": {"latencyMs": 1},
                },
            ),
        ]
    )


def test_split_keeps_every_byte_whatever_the_body() -> None:
    body = _body()
    assert [eventstream.decode(m).event_type for m in PROFILE.split_events(body)] == [  # type: ignore[union-attr]
        "messageStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    for broken in (
        body[:7],
        body[:-3],
        body[:40] + b"\xff\xff\xff\xff" + body[44:],
        b"\x00\x00\x00\x01" + body,
    ):
        assert b"".join(PROFILE.split_events(broken)) == broken


def test_the_fault_corpus_breaks_the_framing_and_not_only_the_json() -> None:
    body = _body()
    base = ReplayInteraction(
        "POST",
        "/model/m/converse-stream",
        200,
        {"content-type": PROFILE.stream_content_type},
        body,
        None,
        False,
        "test",
    )
    variants = corpus(PROFILE, base, 100, salt="t")
    kinds = {v.kind for v in variants}
    assert {"checksum_mismatch", "truncate_inside", "malformed_json"} <= kinds
    labels = " ".join(v.where for v in variants if v.kind == "truncate_inside")
    assert "inside the prelude" in labels
    assert "inside the message CRC" in labels
    for variant in variants:
        if variant.kind == "checksum_mismatch":
            pieces = eventstream.split_messages(variant.interaction.body)
            assert [eventstream.problem(p) for p in pieces].count("the message CRC does not match") == 1
        if variant.kind == "malformed_json":  # valid framing, JSON cut in half
            assert all(
                eventstream.problem(p) is None for p in eventstream.split_messages(variant.interaction.body)
            )
    cuts = dict(PROFILE.framing_cuts(body))
    assert len(cuts["cut inside every message prelude"]) == 10
    assert len(cuts["cut inside every message CRC"]) == 5
