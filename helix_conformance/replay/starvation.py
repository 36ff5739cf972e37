"""Time the machine kept the loop's thread waiting for a CPU: the load's, not the provider's silence.

On a loaded machine (a CI runner with more runnable processes than cores) a thread that is ready to run can
wait for a CPU for a second or more. The adapter's idle timer then fires although the replay sent everything
at once: a full fault sweep on 2 cores beside 14 busy processes failed a conforming adapter so ("no data
received for 1 s", with no request made yet). Linux counts that wait per thread: the second field of
``/proc/thread-self/schedstat`` is the nanoseconds the thread spent runnable on a run queue, not running.
The virtual-time loop leaves it off its clock (replay/clock.py), so a timer judges the replay's silence
and the adapter's own work, not the machine's load. Without schedstat (not Linux) nothing is left off.
"""

from __future__ import annotations

import contextlib
import os

SCHEDSTAT = "/proc/thread-self/schedstat"

SAMPLE_EVERY_S = 0.002
"""The clock reads the meter at most this often: a shorter wait for a CPU cannot fire a timer that matters."""


class StarvationMeter:
    """Seconds the thread that opened the meter has waited for a CPU since then (0.0 where not measurable)."""

    def __init__(self) -> None:
        self._last = 0
        self._fd: int | None = None
        with contextlib.suppress(OSError):
            self._fd = os.open(SCHEDSTAT, os.O_RDONLY)  # names the opening thread, whoever reads it later
        self._base = self._read_ns()

    def _read_ns(self) -> int:
        fd = self._fd
        if fd is not None:
            try:
                self._last = int(os.pread(fd, 128, 0).split()[1])
            except (OSError, ValueError, IndexError):
                self.close()  # the last reading stands from now on
        return self._last

    def waited_s(self) -> float:
        """Seconds spent runnable but not running since the meter was opened (the last reading, once the
        file cannot be read any more)."""
        return max(0, self._read_ns() - self._base) / 1e9

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
