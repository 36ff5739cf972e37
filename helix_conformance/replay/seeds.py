"""The adapter's random numbers in replay: drawn from a seed that is the scenario's, not the session's.

An adapter's jitter (botocore's retry backoff, the ``openai`` SDK's) decides whether a retry comes before the
delay a 429 asked for (CFG-05); left to the process's random state, the same adapter passed in one session
and failed in the next. Each run seeds ``random`` (Python) or ``Math.random`` (the Node driver, from the run
message's ``seed``) with the scenario's own number, so a run draws the same values whichever worker runs it,
in whichever order: the verdict is the same every session.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
from collections.abc import Iterator

SEED_LABEL = "helix-conformance run seed"


def run_seed(scenario_id: str) -> int:
    """The scenario's seed: 32 bits of a digest of its id (stable across processes, Python versions and
    languages; ``hash()`` is not)."""
    digest = hashlib.sha256(f"{SEED_LABEL}:{scenario_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


@contextlib.contextmanager
def seeded_random(scenario_id: str) -> Iterator[None]:
    """``random`` seeded for the run, the caller's state put back after it (an in-process run shares pytest's
    process, whose own draws must not change)."""
    state = random.getstate()
    random.seed(run_seed(scenario_id))
    try:
        yield
    finally:
        random.setstate(state)
