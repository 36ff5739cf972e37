"""Recording live, tested end to end against the fake provider on 127.0.0.1: what gets recorded and what
stays authored, that nothing secret is written, the modes, the semantic diff, and replaying the result."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from fake_provider import FakeProvider, serve
from plugin_runs import assert_no_crash, output, run

from helix_conformance.adapters import resolve_adapter
from helix_conformance.contract import AdapterSpec
from helix_conformance.profiles import get_profile
from helix_conformance.recording.recorder import RecordOutcome, RecordSettings, record_suite
from helix_conformance.recording.scan import scan_file
from helix_conformance.recording.setup import RecordingUsageError, record_settings, scenarios_to_record
from helix_conformance.scenarios import get_scenario
from helix_conformance.scenarios.live import why_not_live
from helix_conformance.suite import missing_cassettes_problem, profile_for
from helix_conformance.testing import run_conformance

ADAPTERS = {"openai-chat": "openai", "anthropic-messages": "anthropic", "gemini": "gemini"}
KEY = "sk-proj-fAkEkEy0123456789abcdefghijklmnopqrstuvwxyzABCD"
"""The key the adapter is given: it must never reach a cassette."""
PLANTED = "sk-ant-api03-PlAnTeD0123456789abcdefghijklmnopqrstuvwxyz0123456789-AbCdEfGh"


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    yield from serve()


def _settings(fake: FakeProvider, profile: str, root: Path, mode: str = "once") -> RecordSettings:
    return RecordSettings(mode=mode, root=root, api_key=KEY, base_url=fake.base_url(profile), timeout=10)


def _record(
    fake: FakeProvider, profile_name: str, root: Path, mode: str = "once"
) -> dict[str, RecordOutcome]:
    spec = resolve_adapter(ADAPTERS[profile_name]).spec
    profile = get_profile(profile_name)
    outcomes = record_suite(
        spec,
        profile,
        scenarios_to_record(profile),
        _settings(fake, profile_name, root, mode),
        on_start=lambda scenario: setattr(fake, "current", scenario.id),
    )
    return {o.scenario: o for o in outcomes}


# --- which scenarios are live ---------------------------------------------------------------------


def test_scenarios_that_cannot_be_provoked_live_stay_authored_and_say_why() -> None:
    assert why_not_live(get_scenario("text_basic")) is None
    assert why_not_live(get_scenario("tool_call_parallel")) is None
    assert "error" in (why_not_live(get_scenario("midstream_overloaded")) or "")
    assert "quirk" in (why_not_live(get_scenario("compat_reasoning_field")) or "")
    assert "content_filter" in (why_not_live(get_scenario("stop_content_filter")) or "")
    assert "abort" in (why_not_live(get_scenario("abort_midstream")) or "")
    assert why_not_live(get_scenario("thinking_redacted"))


# --- usage errors -----------------------------------------------------------------------------------


def test_recording_needs_the_key_a_directory_and_no_workers(tmp_path: Path) -> None:
    spec = resolve_adapter("openai").spec
    profile = get_profile("openai-chat")
    assert record_settings(spec, profile, "none", None) is None
    with pytest.raises(RecordingUsageError, match="--helix-cassette-dir"):
        record_settings(spec, profile, "once", None, environ={"OPENAI_API_KEY": KEY})
    with pytest.raises(RecordingUsageError, match="OPENAI_API_KEY"):
        record_settings(spec, profile, "once", tmp_path, environ={})
    with pytest.raises(RecordingUsageError, match="-n 0"):
        record_settings(spec, profile, "once", tmp_path, parallel=True, environ={"OPENAI_API_KEY": KEY})
    with pytest.raises(RecordingUsageError, match="no HTTP"):
        record_settings(
            resolve_adapter("mock").spec, profile_for(resolve_adapter("mock").spec), "once", tmp_path
        )
    settings = record_settings(spec, profile, "new", tmp_path, environ={"OPENAI_API_KEY": f" {KEY}\n"})
    assert settings is not None
    assert settings.api_key == KEY
    assert settings.root == tmp_path


# --- recording from the fake provider ----------------------------------------------------------------


@pytest.mark.slow  # records every live scenario: the maintainer's path, rarely changed
@pytest.mark.parametrize("profile_name", sorted(ADAPTERS))
def test_every_live_scenario_is_recorded_verified_and_scrubbed(
    fake: FakeProvider, tmp_path: Path, profile_name: str
) -> None:
    fake.echo_key = True
    outcomes = _record(fake, profile_name, tmp_path)
    problems = {sid: o.message for sid, o in outcomes.items() if o.is_problem}
    assert not problems
    recorded = [sid for sid, o in outcomes.items() if o.action == "recorded"]
    authored = [sid for sid, o in outcomes.items() if o.action == "authored"]
    assert "text_basic" in recorded
    assert "tool_result_roundtrip" in recorded
    assert "tool_call_parallel" in recorded
    assert "midstream_error" in authored
    for sid in recorded:
        path = tmp_path / profile_name / f"{sid}.yaml"
        text = path.read_text()
        assert KEY not in text, f"{path} holds the key"
        assert scan_file(path) == []
        data = yaml.safe_load(text)
        provenance = data["provenance"]
        assert provenance["kind"] == "recorded"
        assert provenance["scenario"] == sid
        assert provenance["model"]
        assert provenance["recorded_at"]
        assert provenance["libraries"]["httpx"]
        assert provenance["host"] == f"127.0.0.1:{fake.port}"
        request = data["interactions"][0]["request"]
        sent = {k.lower(): v for k, v in request["headers"].items()}
        for header in ("authorization", "x-api-key", "x-goog-api-key"):
            assert KEY not in str(sent.get(header, "")), header
    roundtrip = yaml.safe_load((tmp_path / profile_name / "tool_result_roundtrip.yaml").read_text())
    assert any("PX-4471" in fact for fact in roundtrip["provenance"]["verified"])


def test_a_planted_secret_refuses_the_write_and_names_where(fake: FakeProvider, tmp_path: Path) -> None:
    fake.plant = PLANTED
    outcomes = _record(fake, "anthropic-messages", tmp_path)
    refused = outcomes["text_basic"]
    assert refused.action == "refused"
    assert "secret scan" in refused.message
    assert "interaction 0" in refused.message
    assert PLANTED not in refused.message
    assert not (tmp_path / "anthropic-messages" / "text_basic.yaml").exists()
    # Answers without text (tool calls only) carry no plant and are written (docs/recording.md: the refused
    # scenario writes nothing, the accepted ones of the same run are written); none may hold it.
    written = {path.stem for path in tmp_path.rglob("*.yaml")}
    assert written, "the accepted scenarios of the run are written"
    assert {o.scenario for o in outcomes.values() if o.action == "recorded"} == written
    for path in tmp_path.rglob("*.yaml"):
        assert "PlAnTeD" not in path.read_text(), path


def test_an_azure_key_echoed_upper_cased_is_never_written(fake: FakeProvider, tmp_path: Path) -> None:
    """Recording with a 32-hex (Azure-style) key that the provider echoes upper-cased: the scrubber and the
    scan read keys from one table (recording/keys.py), the key in use in any case, so no cassette holds it
    (one was written before: the scrubber matched the key's case only, the scan's hex rule saw no 'key')."""
    rng = random.Random(31)
    key = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    assert any(c.isalpha() for c in key)  # a case to change
    fake.plant = key.upper()
    spec = resolve_adapter("openai").spec
    profile = get_profile("openai-chat")
    settings = RecordSettings(
        mode="once", root=tmp_path, api_key=key, base_url=fake.base_url("openai-chat"), timeout=10
    )
    outcomes = record_suite(spec, profile, scenarios_to_record(profile), settings)
    assert any(o.action == "recorded" for o in outcomes)
    for path in tmp_path.rglob("*.yaml"):
        assert key not in path.read_text().lower(), path
        assert "planted " not in path.read_text() or "planted <scrubbed>" in path.read_text(), path


def test_a_live_answer_that_does_not_stand_for_the_scenario_is_refused(
    fake: FakeProvider, tmp_path: Path
) -> None:
    fake.wording = "I could not read the tool result. "
    original = get_scenario("tool_result_roundtrip")
    assert original.live_token
    # The fake keeps the authored words; only a model that ignored the tool result would drop the token.
    spec = resolve_adapter("openai").spec
    profile = get_profile("openai-chat")
    from dataclasses import replace

    blind = replace(original, live_token="TOKEN-THE-MODEL-NEVER-SAW")
    outcomes = record_suite(spec, profile, [blind], _settings(fake, "openai-chat", tmp_path))
    assert outcomes[0].action == "refused"
    assert "TOKEN-THE-MODEL-NEVER-SAW" in outcomes[0].message
    assert "tool result" in outcomes[0].message
    assert not list(tmp_path.rglob("*.yaml"))


def test_modes_never_replace_a_cassette_except_rewrite_which_prints_a_semantic_diff(
    fake: FakeProvider, tmp_path: Path
) -> None:
    first = _record(fake, "openai-chat", tmp_path, "once")
    assert first["text_basic"].action == "recorded"
    path = tmp_path / "openai-chat" / "text_basic.yaml"
    before = path.read_text()

    again = _record(fake, "openai-chat", tmp_path, "once")
    assert {o.action for o in again.values()} <= {"kept", "authored"}
    assert "once" in again["text_basic"].message

    path.unlink()
    (tmp_path / "openai-chat" / "tool_call.yaml").write_text("kept: by hand\n")
    new = _record(fake, "openai-chat", tmp_path, "new")
    assert new["text_basic"].action == "recorded"
    assert new["tool_call"].action == "kept"
    assert (tmp_path / "openai-chat" / "tool_call.yaml").read_text() == "kept: by hand\n"

    fake.wording = "Certainly, here it is in far more words than before: "
    rewritten = _record(fake, "openai-chat", tmp_path, "rewrite")
    outcome = rewritten["text_basic"]
    assert outcome.action == "rewritten"
    assert any(line.startswith("text") for line in outcome.diff), outcome.diff
    assert path.read_text() != before
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")], "no temporary file left behind"


def test_an_unreachable_provider_fails_the_scenario_without_writing(tmp_path: Path) -> None:
    spec = resolve_adapter("openai").spec
    profile = get_profile("openai-chat")
    settings = RecordSettings(mode="once", root=tmp_path, api_key=KEY, base_url="http://127.0.0.1:9/v1")
    outcomes = record_suite(spec, profile, [get_scenario("text_basic")], settings)
    assert outcomes[0].action in ("failed", "refused")
    assert not list(tmp_path.rglob("*.yaml"))


@pytest.mark.parametrize("profile_name", sorted(ADAPTERS))
def test_a_provider_answering_401_is_refused_cleanly_naming_the_status(
    fake: FakeProvider, tmp_path: Path, profile_name: str
) -> None:
    """The adapter returns an ErrorStepResult, whose exception pydantic cannot serialise: recording used to
    crash on it (PydanticSerializationError) instead of saying what the provider answered."""
    fake.refuse = 401
    spec = resolve_adapter(ADAPTERS[profile_name]).spec
    outcome = record_suite(
        spec, get_profile(profile_name), [get_scenario("text_basic")], _settings(fake, profile_name, tmp_path)
    )[0]
    assert outcome.action == "refused"
    assert outcome.message.startswith("nothing written: the provider answered HTTP 401"), outcome.message
    assert "Error" not in outcome.message.split(":")[0]
    assert KEY not in outcome.message
    assert not list(tmp_path.rglob("*.yaml"))


@pytest.mark.parametrize("profile_name", sorted(ADAPTERS))
def test_a_provider_error_event_is_refused_cleanly(
    fake: FakeProvider, tmp_path: Path, profile_name: str
) -> None:
    fake.error_event = True
    spec = resolve_adapter(ADAPTERS[profile_name]).spec
    outcome = record_suite(
        spec, get_profile(profile_name), [get_scenario("text_basic")], _settings(fake, profile_name, tmp_path)
    )[0]
    assert outcome.action == "refused"
    assert outcome.message.startswith("nothing written: the provider answered an error event ("), (
        outcome.message
    )
    assert "Serialization" not in outcome.message
    assert not list(tmp_path.rglob("*.yaml"))


# --- the way users run it ---------------------------------------------------------------------------


@pytest.mark.slow  # records against the fake provider, then replays: the maintainer's path, rarely changed
def test_pytest_records_then_replays_the_recording(
    pytester: pytest.Pytester, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    cassettes = pytester.path / "my-cassettes"
    selection = "text_basic or tool_call_parallel or tool_result_roundtrip or finish_tool"
    recorded = run(
        pytester,
        "--adapter=openai",
        "--helix-record-mode=once",
        f"--helix-cassette-dir={cassettes}",
        f"--helix-record-base-url={fake.base_url('openai-chat')}",
        "-p",
        "no:xdist",
        "-k",
        selection,
    )
    text = output(recorded)
    assert_no_crash(recorded)
    assert recorded.ret == 0, text
    assert "helix-record-mode='once' (cli)" in text
    assert "recorded  text_basic" in text
    summary = next(line for line in text.splitlines() if line.startswith("recording: "))
    assert "midstream" not in text, "only the scenarios selected with -k are recorded"
    assert "recorded" in summary, summary
    assert (cassettes / "openai-chat" / "text_basic.yaml").exists()
    assert KEY not in (cassettes / "openai-chat" / "text_basic.yaml").read_text()

    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run(
        pytester, "--adapter=openai", f"--helix-cassette-dir={cassettes}", "-p", "no:xdist", "-k", selection
    )
    assert replayed.ret == 0, output(replayed)
    assert str(cassettes) in output(replayed)


def test_pytest_recording_without_a_key_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    result = run(pytester, "--adapter=openai", "--helix-record-mode=new", f"--helix-cassette-dir={tmp_path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "OPENAI_API_KEY" in output(result)
    assert "Traceback" not in output(result)


@pytest.mark.slow  # a recording session: the maintainer's path, rarely changed
def test_pytest_recording_refusal_fails_the_run(
    pytester: pytest.Pytester, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyFakeFakeFakeFakeFakeFakeFake12345")
    fake.plant = PLANTED
    cassettes = pytester.path / "c"
    result = run(
        pytester,
        "--adapter=gemini",
        "--helix-record-mode=once",
        f"--helix-cassette-dir={cassettes}",
        f"--helix-record-base-url={fake.base_url('gemini')}",
        "-p",
        "no:xdist",
        "-k",
        "text_basic",
    )
    text = output(result)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, text
    assert "refused" in text
    assert "secret scan" in text
    assert PLANTED not in text
    assert not list(cassettes.rglob("*.yaml"))


# --- a provider without a wire profile ----------------------------------------------------------------


def _acme_spec(root: Path) -> AdapterSpec:
    """An adapter for 'Acme', a provider helix-conformance has no profile for (it happens to speak the
    OpenAI format at its own URL; the harness does not know that)."""
    from reference_adapters.openai_chat import OpenAIChatAdapter

    return AdapterSpec(
        name="acme",
        factory=lambda ctx: OpenAIChatAdapter(
            api_key=ctx.api_key, base_url=ctx.base_url or "https://api.acme.invalid/v1", timeout=ctx.timeout
        ),
        wire_profile="custom",
        model="acme-1",
        capabilities=frozenset({"thinking", "parallel_tool_calls", "abort"}),
        cassette_dir=root,
        api_key_env="ACME_API_KEY",
    )


@pytest.mark.slow  # records then replays: the maintainer's path, rarely changed
def test_a_custom_provider_records_its_own_cassettes_then_replays_the_neutral_clauses(
    fake: FakeProvider, tmp_path: Path
) -> None:
    spec = _acme_spec(tmp_path)
    profile = profile_for(spec)
    assert missing_cassettes_problem(spec) is not None, "nothing recorded yet: the run must say so"
    with pytest.raises(RecordingUsageError, match="ACME_API_KEY"):
        record_settings(spec, profile, "once", None, environ={"OPENAI_API_KEY": KEY})
    settings = record_settings(
        spec, profile, "once", None, base_url=fake.base_url("openai-chat"), environ={"ACME_API_KEY": KEY}
    )
    assert settings is not None
    outcomes = record_suite(
        spec,
        profile,
        scenarios_to_record(profile),
        settings,
        on_start=lambda scenario: setattr(fake, "current", scenario.id),
    )
    assert not [o for o in outcomes if o.is_problem], [o.message for o in outcomes if o.is_problem]
    assert {o.action for o in outcomes} == {"recorded"}, "a custom profile records only what it can replay"
    recorded = yaml.safe_load((tmp_path / "custom" / "text_basic.yaml").read_text())
    assert recorded["provenance"]["observed"]["content"].startswith("Sure! ")
    assert KEY not in (tmp_path / "custom" / "text_basic.yaml").read_text()

    report = run_conformance(spec)
    results = report["results"]
    failed = [r for r in results if r["outcome"] == "failed"]
    assert report["passed"], failed[:3]
    ran = {r["clause"] for r in results if r["outcome"] == "passed"}
    assert {"RES-01", "STR-01", "STR-10", "NT-01", "NT-02", "ERR-04", "ERR-05", "HARN-01"} <= ran
    skipped = [
        r for r in results if r["outcome"] == "skipped" and r["clause"] in ("MSG-01", "MSG-09", "TOOL-02")
    ]
    assert skipped
    assert all("regression" in r["message"] for r in skipped), {r["message"] for r in skipped}


def test_a_custom_provider_request_that_changed_fails_harn_01(fake: FakeProvider, tmp_path: Path) -> None:
    spec = _acme_spec(tmp_path)
    profile = profile_for(spec)
    settings = RecordSettings(mode="once", root=tmp_path, api_key=KEY, base_url=fake.base_url("openai-chat"))
    fake.current = "text_basic"
    record_suite(spec, profile, [get_scenario("text_basic")], settings)
    path = tmp_path / "custom" / "text_basic.yaml"
    data = yaml.safe_load(path.read_text())
    data["interactions"][0]["request"]["body"] = data["interactions"][0]["request"]["body"].replace(
        '"stream": true', '"stream": true, "temperature": 0.5'
    )
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    report = run_conformance(spec, clauses=["HARN-01"], scenarios=["text_basic"])
    failure = next(r for r in report["results"] if r["clause"] == "HARN-01")
    assert failure["outcome"] == "failed"
    assert "recorded live" in failure["message"]
