"""Real traffic: every live recording of ../shared/recordings and tests/recordings, replayed through the
matching reference adapter.

``cassettes/recorded/expected.yml`` holds the outcome each recording must replay to, written from reading
it; this test replays them and compares. The per-provider tally is printed by
``python -m helix_conformance.importing.recorded`` and by ``test_tally_per_provider`` (run with ``-s``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_regions import check_region, recorded_tally

from helix_conformance.importing.common import read_sources
from helix_conformance.importing.recorded import (
    EXPECTED_FILE,
    SHARED_RECORDINGS,
    SOURCE_DIRS,
    Recording,
    format_tally,
    load_expectations,
    regenerate,
    replay_recording,
    tally,
)
from helix_conformance.importing.replay import compare
from helix_conformance.profiles import KNOWN_PROFILES
from helix_conformance.replay.cassette import load_cassette

DOCS_ROOT = Path(__file__).resolve().parents[1]
ROOT = DOCS_ROOT / "cassettes" / "recorded"
RECORDINGS = load_expectations(ROOT / EXPECTED_FILE)
REPLAYED = [r for r in RECORDINGS if not r.excluded]
needs_shared = pytest.mark.skipif(
    not (SHARED_RECORDINGS / "SOURCES.md").exists(),
    reason=f"the shared recordings are not beside the project ({SHARED_RECORDINGS})",
)


def _params(recordings: list[Recording]) -> list[object]:
    return [
        pytest.param(
            r,
            id=r.key,
            marks=[pytest.mark.xfail(strict=True, reason=f"known gap: {r.gap}")] if r.gap else [],
        )
        for r in recordings
    ]


@pytest.mark.parametrize("recording", _params(REPLAYED))
def test_recording_replays_to_its_expected_outcome(recording: Recording) -> None:
    problems = replay_recording(recording, ROOT)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("recording", REPLAYED, ids=lambda r: r.key)
def test_recorded_cassette_keeps_its_provenance(recording: Recording) -> None:
    cassette = load_cassette(ROOT / recording.cassette)
    provenance = cassette.provenance
    assert provenance["kind"] == "recorded"
    assert provenance["importer"] == "helix-conformance import"
    assert {"repository", "path", "commit"} <= set(provenance["source"]), provenance["source"]
    assert len(recording.interactions) == len(cassette.interactions), (
        "expected.yml must list every interaction of the recording (excluded ones with a reason)"
    )
    assert any(recording.interactions), "a replayed recording needs at least one expected interaction"


def test_every_entry_is_either_replayed_or_excluded_with_a_reason() -> None:
    assert len(RECORDINGS) == 98  # 68 from ../shared/recordings, 30 from tests/recordings
    for recording in RECORDINGS:
        if recording.excluded:
            assert len(recording.excluded) > 20, recording.key
            assert not recording.interactions, f"{recording.key}: excluded, yet lists interactions"
            assert not (ROOT / recording.cassette).exists(), f"{recording.key}: excluded, yet imported"
        else:
            assert recording.profile in KNOWN_PROFILES, recording.key
    cassettes = {p.relative_to(ROOT).as_posix() for p in ROOT.glob("*/*.yaml")}
    assert cassettes == {r.cassette for r in REPLAYED}, "cassettes without an entry in expected.yml"


@needs_shared
def test_every_shared_recording_is_listed_with_its_catalogued_source() -> None:
    files = {f"{p.parent.name}/{p.name}" for d in SOURCE_DIRS for p in d.glob("*/*")}
    assert files == {r.key for r in RECORDINGS}
    catalogue = {k: v for d in SOURCE_DIRS for k, v in read_sources(d / "SOURCES.md").items()}
    assert set(catalogue) == files, "every source file has its SOURCES.md entry"
    for recording in REPLAYED:
        source = load_cassette(ROOT / recording.cassette).provenance["source"]
        entry = catalogue[recording.key]
        assert (source["repository"], source["path"], source["commit"]) == (
            entry.repository,
            entry.path,
            entry.commit,
        )


@needs_shared
def test_recorded_cassettes_are_what_the_importer_writes() -> None:
    drift = regenerate(SOURCE_DIRS, ROOT, check=True)
    assert not drift, f"re-import with python -m helix_conformance.importing.recorded --regenerate: {drift}"


def test_the_comparison_catches_a_wrong_outcome() -> None:
    outcome = {
        "type": "tool_calls",
        "stop_reason": "tool_use",
        "thinking": None,
        "content": "",
        "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
    }
    expected = {
        "type": "tool_calls",
        "stop_reason": "tool_use",
        "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
    }
    assert compare(outcome, expected) == []
    assert compare(outcome, {**expected, "tool_calls": [{"name": "get_weather", "arguments": {}}]})
    assert compare(outcome, {**expected, "thinking": "hmm"})
    assert compare({**outcome, "thinking": "unexpected"}, expected)
    assert compare(outcome, {**expected, "stop_reason": "end_turn"})
    assert compare({"type": "error", "error_code": "provider_error", "status_code": None}, expected)
    text = {"type": "text", "stop_reason": "end_turn", "thinking": None, "content": "Hello there"}
    assert compare(text, {"type": "text", "content_starts": "Hello", "content_ends": "there"}) == []
    assert compare(text, {"type": "text", "content_starts": "Bye"})


def test_tally_per_provider(capsys: pytest.CaptureFixture[str]) -> None:
    failures = {r.key: replay_recording(r, ROOT) for r in REPLAYED}
    rows = tally(RECORDINGS, failures)
    with capsys.disabled():
        print("\nreal-traffic recordings replayed through the reference adapters:\n" + format_tally(rows))
    # docs/real-traffic.md's table is this tally (HELIX_UPDATE_DOCS=1 rewrites it).
    check_region(DOCS_ROOT / "docs" / "real-traffic.md", "recorded-tally", recorded_tally(rows))
    gaps = {r.key for r in RECORDINGS if r.gap}
    assert {key for key, problems in failures.items() if problems} == gaps
