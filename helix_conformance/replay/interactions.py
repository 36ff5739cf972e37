"""Build what the replayed provider answers for one scenario: recorded, reused or generated responses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

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
            if root is not None and (root / profile / f"{scenario_id}.yaml").exists():
                return root / profile / f"{scenario_id}.yaml"
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
            self._cache[key] = load_cassette(path)
        return self._cache[key]


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
