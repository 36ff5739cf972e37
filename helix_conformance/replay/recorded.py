"""Recorded traffic, planned and served: a wire profile's recordings as scenarios (``scenarios/recorded.py``).

The recordings come from an ``expected.yml`` catalogue in each folder given (the bundled
``cassettes/recorded``, then a user's ``<cassette dir>/recorded``, whose scenarios replace bundled ones of the
same id). Each response is read by the profile's own reader, event by event, into the neutral parts the
checks reason about (text, thinking, refusal deltas, in order); the adapter is never asked. A stream is
served from its cassette as recorded, at the profile's endpoint (the original client's URL does not matter).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterator
from dataclasses import replace
from pathlib import Path

from .._yaml import YamlRefused, read_yaml_file
from ..profiles.base import WireProfile
from ..scenarios.model import Part, Raw, Refusal, Text, Thinking
from ..scenarios.recorded import (
    EXPECTED_FILE,
    CatalogueError,
    Kind,
    RecordedScenario,
    Recording,
    read_catalogue,
    recorded_id,
    recorded_scenario,
    unusable_scenario,
)
from ..scenarios.shapes import delivery_shape
from .cassette import Cassette, CassetteError, Interaction, load_cassette
from .interactions import CassetteCache


def load_catalogue(path: Path) -> list[Recording]:
    """The recordings an ``expected.yml`` lists, or a CatalogueError naming the file and the problem."""
    try:
        data = read_yaml_file(path)
    except (OSError, YamlRefused) as exc:
        raise CatalogueError(f"{path}: cannot be read ({exc})") from None
    return read_catalogue(data, str(path))


def recorded_scenarios(profile: WireProfile, folders: tuple[Path, ...]) -> tuple[RecordedScenario, ...]:
    """The recorded scenarios of ``profile`` from the catalogues of ``folders``, later folders winning; read
    once per process while no catalogue changes (a plan is made per run, and by tests many times)."""
    stamps = tuple(_stamp(folder / EXPECTED_FILE) for folder in folders)
    return _recorded_scenarios(profile, folders, stamps)


def _stamp(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


@functools.lru_cache(maxsize=16)
def _recorded_scenarios(
    profile: WireProfile, folders: tuple[Path, ...], stamps: tuple[int | None, ...]
) -> tuple[RecordedScenario, ...]:
    by_id: dict[str, RecordedScenario] = {}
    for folder in folders:
        if (folder / EXPECTED_FILE).is_file():
            for scenario in _from_catalogue(profile, folder):
                by_id[scenario.id] = scenario
    return _firsts_of_shape(tuple(by_id.values()))


def _firsts_of_shape(scenarios: tuple[RecordedScenario, ...]) -> tuple[RecordedScenario, ...]:
    """Each recording marked whether it is the first of its server, source and delivery shape: the same
    client framed the same kinds of events the same way, so the fault corpus breaks the first one for all. One
    that is not judged (a cassette problem, a known gap) stands for none."""
    seen: set[Hashable] = set()
    marked = []
    for scenario in scenarios:
        key = (scenario.source, delivery_shape(scenario))
        judged = scenario.problem is None and not scenario.gap
        marked.append(replace(scenario, first_of_shape=judged and key not in seen))
        if judged:
            seen.add(key)
    return tuple(marked)


def _from_catalogue(profile: WireProfile, folder: Path) -> Iterator[RecordedScenario]:
    catalogue = folder / EXPECTED_FILE
    try:
        recordings = load_catalogue(catalogue)
    except CatalogueError as exc:
        yield unusable_scenario(recorded_id(EXPECTED_FILE, None), profile.name, "", str(exc))
        return
    for recording in recordings:
        if recording.excluded or recording.profile != profile.name:
            continue
        path = folder / recording.cassette
        if recording.problem is not None:
            scenario_id = recorded_id(recording.cassette, None)
            yield unusable_scenario(scenario_id, profile.name, str(path), recording.problem)
            continue
        try:
            cassette = load_cassette(path)
        except CassetteError as exc:
            yield unusable_scenario(recorded_id(recording.cassette, None), profile.name, str(path), str(exc))
            continue
        if len(cassette.interactions) != len(recording.interactions):
            problem = (
                f"{catalogue} lists {len(recording.interactions)} interaction(s) for {recording.key}, the "
                f"cassette holds {len(cassette.interactions)}: write one outcome (or excluded) per interaction"
            )
            yield unusable_scenario(recorded_id(recording.cassette, None), profile.name, str(path), problem)
            continue
        several = len(cassette.interactions) > 1
        for index, outcome in enumerate(recording.interactions):
            if outcome is None:
                continue
            scenario_id = recorded_id(recording.cassette, index if several else None)
            try:
                yield _scenario(profile, recording, cassette, index, outcome, scenario_id)
            except CatalogueError as exc:
                where = f"{catalogue}, {recording.key}, interaction {index}"
                yield unusable_scenario(scenario_id, profile.name, str(path), f"{where}: {exc}")


def _scenario(
    profile: WireProfile,
    recording: Recording,
    cassette: Cassette,
    index: int,
    outcome: dict[str, object],
    scenario_id: str,
) -> RecordedScenario:
    interaction = cassette.interactions[index]
    summary = profile.summarise_response(interaction.status, interaction.headers, interaction.body)
    kind: Kind = "stream"
    if not 200 <= interaction.status < 300:
        kind = "http_error"
    elif outcome["type"] == "error":
        kind = "stream_error" if summary.result_type == "error" else "bad_body"
    served = None
    if kind in ("http_error", "bad_body"):
        content_type = interaction.headers.get("content-type", "")
        served = Raw(interaction.status, content_type, interaction.body.decode("utf-8", "replace"))
    source = cassette.provenance.get("source")
    origin = (source.get("repository") or source.get("file")) if isinstance(source, dict) else None
    return recorded_scenario(
        scenario_id,
        f"{recording.key}, interaction {index} (recorded by {origin or 'an unnamed source'}), replayed as recorded",
        profile.name,
        outcome,
        kind=kind,
        parts=stream_parts(profile, interaction.body) if kind in ("stream", "stream_error") else (),
        read_text=summary.text,
        read_thinking=summary.thinking,
        served=served,
        cassette=str(cassette.path),
        interaction=index,
        gap=recording.gap,
        precondition=recording.precondition(str(origin or "an unnamed source"), outcome),
        source=f"{recording.server or recording.key.split('/', 1)[0]}, recorded by {origin or 'an unnamed source'}",
    )


def stream_parts(profile: WireProfile, body: bytes) -> tuple[Part, ...]:
    """What a recorded stream carries, in order: each event read on its own by the profile's reader, its
    text, reasoning and refusal deltas joined into parts (tool calls come from the written outcome)."""
    pieces: list[tuple[type[Text] | type[Thinking] | type[Refusal], str]] = []
    headers = {"content-type": profile.stream_content_type}
    for event in profile.split_events(body):
        summary = profile.summarise_response(200, headers, event)
        if summary.thinking:
            pieces.append((Thinking, summary.thinking))
        if summary.text:
            pieces.append((Refusal if "refusal" in summary.events else Text, summary.text))
    parts: list[Part] = []
    for kind, piece in pieces:
        last = parts[-1] if parts else None
        if last is not None and type(last) is kind:
            parts[-1] = replace(last, chunks=(*last.chunks, piece))
        else:
            parts.append(kind((piece,)))
    return tuple(parts)


class ServedRecording(CassetteCache):
    """The cassette cache of one recorded scenario: its one interaction, at the profile's endpoint."""

    def __init__(self, scenario: RecordedScenario, profile: WireProfile, model: str) -> None:
        super().__init__(Path(scenario.cassette).parent)
        self.scenario = scenario
        self.profile = profile
        self.model = model

    def get(self, profile: str, scenario_id: str) -> Cassette:
        if scenario_id != self.scenario.id:
            return super().get(profile, scenario_id)
        if self.scenario.problem is not None:
            raise CassetteError(self.scenario.problem)
        key = (profile, scenario_id)
        if key not in self._cache:
            cassette = load_cassette(Path(self.scenario.cassette))
            recorded = cassette.interactions[self.scenario.interaction]
            served = Interaction(
                self.profile.endpoint_method,
                self.profile.endpoint_url(self.model),
                recorded.status,
                recorded.headers,
                recorded.body,
            )
            self._cache[key] = Cassette(cassette.path, cassette.provenance, (served,))
        return self._cache[key]
