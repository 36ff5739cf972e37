"""Virtual time in replay (replay/clock.py), judged in a fresh process: tests/virtual_time_cases.py.

Whether the clock may jump depends on every thread of the process (a busy one stops it), and an in-process
run elsewhere in the test session may leave an adapter's thread spinning or sleeping (the hostile adapters
do, on purpose) for the rest of that pytest-xdist worker. The cases run in a pytest process of their own, as
the adapter's worker process is one of its own in a real run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CASES = Path(__file__).with_name("virtual_time_cases.py")
STUCK_AFTER_S = 120
"""No case takes more than seconds; one this long is stuck."""


def test_virtual_time_cases_in_a_process_of_their_own() -> None:
    command = [sys.executable, "-m", "pytest", str(CASES), "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    # A case stuck (a deadlock between threads) dumps every thread's stack to stderr, shown below.
    command += ["-o", f"faulthandler_timeout={STUCK_AFTER_S}"]
    try:
        done = subprocess.run(
            command,
            cwd=CASES.parent,
            capture_output=True,
            text=True,
            timeout=STUCK_AFTER_S + 60,
            check=False,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(CASES.parent), os.environ.get("PYTHONPATH", "")]),
            },
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        pytest.fail(f"the cases did not finish; their threads when one got stuck:\n{stderr[-8000:]}")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    cases = CASES.read_text(encoding="utf-8").count("\ndef test_")
    assert f"{cases} passed" in done.stdout, done.stdout[-2000:]
