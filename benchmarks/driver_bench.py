"""Speed of an adapter run by a driver (``node:``, ``cmd:``): one driver against a pool of them.

A foreign adapter's timers are real (virtual time is the Python worker's), so its suite mostly waits: stalls
until its read timeout, retry backoff. ``--helix-workers=N`` runs N drivers side by side (worker/driver_pool.py).
By default the adapter is the Python driver of ``tests/fake_driver.py`` running the reference openai adapter
in real time (nothing to install); ``--drivers ADAPTER`` measures another, such as the Vercel AI SDK example.
Minutes per round, so only on request (``run.py --drivers``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from measure import ROOT, Row, Samples, interleave, pytest_wall, seconds, with_noise

FAKE_DRIVER = f"cmd:{sys.executable} {ROOT / 'tests' / 'fake_driver.py'} --adapter openai"
POOL_SIZES = (1, 2, 4)


def driver_rows(rounds: int, adapter: str | None = None) -> tuple[list[Row], list[Samples]]:
    adapter = adapter or FAKE_DRIVER
    shown = "the fake driver (reference openai, real time)" if adapter == FAKE_DRIVER else adapter
    with tempfile.TemporaryDirectory(prefix="helix-drivers-") as tmp:
        figures = {
            str(n): pytest_wall(
                [f"--adapter={adapter}", f"--helix-workers={n}", "-q", "-p", "no:randomly"],
                Path(tmp),
                ok=(0, 1),  # a foreign adapter may fail clauses: its time is what is measured
            )
            for n in POOL_SIZES
        }
        samples = interleave(figures, rounds)
    one = samples["1"]
    rows = [Row(f"**drivers: {shown}**", "")]
    rows.append(Row("  one driver (--helix-workers=1)", with_noise(seconds(one.median), one)))
    for n in POOL_SIZES[1:]:
        got = samples[str(n)]
        rows.append(
            Row(
                f"  {n} drivers (--helix-workers={n}) vs one",
                f"{with_noise(seconds(got.median), got)} vs {seconds(one.median)}",
                ratio=f"{got.median / one.median:.2f}×",
            )
        )
    return rows, list(samples.values())
