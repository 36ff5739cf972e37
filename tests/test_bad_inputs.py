"""Malformed input to the gate: each gets one line naming the file and what is wrong, never a crash, a hang or
the adapter's blame. Input to the run is a usage error (pytest exit 4, CLI exit 2); a bad cassette met while
running is a "cassette problem" failure of the scenario it belongs to."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from plugin_runs import assert_no_crash, output, run

from helix_conformance._yaml import MAX_DEPTH, YamlRefused, load_yaml_text
from helix_conformance.baseline import BaselineError, load_baseline
from helix_conformance.importing.common import ImportFailure
from helix_conformance.importing.vcrpy import load_yaml
from helix_conformance.replay.cassette import CassetteError, load_cassette
from helix_conformance.replay.interactions import CassetteCache
from helix_conformance.scenarios import SCENARIOS

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"
DEEP = "interactions: " + "[" * 100_000 + "]" * 100_000 + "\n"
"""Nested 100,000 deep: libyaml's recursive composer overflows the C stack on it (a segfault)."""
BOMB = (
    "".join(
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" if i else "l0: &l0 [lol, lol, lol, lol, lol]\n"
        for i in range(10)
    )
    + "interactions: []\n"
)
"""Billion laughs: ten lines that expand to 5 x 9^9 strings."""


def _cli(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own: a segfault there fails this test instead of killing pytest."""
    return subprocess.run(
        [sys.executable, "-m", "helix_conformance", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def _copy(profile: str, scenario: str, root: Path, name: str | None = None) -> Path:
    target = root / profile / f"{name or scenario}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(CASSETTES / profile / f"{scenario}.yaml", target)
    return target


# --- YAML that crashes or hangs a naive loader ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (DEEP, f"nested more than {MAX_DEPTH} levels deep"),
        (BOMB, "anchors or aliases"),
        ("a: &x 1\nb: 2\n", "anchors or aliases"),
        ("a: [1, 2\n", "is not valid YAML"),
    ],
)
def test_the_loader_refuses_deep_nesting_aliases_and_bad_syntax_in_one_line(text: str, problem: str) -> None:
    started = time.monotonic()
    with pytest.raises(YamlRefused) as refused:
        load_yaml_text(text)
    assert time.monotonic() - started < 5
    assert problem in str(refused.value)
    assert "\n" not in str(refused.value)


def test_our_own_cassettes_are_written_without_anchors() -> None:
    from helix_conformance.replay.cassette import dump_cassette

    shared = ["text/event-stream"]
    text = dump_cassette({"kind": "authored"}, [{"a": shared}, {"b": shared}])
    assert "&" not in text
    assert "*" not in text
    assert load_yaml_text(text)["interactions"] == [{"a": shared}, {"b": shared}]


@pytest.mark.parametrize(
    ("content", "problem"), [(DEEP, "nested more than"), (BOMB, "anchors or aliases")], ids=["deep", "bomb"]
)
def test_a_hostile_cassette_is_a_cassette_error_naming_the_file(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "text_basic.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CassetteError, match=problem) as caught:
        load_cassette(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("content", "problem"), [(DEEP, "nested more than"), (BOMB, "anchors or aliases")], ids=["deep", "bomb"]
)
def test_scan_and_replay_commands_refuse_a_hostile_cassette_without_crashing(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(content, encoding="utf-8")
    scanned = _cli("scan", path)
    assert scanned.returncode == 1, scanned
    _one_line_error(scanned, str(path), problem)
    replayed = _cli("replay", "--adapter", "openai", "--cassette", path)
    assert replayed.returncode == 2, replayed
    assert "Traceback" not in replayed.stderr
    assert str(path) in replayed.stderr
    assert problem in replayed.stderr


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (DEEP, "nested more than"),
        (BOMB, "anchors or aliases"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary file"),
        (b"version: 1\nentries: \xff\xfe\n", "not UTF-8"),
    ],
)
def test_a_hostile_baseline_is_a_baseline_error_naming_the_file(
    tmp_path: Path, content: str | bytes, problem: str
) -> None:
    path = tmp_path / "baseline.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError, match=problem) as caught:
        load_baseline(path, (s.id for s in SCENARIOS))
    assert str(path) in str(caught.value)


def test_a_hostile_recording_to_import_is_an_import_failure(tmp_path: Path) -> None:
    path = tmp_path / "foreign.yaml"
    path.write_text(DEEP, encoding="utf-8")
    with pytest.raises(ImportFailure, match="nested more than") as caught:
        load_yaml(path)
    assert str(path) in str(caught.value)


def test_headers_given_as_a_list_are_a_cassette_error(tmp_path: Path) -> None:
    path = _copy("openai-chat", "text_basic", tmp_path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["interactions"][0]["response"]["headers"] = ["content-type: text/event-stream"]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(CassetteError, match="response headers must be a mapping of name to values, got list"):
        load_cassette(path)


def test_json_nested_deep_in_an_sse_event_is_a_cassette_problem(tmp_path: Path) -> None:
    path = _copy("openai-chat", "text_basic", tmp_path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    data["interactions"][0]["response"]["body"]["string"] = f"data: {deep}\n\ndata: [DONE]\n\n"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(CassetteError, match="nested too deeply"):
        CassetteCache(tmp_path).get("openai-chat", "text_basic")


# --- a cassette that does not stand for its scenario -----------------------------------------------------


def _truncated(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    body = data["interactions"][0]["response"]["body"]
    body["string"] = body["string"][: len(body["string"]) // 2]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")


@pytest.mark.parametrize("profile", ["openai-chat", "anthropic-messages", "gemini"])
def test_a_truncated_cassette_is_a_cassette_problem(tmp_path: Path, profile: str) -> None:
    _truncated(_copy(profile, "text_basic", tmp_path))
    with pytest.raises(CassetteError, match=f"interaction 0: it is not a complete {profile} stream"):
        CassetteCache(tmp_path).get(profile, "text_basic")


def test_another_scenarios_cassette_is_a_cassette_problem(tmp_path: Path) -> None:
    _copy("openai-chat", "tool_call", tmp_path, name="text_basic")
    with pytest.raises(CassetteError, match=r"is for scenario 'tool_call'.*not 'text_basic'"):
        CassetteCache(tmp_path).get("openai-chat", "text_basic")


def test_another_profiles_cassette_is_a_cassette_problem(tmp_path: Path) -> None:
    path = tmp_path / "openai-chat" / "text_basic.yaml"
    path.parent.mkdir()
    shutil.copy(CASSETTES / "gemini" / "text_basic.yaml", path)
    with pytest.raises(CassetteError, match="is for profile 'gemini'"):
        CassetteCache(tmp_path).get("openai-chat", "text_basic")


def test_an_intentionally_truncated_scenario_still_loads() -> None:
    """truncated_stream's script has no finish: its cassette ends early on purpose (ERR-04)."""
    for profile in ("openai-chat", "anthropic-messages", "gemini"):
        assert CassetteCache(CASSETTES).get(profile, "truncated_stream").interactions


@pytest.mark.parametrize("damage", ["truncated", "other scenario", "deep"])
def test_a_bad_cassette_fails_its_scenario_as_a_cassette_problem_not_the_adapter(
    adapters: pytest.Pytester, tmp_path: Path, damage: str
) -> None:
    root = tmp_path / "cassettes"
    shutil.copytree(CASSETTES / "openai-chat", root / "openai-chat")
    path = root / "openai-chat" / "text_basic.yaml"
    if damage == "truncated":
        _truncated(path)
    elif damage == "other scenario":
        shutil.copy(CASSETTES / "openai-chat" / "tool_call.yaml", path)
    else:
        path.write_text(DEEP, encoding="utf-8")
    result = run(adapters, "--adapter=openai", f"--helix-cassette-dir={root}", "-k", "text_basic and RES-")
    assert_no_crash(result)
    text = output(result)
    failures = [line for line in result.outlines if line.startswith("FAILED")]
    assert failures
    assert text.count(f"cassette problem: cassette {path}") >= len(failures), text


# --- options -------------------------------------------------------------------------------------------------


def _usage_error(result: pytest.RunResult, *needles: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output(result)
    text = output(result)
    assert "Traceback" not in text
    assert "INTERNALERROR" not in text
    errors = [line for line in result.errlines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.errlines
    for needle in needles:
        assert needle in errors[0], errors[0]


def test_a_missing_cassette_dir_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    _usage_error(run(pytester, "--adapter=openai", f"--helix-cassette-dir={missing}"), str(missing))


def test_a_cassette_dir_that_is_a_file_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    file = tmp_path / "cassettes.yaml"
    file.write_text("x: 1\n", encoding="utf-8")
    _usage_error(run(pytester, "--adapter=openai", f"--helix-cassette-dir={file}"), "not a directory")


def test_a_dangling_symlink_in_the_cassette_dir_is_a_usage_error(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = tmp_path / "cassettes"
    (root / "openai-chat").mkdir(parents=True)
    link = root / "openai-chat" / "text_basic.yaml"
    os.symlink(tmp_path / "gone.yaml", link)
    _usage_error(
        run(pytester, "--adapter=openai", f"--helix-cassette-dir={root}"),
        str(link),
        "symbolic link to nothing",
    )


def test_a_dangling_symlink_found_while_running_is_a_cassette_error(tmp_path: Path) -> None:
    (tmp_path / "openai-chat").mkdir()
    os.symlink(tmp_path / "gone.yaml", tmp_path / "openai-chat" / "text_basic.yaml")
    with pytest.raises(CassetteError, match="symbolic link to nothing"):
        CassetteCache(tmp_path, CASSETTES).get("openai-chat", "text_basic")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e308", "0", "-1", "soon"])
def test_a_timeout_that_is_not_a_sane_number_of_seconds_is_a_usage_error(
    pytester: pytest.Pytester, value: str
) -> None:
    _usage_error(
        run(pytester, "--adapter=openai", f"--helix-timeout={value}"), "--helix-timeout", repr(value)
    )


@pytest.mark.parametrize(
    "option", ["--helix-report={}/report.json", "--helix-badge={}/badge.json", "--helix-baseline={}/b.yaml"]
)
def test_an_output_path_that_cannot_be_written_is_a_usage_error_before_anything_runs(
    pytester: pytest.Pytester, tmp_path: Path, option: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n", encoding="utf-8")
    args = ["--adapter=openai", option.format(blocker)]
    if option.startswith("--helix-baseline"):
        args.append("--helix-write-baseline")
    started = time.monotonic()
    result = run(pytester, *args)
    _usage_error(result, str(blocker), "cannot be written", "not a directory")
    assert "passed" not in output(result)
    assert time.monotonic() - started < 60


def test_a_report_path_that_is_a_directory_is_a_usage_error(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    (tmp_path / "out.json").mkdir()
    _usage_error(
        run(pytester, "--adapter=openai", f"--helix-report={tmp_path / 'out.json'}"), "is a directory"
    )


def test_report_folders_that_do_not_exist_yet_are_fine(pytester: pytest.Pytester, tmp_path: Path) -> None:
    report = tmp_path / "new" / "deeper" / "report.json"
    result = run(pytester, "--adapter=openai", f"--helix-report={report}", "-k", "text_basic and RES-01")
    assert result.ret == 0, output(result)
    assert report.is_file()


# --- compressed cassette bodies -------------------------------------------------------------------------


def _encoded(path: Path, encoding: str, body: bytes | None = None) -> None:
    """The cassette's response body stored as bytes under ``content-encoding: encoding``."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    response = data["interactions"][0]["response"]
    plain = response["body"]["string"].encode("utf-8")
    response["body"]["string"] = body if body is not None else _compress(plain, encoding)
    response["headers"]["content-encoding"] = [encoding]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")


def _compress(data: bytes, encoding: str) -> bytes:
    import gzip
    import zlib

    return gzip.compress(data) if encoding == "gzip" else zlib.compress(data)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_cassette_body_is_decoded_by_its_content_encoding(tmp_path: Path, encoding: str) -> None:
    """It was read as text and refused as "not valid UTF-8 ... another provider's format?" before."""
    _encoded(_copy("openai-chat", "text_basic", tmp_path), encoding)
    cassette = CassetteCache(tmp_path).get("openai-chat", "text_basic")
    assert cassette.interactions[0].body.startswith(b"data: {")


def test_a_brotli_body_without_the_brotli_module_names_it(tmp_path: Path) -> None:
    from helix_conformance.content_encoding import _brotli

    if _brotli() is not None:
        pytest.skip("brotli is installed here: the body is decoded")
    path = _copy("openai-chat", "text_basic", tmp_path)
    _encoded(path, "br", b"\x0b\x02\x80hello\x03")
    with pytest.raises(CassetteError, match=r"content-encoding br \(brotli\).*pip install brotli") as caught:
        load_cassette(path)
    assert str(path) in str(caught.value)


def test_a_gzip_header_over_a_plain_body_is_a_cassette_problem_not_the_adapters(
    adapters: pytest.Pytester, tmp_path: Path
) -> None:
    """The adapter was blamed on NT-04 before (the header was dropped, the body served as it was)."""
    root = tmp_path / "cassettes"
    path = _copy("openai-chat", "text_basic", root)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["interactions"][0]["response"]["headers"]["content-encoding"] = ["gzip"]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(CassetteError, match="says content-encoding: gzip but its body is not gzip data"):
        load_cassette(path)
    result = run(adapters, "--adapter=openai", f"--helix-cassette-dir={root}", "-k", "text_basic and NT-04")
    assert_no_crash(result)
    assert f"cassette problem: cassette {path}" in output(result)


# --- YAML that says two things at once, files that are not files ---------------------------------------


def test_a_key_twice_in_a_cassette_is_a_cassette_error_with_its_lines(tmp_path: Path) -> None:
    """YAML loaders keep the last value silently: the adapter was judged against half a cassette before."""
    path = _copy("openai-chat", "text_basic", tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  response:\n", "  response:\n    status: {code: 500, message: x}\n", 1))
    with pytest.raises(
        CassetteError, match=r"has the key 'status' twice in one mapping \(lines \d+ and \d+\)"
    ):
        load_cassette(path)


def test_a_key_twice_in_a_baseline_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """It was last-wins, so the entry meant nothing and the run failed (exit 1) on a stale baseline."""
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text(
        "version: 1\nentries:\n- clause: RES-01\n  clause: RES-06\n  scenario: text_basic\n  profile: openai-chat\n"
        "  reason: known\n",
        encoding="utf-8",
    )
    _usage_error(
        run(pytester, "--adapter=openai", f"--helix-baseline={baseline}", "-k", "text_basic and RES-0"),
        str(baseline),
        "has the key 'clause' twice",
        "lines 3 and 4",
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_as_the_baseline_is_a_usage_error_not_a_hang(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    fifo = tmp_path / "baseline.yaml"
    os.mkfifo(fifo)
    started = time.monotonic()
    _usage_error(
        run(pytester, "--adapter=openai", f"--helix-baseline={fifo}"), str(fifo), "not a regular file"
    )
    assert time.monotonic() - started < 120


# --- imports --------------------------------------------------------------------------------------------

DEEP_JSON = '{"a":' * 100_000 + "1" + "}" * 100_000


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("deep.chunks.txt", DEEP_JSON + "\n", "line 1 is JSON nested too deeply to read"),
        ("deep.sse", f"data: {DEEP_JSON}\n\n", "the first data line is JSON nested too deeply to read"),
        ("deep.json", DEEP_JSON, "is JSON nested too deeply to read"),
    ],
    ids=["chunks", "sse", "json"],  # not the content: pytest exports the test's id to a child's environment
)
def test_importing_json_nested_100000_deep_is_one_line(
    tmp_path: Path, name: str, content: str, problem: str
) -> None:
    """A RecursionError traceback before."""
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    result = _cli("import", "-o", tmp_path / "out", "--profile", "openai-chat", "--status", "400", path)
    assert result.returncode == 2, result
    _one_line_error(result, str(path), problem)


@pytest.mark.parametrize("value", [".nan", "2024-01-01", "!!binary aGk="])
def test_a_pydantic_ai_parsed_body_that_is_not_json_is_refused(tmp_path: Path, value: str) -> None:
    """json.dumps wrote NaN into the body (or a traceback for a date) before: a body no provider sent."""
    path = tmp_path / "cassette.yaml"
    path.write_text(
        "interactions:\n- request:\n    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n"
        "    headers: {}\n    parsed_body: {model: gpt-4o}\n  response:\n    status: {code: 200, message: OK}\n"
        f"    headers: {{}}\n    parsed_body: {{usage: {{tokens: {value}}}}}\nversion: 1\n",
        encoding="utf-8",
    )
    result = _cli("import", "-o", tmp_path / "out", path)
    assert result.returncode == 2, result
    _one_line_error(result, str(path), "parsed_body is not JSON", "parsed_body.usage.tokens")


def test_a_chunks_file_holding_framed_sse_is_imported_by_its_content(tmp_path: Path) -> None:
    """It was refused by its name (a .chunks.txt holds bare payloads) though the content says SSE."""
    chunk = '{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{}}]}'
    path = tmp_path / "stream.chunks.txt"
    path.write_text(f"data: {chunk}\n\ndata: [DONE]\n\n", encoding="utf-8")
    result = _cli("import", "-o", tmp_path / "out", path)
    assert result.returncode == 0, result
    written = (tmp_path / "out" / "stream.chunks.yaml").read_text(encoding="utf-8")
    assert "holds framed server-sent events: kept verbatim" in written


# --- options --------------------------------------------------------------------------------------------


def test_replay_with_a_timeout_that_is_no_number_of_seconds_is_one_line() -> None:
    """A raw ValueError traceback before."""
    result = _cli("replay", "--adapter", "openai", "text_basic", "--timeout", "nan")
    assert result.returncode == 2, result
    _one_line_error(result, "--timeout", "'nan'")


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("HELIX_REPORT", "report.txt", "cannot tell the format"),
        ("HELIX_CASSETTE_DIR", "no-such-dir", "no such directory"),
    ],
)
def test_an_option_set_in_the_environment_is_named_by_its_variable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, problem: str
) -> None:
    """The error named --helix-report / --helix-cassette-dir, which the user never typed."""
    monkeypatch.setenv(variable, value)
    _usage_error(run(pytester, "--adapter=openai"), f"{variable}={value} (environment variable)", problem)
