"""Clause levels that match the evidence (issue 29): each relaxed or bounded rule still catches its broken
adapter, on the right clause, and passes what the contract allows.

- NT-04 / NT-05: reading on after the terminal event is NT-05 (SHOULD) when a read timeout ends the wait, NT-04
  (MUST) when nothing does; one cause, one clause.
- MSG-01 / MSG-05: system messages joined with whitespace into one system message pass both (joined with
  nothing, MSG-01 fails); TOOL-02 / TOOL-03: a strict tool leaves out what the strict mode cannot express.
- CFG-05: the bound (two minutes between attempts) is judged on the loop's clock, inclusive; a retry hint capped
  at 30 s (the foreign adapters) or at the bound itself passes, a looser cap fails with the wait it took, and the
  scenario's limit leaves room for the bound, so a capped wait is never reported as a hang.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from broken_adapters import BROKEN_ADAPTERS
from broken_adapters._base import broken
from broken_adapters.request_gaps import JoinsSystemMessages
from broken_adapters.retry_gaps import CapsRetryAfter

from helix_conformance.checks.schema_equivalence import differences
from helix_conformance.clauses import ADDED_SINCE_SPECIFICATION, CLAUSES, RETRY_AFTER_BOUND_S
from helix_conformance.contract import AdapterSpec
from helix_conformance.profiles.openai_chat import without_strict_inexpressible
from helix_conformance.testing import run_conformance

TIMEOUT = 3.0


def _broken(name: str) -> AdapterSpec:
    return next(adapter for adapter in BROKEN_ADAPTERS if adapter.name == name).spec


def _rows(
    spec: AdapterSpec, clauses: list[str], scenarios: list[str]
) -> dict[tuple[str, str], dict[str, Any]]:
    report = run_conformance(spec, clauses=clauses, scenarios=scenarios, timeout=TIMEOUT, examples=2)
    return {(row["clause"], row["scenario"]): row for row in report["results"]}


# --- NT-04 / NT-05 ---------------------------------------------------------------------------------------------


def test_the_held_open_wait_is_a_should_of_its_own() -> None:
    assert CLAUSES["NT-04"].level == "MUST"
    assert CLAUSES["NT-05"].level == "SHOULD"
    assert "NT-05" in ADDED_SINCE_SPECIFICATION


def test_reading_on_with_a_read_timeout_fails_nt05_only() -> None:
    rows = _rows(_broken("reads_past_done"), ["NT-04", "NT-05"], ["text_basic"])
    assert rows["NT-05", "text_basic"]["outcome"] == "should_failed", rows["NT-05", "text_basic"]
    assert "returned only when the read of the held-open connection timed out" in str(
        rows["NT-05", "text_basic"]["message"]
    )
    assert rows["NT-04", "text_basic"]["outcome"] == "passed", rows["NT-04", "text_basic"]["message"]


def test_reading_on_with_no_read_timeout_is_a_hang_reported_once_on_nt04() -> None:
    rows = _rows(_broken("reads_past_done_forever"), ["NT-04", "NT-05"], ["text_basic"])
    nt04, nt05 = rows["NT-04", "text_basic"], rows["NT-05", "text_basic"]
    assert nt04["outcome"] == "failed", nt04
    assert "no read timeout ends the wait" in str(nt04["message"])
    assert nt05["outcome"] in ("passed", "skipped"), nt05["message"]  # the hang is NT-04's alone


# --- CFG-05 ----------------------------------------------------------------------------------------------------


def _capping_at(cap_s: float) -> AdapterSpec:
    adapter = type(f"CapsAt{cap_s:g}", (CapsRetryAfter,), {"cap_s": cap_s})
    spec = _broken("waits_any_retry_after")
    return dataclasses.replace(
        spec,
        name=f"caps-retry-after-at-{cap_s:g}",
        factory=lambda ctx: adapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout),
    )


@pytest.mark.parametrize("cap_s", [30.0, RETRY_AFTER_BOUND_S])
def test_a_wait_capped_within_the_bound_passes(cap_s: float) -> None:
    rows = _rows(_capping_at(cap_s), ["CFG-05", "HARN-03", "RES-02"], ["retry_after_too_long"])
    for clause in ("CFG-05", "HARN-03", "RES-02"):
        row = rows[clause, "retry_after_too_long"]
        assert row["outcome"] == "passed", (clause, row["message"])


def test_a_cap_just_over_the_bound_fails_cfg05_with_the_wait_it_took() -> None:
    row = _rows(_capping_at(RETRY_AFTER_BOUND_S + 1), ["CFG-05"], ["retry_after_too_long"])[
        "CFG-05", "retry_after_too_long"
    ]
    assert row["outcome"] == "should_failed", row
    assert "the retry waited 121.0 s for a retry hint of 3600 s" in str(row["message"])


@pytest.mark.parametrize("name", ["waits_any_retry_after", "caps_retry_after_at_five_minutes"])
def test_a_wait_past_the_scenarios_limit_is_cfg05s_hang_not_harn03s(name: str) -> None:
    rows = _rows(_broken(name), ["CFG-05", "HARN-03"], ["retry_after_too_long"])
    row = rows["CFG-05", "retry_after_too_long"]
    assert row["outcome"] == "should_failed", row
    assert f"plus the {RETRY_AFTER_BOUND_S:g} s wait the contract allows here" in str(row["message"])
    assert rows["HARN-03", "retry_after_too_long"]["outcome"] != "failed"


# --- MSG-01 / MSG-05: two system messages joined ------------------------------------------------------------------


def test_system_messages_joined_with_whitespace_pass_msg01_and_msg05() -> None:
    spec = broken("joins_system_messages", JoinsSystemMessages, "MSG-01", ["system_two_messages"], "").spec
    rows = _rows(spec, ["MSG-01", "MSG-05"], ["system_two_messages", "system_multiturn"])
    wrong = {key: row["message"] for key, row in rows.items() if row["outcome"] != "passed"}
    assert not wrong, wrong


# --- TOOL-02 / TOOL-03: what a strict mode cannot express ------------------------------------------------------

STRICT = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "minLength": 3, "pattern": "^[a-z]+$"},
        "count": {"type": "integer", "minimum": 1},
        "site": {"type": "string", "format": "uri"},
    },
    "required": ["code", "count", "site"],
    "additionalProperties": False,
}


def _without(schema: dict[str, Any], prop: str, key: str) -> dict[str, Any]:
    properties = {
        **schema["properties"],
        prop: {k: v for k, v in schema["properties"][prop].items() if k != key},
    }
    return {**schema, "properties": properties}


def test_a_strict_tool_may_leave_out_what_strict_mode_cannot_express() -> None:
    sent = _without(
        _without(STRICT, "code", "minLength"), "site", "format"
    )  # pydantic-ai: to the description
    assert differences(STRICT, sent, complete_only=True)  # as plain schemas they differ...
    assert (
        differences(without_strict_inexpressible(STRICT), sent, complete_only=True) == []
    )  # ...not in strict


@pytest.mark.parametrize(("prop", "key"), [("count", "minimum"), ("code", "pattern")])
def test_a_strict_tool_that_drops_what_strict_mode_expresses_still_fails_tool02(prop: str, key: str) -> None:
    sent = _without(STRICT, prop, key)
    assert differences(without_strict_inexpressible(STRICT), sent, complete_only=True)


class DeclinesLongHints(CapsRetryAfter):
    """Surfaces the 429 when its hint is over the bound, as the openai SDK does (``_should_retry``)."""

    async def _generate(self, input: Any, guard: Any, emit: Any) -> Any:
        return await super()._generate(
            input.model_copy(update={"config": input.config.model_copy(update={"max_retries": 0})}),
            guard,
            emit,
        )


class DeclinesWithTheWrongCode(DeclinesLongHints):
    """Declines the hint, but returns the 429 as a provider_error: not what the provider said."""

    async def _generate(self, input: Any, guard: Any, emit: Any) -> Any:
        result = await super()._generate(input, guard, emit)
        result.error.code = "provider_error"
        return result


class DeclinesAsNotRetryable(DeclinesLongHints):
    """Declines the hint and, as the retry policy gave up on it, returns the 429 retryable=False (CFG-04)."""

    async def _generate(self, input: Any, guard: Any, emit: Any) -> Any:
        result = await super()._generate(input, guard, emit)
        result.error.retryable = False
        return result


def _declining(adapter: type[CapsRetryAfter]) -> AdapterSpec:
    return dataclasses.replace(
        _broken("waits_any_retry_after"),
        name="declines-long-hints",
        factory=lambda ctx: adapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout),
    )


@pytest.mark.parametrize(
    "adapter", [DeclinesLongHints, DeclinesAsNotRetryable], ids=["retryable", "not-retryable"]
)
def test_declining_a_hint_over_the_bound_passes_cfg05_and_leaves_the_success_unjudged(
    adapter: type[CapsRetryAfter],
) -> None:
    """The openai SDK's way (found on the zoo's pydantic-ai OpenAI shims): the 429 returned, retryable or not.
    The success after a retry was never asked for, so the response-side clauses are not applicable, saying why;
    the request is still judged."""
    report = run_conformance(_declining(adapter), scenarios=["retry_after_too_long"], timeout=TIMEOUT)
    rows = {row["clause"]: row for row in report["results"]}
    assert rows["CFG-05"]["outcome"] == "passed", rows
    for clause in ("RES-02", "STOP-01", "CFG-03", "HARN-02"):
        row = rows[clause]
        assert row["outcome"] == "not_applicable", (clause, row)
        assert "instead of retrying after the hour its hint asks for" in str(row["message"]), row
    for clause in ("MSG-02", "RES-01", "NT-01", "STR-06", "HARN-03"):
        assert rows[clause]["outcome"] == "passed", (clause, rows[clause])


def test_declining_a_hint_but_calling_the_429_another_error_is_judged_as_the_success_it_is_not() -> None:
    rows = _rows(_declining(DeclinesWithTheWrongCode), ["RES-02"], ["retry_after_too_long"])
    assert rows["RES-02", "retry_after_too_long"]["outcome"] == "should_failed", rows
