"""``helix-conformance driver``: where the Node driver of this installation is, and ``--pack DIR`` to make its npm
tarball, so a TypeScript project can install ``@helix-conformance/driver`` (its types, ``HelixError``) before it
is published on the npm registry: ``npm install --save-dev "$(helix-conformance driver --pack .)"``."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from . import UsageFailure

HELP = "print the Node driver's folder (pytest --adapter=node:...), or pack it as an npm tarball (--pack DIR)"
PACK_TIMEOUT_S = 120


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pack",
        metavar="DIR",
        type=Path,
        help="write the npm tarball of @helix-conformance/driver into DIR (npm pack) and print its path",
    )


def run(args: argparse.Namespace) -> int:
    from ..worker.node import DRIVER_BIN, bundled_driver

    folder = bundled_driver()
    if not (folder / DRIVER_BIN).is_file():
        raise UsageFailure(f"this installation has no Node driver ({folder / DRIVER_BIN} is missing)")
    if args.pack is None:
        print(folder)
        return 0
    print(pack(folder, args.pack))
    return 0


def pack(folder: Path, into: Path) -> Path:
    """``npm pack`` the driver folder into ``into``: the tarball's path (a usage error without npm)."""
    npm = shutil.which("npm")
    if npm is None:
        raise UsageFailure("--pack needs npm on PATH (it runs `npm pack`)")
    if not into.is_dir():
        raise UsageFailure(f"--pack {into}: not a directory")
    done = subprocess.run(
        [npm, "pack", str(folder), "--pack-destination", str(into.resolve()), "--silent"],
        capture_output=True,
        text=True,
        timeout=PACK_TIMEOUT_S,
        check=False,
        cwd=into,
    )
    name = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or not name:
        raise UsageFailure(f"`npm pack {folder}` failed: {done.stderr.strip()[-500:] or done.stdout[-500:]}")
    return into.resolve() / name
