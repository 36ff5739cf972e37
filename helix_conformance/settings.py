"""Harness options: each settable on the command line, in the ini file or in the environment.

Precedence is CLI > ini > env > default, and the report header shows every effective value with its source.
Kept free of heavy imports: the plugin reads these in every pytest run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
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
    def env(self) -> str:
        return self.name.replace("-", "_").upper()


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected a boolean (true/false), got {text!r}")


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise ValueError(f"must be positive, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError(f"must be a positive integer, got {text!r}")
    return value


OPTIONS: tuple[Option, ...] = (
    Option(
        "adapter",
        "run the Helix adapter conformance suite against NAME: a built-in (openai, mock), an "
        "entry point of group helix_conformance.adapters, a module exposing `spec`, or pkg.module:attr",
        None,
        metavar="NAME",
    ),
    Option("helix-strict", "SHOULD clauses fail the gate too", False, _bool, flag=True),
    Option(
        "helix-timeout",
        "seconds one scenario may take before HARN-03 fails it (default 10)",
        10.0,
        _positive_float,
        metavar="SECONDS",
    ),
    Option(
        "helix-examples",
        "random Hypothesis examples per property clause (STR-10, NT-02; default 5)",
        5,
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
    Option("helix-report", "write a JSON report of every clause x scenario to PATH", None, metavar="PATH"),
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("helix-conformance", "Helix Agents adapter conformance")
    for option in OPTIONS:
        env_note = f" [env {option.env}, ini {option.dest}]"
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
        parser.addini(option.dest, option.help, default=None)


def resolve(config: pytest.Config) -> dict[str, tuple[Any, str]]:
    """Effective value and its source (cli, ini, env, default) for every option."""
    resolved: dict[str, tuple[Any, str]] = {}
    for option in OPTIONS:
        cli = config.getoption(option.dest)
        ini = config.getini(option.dest)
        env = os.environ.get(option.env)
        try:
            if cli is not None:
                value, source = (cli if option.flag else option.convert(cli)), "cli"
            elif ini not in (None, "", []):
                value, source = option.convert(str(ini)), "ini"
            elif env not in (None, ""):
                value, source = option.convert(str(env)), "env"
            else:
                value, source = option.default, "default"
        except ValueError as exc:
            raise pytest.UsageError(f"--{option.name}: {exc}") from None
        resolved[option.dest] = (value, source)
    return resolved
