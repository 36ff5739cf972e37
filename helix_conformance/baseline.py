"""The baseline of known failures (``--helix-baseline=FILE``): listed clause x scenario failures do not fail
the gate, and a listed entry that passes again fails it as stale, so a baseline can only shrink.

A YAML file, one entry per clause x scenario, each with the reason it is accepted. ``--helix-write-baseline``
writes it from a run. Loading validates everything up front: a typo must not silently baseline nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from ._files import write_atomic
from ._yaml import YamlRefused, read_yaml_file
from .clauses import CLAUSES
from .scenarios.recorded import RECORDED_PREFIX

FORMAT_VERSION = 1
DEFAULT_PATH = "helix-baseline.yaml"
HEADER = """\
# helix-conformance baseline: known failures that do not fail the gate (--helix-baseline=FILE).
# One entry per clause x scenario, each with the reason it is accepted for now. An entry that passes again
# fails the gate as stale: delete it. Regenerate with --helix-write-baseline.
"""


class BaselineError(Exception):
    """The baseline file cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class BaselineEntry:
    clause: str
    scenario: str
    reason: str
    profile: str | None = None
    """When set, the entry applies to that wire profile only."""

    def matches(self, profile: str, scenario: str, clause: str) -> bool:
        return self.clause == clause and self.scenario == scenario and self.profile in (None, profile)

    @property
    def key(self) -> str:
        return f"{self.profile or '*'}::{self.scenario}::{self.clause}"


@dataclass(frozen=True)
class Baseline:
    path: Path
    entries: tuple[BaselineEntry, ...] = ()
    adapter: str | None = None
    """The --adapter value of the run that wrote it (``--helix-write-baseline``); None in a hand-written one."""
    profile: str | None = None
    """The wire profile of that adapter."""

    def mismatch(self, adapter: str, profile: str) -> tuple[str | None, str | None]:
        """(error, warning) for using this baseline with ``adapter`` speaking ``profile``: written for another
        wire profile, its entries name another wire's checks (refused); for another adapter name on the same
        wire, it may be the same adapter named another way (``mypkg`` / ``mypkg.conformance:spec``): said."""
        written = f"baseline {self.path} was written for adapter {self.adapter!r}"
        if self.profile is not None and self.profile != profile:
            return (
                f"{written} (wire profile {self.profile!r}); this run's adapter {adapter!r} speaks {profile!r}, "
                "so its entries are another adapter's known failures. Pass this adapter's baseline, or write "
                "one with --helix-write-baseline (and a --helix-baseline path of its own).",
                None,
            )
        if self.adapter is not None and self.adapter != adapter:
            return None, (
                f"warning: {written}, this run is --adapter={adapter} (the same wire profile {profile!r}): its "
                "entries are applied; if it belongs to another adapter, give this one a baseline of its own"
            )
        return None, None

    def find(self, profile: str, scenario: str, clause: str) -> BaselineEntry | None:
        for entry in self.entries:
            if entry.matches(profile, scenario, clause):
                return entry
        return None


def load_baseline(path: Path, scenario_ids: Iterable[str]) -> Baseline:
    """Read and validate ``path``; unknown clauses or scenarios, missing reasons and duplicates are errors."""
    where = str(path)
    try:
        data = read_yaml_file(path)
    except FileNotFoundError:
        raise BaselineError(
            f"baseline {where} does not exist (create it with --helix-write-baseline)"
        ) from None
    except YamlRefused as exc:
        raise BaselineError(f"baseline {where} {exc}") from None
    if data is None:
        return Baseline(path)
    if not isinstance(data, dict) or not isinstance(data.get("entries", []), list):
        raise BaselineError(f"baseline {where}: expected a mapping with a list under 'entries'")
    unknown_top = set(data) - {"version", "adapter", "profile", "entries"}
    if unknown_top:
        raise BaselineError(f"baseline {where}: unknown key(s) {', '.join(sorted(map(str, unknown_top)))}")
    if data.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        raise BaselineError(
            f"baseline {where}: version {data.get('version')!r} is not supported (expected {FORMAT_VERSION})"
        )
    known_scenarios = set(scenario_ids)
    entries: list[BaselineEntry] = []
    seen: set[str] = set()
    for number, raw in enumerate(data.get("entries") or [], start=1):
        entry = _entry(raw, f"baseline {where}, entry {number}", known_scenarios)
        if entry.key in seen:
            raise BaselineError(f"baseline {where}, entry {number}: {entry.key} is listed twice")
        seen.add(entry.key)
        entries.append(entry)
    adapter, profile = data.get("adapter"), data.get("profile")
    for key, value in (("adapter", adapter), ("profile", profile)):
        if value is not None and not isinstance(value, str):
            raise BaselineError(f"baseline {where}: {key!r} must be a string, not {value!r}")
    return Baseline(path, tuple(entries), adapter, profile)


def _entry(raw: object, where: str, known_scenarios: set[str]) -> BaselineEntry:
    if not isinstance(raw, dict):
        raise BaselineError(f"{where}: expected a mapping with clause, scenario and reason")
    unknown = set(raw) - {"clause", "scenario", "reason", "profile"}
    if unknown:
        raise BaselineError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    for key in ("clause", "scenario", "reason"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise BaselineError(f"{where}: '{key}' is missing or empty (every entry needs a reason)")
    clause, scenario = raw["clause"].strip(), raw["scenario"].strip()
    if clause not in CLAUSES:
        raise BaselineError(f"{where}: {clause!r} is not a clause id of the contract")
    # A recorded scenario (a user's recordings too) is checked against the plan: Gate.check_entries_exist.
    if scenario not in known_scenarios and not scenario.startswith(RECORDED_PREFIX):
        raise BaselineError(f"{where}: {scenario!r} is not a scenario of this suite (renamed or removed?)")
    profile = raw.get("profile")
    if profile is not None and not isinstance(profile, str):
        raise BaselineError(f"{where}: 'profile' must be a wire profile name")
    return BaselineEntry(clause, scenario, raw["reason"].strip(), profile)


def write_baseline(path: Path, entries: Iterable[BaselineEntry], adapter: str, profile: str) -> int:
    """Write atomically, sorted by clause then scenario so the file diffs well; returns the entry count. The
    adapter and its wire profile are recorded, so the file is not used for another adapter unnoticed."""
    ordered = sorted(entries, key=lambda e: (e.clause, e.scenario, e.profile or ""))
    body = {
        "version": FORMAT_VERSION,
        "adapter": adapter,
        "profile": profile,
        "entries": [
            {
                "clause": e.clause,
                "scenario": e.scenario,
                **({"profile": e.profile} if e.profile else {}),
                "reason": e.reason,
            }
            for e in ordered
        ],
    }
    write_atomic(path, HEADER + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=110))
    return len(ordered)
