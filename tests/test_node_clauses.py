"""The clauses judged the Node way (docs/contract.md), each catching its broken Node adapter and passing the
correct one: NT-01 on an unhandled rejection, NT-03 through the step's AbortSignal, HARN-04 on timers left
scheduled. The broken adapters are tests/broken_adapters/node/*.mjs; the control is the minimal adapter they
wrap."""

from __future__ import annotations

import re

import pytest
from test_node_driver import MINIMAL, _gate, _node

# slow: broken Node adapters through the driver end to end; the driver's unit tests are fast
pytestmark = pytest.mark.slow

SELECTION = "openai-chat::text_basic:: and (NT-01 or NT-03 or HARN-04)"
BROKEN = {
    "unhandled_rejection.mjs": "NT-01",
    "swallows_cancellation.mjs": "NT-03",
    "leaves_a_timer.mjs": "HARN-04",
}


def _failed(stdout: str) -> set[str]:
    return set(re.findall(r"^FAILED \S+::text_basic::([A-Z]+-\d+)\]", stdout, re.MULTILINE))


def test_the_correct_adapter_passes_them() -> None:
    _node()
    done = _gate(MINIMAL, SELECTION, "--helix-strict", "-rs")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout, done.stdout[-3000:]  # judged, not skipped


@pytest.mark.parametrize(("adapter", "clause"), sorted(BROKEN.items()))
def test_a_broken_node_adapter_fails_its_clause_only(adapter: str, clause: str) -> None:
    _node()
    done = _gate(f"node:tests/broken_adapters/node/{adapter}", SELECTION, "--helix-strict")
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-2000:]
    assert _failed(done.stdout) == {clause}, done.stdout[-4000:]
