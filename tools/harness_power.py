"""Harness power: line and branch coverage of the reference adapters under the conformance suite, and the share of
first-order mutants of them the suite kills. ``python tools/harness_power.py --help``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hpower.cli import main

if __name__ == "__main__":
    sys.exit(main())
