"""The Bedrock reference adapter's stdlib pieces: the event-stream decoder against botocore's framing, and
SigV4 against botocore's signer."""

from __future__ import annotations

import itertools
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix_conformance.profiles import eventstream
from helix_conformance.profiles.bedrock_stream import event_message, exception_message
from reference_adapters._eventstream import EventStreamDecoder, EventStreamError
from reference_adapters._sigv4 import AwsCredentials, sign

BODY = b"".join(
    [
        event_message("messageStart", {"role": "assistant", "p": "abc"}),
        event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Ré 日本"}}),
        exception_message("throttlingException", {"message": "Too many tokens"}),
    ]
)


def _decode(chunks: list[bytes]) -> list[tuple[str, bytes]]:
    decoder = EventStreamDecoder()
    messages = [m for chunk in chunks for m in decoder.feed(chunk)] + decoder.close()
    return [(m.header(":event-type") or m.header(":exception-type"), m.payload) for m in messages]


WHOLE = _decode([BODY])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(min_value=1, max_value=len(BODY) - 1), max_size=12))
def test_the_same_messages_however_the_bytes_are_split(cuts: list[int]) -> None:
    edges = [0, *sorted(set(cuts)), len(BODY)]
    assert _decode([BODY[a:b] for a, b in itertools.pairwise(edges) if b > a]) == WHOLE


def test_every_byte_its_own_chunk() -> None:
    assert _decode([BODY[i : i + 1] for i in range(len(BODY))]) == WHOLE
    assert [kind for kind, _ in WHOLE] == ["messageStart", "contentBlockDelta", "throttlingException"]


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (eventstream.payload_flipped(BODY[: len(eventstream.split_messages(BODY)[0])]), "message CRC"),
        (b"\x00\x00\x10\x00" + BODY[4:], "prelude CRC"),
        (BODY[:-2], "ended inside a message"),
    ],
    ids=["message-crc", "prelude-crc", "truncated"],
)
def test_a_broken_body_is_an_error_never_data(broken: bytes, message: str) -> None:
    with pytest.raises(EventStreamError, match=message):
        _decode([broken])


def test_sigv4_signs_as_botocore_does() -> None:
    pytest.importorskip("botocore")
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    url = (
        "https://bedrock-runtime.eu-west-1.amazonaws.com/model/"
        "arn%3Aaws%3Abedrock%3Aeu-west-1%3A1%3Ainference-profile%2Feu.anthropic.x/converse-stream"
    )
    headers = {"content-type": "application/json", "x-helix-test": "config  passthrough"}
    for token in (None, "session-token"):
        request = AWSRequest("POST", url, data=b'{"messages": []}', headers=dict(headers))
        SigV4Auth(Credentials("AKIDEXAMPLE", "secret", token), "bedrock", "eu-west-1").add_auth(request)
        when = datetime.strptime(request.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
        ours = sign(
            "POST",
            url,
            headers,
            b'{"messages": []}',
            AwsCredentials("AKIDEXAMPLE", "secret", token),
            "eu-west-1",
            now=when,
        )
        assert ours["authorization"] == request.headers["Authorization"]
        assert ours.get("x-amz-security-token") == token
        assert "s3cr3t-value" not in repr(AwsCredentials("AKIDEXAMPLE", "s3cr3t-value"))
