"""Binary streams through recording and import: SigV4 credentials scrubbed, secrets found and scrubbed inside
AWS event-stream payloads (CRCs kept right), and recordings imported byte for byte or framed again."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from helix_conformance.importing import import_recording
from helix_conformance.profiles import eventstream
from helix_conformance.profiles.bedrock_stream import event_message
from helix_conformance.recording.scan import scan_cassette_data
from helix_conformance.recording.scrub import PLACEHOLDER, scrub_interaction, scrub_uri

RECORDINGS = Path(__file__).parent / "recordings" / "bedrock"
KEY = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 3


def _stream(*texts: str) -> bytes:
    return b"".join(
        event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}}) for t in texts
    )


def test_sigv4_credentials_are_scrubbed() -> None:
    interaction = {
        "request": {
            "uri": "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
            "headers": {
                "Authorization": [
                    "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"
                ],
                "X-Amz-Security-Token": ["IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ"],
                "X-Amz-Date": ["20250101T000000Z"],
            },
        }
    }
    headers = scrub_interaction(interaction)["request"]["headers"]
    assert headers["Authorization"] == [PLACEHOLDER]
    assert headers["X-Amz-Security-Token"] == [PLACEHOLDER]
    assert headers["X-Amz-Date"] == ["20250101T000000Z"]  # not a secret: the signature bound to it is gone
    presigned = "https://bucket.s3.amazonaws.com/k?X-Amz-Date=20250101T000000Z&X-Amz-Signature=deadbeef&X-Amz-Credential=AKIA%2F1"
    assert "deadbeef" not in scrub_uri(presigned)
    assert "AKIA" not in scrub_uri(presigned)


def test_a_secret_inside_an_event_stream_is_scrubbed_and_the_crcs_stay_right() -> None:
    body = _stream("your key ", KEY, " was echoed")
    interaction = {
        "request": {"uri": "https://x/model/m/converse-stream"},
        "response": {"body": {"string": body}},
    }
    scrubbed = scrub_interaction(interaction, secrets=[KEY])["response"]["body"]["string"]
    assert KEY.encode() not in scrubbed
    assert PLACEHOLDER.encode() in scrubbed
    assert all(eventstream.problem(m) is None for m in eventstream.split_messages(scrubbed))


def test_the_scanner_reads_event_stream_payloads_and_their_deltas_joined() -> None:
    def hits(body: bytes) -> list[str]:
        data = {"interactions": [{"response": {"body": {"string": body}}}]}
        return [hit.location for hit in scan_cassette_data(data, where="test")]

    assert any("event 1" in location for location in hits(_stream("a ", KEY)))
    split = hits(_stream(KEY[:20], KEY[20:]))
    assert any("deltas joined" in location for location in split)
    assert hits(_stream("Hello", " world")) == []
    redacted = event_message(
        "contentBlockDelta",
        {
            "contentBlockIndex": 0,
            "delta": {"reasoningContent": {"redactedContent": base64.b64encode(bytes(range(90))).decode()}},
        },
    )
    assert hits(redacted) == []  # opaque by its field, like Anthropic's redacted_thinking data


def test_a_boto3_recording_is_imported_byte_for_byte() -> None:
    path = RECORDINGS / "test_bedrock_model_stream.yaml"
    source = yaml.safe_load(path.read_text())["interactions"][0]["response"]["body"]["string"]
    imported = yaml.safe_load(import_recording(path))
    assert imported["interactions"][0]["response"]["body"]["string"] == source
    assert imported["provenance"]["model"] == "us.amazon.nova-micro-v1:0"


def test_a_vercel_bedrock_fixture_is_framed_as_event_stream_messages_again() -> None:
    path = RECORDINGS / "amazon-bedrock-reasoning.chunks.txt"
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    imported = yaml.safe_load(import_recording(path))
    body = imported["interactions"][0]["response"]["body"]["string"]
    messages = [eventstream.decode(m) for m in eventstream.split_messages(body)]
    assert len(messages) == len(lines)
    assert all(m is not None for m in messages)
    first = messages[0]
    assert first is not None
    assert (first.event_type, first.payload) == (
        "messageStart",
        b'{"role":"assistant"}',
    )
    assert imported["interactions"][0]["response"]["headers"]["content-type"] == [
        "application/vnd.amazon.eventstream"
    ]
    assert any("event-stream message" in note for note in imported["provenance"]["notes"])


def test_a_live_bedrock_stream_is_recorded_as_its_bytes() -> None:
    from helix_conformance.recording.capture import CapturedExchange
    from helix_conformance.recording.recorder import _interaction
    from helix_conformance.replay.cassette import dump_cassette

    body = _stream("Hello", " world")
    exchange = CapturedExchange(
        "POST",
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
        {"authorization": "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/x"},
        b"{}",
        200,
        {"content-type": "application/vnd.amazon.eventstream"},
        body,
    )
    written = scrub_interaction(_interaction(exchange, binary=True))
    text = dump_cassette({"kind": "recorded"}, [written])
    assert "!!binary" in text
    reloaded = yaml.safe_load(text)["interactions"][0]
    assert reloaded["response"]["body"]["string"] == body
    assert reloaded["request"]["headers"]["authorization"] == [PLACEHOLDER]
