"""From the user's settings to a recording plan, refusing up front what cannot work (no key, nowhere to
write, parallel workers) with the fix in the message. Shared by the pytest plugin and the standalone run."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..contract import AdapterSpec
from ..profiles.base import WireProfile
from ..scenarios import scenarios_for
from ..scenarios.model import Scenario
from .recorder import RecordOutcome, RecordSettings, key_env_of


class RecordingUsageError(Exception):
    """The recording cannot start; the message says why and what to do."""


def record_settings(
    spec: AdapterSpec,
    profile: WireProfile,
    mode: str,
    cassette_dir: Path | None,
    *,
    base_url: str | None = None,
    timeout: float = 0.0,
    parallel: bool = False,
    environ: Mapping[str, str] = os.environ,
) -> RecordSettings | None:
    """The settings of a recording run, or None when ``mode`` is ``none`` (replay only)."""
    if mode == "none":
        return None
    flag = f"--helix-record-mode={mode}"
    if not profile.replays:
        raise RecordingUsageError(f"{flag}: wire profile {profile.name!r} makes no HTTP requests to record")
    if parallel:
        raise RecordingUsageError(
            f"{flag}: recording talks to the live provider one scenario at a time; run it without "
            "pytest-xdist workers (-n 0 or -p no:xdist), then replay in parallel as usual"
        )
    root = cassette_dir or spec.cassette_dir
    if root is None:
        raise RecordingUsageError(
            f"{flag}: say where to write the cassettes with --helix-cassette-dir=DIR (or "
            "AdapterSpec.cassette_dir); the bundled cassettes inside the installed package are never written"
        )
    env = key_env_of(spec, profile)
    if env is None:
        raise RecordingUsageError(
            f"{flag}: adapter {spec.name!r} speaks {profile.name!r}, for which no key variable is known; set "
            "AdapterSpec.api_key_env to the environment variable holding the provider key"
        )
    key = environ.get(env, "")
    if not key.strip():
        raise RecordingUsageError(
            f"{flag}: records live and needs the provider key in the environment variable {env}, which is "
            "empty or unset (replaying needs no key: drop --helix-record-mode)"
        )
    return RecordSettings(mode=mode, root=Path(root), api_key=key.strip(), base_url=base_url, timeout=timeout)


def scenarios_to_record(profile: WireProfile) -> list[Scenario]:
    """Every scenario of the profile that owns a cassette; those without a live form say so when recorded."""
    return [s for s in scenarios_for(profile.name) if s.recorded_exchanges and profile.runs_scenario(s)]


def summary_line(outcomes: Sequence[RecordOutcome]) -> str:
    counts: Counter[str] = Counter(o.action for o in outcomes)
    order = ("recorded", "rewritten", "kept", "authored", "refused", "failed")
    shown = ", ".join(f"{counts[a]} {a}" for a in order if counts[a])
    return f"recording: {shown or 'nothing to record'}"
