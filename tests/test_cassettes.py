"""The bundled cassettes: authored, each provider's exact wire format (validated by its SDK), never stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from gemini_sdk import skip_when_the_sdk_predates

from helix_conformance.authoring import main as authoring_main
from helix_conformance.profiles import KNOWN_PROFILES, get_profile
from helix_conformance.profiles.openai_chat_stream import event_data
from helix_conformance.replay.cassette import CassetteError, load_cassette
from helix_conformance.scenarios import get_scenario, scenarios_for

ROOT = Path(__file__).resolve().parents[1]
CASSETTES = sorted((ROOT / "cassettes" / "openai-chat").glob("*.yaml"))
ALL_CASSETTES = sorted((ROOT / "cassettes").glob("*/*.yaml"))
SDK_OF = {
    "openai-chat": "openai",
    "anthropic-messages": "anthropic",
    "gemini": "google.genai",
    "openai-responses": "openai",
    "bedrock-converse": "botocore",
    "cohere-chat": "cohere",
}
SHARED_RECORDING = (
    ROOT.parent / "shared" / "recordings" / "openai" / "test_run_stream_sync_streams_real_model.yaml"
)
LIVE_CHUNK_KEYS = [
    "id",
    "object",
    "created",
    "model",
    "service_tier",
    "system_fingerprint",
    "choices",
    "usage",
    "obfuscation",
]


def _events(path: Path) -> list[bytes]:
    profile = get_profile(path.parent.name)
    return [e for i in load_cassette(path).interactions for e in profile.split_events(i.body)]


@pytest.mark.parametrize("profile", KNOWN_PROFILES)
def test_every_scenario_with_a_recorded_stream_has_a_cassette_and_no_orphans(profile: str) -> None:
    wanted = {s.id for s in scenarios_for(profile) if s.recorded_exchanges}
    assert {p.stem for p in (ROOT / "cassettes" / profile).glob("*.yaml")} == wanted


@pytest.mark.parametrize("path", ALL_CASSETTES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_cassette_is_authored_and_every_event_validates_against_the_sdk(path: Path) -> None:
    pytest.importorskip(SDK_OF[path.parent.name])
    cassette = load_cassette(path)
    assert cassette.provenance["kind"] == "authored"
    assert cassette.provenance["scenario"] == path.stem
    assert cassette.provenance["profile"] == path.parent.name
    profile = get_profile(path.parent.name)
    events = _events(path)
    assert events
    if path.parent.name == "gemini":
        skip_when_the_sdk_predates(b"".join(events))
    for event in events:
        profile.validate_event(event)  # raises on any departure from the SDK's stream event types


def test_authored_chunks_have_the_live_field_order() -> None:
    """The live order, ``usage`` included only where the scenario's request asked for usage (OpenAI sends the
    field, and the usage chunk, only then: ``stream_options.include_usage``)."""
    for path in CASSETTES:
        precondition = get_scenario(path.stem).precondition("openai-chat")
        asked = precondition is not None and "include_usage" in precondition.needs
        live_keys = [k for k in LIVE_CHUNK_KEYS if asked or k != "usage"]
        for event in _events(path):
            payload = event_data(event)  # also under the sse_framing quirk (CR lines, id:/event: lines)
            if payload is None:  # an SSE comment line (the sse_comments quirk)
                continue
            if payload != "[DONE]" and '"error"' not in payload[:10]:
                chunk = json.loads(payload)
                if (
                    chunk.get("object") == ""
                ):  # Azure's prompt-filter chunk (azure_first_chunk): its own order
                    continue
                # RES-12's unknown field, OpenRouter's `error` on a chunk (compat_error_after_finish) and
                # Perplexity's search results (compat_completion_done_object)
                extras = ("error", "search_results")
                keys = [k for k in chunk if not k.startswith("x_helix_") and k not in extras]
                assert keys == live_keys, path.name


def test_live_recording_still_has_the_field_order_we_author() -> None:
    if not SHARED_RECORDING.exists():
        pytest.skip(f"the shared recordings are not beside the project ({SHARED_RECORDING})")
    body = yaml.safe_load(SHARED_RECORDING.read_text())["interactions"][0]["response"]["body"]["string"]
    first = body.split("\n\n")[0][len("data: ") :]
    assert list(json.loads(first)) == LIVE_CHUNK_KEYS


def test_cassettes_match_what_the_profile_renders(capsys: pytest.CaptureFixture[str]) -> None:
    assert authoring_main(["--check", "--out", str(ROOT / "cassettes")]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("interactions: [\n  - {", "not valid YAML"),
        ("version: 1\n", "no 'interactions' list"),
        ("interactions: []\nversion: 1\n", "no provenance block"),
        ("provenance: {kind: authored}\ninteractions:\n- request: {method: POST}\n", "is malformed"),
    ],
)
def test_corrupt_cassettes_give_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError, match=message) as info:
        load_cassette(path)
    assert str(path) in str(info.value)


def test_missing_cassette_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="cassette not found"):
        load_cassette(tmp_path / "nope.yaml")


def test_cassettes_stay_loadable_by_vcrpy() -> None:
    """Our provenance block is an extra top-level key; vcrpy (and pytest-recording) must still read the files."""
    serialize = pytest.importorskip("vcr.serialize")
    yamlserializer = pytest.importorskip("vcr.serializers.yamlserializer")
    for path in ALL_CASSETTES:
        requests, responses = serialize.deserialize(path.read_text(encoding="utf-8"), yamlserializer)
        assert len(requests) == len(responses) >= 1
        assert responses[0]["status"]["code"] == 200
