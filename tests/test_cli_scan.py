"""``helix-conformance scan PATH...`` as pre-commit and CI run it: exit 0 clean, 1 on a hit or a bad file, 2 on
bad input."""

from __future__ import annotations

import json
import random
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helix_conformance.cli import main

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"
KEY = (
    "sk-"
    + "proj-"
    + "".join(random.Random(7).choice(string.ascii_letters + string.digits) for _ in range(60))
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _leaky(path: Path) -> Path:
    """A copy of a bundled cassette with a key in the second SSE event's text."""
    data = yaml.safe_load((CASSETTES / "openai-chat" / "text_basic.yaml").read_text(encoding="utf-8"))
    body = data["interactions"][0]["response"]["body"]
    events = body["string"].split("\n\n")
    payload = json.loads(events[1].removeprefix("data: "))
    payload["choices"][0]["delta"]["content"] = f"here: {KEY}"
    events[1] = "data: " + json.dumps(payload)
    body["string"] = "\n\n".join(events)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_clean_directory_exits_0_and_skips_other_yaml(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shutil.copytree(CASSETTES / "anthropic-messages", tmp_path / "a")
    (tmp_path / "a" / "notes.yml").write_text("owner: me\n", encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    _leaky(tmp_path / ".hidden" / "ignored.yaml")
    code, out, _ = _run(capsys, "scan", tmp_path)
    count = len(list((CASSETTES / "anthropic-messages").glob("*.yaml")))
    assert code == 0
    assert out == f"{count} cassette(s) scanned, no secrets found, 1 other YAML file(s) skipped\n"


def test_the_bundled_cassettes_scan_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "scan", CASSETTES)
    assert (code, err) == (0, "")
    assert "no secrets found" in out


def test_a_planted_key_exits_1_naming_file_location_and_kind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    leaky = _leaky(tmp_path / "sub" / "leaky.yaml")
    shutil.copy(CASSETTES / "gemini" / "text_basic.yaml", tmp_path / "clean.yaml")
    code, out, _ = _run(capsys, "scan", tmp_path)
    assert code == 1
    assert out.splitlines() == [
        f"{leaky}: interaction 0 › response.body › event 1 › choices[0].delta.content: openai key (sk-p…(68 chars))"
        " [matches the openai key pattern]",
        "2 cassette(s) scanned, 1 secret(s) found in 1 file(s)",
    ]
    assert KEY[4:] not in out


def test_json_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    leaky = _leaky(tmp_path / "leaky.yaml")
    code, out, _ = _run(capsys, "scan", "--format", "json", leaky)
    assert code == 1
    report = json.loads(out)
    assert report["clean"] is False
    assert report["scanned"] == 1
    assert report["hits"] == [
        {
            "path": str(leaky),
            "location": "interaction 0 › response.body › event 1 › choices[0].delta.content",
            "kind": "openai key",
            "excerpt": "sk-p…(68 chars)",
            "why": "matches the openai key pattern",
        }
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("interactions: [\n  - {request: \n", "broken.yaml: is not valid YAML (while parsing"),
        ("just: a mapping\n", "broken.yaml: not a cassette (no 'interactions' list)"),
        (b"\xff\xfe\x00binary", "broken.yaml: is a binary file"),
    ],
)
def test_a_file_that_is_not_a_cassette_is_an_error_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | bytes, message: str
) -> None:
    broken = tmp_path / "broken.yaml"
    if isinstance(content, bytes):
        broken.write_bytes(content)
    else:
        broken.write_text(content, encoding="utf-8")
    shutil.copy(CASSETTES / "gemini" / "text_basic.yaml", tmp_path / "clean.yaml")
    code, out, err = _run(capsys, "scan", broken, tmp_path / "clean.yaml")
    assert code == 1
    assert err.startswith(f"error: {tmp_path}/{message}")
    assert len(err.splitlines()) == 1
    assert out == "1 cassette(s) scanned, 1 file(s) could not be scanned\n"


def test_corrupt_yaml_found_in_a_directory_is_an_error_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "broken.yml").write_text("interactions: [\n", encoding="utf-8")
    code, _, err = _run(capsys, "scan", tmp_path)
    assert code == 1
    assert f"{tmp_path / 'broken.yml'}: is not valid YAML" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("missing.yaml",), "missing.yaml: no such file or directory"),
        ((".",), "no cassettes (*.yaml, *.yml) found in ."),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    argv: tuple[str, ...],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "scan", *argv)
    assert code == 2
    assert err == f"helix-conformance scan: error: {message}\n"


def test_the_installed_command_runs_it(tmp_path: Path) -> None:
    leaky = _leaky(tmp_path / "leaky.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "helix_conformance", "scan", str(leaky)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "openai key" in done.stdout
    assert "Traceback" not in done.stderr
