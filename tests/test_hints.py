"""A failure's hint never contradicts its own message (issue 33): where the clause's usual suspects do not fit
what happened, the check says what the evidence shows. Pinned on broken adapters whose message once came with
the wrong hint: STR-09 (a crash with sync callbacks, blamed on callbacks=None), NT-05 (a held-open connection
read until the read timeout, blamed on having no read timeout). HARN-03's imports: test_root_causes.py."""

from __future__ import annotations

from typing import Any

from broken_adapters import BROKEN_ADAPTERS
from broken_adapters.crashes import AWAITS_SYNC_CALLBACKS

from helix_conformance.clauses import get_clause
from helix_conformance.reporting.format import evidence_of
from helix_conformance.testing import run_conformance


def _failure(spec: Any, clause: str, scenario: str, outcome: str = "failed") -> dict[str, str]:
    report = run_conformance(spec, clauses=[clause], scenarios=[scenario], timeout=5.0, examples=2)
    (row,) = [r for r in report["results"] if r["clause"] == clause]
    assert row["outcome"] == outcome, row
    return {"message": row["message"], **evidence_of(row["message"])}


def test_a_crash_with_sync_callbacks_is_not_blamed_on_absent_ones() -> None:
    failure = _failure(AWAITS_SYNC_CALLBACKS.spec, "STR-09", "text_basic")
    assert (
        "with plain (sync) callbacks the step raised TypeError: object NoneType can't be used in 'await' "
        "expression (with coroutine callbacks it returns a StepResult)"
    ) in failure["message"]
    assert "inspect.isawaitable" in failure["hint"]
    assert failure["hint"] != get_clause("STR-09").common_mistakes  # that one is about callbacks=None
    assert "raised at (innermost last):" in failure["message"]
    assert "await callback(*args)" in failure["message"]


def test_a_connection_read_until_its_timeout_is_not_blamed_on_having_no_timeout() -> None:
    reads_past_done = next(b for b in BROKEN_ADAPTERS if b.name == "reads_past_done")
    failure = _failure(reads_past_done.spec, "NT-05", "text_basic", "should_failed")  # NT-05 is a SHOULD
    assert "the step returned only when the read of the held-open connection timed out" in failure["message"]
    assert failure["hint"].startswith("The adapter has a read timeout (it returned when the read timed out)")
    assert "timeout=None" not in failure["hint"]
