"""The fault corpus: generated from every success cassette of every profile, passed by every reference.

The corpus (``helix_conformance/replay/faults.py``) breaks each success scenario's recorded stream in every
way CONTRACT.md names; these tests prove it covers every cassette with every fault kind, that the three
reference adapters pass the full sweep (every event boundary), that the default sweep stays cheap, and that
the broken adapters of ``broken_adapters/faults.py`` are caught by the corpus alone.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
from broken_adapters import BrokenAdapter
from broken_adapters.faults import ADAPTERS as CORPUS_ONLY_ADAPTERS

from helix_conformance.adapters import resolve_adapter
from helix_conformance.checks.common import provider_tool_call_ids
from helix_conformance.checks.context import CheckContext, HarnessSettings, ScenarioSession
from helix_conformance.checks.draws import broken_here
from helix_conformance.checks.faults import corpus_base, judge, run_variant, stall_base
from helix_conformance.checks.registry import load_all_checks
from helix_conformance.checks.streaming import BYTEWISE_PREFIX, explicit_cuts
from helix_conformance.contract import TextStepResult
from helix_conformance.profiles import KNOWN_PROFILES, get_profile
from helix_conformance.profiles.base import WireProfile
from helix_conformance.replay.delivery import SplitPlan
from helix_conformance.replay.faults import (
    StreamShape,
    corpus,
)
from helix_conformance.replay.interactions import CassetteCache, ReplayInteraction, build_interactions
from helix_conformance.replay.judging import run_scenario
from helix_conformance.replay.recorded import recorded_scenarios
from helix_conformance.replay.runner import ScenarioRun
from helix_conformance.scenarios import get_scenario, scenarios_for
from helix_conformance.scenarios.fault_kinds import DEFAULT_EXAMPLES, FULL_SWEEP_EXAMPLES, KINDS
from helix_conformance.scenarios.model import Scenario
from helix_conformance.scenarios.shapes import delivery_shape
from helix_conformance.suite import bundled_cassettes, plan_suite
from helix_conformance.testing import run_conformance

CASSETTES = CassetteCache(bundled_cassettes())
REFERENCES = {
    "openai": "openai-chat",
    "anthropic": "anthropic-messages",
    "gemini": "gemini",
    "openai-responses": "openai-responses",
    "bedrock": "bedrock-converse",
    "cohere": "cohere-chat",
}
CORPUS_CLAUSES = {"ERR-03", "ERR-04", "ERR-05", "NT-04", "NT-05", "RES-12"}
NO_FINISH_REASON = {"compat_done_without_finish_reason", "compat_tool_calls_done_without_finish_reason"}
"""OpenAI Chat streams that end with `[DONE]` and never carry a finish_reason (docs/contract.md STOP-01)."""
DEFAULT_RUNS_PER_CASSETTE = 14
"""A cost guard: variants one default run of the suite serves per success cassette (~2 ms each)..."""
STALL_RUNS = 3
"""...and the stall and held-open variants a stall base (``stall_base``) serves besides."""


def _bases(profile_name: str) -> list[Scenario]:
    profile = get_profile(profile_name)
    return [s for s in scenarios_for(profile_name) if corpus_base(s, profile)]


def _success(profile_name: str) -> list[Scenario]:
    """Every success scenario with one whole stream: what the corpus can fault."""
    return [
        s
        for s in scenarios_for(profile_name)
        if s.recorded_exchanges and s.expect.type != "error" and len(s.exchanges) == 1 and not s.abort
    ]


def _recorded(profile_name: str, scenario: Scenario) -> ReplayInteraction:
    return build_interactions(scenario, get_profile(profile_name), CASSETTES)[0]


@pytest.mark.parametrize("profile_name", KNOWN_PROFILES)
def test_every_success_cassette_can_be_faulted_with_every_kind(profile_name: str) -> None:
    profile = get_profile(profile_name)
    success = _success(profile_name)
    assert len(success) >= 28, f"{profile_name}: only {len(success)} success cassettes"
    kinds_seen: Counter[str] = Counter()
    for scenario in success:
        base = _recorded(profile_name, scenario)
        variants = corpus(profile, base, FULL_SWEEP_EXAMPLES, stalls=True, salt=scenario.id)
        kinds = {v.kind for v in variants}
        assert kinds == _kinds(profile), f"{scenario.id}: missing {_kinds(profile) - kinds}"
        kinds_seen.update(v.kind for v in variants)
        shape = StreamShape.of(profile, base.body)
        truncated = {len(v.interaction.body) for v in variants if v.kind == "truncate"}
        assert truncated == {len(shape.prefix(k)) for k in range(shape.n)}, "every event boundary"
        assert len({v.key for v in variants}) == len(variants), f"{scenario.id}: variant keys collide"
        assert {v.clause for v in variants} == CORPUS_CLAUSES
    assert set(kinds_seen) == _kinds(profile)
    print(
        f"{profile_name}: {len(success)} success cassettes, {sum(kinds_seen.values())} variants in the full sweep"
    )


@pytest.mark.parametrize("profile_name", KNOWN_PROFILES)
def test_faults_are_drawn_on_the_first_scenario_of_every_delivery_shape(profile_name: str) -> None:
    """The suite faults one success stream per delivery shape (checks/draws.py), the first of it in the
    catalogue, and leaves no shape of the profile's success streams unfaulted."""
    profile = get_profile(profile_name)
    success = [s for s in _success(profile_name) if s.exchanges[0].fault is None]
    bases = _bases(profile_name)
    first: dict[object, str] = {}
    for scenario in success:
        first.setdefault(delivery_shape(scenario), scenario.id)
    assert [s.id for s in bases] == [s for s in first.values() if corpus_base(get_scenario(s), profile)]
    assert {delivery_shape(s) for s in bases} == {
        delivery_shape(s)
        for s in success
        if s.exchanges[0].response.finish is not None  # type: ignore[union-attr]
    }
    assert len(bases) < len(success) / 2, f"{profile_name}: {len(bases)} of {len(success)} drawn"


@pytest.mark.parametrize("profile_name", KNOWN_PROFILES)
def test_recorded_streams_are_faulted_once_per_source_and_shape(profile_name: str) -> None:
    """Of the recorded streams, the corpus breaks the first of each delivery shape per server and source (the
    same client framed them the same way), and leaves no such pair unbroken."""
    profile = get_profile(profile_name)
    recorded = recorded_scenarios(profile, (bundled_cassettes() / "recorded",))
    streams = [
        s
        for s in recorded
        if s.problem is None and s.expect.type != "error" and s.exchanges[0].response.finish is not None  # type: ignore[union-attr]
    ]
    bases = [s for s in recorded if corpus_base(s, profile)]
    first: dict[object, str] = {}
    for scenario in streams:
        first.setdefault((scenario.source, delivery_shape(scenario)), scenario.id)
    assert [s.id for s in bases] == list(first.values())
    assert all(s.source and ", recorded by " in s.source for s in streams)


def test_a_recording_that_is_not_judged_stands_for_no_other() -> None:
    """A recording with a known gap (its checks skipped) or a cassette problem does not take its group's place in
    the fault corpus: the next recording of the same source and shape does."""
    from dataclasses import replace

    from helix_conformance.replay.recorded import _firsts_of_shape
    from helix_conformance.scenarios.recorded import RecordedScenario

    profile = get_profile("openai-chat")
    recorded = recorded_scenarios(profile, (bundled_cassettes() / "recorded",))
    groups: dict[object, list[RecordedScenario]] = {}
    for scenario in recorded:
        groups.setdefault((scenario.source, delivery_shape(scenario)), []).append(scenario)
    first, second = next(group for group in groups.values() if len(group) > 1)[:2]
    assert [s.first_of_shape for s in _firsts_of_shape((first, second))] == [True, False]
    for unjudged in (replace(first, gap="a known gap"), replace(first, problem="unreadable")):
        assert [s.first_of_shape for s in _firsts_of_shape((unjudged, second))] == [False, True]


def _kinds(profile: WireProfile) -> set[str]:
    """The fault kinds of a profile's corpus: a checksum mismatch only where the framing has checksums."""
    return set(KINDS) - (set() if profile.checksummed else {"checksum_mismatch"})


@pytest.mark.parametrize("profile_name", KNOWN_PROFILES)
def test_the_default_sweep_is_small_and_grows_with_examples(profile_name: str) -> None:
    profile = get_profile(profile_name)
    runs = {DEFAULT_EXAMPLES: 0, 2 * DEFAULT_EXAMPLES: 0, FULL_SWEEP_EXAMPLES: 0}
    bases = _bases(profile_name)
    for scenario in bases:
        base = _recorded(profile_name, scenario)
        stalls = stall_base(scenario, profile)
        for examples in runs:
            runs[examples] += len(corpus(profile, base, examples, stalls=stalls, salt=scenario.id))
        default = {v.kind for v in corpus(profile, base, stalls=stalls, salt=scenario.id)}
        assert default >= _kinds(profile) - {"stall", "held_open", "html_5xx", "plain_200"}, scenario.id
    stall_bases = sum(stall_base(s, profile) for s in bases)
    assert runs[DEFAULT_EXAMPLES] <= DEFAULT_RUNS_PER_CASSETTE * len(bases) + STALL_RUNS * stall_bases, runs
    assert runs[DEFAULT_EXAMPLES] < runs[2 * DEFAULT_EXAMPLES] < runs[FULL_SWEEP_EXAMPLES], runs


@pytest.mark.parametrize("profile_name", KNOWN_PROFILES)
def test_finish_and_terminator_are_found_in_every_cassette(profile_name: str) -> None:
    profile = get_profile(profile_name)
    for scenario in _bases(profile_name):
        events = profile.split_events(_recorded(profile_name, scenario).body)
        finishing = [i for i, e in enumerate(events) if profile.carries_finish(e)]
        terminal = [i for i, e in enumerate(events) if profile.is_terminator(e)]
        assert finishing, f"{scenario.id}: no event carries the finish"
        # OpenRouter's Responses stream sends `data: [DONE]` after its terminal event (quirk done_marker)
        after = sum(
            1 for e in scenario.exchanges if "done_marker" in getattr(e.response, "quirks", frozenset())
        )
        assert terminal == [len(events) - 1 - after], f"{scenario.id}: the terminator is not the last event"
        # Gemini's and Responses' finish event is the terminal one; so is `[DONE]` with no finish_reason
        if profile_name in ("gemini", "openai-responses", "cohere-chat") or scenario.id in NO_FINISH_REASON:
            assert finishing == terminal, scenario.id
        else:
            assert finishing[0] < terminal[0], scenario.id


def _session(name: str, scenario: Scenario) -> ScenarioSession:
    spec = resolve_adapter(name).spec
    settings = HarnessSettings(timeout=5.0, examples=FULL_SWEEP_EXAMPLES)
    return ScenarioSession(scenario, get_profile(spec.wire_profile), spec, CASSETTES, settings)


@pytest.mark.exhaustive  # the gate samples positions; here every one (a minute or two in all)
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_reference_adapter_passes_the_full_sweep(name: str) -> None:
    """Every fault kind at every position of every success cassette, stalls included."""
    problems, count, started = [], 0, time.monotonic()
    for scenario in _bases(REFERENCES[name]):
        session = _session(name, scenario)
        ctx = CheckContext("ERR-04", session)
        unfaulted = ctx.result
        for variant in corpus(session.profile, session.interactions()[0], FULL_SWEEP_EXAMPLES, stalls=True):
            count += 1
            run = run_variant(ctx, variant)  # judged as ERR-04's check judges: minted ids may differ per run
            problem = judge(variant, run, unfaulted, session.settings.timeout, provider_tool_call_ids(ctx))
            if problem:
                problems.append(f"{variant.clause} {variant.describe(scenario.id)}: {problem}")
    print(f"{name}: {count} variants in {time.monotonic() - started:.1f} s")
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("broken", CORPUS_ONLY_ADAPTERS, ids=lambda b: b.name)
def test_corpus_only_adapters_pass_the_hand_written_fault_scenarios(broken: BrokenAdapter) -> None:
    """The same clause passes on every scenario that is not a corpus base: only the corpus catches them."""
    profile = get_profile(broken.profile)
    if broken.caught_by == "RES-12":  # its hand-written scenario, text_quirks, is faulted too: run it bare
        session = ScenarioSession(
            get_scenario("text_quirks"), profile, broken.spec, CASSETTES, HarnessSettings(timeout=3.0)
        )
        result = session.run().result
        assert isinstance(result, TextStepResult), result
        assert result.content == session.scenario.expect.content
        return
    check = load_all_checks()[broken.caught_by]
    hand_written = [
        s.id for s in scenarios_for(profile.name) if check.applies(s, profile) and not corpus_base(s, profile)
    ]
    assert hand_written, f"{broken.caught_by} has no hand-written scenario on {profile.name}"
    report = run_conformance(
        broken.spec, clauses=[broken.caught_by], scenarios=hand_written, timeout=3.0, examples=3
    )
    outcomes = {row["scenario"]: (row["outcome"], row["message"]) for row in report["results"]}
    caught = {s: o for s, o in outcomes.items() if o[0] not in ("passed", "skipped")}
    assert not caught, f"{broken.name} is caught without the corpus: {caught}"


def test_a_corpus_failure_names_the_fault_its_position_and_the_scenario() -> None:
    broken = next(b for b in CORPUS_ONLY_ADAPTERS if b.name == "tool_call_complete_when_json_parses")
    report = run_conformance(broken.spec, clauses=["ERR-04"], scenarios=["tool_call_parallel"], timeout=3.0)
    (row,) = report["results"]
    assert row["outcome"] == "failed"
    message = row["message"].splitlines()[2]  # under the clause's header and text, as pytest prints it
    assert message.startswith("  truncated after event ")
    assert " of " in message
    assert "(tool_call_parallel)" in message
    assert row["reproduce"].endswith('-k "openai-chat::tool_call_parallel::ERR-04"')


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_test_ids_stay_unique(name: str) -> None:
    planned = plan_suite(resolve_adapter(name).spec)
    ids = [p.test_id for p in planned]
    assert len(ids) == len(set(ids))
    corpus_ids = {p.clause for p in planned if corpus_base(p.scenario, get_profile(p.profile))}
    assert CORPUS_CLAUSES | {"NT-01", "NT-02"} <= corpus_ids


def test_a_profile_that_cannot_read_its_stream_gets_only_format_free_faults() -> None:
    """A profile without finish detection (``custom``) must not be judged on guesses about its framing."""
    openai = get_profile("openai-chat")

    class Opaque(type(openai)):  # type: ignore[misc]
        def carries_finish(self, event: bytes) -> bool:
            return False

    base = _recorded("openai-chat", get_scenario("tool_call"))
    kinds = [v.kind for v in corpus(Opaque(), base, FULL_SWEEP_EXAMPLES, stalls=True)]
    assert kinds == ["read_timeout", "html_5xx", "plain_200"]


def _splits_run_by_str_10(scenario: Scenario) -> list[tuple[int, ...]]:
    """The cuts of every split STR-10's check asks the openai reference adapter to run on ``scenario``."""
    spec = resolve_adapter("openai").spec
    asked: list[tuple[int, ...]] = []

    def spy(*args: Any, **kwargs: Any) -> ScenarioRun:
        options = args[4]
        if isinstance(options.plan, SplitPlan):
            asked.append(options.plan.cuts)
        return run_scenario(*args, **kwargs)

    settings = HarnessSettings(timeout=5.0, examples=1, executor=spy)
    session = ScenarioSession(scenario, get_profile(spec.wire_profile), spec, CASSETTES, settings)
    load_all_checks()["STR-10"].func(CheckContext("STR-10", session))
    return asked


def test_streams_are_split_byte_by_byte_where_they_are_faulted() -> None:
    """STR-10's one-byte-per-chunk split (chunk reassembly, which reads the framing) runs where the fault corpus
    breaks streams; its cuts at the framing and inside multi-byte characters run on every stream."""
    profile = get_profile("openai-chat")
    drawn, other = get_scenario("text_basic"), get_scenario("compat_sse_framing")
    assert broken_here(drawn, profile)
    assert not broken_here(other, profile)
    every_byte = tuple(range(1, BYTEWISE_PREFIX))
    assert every_byte in _splits_run_by_str_10(drawn)
    splits = _splits_run_by_str_10(other)
    assert every_byte not in splits
    body = _recorded("openai-chat", other).body
    assert [cuts for _, cuts in explicit_cuts(body, profile, every_byte=False)] == splits
    assert any(body[cut] & 0xC0 == 0x80 for cuts in splits for cut in cuts), "the multi-byte cuts still run"
