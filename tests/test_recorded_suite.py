"""Real traffic in ``pytest --adapter=X``: every replayed recording is a scenario judged by the clauses.

The bundled corpus (``cassettes/recorded``) and a user's own recordings (``<cassette dir>/recorded`` with its
``expected.yml``) become ``recorded/...`` scenarios of their wire profile, judged on the response side only
against the outcome written for them; ``tests/broken_adapters/recorded.py`` holds adapters only they catch.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from broken_adapters.recorded import ADAPTERS as ONLY_REAL_TRAFFIC_CATCHES

from helix_conformance.baseline import load_baseline
from helix_conformance.clauses import REQUEST_SIDE
from helix_conformance.contract import AdapterSpec
from helix_conformance.profiles import get_profile
from helix_conformance.replay.cassette import load_cassette
from helix_conformance.replay.recorded import stream_parts
from helix_conformance.scenarios import scenarios_for
from helix_conformance.scenarios.model import Text, Thinking
from helix_conformance.scenarios.recorded import EXPECTED_FILE, RecordedScenario, recorded_id
from helix_conformance.suite import PlannedCheck, plan_suite
from helix_conformance.testing import run_conformance
from reference_adapters.anthropic import spec as anthropic_spec
from reference_adapters.gemini import spec as gemini_spec
from reference_adapters.openai_chat import spec as openai_spec

ROOT = Path(__file__).resolve().parents[1] / "cassettes" / "recorded"
REFERENCES = {s.wire_profile: s for s in (openai_spec, anthropic_spec, gemini_spec)}
GROQ_CALL = "recorded/groq/groq-tool-call"


def _recorded(planned: list[PlannedCheck]) -> list[PlannedCheck]:
    return [p for p in planned if isinstance(p.scenario, RecordedScenario)]


def _catalogue() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / EXPECTED_FILE).read_text(encoding="utf-8"))
    return data


def _wanted_ids(profile: str) -> set[str]:
    """The scenario ids the catalogue says a profile gets: one per replayed interaction (by reading it)."""
    catalogue = _catalogue()
    ids = set()
    for key, entry in catalogue["recordings"].items():
        if entry.get("excluded") or catalogue["profiles"][key.split("/", 1)[0]] != profile:
            continue
        directory, name = key.split("/", 1)
        stem = name.removesuffix(".txt").removesuffix(".yaml")
        cassette = f"{directory}/{stem}.yaml"
        several = len(entry["interactions"]) > 1
        for index, outcome in enumerate(entry["interactions"]):
            if "excluded" not in outcome:
                ids.add(recorded_id(cassette, index if several else None))
    return ids


@pytest.mark.parametrize("profile", sorted(REFERENCES))
def test_every_replayed_interaction_is_a_scenario_of_its_profile(profile: str) -> None:
    recorded = _recorded(plan_suite(REFERENCES[profile]))
    assert {p.scenario.id for p in recorded} == _wanted_ids(profile)
    assert all(p.profile == profile for p in recorded)


def test_recorded_checks_read_like_the_others_and_k_recorded_selects_them() -> None:
    ids = {p.test_id for p in plan_suite(openai_spec)}
    assert f"openai-chat::{GROQ_CALL}::RES-04" in ids
    assert "openai-chat::recorded/openai/test_complex_agent_run[0]::RES-06" in ids  # interaction 0 of 3
    recorded = {i for i in ids if "recorded" in i}
    assert recorded == {p.test_id for p in _recorded(plan_suite(openai_spec))}
    assert not any("recorded" in s.id for s in scenarios_for("openai-chat"))


def test_only_the_response_side_is_judged_on_a_recording() -> None:
    """A recording answers another client's request: MSG, TOOL, CFG-01/02 and CACHE are not planned."""
    clauses = {p.clause for p in _recorded(plan_suite(anthropic_spec))}
    assert not [c for c in clauses if c.startswith(REQUEST_SIDE)], sorted(clauses)
    assert {
        "RES-01",
        "RES-03",
        "RES-04",
        "RES-08",
        "STOP-01",
        "STR-01",
        "STR-03",
        "STR-05",
        "STR-10",
    } <= clauses
    assert {"ERR-01", "ERR-02", "ERR-04", "ERR-05", "NT-01", "NT-02", "HARN-01", "RES-12"} <= clauses


def test_outcomes_decide_the_clauses_and_the_fault_corpus_breaks_real_streams() -> None:
    planned = _recorded(plan_suite(openai_spec))
    by_scenario: dict[str, set[str]] = {}
    for p in planned:
        by_scenario.setdefault(p.scenario.id, set()).add(p.clause)
    assert {"RES-03", "RES-04", "STR-05", "ERR-03", "ERR-04", "ERR-05"} <= by_scenario[GROQ_CALL]
    assert {"ERR-01", "ERR-02"} <= by_scenario["recorded/groq/test_model_name_suggestion[groq]"]
    assert "ERR-03" in by_scenario["recorded/openrouter/test_openrouter_stream_error"]  # an error event
    assert "ERR-05" in by_scenario["recorded/openai/test_text_response"]  # a 200 text/plain body
    mistral = next(p.scenario for p in planned if p.scenario.id.startswith("recorded/mistral/test_mistral"))
    assert mistral.expect.thinking  # written as _starts/_ends: the whole text is read from the stream
    assert mistral.expect.content
    assert mistral.expect.content.startswith("To cross the street safely")
    assert mistral.requires == frozenset({"thinking"})


def test_a_should_row_is_judged_as_should() -> None:
    planned = _recorded(plan_suite(anthropic_spec))
    (pause,) = [
        p
        for p in planned
        if p.scenario.id.endswith("test_pause_turn_web_search_streaming_vcr[0]") and p.clause == "STOP-01"
    ]
    assert pause.level == "SHOULD"  # pause_turn -> end_turn is STOP-01's SHOULD row


def test_a_known_gap_is_planned_with_every_check_skipped_and_why(tmp_path: Path) -> None:
    root = _user_corpus(tmp_path, CALL)
    catalogue = yaml.safe_load((root / "recorded" / EXPECTED_FILE).read_text(encoding="utf-8"))
    catalogue["recordings"]["mine/call.yaml"]["gap"] = "the reference adapter cannot read this yet"
    (root / "recorded" / EXPECTED_FILE).write_text(yaml.safe_dump(catalogue), encoding="utf-8")
    gap = [p for p in plan_suite(openai_spec, root) if p.scenario.id == "recorded/mine/call"]
    assert gap
    assert all(p.skip_reason and "known gap" in p.skip_reason and "cannot read" in p.skip_reason for p in gap)


def test_stream_parts_are_the_deltas_in_the_order_they_came() -> None:
    cassette = load_cassette(ROOT / "mistral" / "test_mistral_model_thinking_part_iter.yaml")
    parts = stream_parts(get_profile("openai-chat"), cassette.interactions[0].body)
    assert [type(p) for p in parts] == [Thinking, Text]
    assert all(len(p.chunks) > 10 for p in parts if isinstance(p, (Thinking, Text)))
    assert "".join(parts[1].chunks).startswith("To cross the street safely")  # type: ignore[union-attr]


@pytest.mark.parametrize("profile", sorted(REFERENCES))
def test_the_reference_adapters_pass_their_real_traffic(profile: str) -> None:
    ids = sorted({p.scenario.id for p in _recorded(plan_suite(REFERENCES[profile]))})
    report = run_conformance(REFERENCES[profile], scenarios=ids, timeout=5.0, examples=1)
    failed = [
        f"{r['scenario']} {r['clause']}: {r['message'][:200]}"
        for r in report["results"]
        if r["outcome"] == "failed"
    ]
    assert not failed, "\n".join(failed)
    assert sum(r["outcome"] == "passed" for r in report["results"]) > 100


@pytest.mark.parametrize("broken", ONLY_REAL_TRAFFIC_CATCHES, ids=lambda b: b.name)
def test_only_real_traffic_catches_these_adapters(broken: Any) -> None:
    """Every authored scenario passes (so the authored suite alone would let the bug through); the recorded
    one fails on its clause (``tests/test_broken_adapters.py`` checks that, with its controls)."""
    authored = [s.id for s in scenarios_for(broken.profile)]
    report = run_conformance(broken.spec, scenarios=authored, timeout=5.0, examples=1)
    failed = [f"{r['scenario']} {r['clause']}" for r in report["results"] if r["outcome"] == "failed"]
    assert not failed, failed
    recorded = run_conformance(broken.spec, scenarios=list(broken.scenarios), clauses=[broken.caught_by])
    assert [r["outcome"] for r in recorded["results"]] == ["failed"] * len(broken.scenarios)


# --- a user's own recordings -------------------------------------------------------------------------------


def _user_corpus(
    tmp_path: Path, outcome: dict[str, Any], *, cassette: str = "groq/groq-tool-call.chunks.yaml"
) -> Path:
    """``<tmp>/recorded/mine/call.yaml`` (a copy of a bundled recording) with ``outcome`` written for it."""
    folder = tmp_path / "recorded" / "mine"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / cassette, folder / "call.yaml")
    catalogue = {
        "profiles": {"mine": "openai-chat"},
        "recordings": {"mine/call.yaml": {"interactions": [outcome]}},
    }
    (tmp_path / "recorded" / EXPECTED_FILE).write_text(yaml.safe_dump(catalogue), encoding="utf-8")
    return tmp_path


CALL = {
    "type": "tool_calls",
    "stop_reason": "tool_use",
    "tool_calls": [{"id": "tk85n1k4m", "name": "weather", "arguments": {}}],
}


def test_a_users_recording_is_judged_against_the_outcome_written_for_it(tmp_path: Path) -> None:
    root = _user_corpus(tmp_path, CALL)
    planned = _recorded(plan_suite(openai_spec, root))
    assert "recorded/mine/call" in {p.scenario.id for p in planned}
    report = run_conformance(openai_spec, scenarios=["recorded/mine/call"], cassette_dir=root, examples=1)
    assert report["passed"], [r for r in report["results"] if r["outcome"] != "passed"]

    wrong = {**CALL, "tool_calls": [{"id": "tk85n1k4m", "name": "weather", "arguments": {"city": "Paris"}}]}
    other = _user_corpus(tmp_path / "wrong", wrong)
    report = run_conformance(
        openai_spec, scenarios=["recorded/mine/call"], cassette_dir=other, clauses=["RES-04"]
    )
    (row,) = report["results"]
    assert row["outcome"] == "failed", row
    assert "{'city': 'Paris'}" in row["message"], row["message"]


def test_spec_cassette_dir_brings_its_recordings_too(tmp_path: Path) -> None:
    spec = dataclasses.replace(openai_spec, cassette_dir=_user_corpus(tmp_path, CALL))
    assert "recorded/mine/call" in {p.scenario.id for p in _recorded(plan_suite(spec))}


def test_a_users_recording_replaces_a_bundled_one_of_the_same_id(tmp_path: Path) -> None:
    folder = tmp_path / "recorded" / "groq"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "groq" / "groq-tool-call.chunks.yaml", folder / "groq-tool-call.chunks.yaml")
    catalogue = {
        "profiles": {"groq": "openai-chat"},
        "recordings": {"groq/groq-tool-call.chunks.yaml": {"interactions": [{**CALL, "should": ["RES-03"]}]}},
    }
    (tmp_path / "recorded" / EXPECTED_FILE).write_text(yaml.safe_dump(catalogue), encoding="utf-8")
    (mine,) = [
        p for p in plan_suite(openai_spec, tmp_path) if p.test_id == f"openai-chat::{GROQ_CALL}::RES-03"
    ]
    assert mine.level == "SHOULD"
    assert str(tmp_path) in mine.scenario.cassette  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("outcome", "says"),
    [
        ({"type": "txt", "stop_reason": "end_turn"}, "type must be text, tool_calls or error"),
        ({"type": "text"}, "stop_reason must be one of"),
        ({"type": "error", "error_code": "oops"}, "an error needs error_code"),
        ({**CALL, "colour": "red"}, "unknown field(s) colour"),
        ({"type": "text", "stop_reason": "end_turn", "content_starts": "Bonjour"}, "does not start with"),
    ],
)
def test_a_broken_outcome_fails_res01_with_what_to_write(
    tmp_path: Path, outcome: dict[str, Any], says: str
) -> None:
    root = _user_corpus(tmp_path, outcome)
    planned = [p for p in plan_suite(openai_spec, root) if p.scenario.id.startswith("recorded/mine/")]
    assert [p.clause for p in planned] == ["RES-01"]
    report = run_conformance(openai_spec, scenarios=[planned[0].scenario.id], cassette_dir=root)
    (row,) = report["results"]
    assert row["outcome"] == "failed", row
    assert "cassette problem" in row["message"], row["message"]
    assert says in row["message"], row["message"]
    assert f"{EXPECTED_FILE}, mine/call.yaml, interaction 0" in row["message"], row["message"]


def test_a_missing_cassette_or_catalogue_is_a_cassette_problem_too(tmp_path: Path) -> None:
    root = _user_corpus(tmp_path, CALL)
    (root / "recorded" / "mine" / "call.yaml").unlink()
    (missing,) = [p for p in plan_suite(openai_spec, root) if p.scenario.id.startswith("recorded/mine/")]
    assert "cassette not found" in str(missing.scenario.problem)  # type: ignore[attr-defined]
    (root / "recorded" / EXPECTED_FILE).write_text("recordings: [1, 2]\n", encoding="utf-8")
    (broken,) = [p for p in plan_suite(openai_spec, root) if "expected.yml" in p.scenario.id]
    assert "needs a 'recordings' mapping" in str(broken.scenario.problem)  # type: ignore[attr-defined]


def test_a_baseline_may_name_a_recorded_scenario(tmp_path: Path) -> None:
    path = tmp_path / "baseline.yml"
    entry = {"clause": "RES-04", "scenario": GROQ_CALL, "reason": "known"}
    path.write_text(yaml.safe_dump({"version": 1, "adapter": "x", "entries": [entry]}), encoding="utf-8")
    assert [e.scenario for e in load_baseline(path, []).entries] == [GROQ_CALL]


def test_the_scripted_and_custom_profiles_get_no_recordings() -> None:
    from helix_conformance.testing import mock_spec

    assert not _recorded(plan_suite(mock_spec()))
    custom = AdapterSpec(
        name="c", factory=lambda ctx: None, wire_profile="custom", model="m", cassette_dir=ROOT
    )  # type: ignore[arg-type,return-value]
    assert not _recorded(plan_suite(custom))
