"""The recorder's secret safety: scrubbing an interaction, and the scan that refuses to write any secret left.

Every fake secret is assembled at run time from a seeded generator, so this file holds no key-shaped string.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import random
import string
from pathlib import Path
from typing import Any

import pytest

from helix_conformance.recording.scan import (
    NotACassette,
    SecretHit,
    SecretsFound,
    ensure_no_secrets,
    looks_random,
    scan_cassette_data,
    scan_file,
    scan_text,
)
from helix_conformance.recording.scrub import (
    PLACEHOLDER,
    SCRUBBED_HEADERS,
    URL_PLACEHOLDER,
    scrub_interaction,
)
from helix_conformance.replay.cassette import CassetteError

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"
ALNUM = string.ascii_letters + string.digits
_rng = random.Random(6)


def _rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


SAMPLES: dict[str, str] = {
    "openai key": "sk-" + "proj-" + _rand(74, ALNUM + "_-"),
    "anthropic key": "sk-" + "ant-api03-" + _rand(93, ALNUM + "_-"),
    "openrouter key": "sk-" + "or-v1-" + _rand(64, "0123456789abcdef"),
    "google api key": "AI" + "za" + _rand(35, ALNUM + "_-"),
    "google oauth token": "ya" + "29." + _rand(120, ALNUM + "_-"),
    "groq key": "gs" + "k_" + _rand(52),
    "huggingface token": "h" + "f_" + _rand(34, string.ascii_letters),
    "AWS access key": "AK" + "IA" + _rand(16, string.ascii_uppercase + string.digits),
    "github token": "gh" + "p_" + _rand(36),
    "slack token": "xo" + "xb-" + _rand(12, string.digits) + "-" + _rand(24),
    "JWT": "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0." + _rand(43, ALNUM + "_-"),
    "high-entropy string": _rand(40),
}
BEARER = _rand(48)


def _interaction(**parts: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "request": {
            "method": "POST",
            "uri": "https://api.example.com/v1/messages",
            "body": None,
            "headers": {"content-type": ["application/json"]},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["text/event-stream"]},
            "body": {"string": ""},
        },
    }
    for name, value in parts.items():
        side, _, field = name.partition("_")
        item[side][field] = value
    return item


def _cassette(*interactions: dict[str, Any]) -> dict[str, Any]:
    return {"provenance": {"kind": "recorded"}, "interactions": list(interactions), "version": 1}


def _sse(*payloads: dict[str, Any]) -> str:
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)


def _one(hits: list[SecretHit]) -> SecretHit:
    assert len(hits) == 1, [str(hit) for hit in hits]
    return hits[0]


# --- scrubbing ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCRUBBED_HEADERS))
def test_every_secret_header_is_replaced_on_both_sides_and_kept(name: str) -> None:
    value = SAMPLES["openai key"]
    item = _interaction(
        request_headers={name.title(): [value], "accept": ["*/*"]},
        response_headers={name: [value, value], "content-type": ["application/json"]},
    )
    scrubbed = scrub_interaction(item)
    assert scrubbed["request"]["headers"] == {name.title(): [PLACEHOLDER], "accept": ["*/*"]}
    assert scrubbed["response"]["headers"][name] == [PLACEHOLDER, PLACEHOLDER]
    assert scrubbed["response"]["headers"]["content-type"] == ["application/json"]
    assert item["request"]["headers"][name.title()] == [value], "the input is not modified"
    assert scan_cassette_data(_cassette(scrubbed), where="x") == []


def test_extra_headers_from_a_profile_and_plain_string_values() -> None:
    item = _interaction(request_headers={"X-Custom-Key": "abc", "x-other": "kept"})
    scrubbed = scrub_interaction(item, extra_headers=["x-custom-key"])
    assert scrubbed["request"]["headers"] == {"X-Custom-Key": PLACEHOLDER, "x-other": "kept"}


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        (
            "https://g.example.com/v1beta/models/m:streamGenerateContent?alt=sse&key=K3y-value#frag",
            f"https://g.example.com/v1beta/models/m:streamGenerateContent?alt=sse&key={URL_PLACEHOLDER}#frag",
        ),
        (
            "https://x.example.com/v1?api_key=abc&n=1",
            f"https://x.example.com/v1?api_key={URL_PLACEHOLDER}&n=1",
        ),
        ("https://x.example.com/v1?API-KEY=abc", f"https://x.example.com/v1?API-KEY={URL_PLACEHOLDER}"),
        (
            "https://x.example.com/v1?access_token=abc",
            f"https://x.example.com/v1?access_token={URL_PLACEHOLDER}",
        ),
        ("https://x.example.com/v1?monkey=1&keys=2", "https://x.example.com/v1?monkey=1&keys=2"),
    ],
)
def test_key_carrying_query_parameters_are_replaced_in_place(uri: str, expected: str) -> None:
    assert scrub_interaction(_interaction(request_uri=uri))["request"]["uri"] == expected


def test_token_fields_of_json_and_form_bodies_are_replaced() -> None:
    token = _rand(60)
    item = _interaction(
        request_uri="https://oauth2.googleapis.com/token",
        request_body=f"grant_type=refresh_token&client_id=abc&client_secret={token}&refresh_token={token}",
        response_body={"string": json.dumps({"access_token": token, "id_token": token, "expires_in": 3599})},
    )
    scrubbed = scrub_interaction(item)
    assert scrubbed["request"]["body"] == (
        f"grant_type=refresh_token&client_id=abc&client_secret={URL_PLACEHOLDER}&refresh_token={URL_PLACEHOLDER}"
    )
    assert json.loads(scrubbed["response"]["body"]["string"]) == {
        "access_token": PLACEHOLDER,
        "id_token": PLACEHOLDER,
        "expires_in": 3599,
    }
    assert scan_cassette_data(_cassette(item), where="x"), "the unscrubbed exchange is caught"
    assert scan_cassette_data(_cassette(scrubbed), where="x") == []


def test_the_keys_in_use_are_replaced_everywhere_also_percent_encoded() -> None:
    key = "Abc/def+ghi=" + _rand(20)
    google = SAMPLES["google api key"]
    item = _interaction(
        request_uri=f"https://x.example.com/v1?alt=sse&sig={key.replace('/', '%2F').replace('+', '%2B').replace('=', '%3D')}",
        request_headers={"x-echo": [f"prefix {google}"]},
        request_body=json.dumps({"note": f"use {google}"}),
        response_body={"string": f'{{"error": {{"message": "API key not valid: {google}"}}}}'},
    )
    item["response"]["body"]["string"] += f" {key}"
    scrubbed = scrub_interaction(item, secrets=[key, google, "short"])
    text = json.dumps(scrubbed)
    assert google not in text
    assert key not in text
    assert "%2F" not in scrubbed["request"]["uri"]
    assert scrubbed["request"]["headers"]["x-echo"] == [f"prefix {PLACEHOLDER}"]
    assert f"API key not valid: {PLACEHOLDER}" in scrubbed["response"]["body"]["string"]
    assert scan_cassette_data(_cassette(scrubbed), where="x") == []


def test_secrets_in_bytes_bodies_are_replaced_and_short_values_ignored() -> None:
    key = SAMPLES["anthropic key"]
    item = _interaction(response_body={"string": f"echo {key} test".encode()})
    scrubbed = scrub_interaction(item, secrets=[key, "test"])
    assert scrubbed["response"]["body"]["string"] == f"echo {PLACEHOLDER} test".encode()


# --- scanning: what is found, and where -----------------------------------------------------------------


def _placed(place: str, secret: str) -> tuple[dict[str, Any], str]:
    """A cassette with ``secret`` at ``place``, and the location the scan must name."""
    if place == "header":
        item = _interaction(request_headers={"x-custom-token": [secret]})
        return _cassette(item), "interaction 0 › request.headers.x-custom-token"
    if place == "uri":
        item = _interaction(request_uri=f"https://api.example.com/v1/x?alt=sse&token={secret}")
        return _cassette(item), "interaction 0 › request.uri"
    if place == "json body":
        request: Any = {
            "messages": [{"role": "user", "content": [{"type": "text", "text": f"my key: {secret}."}]}]
        }
        item = _interaction(request_body=json.dumps(request))
        return _cassette(item), "interaction 0 › request.body › messages[0].content[0].text"
    if place == "sse":
        sse = _sse(
            {"type": "message_start", "message": {"id": "msg_01"}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": secret}},
        )
        item = _interaction(response_body={"string": sse})
        return _cassette(_interaction(), item), "interaction 1 › response.body › event 3 › delta.text"
    if place == "deep json":
        deep: Any = {"a": {"b": [0, {"c": {"weird key": [{"d": f"({secret})"}]}}]}}
        item = _interaction(response_body={"string": json.dumps(deep)})
        return _cassette(item), 'interaction 0 › response.body › a.b[1].c["weird key"][0].d'
    assert place == "arguments"
    call = {"id": "call_1", "function": {"name": "f", "arguments": json.dumps({"token": secret})}}
    stream = f"data: {json.dumps({'choices': [{'delta': {'tool_calls': [call]}}]})}\n\ndata: [DONE]\n\n"
    item = _interaction(response_body={"string": stream})
    location = (
        "interaction 0 › response.body › event 0 › choices[0].delta.tool_calls[0].function.arguments › token"
    )
    return _cassette(item), location


PLACES = ("header", "uri", "json body", "sse", "deep json", "arguments")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_a_planted_secret_is_found_with_its_kind_and_location(kind: str, place: str) -> None:
    secret = SAMPLES[kind]
    data, location = _placed(place, secret)
    hit = _one(scan_cassette_data(data, where="c.yaml"))
    assert (hit.location, hit.kind) == (location, kind)
    assert hit.excerpt == f"{secret[:4]}…({len(secret)} chars)"
    assert secret[4:12] not in str(hit)
    assert str(hit) == f"c.yaml: {location}: {kind} ({hit.excerpt}) [{hit.why}]"
    if kind == "high-entropy string":
        assert hit.why.startswith("random-looking: 40 characters mixing case and digits"), hit.why
    else:
        assert hit.why == f"matches the {kind} pattern"


def test_the_high_entropy_sample_is_random_by_the_heuristic() -> None:
    assert looks_random(SAMPLES["high-entropy string"])
    for plain in (
        "Meta-Llama-3.1-70B-Instruct-Turbo",
        "claude-haiku-4-5-20251001",
        "deepseek-ai/DeepSeek-R1",
    ):
        assert not looks_random(plain), plain


@pytest.mark.parametrize("place", PLACES)
def test_bearer_tokens_are_found_but_not_placeholders_or_prose(place: str) -> None:
    data, location = _placed(place, f"Bearer {BEARER}")
    hit = _one(scan_cassette_data(data, where="c"))
    assert (hit.location, hit.kind, hit.excerpt) == (location, "bearer token", f"{BEARER[:4]}…(48 chars)")
    for harmless in (f"Bearer {PLACEHOLDER}", "Bearer REDACTED", "send a Bearer authentication header"):
        assert scan_cassette_data(_placed(place, harmless)[0], where="c") == [], harmless


def test_private_keys_and_url_credentials() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIE..."
    assert _one(scan_text(json.dumps({"k": pem}))).kind == "private key"
    hit = _one(scan_text("proxy at https://bob:Pa55word-x9@proxy.example.com:8080/"))
    assert (hit.kind, hit.excerpt) == ("credentials in URL", "Pa5…(11 chars)")


def test_unscrubbed_credential_and_account_headers_are_hits() -> None:
    item = _interaction(
        request_headers={"x-api-key": ["short"], "authorization": [PLACEHOLDER], "cookie": [""]},
        response_headers={"openai-organization": ["user-abc"], "anthropic-organization-id": [PLACEHOLDER]},
    )
    hits = scan_cassette_data(_cassette(item), where="c")
    assert [(h.location, h.kind) for h in hits] == [
        ("interaction 0 › request.headers.x-api-key", "unscrubbed credential header"),
        ("interaction 0 › response.headers.openai-organization", "unscrubbed account header"),
    ]
    key = SAMPLES["anthropic key"]
    item = _interaction(request_headers={"X-Api-Key": [key]})
    assert _one(scan_cassette_data(_cassette(item), where="c")).kind == "anthropic key"


def test_secret_query_parameters_and_token_fields_are_hits() -> None:
    item = _interaction(
        request_uri="https://g.example.com/v1/m?key=plainvalue&alt=sse",
        request_body=json.dumps({"api_key": "abc"}),
        response_body={"string": json.dumps({"refresh_token": "scrubbed"})},
    )
    hits = scan_cassette_data(_cassette(item), where="c")
    assert [(h.location, h.kind) for h in hits] == [
        ("interaction 0 › request.uri", "secret query parameter 'key'"),
        ("interaction 0 › request.body › api_key", "secret field 'api_key'"),
    ]


def test_gzip_bodies_stored_as_binary_are_read() -> None:
    secret = SAMPLES["openai key"]
    item = _interaction(response_body={"string": gzip.compress(json.dumps({"echo": secret}).encode())})
    hit = _one(scan_cassette_data(_cassette(item), where="c"))
    assert (hit.location, hit.kind) == ("interaction 0 › response.body › echo", "openai key")


# --- what the scan allows -------------------------------------------------------------------------------

BLOB = _rand(300, ALNUM + "+/") + "=="


@pytest.mark.parametrize(
    ("body", "location"),
    [
        (
            _sse(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "signature_delta", "signature": "{}"},
                }
            ),
            "interaction 0 › response.body › event 0 › delta.signature",
        ),
        (
            _sse(
                {"type": "content_block_start", "content_block": {"type": "redacted_thinking", "data": "{}"}}
            ),
            "interaction 0 › response.body › event 0 › content_block.data",
        ),
        (
            "data: "
            + json.dumps({"candidates": [{"content": {"parts": [{"text": "x", "thoughtSignature": "{}"}]}}]}),
            "interaction 0 › response.body › event 0 › candidates[0].content.parts[0].thoughtSignature",
        ),
        (
            json.dumps({"output": [{"type": "reasoning", "encrypted_content": "{}"}]}),
            "interaction 0 › response.body › output[0].encrypted_content",
        ),
        (
            json.dumps({"tool_calls": [{"extra_content": {"google": {"thought_signature": "{}"}}}]}),
            "interaction 0 › response.body › tool_calls[0].extra_content.google.thought_signature",
        ),
        (
            json.dumps({"source": {"type": "base64", "media_type": "image/png", "data": "{}"}}),
            "interaction 0 › response.body › source.data",
        ),
    ],
)
def test_provider_blobs_are_allowed_by_field_but_key_patterns_in_them_are_not(
    body: str, location: str
) -> None:
    allowed = _interaction(response_body={"string": body.replace("{}", BLOB)})
    assert scan_cassette_data(_cassette(allowed), where="c") == []
    key = SAMPLES["anthropic key"]
    planted = _interaction(response_body={"string": body.replace("{}", BLOB[:100] + key + BLOB[100:])})
    hit = _one(scan_cassette_data(_cassette(planted), where="c"))
    assert (hit.location, hit.kind) == (location, "anthropic key")


def test_a_token_length_random_string_in_an_ordinary_field_is_reported_a_blob_is_not() -> None:
    token = BLOB[:64]
    item = _interaction(response_body={"string": json.dumps({"type": "text", "data": token, "text": token})})
    hits = scan_cassette_data(_cassette(item), where="c")
    assert [h.location for h in hits] == [
        "interaction 0 › response.body › data",
        "interaction 0 › response.body › text",
    ]
    assert all(h.why.startswith("random-looking: ") for h in hits)
    long = _interaction(response_body={"string": json.dumps({"type": "text", "data": BLOB, "text": BLOB})})
    assert scan_cassette_data(_cassette(long), where="c") == [], "over MAX_TOKEN_LENGTH: a blob, not a key"


def test_provider_ids_are_allowed() -> None:
    ids = {
        "id": "msg_01" + _rand(22),
        "tool_call_id": "call_" + _rand(24),
        "tool_use_id": "toolu_01" + _rand(22),
        "responseId": _rand(23, ALNUM + "-"),
        "system_fingerprint": "fp_" + _rand(10),
        "obfuscation": _rand(30),
        "message": f"Internal error, request id req_011C{_rand(22)}; see data:image/png;base64,{BLOB}",
    }
    item = _interaction(
        response_headers={"request-id": ["req_011C" + _rand(22)], "x-request-id": [_rand(32)]},
        response_body={"string": json.dumps(ids)},
    )
    assert scan_cassette_data(_cassette(item), where="c") == []


# --- refusing to write, files ----------------------------------------------------------------------------


def test_ensure_no_secrets_names_every_location_and_never_the_value() -> None:
    secret = SAMPLES["google api key"]
    data, location = _placed("sse", secret)
    ensure_no_secrets(_cassette(_interaction()), where="fine.yaml")
    with pytest.raises(SecretsFound) as caught:
        ensure_no_secrets(data, where="out/text_basic.yaml")
    message = str(caught.value)
    assert message.startswith("refusing to write out/text_basic.yaml: 1 secret(s) found")
    assert f"{location}: google api key (AIza…(39 chars))" in message
    assert secret[4:] not in message
    assert caught.value.hits == scan_cassette_data(data, where="out/text_basic.yaml")


def test_scan_file_reads_yaml_and_rejects_what_is_not_a_cassette(tmp_path: Path) -> None:
    import yaml

    secret = SAMPLES["github token"]
    good = tmp_path / "c.yaml"
    good.write_text(yaml.safe_dump(_placed("json body", secret)[0]), encoding="utf-8")
    hit = _one(scan_file(good))
    assert (hit.where, hit.kind) == (str(good), "github token")
    broken = tmp_path / "broken.yaml"
    broken.write_text("interactions: [\n  - {", encoding="utf-8")
    with pytest.raises(CassetteError, match=r"broken\.yaml: is not valid YAML"):
        scan_file(broken)
    other = tmp_path / "other.yaml"
    other.write_text("a: 1\n", encoding="utf-8")
    with pytest.raises(NotACassette, match="not a cassette"):
        scan_file(other)


def test_scan_does_not_modify_its_input() -> None:
    data, _ = _placed("arguments", SAMPLES["JWT"])
    before = copy.deepcopy(data)
    scan_cassette_data(data, where="c")
    assert data == before


BUNDLED = sorted(p for p in CASSETTES.rglob("*.yaml"))


def test_the_bundled_cassettes_are_all_there() -> None:
    assert len(BUNDLED) > 150
    assert any(p.parent.name == "recorded" or "recorded" in p.parts for p in BUNDLED)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(CASSETTES)))
def test_every_bundled_cassette_scans_clean(path: Path) -> None:
    assert [str(hit) for hit in scan_file(path)] == []


# --- keys in hiding: streamed, percent-encoded, base64-encoded, Azure hex, passwords ---------------------


def _pieces(text: str, size: int = 6) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("kind", ["openai key", "anthropic key", "google api key", "high-entropy string"])
def test_a_key_streamed_in_six_character_deltas_is_found_in_the_joined_text(kind: str) -> None:
    secret = SAMPLES[kind]
    chunks = [{"choices": [{"delta": {"content": piece}}]} for piece in ["Here: ", *_pieces(secret), "."]]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    hit = _one(scan_cassette_data(_cassette(_interaction(response_body={"string": stream})), where="c"))
    last = len(chunks) - 1
    assert (hit.location, hit.kind) == (
        f"interaction 0 › response.body › content deltas joined (events 0-{last})",
        kind,
    )
    assert hit.why.endswith("found in the 'content' pieces of the stream joined"), hit.why


def test_a_key_streamed_in_tool_call_argument_deltas_is_found() -> None:
    secret = SAMPLES["anthropic key"]
    arguments = json.dumps({"token": secret})
    events = [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}}
        for p in _pieces(arguments)
    ]
    hit = _one(
        scan_cassette_data(_cassette(_interaction(response_body={"string": _sse(*events)})), where="c")
    )
    assert hit.kind == "anthropic key"
    assert "partial_json deltas joined" in hit.location


def test_deltas_of_an_ordinary_stream_joined_are_no_hit() -> None:
    path = CASSETTES / "openai-chat" / "text_basic.yaml"
    assert scan_file(path) == []


def test_a_key_percent_encoded_character_by_character_is_found_and_scrubbed() -> None:
    key = SAMPLES["openai key"]
    encoded = "".join(f"%{ord(c):02X}" for c in key)
    item = _interaction(request_uri=f"https://api.example.com/v1/chat?trace={encoded}&alt=sse")
    hit = _one(scan_cassette_data(_cassette(item), where="c"))
    assert (hit.location, hit.kind) == ("interaction 0 › request.uri", "openai key")
    assert hit.why == "matches the openai key pattern; percent-encoded"
    mixed = "".join(f"%{ord(c):02x}" if i % 2 else c for i, c in enumerate(key))
    item["response"]["body"] = {"string": f"echo {mixed}"}
    scrubbed = scrub_interaction(item, secrets=[key])
    assert scrubbed["request"]["uri"] == f"https://api.example.com/v1/chat?trace={URL_PLACEHOLDER}&alt=sse"
    assert scrubbed["response"]["body"]["string"] == f"echo {URL_PLACEHOLDER}"
    assert scan_cassette_data(_cassette(scrubbed), where="c") == []


@pytest.mark.parametrize("before", [b"", b" ", b"k=", b'{"k": "'])
def test_a_key_base64_encoded_in_an_id_field_is_found_and_scrubbed(before: bytes) -> None:
    import base64

    key = SAMPLES["openai key"]
    blob = base64.b64encode(before + key.encode() + b'"}').decode()
    body = json.dumps({"id": "chatcmpl-1", "tool_call_id": blob, "resp_id": blob.replace("+", "-")})
    item = _interaction(response_body={"string": body})
    hit = _one(scan_cassette_data(_cassette(item), where="c"))
    assert (hit.location, hit.kind) == ("interaction 0 › response.body › tool_call_id", "openai key")
    assert hit.why == "matches the openai key pattern; base64-encoded"
    scrubbed = scrub_interaction(item, secrets=[key])
    assert scan_cassette_data(_cassette(scrubbed), where="c") == []
    assert PLACEHOLDER in json.loads(scrubbed["response"]["body"]["string"])["tool_call_id"]


AZURE = _rand(32, "0123456789abcdef")


@pytest.mark.parametrize(
    ("place", "location"),
    [
        ({"request_headers": {"x-azure-key": [AZURE]}}, "interaction 0 › request.headers.x-azure-key"),
        ({"response_body": {"string": json.dumps({"key1": AZURE})}}, "interaction 0 › response.body › key1"),
        (
            {
                "response_body": {
                    "string": json.dumps({"error": {"message": f"Invalid subscription key {AZURE}"}})
                }
            },
            "interaction 0 › response.body › error.message",
        ),
    ],
)
def test_a_32_hex_azure_key_is_found(place: dict[str, Any], location: str) -> None:
    hit = _one(scan_cassette_data(_cassette(_interaction(**place)), where="c"))
    assert (hit.location, hit.kind) == (location, "hex key")
    assert "Azure OpenAI key" in hit.why


@pytest.mark.parametrize(
    "place",
    [
        {"request_uri": f"https://x.openai.azure.com/openai/chat?q=%7B%22api-key%22%3A%22{AZURE}%22%7D"},
        {
            "response_body": {
                "string": json.dumps({"tool_call_id": base64.b64encode(f"key={AZURE}".encode()).decode()})
            }
        },
    ],
    ids=["percent-encoded", "base64-encoded"],
)
def test_a_32_hex_azure_key_is_found_encoded_as_any_other_key(place: dict[str, Any]) -> None:
    """The hex rule is one of the key table's (recording/keys.py): it reads decoded text as the patterns do
    (it was skipped there, so the recorder could write such a key)."""
    hit = _one(scan_cassette_data(_cassette(_interaction(**place)), where="c"))
    assert hit.kind == "hex key"


def test_the_key_in_use_is_found_wherever_the_scrubber_cannot_reach_it() -> None:
    """A 32-hex key in use, streamed in pieces across deltas (no pattern, no 'key' before it): the scrubber
    cannot rewrite it, the scan finds it when told the key, and the recorder refuses to write it."""
    chunks = [
        {"choices": [{"delta": {"content": piece}}]} for piece in ["Here you go: ", *_pieces(AZURE), "."]
    ]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    item = scrub_interaction(_interaction(response_body={"string": stream}), secrets=[AZURE])
    assert scan_cassette_data(_cassette(item), where="c") == []  # no pattern in it: only the key says so
    hit = _one(scan_cassette_data(_cassette(item), where="c", secrets=[AZURE]))
    assert hit.kind == "the key in use"
    assert "content deltas joined" in hit.location


def test_the_key_in_use_echoed_in_another_case_is_scrubbed() -> None:
    item = _interaction(response_body={"string": f"echo {AZURE.upper()} and {AZURE}"})
    scrubbed = scrub_interaction(item, secrets=[AZURE])
    assert scrubbed["response"]["body"]["string"] == f"echo {PLACEHOLDER} and {PLACEHOLDER}"
    assert scan_cassette_data(_cassette(scrubbed), where="c", secrets=[AZURE]) == []


def test_hex_in_urls_hashes_boundaries_and_ids_is_no_hex_key() -> None:
    body = json.dumps(
        {
            "id": AZURE,
            "request_id": AZURE,
            "text": f"see https://apnews.com/article/{AZURE}?utm=1, sha256 {AZURE}, trace {AZURE}",
        }
    )
    item = _interaction(
        request_headers={"content-type": [f"multipart/form-data; boundary={AZURE}"], "x-request-id": [AZURE]},
        response_body={"string": body},
    )
    assert scan_cassette_data(_cassette(item), where="c") == []


@pytest.mark.parametrize("field", ["password", "passwd", "secret_key", "private_key", "session_token"])
def test_password_fields_are_found_and_scrubbed(field: str) -> None:
    item = _interaction(
        request_body=json.dumps({"user": "bob", field: "hunter2-but-longer"}),
        response_body={"string": f"user=bob&{field}=hunter2-but-longer"},
    )
    hits = scan_cassette_data(_cassette(item), where="c")
    assert [h.kind for h in hits] == [f"secret field {field!r}", "secret field"]
    scrubbed = scrub_interaction(item)
    assert json.loads(scrubbed["request"]["body"])[field] == PLACEHOLDER
    assert scrubbed["response"]["body"]["string"] == f"user=bob&{field}={URL_PLACEHOLDER}"
    assert scan_cassette_data(_cassette(scrubbed), where="c") == []


RECORDINGS = Path(__file__).resolve().parents[2] / "shared" / "recordings"


@pytest.mark.skipif(not RECORDINGS.is_dir(), reason="needs ../shared/recordings")
def test_third_party_cookies_and_account_headers_are_reported_then_dropped_on_import(tmp_path: Path) -> None:
    import yaml

    from helix_conformance.importing import import_recording

    source = RECORDINGS / "openai" / "test_complex_agent_run.yaml"
    kinds = {h.location.rsplit(".", 1)[-1] for h in scan_file(source)}
    assert {"cookie", "openai-organization", "openai-project"} <= kinds
    imported = tmp_path / "imported.yaml"
    imported.write_text(import_recording(source), encoding="utf-8")
    assert scan_file(imported) == []
    headers = {
        name
        for item in yaml.safe_load(imported.read_text(encoding="utf-8"))["interactions"]
        for side in ("request", "response")
        for name in item[side]["headers"]
    }
    assert not headers & SCRUBBED_HEADERS


# --- what is not a secret: media, compressed and encoded bodies ----------------------------------------------


def _media(kind: str) -> bytes:
    noise = bytes(_rng.randrange(256) for _ in range(600))
    return {
        "png": b"\x89PNG\r\n\x1a\n" + noise,
        "jpeg": b"\xff\xd8\xff\xe0" + noise,
        "wav": b"RIFF" + noise,
        "mp3": b"ID3" + noise,
        "pdf": b"%PDF-1.7" + noise,
        "gzip": gzip.compress(noise),
        "mp4": b"\x00\x00\x00\x18ftypmp42" + noise,
    }[kind]


MEDIA = ("png", "jpeg", "wav", "mp3", "pdf", "gzip", "mp4")


@pytest.mark.parametrize("kind", MEDIA)
@pytest.mark.parametrize(
    "shape",
    [
        lambda b: {"input_audio": {"data": b, "format": "wav"}},
        lambda b: {"data": [{"b64_json": b}]},
        lambda b: {"inline_data": {"mime_type": "image/png", "data": b}},
        lambda b: {"image": {"source": {"bytes": b}}},
        lambda b: {"output": [{"type": "image_generation_call", "result": b}]},
        lambda b: {"anything": b[:120]},
    ],
)
def test_base64_media_and_compressed_data_are_not_secrets(kind: str, shape: Any) -> None:
    import base64

    blob = base64.b64encode(_media(kind)).decode()
    item = _interaction(request_body=json.dumps(shape(blob)))
    assert scan_cassette_data(_cassette(item), where="c") == []


def test_a_random_token_beside_media_is_still_found() -> None:
    import base64

    blob = base64.b64encode(_media("png")).decode()
    token = SAMPLES["high-entropy string"]
    item = _interaction(request_body=json.dumps({"image": blob, "note": f"x {token} y"}))
    hit = _one(scan_cassette_data(_cassette(item), where="c"))
    assert (hit.location, hit.kind) == ("interaction 0 › request.body › note", "high-entropy string")


def test_a_binary_body_is_searched_for_key_patterns_only() -> None:
    key = SAMPLES["groq key"]
    noise = bytes(_rng.randrange(128, 256) for _ in range(400))
    item = _interaction(response_body={"string": noise + _rand(40).encode() + noise})
    assert scan_cassette_data(_cassette(item), where="c") == []
    item = _interaction(response_body={"string": noise + f" {key} ".encode() + noise})
    hit = _one(scan_cassette_data(_cassette(item), where="c"))
    assert hit.kind == "groq key"
