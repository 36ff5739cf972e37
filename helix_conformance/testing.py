"""Tools for adapter authors' own tests: ``MockLLMAdapter`` and ``run_conformance``.

``MockLLMAdapter`` is the scripted test double of the Helix docs (a queue of responses, ``add_response``,
``call_count``); it streams its scripted results through the callbacks as a conforming adapter would, and
``pytest --adapter=mock`` checks exactly that.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .contract import (
    REQUEST_ABORTED,
    AdapterSpec,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    StepResult,
    TextStepResult,
    ToolCallsStepResult,
    invoke_callback,
)

logger = logging.getLogger(__name__)


class MockLLMAdapter:
    """Returns queued results in order (then ``default``), streaming each through the callbacks."""

    def __init__(self, responses: Iterable[StepResult] = (), *, default: StepResult | None = None) -> None:
        self._queue: deque[StepResult] = deque(responses)
        self.default: StepResult = default or TextStepResult(
            content="Mock response", should_stop=True, stop_reason="end_turn"
        )
        self.call_count = 0
        self.calls: list[LLMGenerateInput] = []

    def add_response(self, response: StepResult) -> None:
        self._queue.append(response)

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        self.call_count += 1
        self.calls.append(input)
        if input.abort_signal is not None and input.abort_signal.aborted:
            result: StepResult = ErrorStepResult(
                error=HelixError("the request was aborted", code=REQUEST_ABORTED, retryable=False)
            )
        else:
            result = self._queue.popleft() if self._queue else self.default
        await self._stream(input, result)
        return result

    async def _stream(self, input: LLMGenerateInput, result: StepResult) -> None:
        callbacks = input.callbacks
        if callbacks is None:
            return
        thinking = getattr(result, "thinking", None)
        if thinking is not None and thinking.content:
            await _safely(callbacks.on_thinking, thinking.content, False)
            await _safely(callbacks.on_thinking, "", True)
        content = getattr(result, "content", None)
        if content and not isinstance(result, ErrorStepResult):
            for piece in re.findall(r"\s*\S+\s*|\s+", content):
                await _safely(callbacks.on_text_delta, piece)
        if isinstance(result, ToolCallsStepResult):
            for call in result.tool_calls:
                await _safely(callbacks.on_tool_call, call)
        if isinstance(result, ErrorStepResult):
            await _safely(callbacks.on_error, result.error)


async def _safely(callback: Any, *args: Any) -> None:
    try:
        await invoke_callback(callback, *args)
    except Exception:  # a failing callback must not fail the step (STR-11)
        logger.exception("a streaming callback raised; ignored")


def mock_spec() -> AdapterSpec:
    """The spec behind ``--adapter=mock``: the scripted profile hands each scenario's result to the mock."""
    return AdapterSpec(
        name="mock",
        factory=lambda ctx: MockLLMAdapter(ctx.scripted_responses),
        wire_profile="scripted",
        model="mock-model",
        capabilities=frozenset({"thinking", "parallel_tool_calls", "abort"}),
        description="MockLLMAdapter, the scripted test double (result and callback clauses only)",
    )


def run_conformance(
    spec: AdapterSpec,
    *,
    clauses: Iterable[str] | None = None,
    scenarios: Iterable[str] | None = None,
    timeout: float = 10.0,
    examples: int = 5,
    cassette_dir: Path | None = None,
    strict: bool = False,
) -> dict[str, Any]:
    """Run the suite (or the named clauses/scenarios of it) without pytest.

    Returns ``{"adapter", "passed", "results": [{"id", "clause", "scenario", "level", "outcome", "message"}]}``;
    ``passed`` is the gate's verdict: no MUST failure (no failure at all when ``strict``) and something ran.
    """
    from .checks.context import HarnessSettings
    from .suite import SuiteRunner, plan_suite

    wanted_clauses = set(clauses) if clauses is not None else None
    wanted_scenarios = set(scenarios) if scenarios is not None else None
    planned = [
        p
        for p in plan_suite(spec)
        if (wanted_clauses is None or p.clause in wanted_clauses)
        and (wanted_scenarios is None or p.scenario.id in wanted_scenarios)
    ]
    runner = SuiteRunner(spec, HarnessSettings(timeout=timeout, examples=examples), cassette_dir)
    runner.expect(planned)
    results = []
    passed = True
    for item in planned:
        outcome = runner.run(item)
        if outcome.outcome == "failed" and (item.level == "MUST" or strict):
            passed = False
        results.append(
            {
                "id": item.test_id,
                "clause": item.clause,
                "scenario": item.scenario.id,
                "level": item.level,
                "outcome": outcome.outcome,
                "message": outcome.failure.message if outcome.failure else outcome.reason,
            }
        )
    return {
        "adapter": spec.name,
        "passed": passed and any(r["outcome"] != "skipped" for r in results),
        "results": results,
    }
