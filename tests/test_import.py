"""``helix-conformance import``: the three foreign formats become loadable cassettes; bad input is one line."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helix_conformance.cli import main
from helix_conformance.importing.recorded import SHARED_RECORDINGS
from helix_conformance.replay.cassette import load_cassette

CHUNK = {"id": "c1", "object": "chat.completion.chunk", "created": 1770000000, "model": "m-1", "choices": []}


def _import(tmp_path: Path, name: str, content: str | bytes, *extra: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / name
    source.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = tmp_path / "out"
    assert main(["import", str(source), "--out", str(out), *extra]) == 0
    (written,) = out.glob("*.yaml")
    return written


def _vcr(response: dict[str, object], request: dict[str, object] | None = None) -> str:
    request = request or {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions", "body": None}
    return yaml.safe_dump({"interactions": [{"request": request, "response": response}], "version": 1})


def test_pydantic_ai_parsed_bodies_become_json(tmp_path: Path) -> None:
    text = _vcr(
        {
            "status": {"code": 404, "message": "Not Found"},
            "parsed_body": {"error": {"code": "model_not_found"}},
        },
        {
            "method": "POST",
            "uri": "https://x/v1/chat/completions",
            "parsed_body": {"model": "m", "stream": True},
        },
    )
    path = _import(tmp_path, "case.yaml", text, "--repo", "pydantic/pydantic-ai", "--commit", "abc1234")
    cassette = load_cassette(path)
    assert cassette.provenance["kind"] == "recorded"
    assert cassette.provenance["format"] == "pydantic-ai"
    assert cassette.provenance["source"] == {
        "repository": "pydantic/pydantic-ai",
        "path": "case.yaml",
        "commit": "abc1234",
    }
    assert json.loads(cassette.interactions[0].body) == {"error": {"code": "model_not_found"}}
    assert json.loads(cassette.interactions[0].request_body or "") == {"model": "m", "stream": True}
    assert cassette.provenance["model"] == "m"


def test_raw_vcrpy_gzip_bodies_are_decompressed_and_secrets_dropped(tmp_path: Path) -> None:
    sse = 'data: {"type":"ping"}\n\n'
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {
            "Content-Encoding": ["gzip"],
            "Content-Type": ["text/event-stream"],
            "Set-Cookie": ["s=1"],
            "Date": ["Tue, 03 Feb 2026 10:00:00 GMT"],
        },
        "body": {"string": gzip.compress(sse.encode())},
    }
    request = {
        "method": "POST",
        "uri": "https://g/v1beta/models/x:streamGenerateContent?alt=sse&key=AIzaSECRET",
        "body": "{}",
        "headers": {"Authorization": ["Bearer sk-secret"], "Accept": ["*/*"]},
    }
    path = _import(tmp_path, "raw.yaml", _vcr(response, request))
    text = path.read_text()
    assert "sk-secret" not in text
    assert "AIzaSECRET" not in text
    assert "s=1" not in text
    cassette = load_cassette(path)
    assert cassette.interactions[0].body == sse.encode()
    assert "content-encoding" not in cassette.interactions[0].headers
    assert cassette.provenance["format"] == "vcrpy"
    assert cassette.provenance["recorded"] == "2026-02-03"
    assert cassette.provenance["source"] == {"file": "raw.yaml"}


@pytest.mark.parametrize(
    ("payload", "framed_start", "framed_end"),
    [
        (CHUNK, "data: {", "data: [DONE]\n\n"),
        ({"type": "message_start", "message": {"model": "claude"}}, "event: message_start\ndata: {", "}\n\n"),
        ({"candidates": [], "modelVersion": "gemini-x"}, "data: {", "}\r\n\r\n"),
    ],
    ids=["openai-chat", "anthropic", "gemini"],
)
def test_vercel_chunks_get_their_provider_framing_back(
    tmp_path: Path, payload: dict[str, object], framed_start: str, framed_end: str
) -> None:
    path = _import(tmp_path, "fixture.chunks.txt", json.dumps(payload) + "\n")
    cassette = load_cassette(path)
    body = cassette.interactions[0].body.decode()
    assert body.startswith(framed_start)
    assert body.endswith(framed_end)
    assert cassette.interactions[0].headers["content-type"].startswith("text/event-stream")
    assert any("framed" in note for note in cassette.provenance["notes"])
    assert path.name == "fixture.chunks.yaml"


def test_vercel_sse_is_kept_verbatim_and_json_bodies_need_a_status(tmp_path: Path) -> None:
    sse = f"data: {json.dumps(CHUNK)}\n\n: keep-alive\n\ndata: [DONE]\n\n"
    assert load_cassette(_import(tmp_path, "a.sse", sse)).interactions[0].body == sse.encode()
    body = '{"error": {"message": "quota", "type": "insufficient_quota"}}'
    path = _import(tmp_path / "x", "e.json", body, "--profile", "openai-chat", "--status", "429")
    assert load_cassette(path).interactions[0].status == 429
    google = '{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}'
    path = _import(tmp_path / "y", "g.json", google, "--profile", "gemini")
    assert load_cassette(path).interactions[0].status == 429


def test_imported_cassettes_stay_loadable_by_vcrpy(tmp_path: Path) -> None:
    serialize = pytest.importorskip("vcr.serialize")
    yamlserializer = pytest.importorskip("vcr.serializers.yamlserializer")
    path = _import(tmp_path, "fixture.chunks.txt", json.dumps(CHUNK) + "\n")
    requests, responses = serialize.deserialize(path.read_text(encoding="utf-8"), yamlserializer)
    assert len(requests) == len(responses) == 1


@pytest.mark.skipif(not SHARED_RECORDINGS.exists(), reason="the shared recordings are not beside the project")
@pytest.mark.parametrize(
    "name", ["anthropic/test_tools.yaml", "google/test_google_model_stream.yaml"], ids=["gzip", "crlf"]
)
def test_streamed_bodies_keep_every_byte(tmp_path: Path, name: str) -> None:
    source = SHARED_RECORDINGS / name
    out = tmp_path / "out.yaml"
    assert main(["import", str(source), "--out", str(out)]) == 0
    raw = yaml.safe_load(source.read_text())["interactions"]
    for original, imported in zip(raw, load_cassette(out).interactions):
        body = original["response"]["body"]["string"]
        expected = gzip.decompress(body) if isinstance(body, bytes) else body.encode()
        assert imported.body == expected


@pytest.mark.parametrize(
    ("name", "content", "extra", "message"),
    [
        ("bad.yaml", "interactions: [\n  - {", (), "is not valid YAML"),
        ("empty.yaml", "version: 1\n", (), "has no 'interactions' list"),
        ("none.yaml", "interactions: []\n", (), "empty 'interactions' list"),
        (
            "nostatus.yaml",
            "interactions:\n- request: {method: POST, uri: u}\n  response: {}\n",
            (),
            "status.code",
        ),
        (
            "zip.yaml",
            _vcr(
                {
                    "status": {"code": 200},
                    "headers": {"Content-Encoding": ["gzip"]},
                    "body": {"string": b"\x1f\x8bnot gzip"},
                }
            ),
            (),
            "content-encoding: gzip but its body is not gzip data",
        ),
        ("x.chunks.txt", '{"choices": []}\nnot json\n', (), "line 2 is not JSON"),
        ("u.chunks.txt", '{"hello": 1}\n', (), "matches no wire profile"),
        ("e.json", '{"error": {"type": "x"}}', ("--profile", "openai-chat"), "pass --status"),
        ("e2.json", '{"error": {"code": 429}}', (), "pass --profile"),
        ("notes.txt", "hello", (), "unknown recording format"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str,
    extra: tuple[str, ...],
    message: str,
) -> None:
    source = tmp_path / name
    source.write_text(content)
    assert main(["import", str(source), "--out", str(tmp_path / "out"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert str(source) in err
    assert message in err
    assert "Traceback" not in err


def test_missing_file_and_existing_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(tmp_path / "nope.yaml"), "--out", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err
    source = tmp_path / "a.chunks.txt"
    source.write_text(json.dumps(CHUNK))
    assert main(["import", str(source), "--out", str(tmp_path / "o")]) == 0
    assert main(["import", str(source), "--out", str(tmp_path / "o")]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["import", str(source), "--out", str(tmp_path / "o"), "--force"]) == 0


def test_console_script_runs(tmp_path: Path) -> None:
    source = tmp_path / "a.chunks.txt"
    source.write_text("{")
    done = subprocess.run(
        [sys.executable, "-m", "helix_conformance", "import", str(source), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("helix-conformance import: error: ")
