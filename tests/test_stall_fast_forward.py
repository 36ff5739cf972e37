"""A stalled read ends in the client's own ReadTimeout without the harness waiting it out: an adapter with a
realistic read timeout (60 s, the official SDKs' 600 s) passes NT-04 in well under a second, while one with
no read timeout still fails it."""

from __future__ import annotations

import time
from typing import Any

from helix_conformance.contract import AdapterSpec
from helix_conformance.replay.transport import STALL_FAST_FORWARD_S, stall_wait_s
from helix_conformance.testing import run_conformance
from reference_adapters.openai_chat import OpenAIChatAdapter
from reference_adapters.openai_chat import spec as reference


def _spec(read_timeout: float) -> AdapterSpec:
    return AdapterSpec(
        name=f"read-timeout-{read_timeout:g}",
        # The context's short timeout is ignored on purpose: the adapter keeps its own, as many do.
        factory=lambda ctx: OpenAIChatAdapter(
            api_key=ctx.api_key, base_url=ctx.base_url, timeout=read_timeout
        ),
        wire_profile="openai-chat",
        model=reference.model,
        capabilities=reference.capabilities,
    )


def test_the_wait_is_the_clients_timeout_capped() -> None:
    assert stall_wait_s(0.1) == 0.1
    assert stall_wait_s(600.0) == STALL_FAST_FORWARD_S
    assert stall_wait_s(None) >= 3600  # no read timeout: the stall never ends by itself


def test_a_realistic_read_timeout_ends_a_stall_without_the_harness_waiting_it_out() -> None:
    started = time.monotonic()
    report: dict[str, Any] = run_conformance(
        _spec(600.0), clauses=["NT-04"], scenarios=["stall_read_timeout"]
    )
    elapsed = time.monotonic() - started
    outcomes = {r["scenario"]: r["outcome"] for r in report["results"]}
    assert outcomes == {"stall_read_timeout": "passed"}, report["results"]
    assert elapsed < 5, elapsed
