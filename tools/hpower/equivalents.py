"""Surviving mutants triaged as equivalent (``tools/equivalent_mutants.yaml``): nothing a user observes
changes, so no scenario could kill them. They are subtracted from the survivors and listed apart; an
entry that matches no mutant any more (the line moved or changed) is stale and reported."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from .mutator import Mutant

_FIELDS = ("file", "line", "mutation", "source", "why")


class EquivalentsError(Exception):
    """The equivalents file cannot be used (one line: which entry, what is wrong)."""


@dataclass(frozen=True)
class Equivalent:
    """One triaged mutant: where, which mutation, the line as it read when triaged, and why it is
    equivalent."""

    file: str
    line: int
    mutation: str
    source: str
    why: str

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.file, self.line, self.mutation)


def load(path: Path) -> list[Equivalent]:
    """The entries of ``path`` (a missing file is an empty list), validated."""
    if not path.exists():
        return []
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise EquivalentsError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise EquivalentsError(
            f"{path}: expected a list of entries ({', '.join(_FIELDS)}), got {type(raw).__name__}"
        )
    entries = [_entry(path, number, item) for number, item in enumerate(raw, 1)]
    seen: set[tuple[str, int, str]] = set()
    for number, entry in enumerate(entries, 1):
        if entry.key in seen:
            raise EquivalentsError(
                f"{path}: entry {number} repeats {entry.file}:{entry.line} {entry.mutation}"
            )
        seen.add(entry.key)
    return entries


def _entry(path: Path, number: int, item: object) -> Equivalent:
    where = f"{path}: entry {number}"
    if not isinstance(item, dict):
        raise EquivalentsError(f"{where}: expected a mapping with {', '.join(_FIELDS)}")
    unknown = sorted(set(item) - set(_FIELDS))
    missing = [name for name in _FIELDS if name not in item]
    if unknown or missing:
        raise EquivalentsError(f"{where}: missing {missing or 'nothing'}, unknown {unknown or 'nothing'}")
    if not isinstance(item["line"], int) or isinstance(item["line"], bool) or item["line"] < 1:
        raise EquivalentsError(f"{where}: `line` must be a positive integer")
    for name in ("file", "mutation", "source", "why"):
        if not isinstance(item[name], str) or not item[name].strip():
            raise EquivalentsError(f"{where}: `{name}` must be a non-empty string")
    return Equivalent(item["file"], item["line"], item["mutation"], item["source"], item["why"])


@dataclass
class Triage:
    """Entries matched to this run's mutants, and those that match nothing (with the reason)."""

    matched: dict[tuple[str, int, str], Equivalent]
    stale: list[tuple[Equivalent, str]]


def match(entries: Iterable[Equivalent], mutants: Iterable[Mutant], files: Iterable[str]) -> Triage:
    """Match entries of ``files`` against every mutant of those files (the sample does not matter)."""
    by_key = {mutant.key: mutant for mutant in mutants}
    in_scope = set(files)
    matched: dict[tuple[str, int, str], Equivalent] = {}
    stale: list[tuple[Equivalent, str]] = []
    for entry in entries:
        if entry.file not in in_scope:
            continue
        mutant = by_key.get(entry.key)
        if mutant is None:
            stale.append((entry, "no such mutant any more (the line moved or the code changed)"))
        elif mutant.source_line != entry.source.strip():
            stale.append((entry, f"the line now reads {mutant.source_line!r}"))
        else:
            matched[entry.key] = entry
    return Triage(matched, stale)
