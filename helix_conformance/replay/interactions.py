"""Build what the replayed provider answers for one scenario: recorded, reused or generated responses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..profiles import get_profile
from ..profiles.base import WireProfile
from ..scenarios import get_scenario
from ..scenarios.model import Fault, HttpError, Raw, Reuse, Scenario, Stream, StreamError
from .cassette import Cassette, CassetteError, Interaction, load_cassette


@dataclass(frozen=True)
class ReplayInteraction:
    """One expected request and its response, ready to serve."""

    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: bytes
    fault: Fault | None
    optional: bool
    source: str
    """Where the response came from (cassette path or 'generated'), for failure messages."""
    request_body: str | None = None
    """The request recorded with the response (live recordings keep it; the custom profile matches on it)."""


class CassetteCache:
    """Cassettes are parsed once per process; scenarios reuse each other's. ``fallback`` is where a cassette
    missing from ``root`` is looked for next (the bundled ones, behind a user's --helix-cassette-dir)."""

    def __init__(self, root: Path, fallback: Path | None = None) -> None:
        self.root = root
        self.fallback = fallback if fallback != root else None
        self._cache: dict[tuple[str, str], Cassette] = {}

    def path_of(self, profile: str, scenario_id: str) -> Path | None:
        """Where the cassette this cache serves for the scenario lives, or None when there is none."""
        for root in (self.root, self.fallback):
            if root is None:
                continue
            path = root / profile / f"{scenario_id}.yaml"
            if path.is_symlink() and not path.exists():
                raise CassetteError(f"cassette {path} is a symbolic link to nothing ({path.readlink()})")
            if path.exists():
                return path
        return None

    def get(self, profile: str, scenario_id: str) -> Cassette:
        key = (profile, scenario_id)
        if key not in self._cache:
            path = self.path_of(profile, scenario_id)
            if path is None:
                raise CassetteError(
                    f"no cassette for scenario {scenario_id!r} of profile {profile!r}: expected "
                    f"{self.root / profile / f'{scenario_id}.yaml'}. Bundled cassettes ship with "
                    "helix-conformance; a custom cassette_dir must hold <profile>/<scenario>.yaml (record them "
                    "with --helix-record-mode=once)."
                )
            cassette = load_cassette(path)
            vet_cassette(cassette, profile, scenario_id)
            self._cache[key] = cassette
        return self._cache[key]


def vet_cassette(cassette: Cassette, profile_name: str, scenario_id: str) -> None:
    """Raise CassetteError unless the cassette stands for this scenario and profile: its provenance names
    them (when it does), and the profile's reader reads each response as the scenario's script has it — a
    complete stream, or one ending in an error event. A copied, renamed or truncated cassette is then
    reported as a cassette problem before any adapter is blamed for it."""
    for field_name, wanted in (("scenario", scenario_id), ("profile", profile_name)):
        said = cassette.provenance.get(field_name)
        if isinstance(said, str) and said != wanted:
            raise CassetteError(
                f"cassette {cassette.path} is for {field_name} {said!r} (says its provenance), not "
                f"{wanted!r}: copied or renamed from another {field_name}? Re-record or restore it"
            )
    try:
        scenario = get_scenario(scenario_id)
        profile = get_profile(profile_name)
    except KeyError:
        return  # not ours to judge: an unknown name is reported where it is used
    if profile.by_regression:
        return  # the custom profile cannot read responses
    exchanges = scenario.recorded_exchanges
    if len(cassette.interactions) < len(exchanges):
        raise CassetteError(
            f"cassette {cassette.path} has {len(cassette.interactions)} interactions; scenario "
            f"{scenario_id!r} needs {len(exchanges)}"
        )
    for index, (exchange, recorded) in enumerate(zip(exchanges, cassette.interactions)):
        problem = _unreadable(profile, recorded, exchange.response)
        if problem:
            raise CassetteError(f"cassette {cassette.path}, interaction {index}: {problem}")


def _unreadable(profile: WireProfile, recorded: Interaction, response: object) -> str | None:
    """Why the profile cannot read ``recorded`` as the scenario's ``response``, or None when it can."""
    try:
        summary = profile.summarise_response(recorded.status, recorded.headers, recorded.body)
    except RecursionError:
        return "its JSON is nested too deeply to read"
    except Exception as exc:  # a reader bug must not be blamed on the adapter either
        return f"the {profile.name} reader cannot read it ({type(exc).__name__}: {exc})"
    if recorded.status != 200:
        return f"it answers HTTP {recorded.status}; the scenario streams a 200 response"
    if isinstance(response, StreamError) and summary.result_type != "error":
        return f"it carries no error event; the scenario's {profile.name} stream ends with one"
    if isinstance(response, Stream) and response.finish is not None:
        if summary.problems:
            return (
                f"it is not a complete {profile.name} stream ({summary.problems[0]}): truncated, or "
                "another provider's format?"
            )
        if summary.result_type == "error":
            return f"it carries an error ({summary.error_type}); the scenario's stream answers normally"
    return None


def build_interactions(
    scenario: Scenario, profile: WireProfile, cassettes: CassetteCache
) -> list[ReplayInteraction]:
    """Resolve every exchange of the scenario into a concrete response, in request order."""
    out: list[ReplayInteraction] = []
    recorded_index = 0
    default_path = urlsplit(profile.endpoint_url("model")).path
    for exchange in scenario.exchanges:
        response = exchange.response
        if isinstance(response, (Stream, StreamError)):
            cassette = cassettes.get(profile.name, scenario.id)
            if recorded_index >= len(cassette.interactions):
                raise CassetteError(
                    f"cassette {cassette.path} has {len(cassette.interactions)} interactions; scenario "
                    f"{scenario.id!r} needs at least {recorded_index + 1}"
                )
            recorded = cassette.interactions[recorded_index]
            recorded_index += 1
            out.append(_from_recorded(recorded, str(cassette.path), exchange.fault, exchange.optional))
        elif isinstance(response, Reuse):
            source = get_scenario(response.scenario)
            cassette = cassettes.get(profile.name, source.id)
            out.append(
                _from_recorded(
                    cassette.interactions[0], str(cassette.path), exchange.fault, exchange.optional
                )
            )
        elif isinstance(response, HttpError):
            headers, body = profile.error_response(response)
            out.append(
                ReplayInteraction(
                    profile.endpoint_method,
                    default_path,
                    response.status,
                    headers,
                    body,
                    exchange.fault,
                    exchange.optional,
                    "generated error body",
                )
            )
        elif isinstance(response, Raw):
            out.append(
                ReplayInteraction(
                    profile.endpoint_method,
                    default_path,
                    response.status,
                    {"content-type": response.content_type},
                    response.body.encode(),
                    exchange.fault,
                    exchange.optional,
                    "generated raw body",
                )
            )
    return out


def _from_recorded(
    recorded: Interaction, source: str, fault: Fault | None, optional: bool
) -> ReplayInteraction:
    headers = {k: v for k, v in recorded.headers.items() if k not in _HOP_HEADERS}
    return ReplayInteraction(
        recorded.method,
        recorded.path,
        recorded.status,
        headers,
        recorded.body,
        fault,
        optional,
        source,
        recorded.request_body if isinstance(recorded.request_body, str) else None,
    )


_HOP_HEADERS = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection"})
