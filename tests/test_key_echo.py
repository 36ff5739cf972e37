"""ERR-07 where it matters: a server that echoes the key (``http_401_key_echoed``). The scenario's body carries
the very key adapters are handed in replay, and a redacting adapter passes with the rest of the message kept.
The adapters that leak are in ``tests/broken_adapters/power.py``."""

from __future__ import annotations

from helix_conformance.replay.runner import REPLAY_API_KEY
from helix_conformance.scenarios import get_scenario
from helix_conformance.scenarios.failures import REPLAYED_KEY
from helix_conformance.testing import run_conformance
from reference_adapters.openai_chat import spec as openai_reference


def test_the_echoed_key_is_the_key_adapters_are_given() -> None:
    assert REPLAYED_KEY == REPLAY_API_KEY
    body = get_scenario("http_401_key_echoed").exchanges[0].response.body  # type: ignore[union-attr]
    assert REPLAY_API_KEY in body


def test_a_redacting_adapter_passes_on_the_echoed_key() -> None:
    report = run_conformance(openai_reference, scenarios=["http_401_key_echoed"], timeout=5.0)
    outcomes = {row["clause"]: row["outcome"] for row in report["results"]}
    assert outcomes["ERR-07"] == "passed"
    assert {"ERR-01", "ERR-02"} <= {clause for clause, outcome in outcomes.items() if outcome == "passed"}
