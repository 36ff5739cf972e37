"""Adapters written elsewhere that do what the contract allows must pass (issue 16: zero false failures).

Each test runs a small correct adapter, a wrapper of a reference adapter doing one allowed thing the checks
used to reject, on the clauses that rejected it. The broken adapters that prove the same clauses still catch
the real mistake are registered in ``tests/broken_adapters`` (``minted_ids``, ``false_failures``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import uuid
from collections.abc import AsyncIterator, Iterable
from typing import Any, ClassVar

import pytest
from broken_adapters._base import HookedAdapter, HookedChatStream
from broken_adapters._gemini_base import HookedGeminiAdapter, HookedGeminiStream

from helix_conformance.checks.common import ToolCallIds, describe_result
from helix_conformance.contract import (
    AdapterSpec,
    ErrorStepResult,
    HelixError,
    LLMAdapter,
    LLMGenerateInput,
    ParsedToolCall,
    StepResult,
    TextStepResult,
    ToolCallsStepResult,
)
from helix_conformance.testing import run_conformance
from reference_adapters._http import ToolCallBuffer, classify_status
from reference_adapters._sse import SSEEvent
from reference_adapters.gemini import spec as gemini_spec
from reference_adapters.openai_chat import OpenAIChatAdapter
from reference_adapters.openai_chat import spec as openai_spec

TIMEOUT = 3.0
EXAMPLES = 3


def _spec(reference: AdapterSpec, name: str, adapter: type[Any]) -> AdapterSpec:
    def factory(context: Any) -> LLMAdapter:
        return adapter(api_key=context.api_key, base_url=context.base_url)  # type: ignore[no-any-return]

    return dataclasses.replace(reference, name=name, factory=factory)


def _outcomes(
    spec: AdapterSpec, clauses: Iterable[str], scenarios: Iterable[str]
) -> dict[tuple[str, str], Any]:
    report = run_conformance(
        spec, clauses=list(clauses), scenarios=list(scenarios), timeout=TIMEOUT, examples=EXAMPLES
    )
    return {(row["clause"], row["scenario"]): row for row in report["results"]}


def _not_passed(outcomes: dict[tuple[str, str], Any]) -> list[str]:
    return [
        f"{c} on {s}: {row['outcome']} — {row['message']}"
        for (c, s), row in outcomes.items()
        if row["outcome"] != "passed"
    ]


# --- 1. tool-call ids the adapter mints (the provider sent none) -----------------------------------------


class _Uuid4Stream(HookedGeminiStream):
    def call_buffers(self) -> list[ToolCallBuffer]:
        # Gemini sends no ids: a fresh uuid4 for each, as Vercel's Google provider, LiteLLM and LangChain do.
        return [ToolCallBuffer(c.id or f"call_{uuid.uuid4().hex}", c.name, c.arguments) for c in self._calls]


class Uuid4ToolCallIds(HookedGeminiAdapter):
    stream_class = _Uuid4Stream


@pytest.mark.parametrize("clause", ["STR-09", "STR-10", "RES-12", "RES-03", "STR-05"])
def test_random_minted_ids_pass_the_cross_run_clauses(clause: str) -> None:
    spec = _spec(gemini_spec, "gemini_uuid4_ids", Uuid4ToolCallIds)
    outcomes = _outcomes(spec, [clause], ["tool_call", "tool_call_parallel"])
    assert set(outcomes) == {(clause, "tool_call"), (clause, "tool_call_parallel")}, outcomes
    assert not _not_passed(outcomes), "\n".join(_not_passed(outcomes))


def _calls(*ids: str) -> ToolCallsStepResult:
    calls = [ParsedToolCall(id=i, name="get_weather", arguments={"city": "Paris"}) for i in ids]
    return ToolCallsStepResult(tool_calls=calls, sub_agent_calls=[])


def test_runs_compare_minted_ids_by_position_and_provider_ids_as_sent() -> None:
    def same(a: ToolCallsStepResult, b: ToolCallsStepResult, provider: frozenset[str]) -> bool:
        return describe_result(a, ToolCallIds(provider)) == describe_result(b, ToolCallIds(provider))

    assert same(_calls("call_1", "call_2"), _calls("x-9", "y-8"), frozenset())  # fresh ids per run
    assert not same(_calls("call_1", "call_2"), _calls("x-9", "x-9"), frozenset())  # a duplicate appears
    assert not same(_calls("call_1", "call_2"), _calls("x-9", ""), frozenset())  # an id goes empty
    provider = frozenset({"call_a", "call_b"})
    assert same(_calls("call_a", "call_b"), _calls("call_a", "call_b"), provider)
    assert not same(
        _calls("call_a", "call_b"), _calls("call_a", "call_b2"), provider
    )  # the provider's id lost
    assert describe_result(_calls("a")) != describe_result(
        _calls("b")
    )  # without ``ids``: compared as returned


# --- 2. HARN-04: async-generator cleanup is the loop's, not work the adapter left running ---------------


async def _sse_events() -> AsyncIterator[bytes]:
    """A stream read as an async generator, as SDKs do; closing it takes a few loop turns (the response)."""
    try:
        for event in (b"data: {}", b"data: [DONE]", b"data: after the end"):
            yield event
    finally:
        for _ in range(5):
            await asyncio.sleep(0)


class BreaksOnDone(OpenAIChatAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        async for event in _sse_events():
            if event == b"data: [DONE]":
                break  # the generator is finalised by the loop: an `aclose()` task it schedules
        return result


class AbandonsItsStream(OpenAIChatAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        events = _sse_events()
        await anext(events)  # never exhausted nor closed: finalised when this frame goes away
        return result


class LeavesASleepRunning(OpenAIChatAdapter):
    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        self.task = asyncio.create_task(asyncio.sleep(5))  # work the adapter started and left running
        return await super().generate_step(input)


@pytest.mark.parametrize("adapter", [BreaksOnDone, AbandonsItsStream])
def test_async_generator_cleanup_is_not_a_pending_task(adapter: type[Any]) -> None:
    outcomes = _outcomes(
        _spec(openai_spec, adapter.__name__, adapter), ["HARN-04"], ["text_basic", "tool_call"]
    )
    assert len(outcomes) == 2, outcomes
    assert not _not_passed(outcomes), "\n".join(_not_passed(outcomes))


def test_a_task_left_running_is_named_with_where_it_was_created() -> None:
    outcomes = _outcomes(_spec(openai_spec, "sleeper", LeavesASleepRunning), ["HARN-04"], ["text_basic"])
    row = outcomes["HARN-04", "text_basic"]
    assert row["outcome"] in ("failed", "should_failed"), row
    shown = f"{row['message']} {row.get('actual', '')}"
    assert "running sleep()" in shown, row
    assert "created at tests/test_false_failures.py" in shown, row
    assert "in generate_step" in shown, row


# --- 3. NT-03: a step that ended before the cancel point cancelled nothing --------------------------------


class CachesResponses(OpenAIChatAdapter):
    """Answers a request it has seen before from a process-wide cache (as LiteLLM's in-memory cache does),
    replaying the callbacks: such a step sends nothing, so no cancellation can reach it mid-stream."""

    cache: ClassVar[dict[str, StepResult]] = {}

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        key = repr((input.messages, input.tools, input.config.model))
        cached = self.cache.get(key)
        if cached is None:
            self.cache[key] = cached = await super().generate_step(input)
        elif input.callbacks is not None:
            if isinstance(cached, TextStepResult) and input.callbacks.on_text_delta:
                await _maybe_await(input.callbacks.on_text_delta(cached.content))
            if isinstance(cached, ToolCallsStepResult) and input.callbacks.on_tool_call:
                for call in cached.tool_calls:
                    await _maybe_await(input.callbacks.on_tool_call(call))
        return cached


async def _maybe_await(value: Any) -> None:
    if inspect.isawaitable(value):
        await value


def test_nt03_is_not_judged_when_the_step_ended_before_the_cancel_point() -> None:
    CachesResponses.cache.clear()
    spec = _spec(openai_spec, "cached", CachesResponses)
    outcomes = _outcomes(spec, ["NT-03", "RES-01"], ["text_basic", "tool_call_parallel"])
    for scenario in ("text_basic", "tool_call_parallel"):
        assert outcomes["RES-01", scenario]["outcome"] == "passed", outcomes["RES-01", scenario]
        row = outcomes["NT-03", scenario]
        assert row["outcome"] == "skipped", row
        assert "before" in row["message"], row


# --- 4. ERR-03: OpenRouter's numeric in-stream `code` is the HTTP status the error would have had --------


class _StatusCodedStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        try:
            payload = json.loads(event.data)
        except ValueError:
            payload = None
        error = payload.get("error") if isinstance(payload, dict) else None
        status = error.get("code") if isinstance(error, dict) else None
        if type(status) is int and "type" not in error:  # OpenRouter documents it as the HTTP status
            code, retryable = classify_status(status)
            raise HelixError(f"openrouter: {error.get('message')}", code=code, retryable=retryable)
        return await super()._event(event)


class ClassifiesStreamErrorsByStatus(HookedAdapter):
    stream_class = _StatusCodedStream


def test_an_in_stream_numeric_code_classified_as_its_http_status_passes_err_03() -> None:
    spec = _spec(openai_spec, "by_status", ClassifiesStreamErrorsByStatus)
    scenarios = ["compat_error_after_finish", "midstream_rate_limit", "midstream_overloaded"]
    outcomes = _outcomes(spec, ["ERR-03"], scenarios)
    assert len(outcomes) == len(scenarios), outcomes
    assert not _not_passed(outcomes), "\n".join(_not_passed(outcomes))


# --- 5. ERR-06 (and ERR-02, ERR-08, AB-03) leave "no error result at all" to the clause that owns it -------


class ErrorsAsText(OpenAIChatAdapter):
    """Answers every failure with a text result: wrong, and reported by the clause that says which error
    the scenario gives (ERR-01, ERR-04, FIN-03, AB-01...), once."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, ErrorStepResult):
            return TextStepResult(content=f"Sorry: {result.error}", should_stop=True, stop_reason="end_turn")
        return result


@pytest.mark.parametrize(
    ("clause", "scenario", "owner"),
    [
        ("ERR-06", "http_500", "ERR-01"),
        ("ERR-06", "truncated_stream", "ERR-04"),
        ("ERR-06", "finish_tool_invalid_json", "FIN-03"),
        ("ERR-02", "http_500", "ERR-01"),
        ("ERR-08", "http_429_insufficient_quota", "ERR-01"),
        ("AB-03", "abort_before", "AB-01"),
    ],
)
def test_a_non_error_result_is_reported_once_by_the_clause_that_owns_it(
    clause: str, scenario: str, owner: str
) -> None:
    outcomes = _outcomes(_spec(openai_spec, "errors_as_text", ErrorsAsText), [clause, owner], [scenario])
    assert outcomes[owner, scenario]["outcome"] == "failed", outcomes[owner, scenario]
    row = outcomes[clause, scenario]
    assert row["outcome"] == "skipped", row
    assert f"which {owner} reports" in row["message"], row
