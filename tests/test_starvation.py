"""The machine's load is left off the run's clock (replay/starvation.py, replay/clock.py).

A loaded CI runner kept a conforming adapter's thread off the CPU for over a second, and its 1 s idle timer
fired although the replay had sent everything. These tests starve a thread for real: it and busy processes
share one CPU (``sched_setaffinity``), so it waits on the run queue most of the time.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from helix_conformance.replay.clock import VirtualTimeLoop
from helix_conformance.replay.starvation import SCHEDSTAT, StarvationMeter

pytestmark = pytest.mark.skipif(
    not Path(SCHEDSTAT).exists(), reason=f"{SCHEDSTAT} is Linux's: elsewhere the load is not measured"
)

BUSY = "while True: pass"


@contextmanager
def starved(burners: int = 3) -> Iterator[None]:
    """This thread shares one CPU with ``burners`` busy processes while the block runs."""
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    procs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(burners)]
    try:
        for proc in procs:
            os.sched_setaffinity(proc.pid, {cpu})
        os.sched_setaffinity(0, {cpu})
        yield
    finally:
        os.sched_setaffinity(0, allowed)
        for proc in procs:
            proc.kill()
            proc.wait()


def spin(seconds: float) -> float:
    """Compute for ``seconds`` of wall time; the CPU seconds this thread got meanwhile."""
    cpu, end = time.thread_time(), time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return time.thread_time() - cpu


def test_the_meter_counts_the_time_a_thread_waited_for_a_cpu() -> None:
    meter = StarvationMeter()
    try:
        with starved():
            started = time.monotonic()
            before = meter.waited_s()
            cpu = spin(0.6)
            waited = meter.waited_s() - before
            wall = time.monotonic() - started
    finally:
        meter.close()
    # Four busy tasks on one CPU: each runs about a quarter of the time, and waits to run the rest of it.
    assert waited > 0.2, (waited, cpu, wall)
    assert waited + cpu <= wall + 0.02, (waited, cpu, wall)


def test_the_loop_clock_counts_the_adapters_work_but_not_the_wait_for_a_cpu() -> None:
    """A 0.3 s idle timer does not fire over 0.6 s of wall time that was mostly the load's."""

    async def step() -> tuple[float, float, list[bool]]:
        loop = asyncio.get_running_loop()
        fired: list[bool] = []
        started = loop.time()
        loop.call_later(0.3, fired.append, True)
        cpu = spin(0.6)
        for _ in range(3):
            await asyncio.sleep(0)  # a timer due now would run in these turns
        return loop.time() - started, cpu, fired

    loop = VirtualTimeLoop()
    try:
        with starved():
            elapsed, cpu, fired = loop.run_until_complete(step())
    finally:
        loop.close()
    assert loop.starved_s > 0.2, (elapsed, cpu, loop.starved_s)
    assert cpu - 0.02 <= elapsed < 0.3, (elapsed, cpu, loop.starved_s)
    assert not fired


def test_the_clock_never_goes_back_when_the_wait_is_read_late() -> None:
    class Meter:
        waited = 0.0

        def waited_s(self) -> float:
            return self.waited

        def close(self) -> None:
            pass

    loop = VirtualTimeLoop()
    meter = Meter()
    loop._meter = meter  # type: ignore[assignment]  # the load, as the test says
    try:
        first = loop.time()
        time.sleep(0.01)
        meter.waited = 5.0  # read after the fact: the clock stands still until real time catches up
        assert loop.time() == first
        time.sleep(0.01)
        assert loop.time() == first
        meter.waited = 0.0
        time.sleep(0.003)
        assert loop.time() > first
    finally:
        loop.close()
