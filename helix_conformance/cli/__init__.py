"""The ``helix-conformance`` command: one subcommand per module, each with ``add_parser`` and ``run``.

``COMMANDS`` names each subcommand's module; the modules keep heavy imports inside ``run`` so that building
the parser (for ``--help``) stays cheap.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Protocol


class Command(Protocol):
    """What a subcommand module provides."""

    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


COMMANDS: dict[str, str] = {
    "list": "helix_conformance.cli.listing",
    "explain": "helix_conformance.cli.explain",
    "replay": "helix_conformance.cli.replay",
    "report": "helix_conformance.cli.report",
    "import": "helix_conformance.cli.import_cmd",
    "scan": "helix_conformance.cli.scan",
    "driver": "helix_conformance.cli.driver",
}
"""Subcommand name -> module implementing it (loaded only when that subcommand runs or --help is shown)."""


class UsageFailure(Exception):
    """Bad input from the user: printed as one line on stderr, exit status 2, never a traceback."""


def _load(name: str) -> Command:
    command: Command = importlib.import_module(COMMANDS[name])
    return command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="helix-conformance",
        description="Helix Agents adapter conformance: tools around the pytest suite (pytest --adapter=NAME).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        command = _load(name)
        command.add_arguments(sub.add_parser(name, help=command.HELP, description=command.HELP))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return _load(args.command).run(args)
    except UsageFailure as exc:
        print(f"helix-conformance {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `helix-conformance explain X | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
