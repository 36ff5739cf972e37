"""Harness options: each settable on the command line, in the ini file or in the environment.

Precedence is CLI > ini > env > default, and the report header shows every effective value with its source.
Kept free of heavy imports: the plugin reads these in every pytest run.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True)
class Option:
    name: str
    """Long option without dashes, e.g. ``helix-timeout``."""
    help: str
    default: Any
    convert: Callable[[str], Any] = str
    flag: bool = False
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    @property
    def ini(self) -> str:
        """Every ini key and env var is namespaced: ``helix_adapter`` / ``HELIX_ADAPTER``."""
        return self.dest if self.dest.startswith("helix_") else f"helix_{self.dest}"

    @property
    def env(self) -> str:
        return self.ini.upper()


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected a boolean (true/false), got {text!r}")


MAX_TIMEOUT_S = 3600.0
"""A scenario's timeout is at most an hour: more is a typo, and the thread join overflows on 1e308."""


def parse_timeout(text: str) -> float:
    """Seconds a scenario may take: a finite number above 0, at most MAX_TIMEOUT_S (pytest and the CLI)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected a number of seconds, got {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise ValueError(f"must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError(f"must be a positive integer, got {text!r}")
    return value


def _shard(text: str) -> str:
    """``I/N``, normalised (``sharding.parse_shard`` reads it back)."""
    from .sharding import parse_shard

    return str(parse_shard(text))


RECORD_MODES = ("none", "once", "new", "rewrite")


def _record_mode(text: str) -> str:
    value = text.strip().lower()
    if value not in RECORD_MODES:
        raise ValueError(f"expected one of {', '.join(RECORD_MODES)}, got {text!r}")
    return value


OPTIONS: tuple[Option, ...] = (
    Option(
        "adapter",
        "run the Helix adapter conformance suite against NAME: a built-in (openai, anthropic, gemini, mock), an "
        "entry point of group helix_conformance.adapters, a module exposing `spec`, or pkg.module:attr",
        None,
        metavar="NAME",
    ),
    Option("helix-strict", "SHOULD clauses fail the gate too", False, _bool, flag=True),
    Option(
        "helix-timeout",
        "seconds one scenario may take before HARN-03 fails it (default 10)",
        10.0,
        parse_timeout,
        metavar="SECONDS",
    ),
    Option(
        "helix-examples",
        "random Hypothesis examples per property clause (STR-10, NT-02; default 3)",
        3,
        _positive_int,
        metavar="N",
    ),
    Option(
        "helix-seed",
        "seed for the property clauses (default: derandomized, the same every run)",
        None,
        int,
        metavar="SEED",
    ),
    Option(
        "helix-record-mode",
        "record cassettes live through the adapter (needs the provider key in the environment): none (replay "
        "only, the default), once (record every scenario of a profile that has no cassettes yet), new (record "
        "the scenarios whose cassette is missing), rewrite (re-record every scenario that has a live form)",
        "none",
        _record_mode,
        metavar="MODE",
    ),
    Option(
        "helix-cassette-dir",
        "read cassettes from DIR/<profile>/<scenario>.yaml first (falling back to the bundled ones) and write "
        "recordings there",
        None,
        metavar="DIR",
    ),
    Option(
        "helix-record-base-url",
        "base URL the adapter is given while recording (default: the provider's own)",
        None,
        metavar="URL",
    ),
    Option(
        "helix-report",
        "write the report of every clause x scenario to PATH; the extension picks the format (.json, .md, "
        ".html); several paths separated by commas",
        None,
        metavar="PATH",
    ),
    Option(
        "helix-badge",
        "write a shields.io endpoint badge (JSON) with the verdict to PATH",
        None,
        metavar="PATH",
    ),
    Option(
        "helix-baseline",
        "YAML file of known failures (clause x scenario, each with a reason): they do not fail the gate, "
        "and an entry that passes again fails it as stale",
        None,
        metavar="FILE",
    ),
    Option(
        "helix-write-baseline",
        "accept this run's failures: write them to the --helix-baseline file (default helix-baseline.yaml), "
        "keeping the reasons already there",
        False,
        _bool,
        flag=True,
    ),
    Option(
        "helix-real-time",
        "wait out the adapter's timers (retry backoff, retry-after, read timeouts) in real time; by default "
        "replay skips them on a virtual clock, so a run costs no waiting (docs/speed.md)",
        False,
        _bool,
        flag=True,
    ),
    Option(
        "helix-workers",
        "adapter worker processes (drivers, for node:/cmd: adapters) running scenarios side by side while "
        "pytest judges (default: 2 on a machine with 2 or more CPUs, 1 in each pytest-xdist worker)",
        None,
        _positive_int,
        metavar="N",
    ),
    Option(
        "helix-shard",
        "run shard I of N of the suite (whole scenarios, the same on every machine), e.g. 2/4 in a CI matrix; "
        "a shard is not the gate: join the shards' JSON reports with `helix-conformance report merge`",
        None,
        _shard,
        metavar="I/N",
    ),
    Option(
        "helix-quick",
        "a quick check for the edit loop, not a gate: every clause judged at least once, on one scenario of "
        "each delivery shape, without the fault corpus, random splits and corruptions on every shape "
        "(openai: about a tenth of the runs). Failures fail the run; a pass says QUICK CHECK — not a gate, "
        "and its reports are marked so (helix-conformance report --check refuses them)",
        False,
        _bool,
        flag=True,
    ),
    Option(
        "helix-in-process",
        "run the adapter inside pytest's process (a thread), so pdb and breakpoints work; for debugging only, "
        "not a gate: the adapter could end or rewrite the verdict. By default it runs in a worker process",
        False,
        _bool,
        flag=True,
    ),
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("helix-conformance", "Helix Agents adapter conformance")
    for option in OPTIONS:
        env_note = f" [env {option.env}, ini {option.ini}]"
        if option.flag:
            group.addoption(
                f"--{option.name}",
                action="store_true",
                default=None,
                dest=option.dest,
                help=option.help + env_note,
            )
        else:
            group.addoption(
                f"--{option.name}",
                action="store",
                default=None,
                dest=option.dest,
                metavar=option.metavar,
                help=option.help + env_note,
            )
        parser.addini(option.ini, option.help, default=None)


def _raw(config: pytest.Config, option: Option) -> tuple[Any, str, str]:
    """The first value set for ``option`` (CLI > ini > env), its source, and how the user spelled it."""
    cli = config.getoption(option.dest)
    if cli is not None:
        return cli, "cli", f"--{option.name}"
    ini = config.getini(option.ini)
    if ini not in (None, "", []):
        return str(ini), "ini", f"ini option {option.ini}"
    env = os.environ.get(option.env)
    if env not in (None, ""):
        return env, "env", f"environment variable {option.env}"
    return None, "default", ""


def spelled(dest: str, source: str, value: Any) -> str:
    """An option as the user set it, for its errors: ``--helix-report=r.txt``, ``HELIX_REPORT=r.txt (environment
    variable)`` or ``helix_report = r.txt (ini)``: the user must be able to find what to change."""
    option = next(o for o in OPTIONS if o.dest == dest)
    if source == "env":
        return f"{option.env}={value} (environment variable)"
    if source == "ini":
        return f"{option.ini} = {value} (ini)"
    return f"--{option.name}={value}"


def requested_adapter(config: pytest.Config) -> tuple[str | None, str]:
    """The adapter name and its source; checked first so runs without the suite never read other settings."""
    value, source, _ = _raw(config, OPTIONS[0])
    return (str(value) if value else None), source


def resolve(config: pytest.Config) -> dict[str, tuple[Any, str]]:
    """Effective value and its source (cli, ini, env, default) for every option."""
    resolved: dict[str, tuple[Any, str]] = {}
    for option in OPTIONS:
        value, source, spelled = _raw(config, option)
        if source == "default":
            resolved[option.dest] = (option.default, source)
            continue
        try:
            converted = True if option.flag and source == "cli" else option.convert(str(value))
        except ValueError as exc:
            raise pytest.UsageError(f"{spelled}: {exc}") from None
        resolved[option.dest] = (converted, source)
    return resolved


def check_cassette_dir(value: str | None, *, recording: bool, source: str = "cli") -> Path | None:
    """The --helix-cassette-dir path, refused up front when it cannot be what the user meant: missing (unless
    recording, which creates it), not a directory, or holding a symbolic link to nothing. Otherwise a missing
    cassette would silently be served from the bundled ones. ``source`` says where it was set (cli, env, ini)."""
    if not value:
        return None
    root = Path(value)
    flag = spelled("helix_cassette_dir", source, value)
    if root.is_symlink() and not root.exists():
        raise pytest.UsageError(f"{flag}: is a symbolic link to nothing ({root.readlink()})")
    if not root.exists():
        if recording:
            return root
        raise pytest.UsageError(
            f"{flag}: no such directory; give the directory holding <profile>/<scenario>.yaml (or drop the "
            "option to replay the bundled cassettes)"
        )
    if not root.is_dir():
        raise pytest.UsageError(f"{flag}: not a directory")
    try:
        entries = [*root.iterdir(), *(p for d in root.iterdir() if d.is_dir() for p in d.iterdir())]
    except OSError as exc:
        raise pytest.UsageError(f"{flag}: cannot be read ({exc.strerror or exc})") from None
    for entry in entries:
        if entry.is_symlink() and not entry.exists():
            raise pytest.UsageError(
                f"{flag}: {entry} is a symbolic link to nothing ({entry.readlink()}); fix or remove it"
            )
    return root


def unwritable(path: Path) -> str | None:
    """Why ``path`` cannot be written, or None. Missing folders are fine (the writers create them)."""
    if path.is_dir():
        return f"{path} is a directory"
    parent = path.parent
    while not parent.exists():
        if parent.is_symlink():
            return f"{parent} is a symbolic link to nothing"
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is not a directory"
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        return f"cannot write in {parent} ({exc.strerror or exc})"
    return None


def check_writable(outputs: Iterable[tuple[str, Path]]) -> None:
    """Reports, badge and baseline are written after the whole run: a path they cannot be written to is a
    usage error before anything runs, not a traceback at the end. ``outputs`` are (option as the user set it,
    path) pairs."""
    for flag, path in outputs:
        problem = unwritable(path)
        if problem:
            raise pytest.UsageError(f"{flag}: {path} cannot be written: {problem}")
