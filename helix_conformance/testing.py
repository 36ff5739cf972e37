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
    spec: AdapterSpec | str,
    *,
    clauses: Iterable[str] | None = None,
    scenarios: Iterable[str] | None = None,
    timeout: float = 10.0,
    examples: int = 3,
    seed: int | None = None,
    cassette_dir: Path | None = None,
    strict: bool = False,
    baseline: Path | None = None,
    adapter: str | None = None,
    in_process: bool | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """Run the suite (or the named clauses/scenarios of it) without pytest; return the report.

    ``spec`` is an AdapterSpec or a name as for ``pytest --adapter`` (``"openai"``, ``"pkg.mod:spec"``,
    ``"node:adapter.mjs"``, ``"cmd:python my_driver.py"``). The adapter runs in a worker process of its own,
    as under pytest, whenever it can be named for the worker to import: a name, a spec that is a module-level
    attribute of its factory's module, or ``adapter="pkg.mod:attr"``. ``workers`` is ``--helix-workers``: how
    many such processes run the runs ahead while the checks judge (default 2 with two or more CPUs, 1 inside
    a pytest-xdist worker); they are kept for the next call with the same adapter. A spec built at run time (a closure,
    ``dataclasses.replace``, a lambda) runs in the calling process and the report says
    "in-process: not a gate"; ``in_process=True`` asks for that (debugging), ``in_process=False`` refuses it.

    The report is the one ``--helix-report=r.json`` writes (``verdict``, ``clauses``, ``results`` with
    ``outcome``, ``message`` and ``reproduce`` per clause x scenario, ``gate_errors``), plus ``passed``: the
    gate's verdict as a bool, ``verdict_text`` (``PASS``, or ``PASS (in-process: not a gate)``) and
    ``isolation`` (``mode``: worker, driver or in-process; ``gate``; ``note``). A failure's ``message`` is the
    whole text pytest prints for it: the message, expected and actual, details, hint and, for a property's
    example, the ``helix-conformance replay`` command. ``baseline`` is a file of known failures, as for
    ``--helix-baseline``. A name that resolves to nothing raises ``ConformanceUsageError`` (a ValueError).
    Render it with ``helix_conformance.reporting.writers.renderer("html")(report)``.
    """
    from .standalone import ConformanceUsageError, isolate, run_suite

    known = None
    if baseline is not None:
        from .baseline import load_baseline
        from .scenarios import SCENARIOS

        known = load_baseline(Path(baseline), (s.id for s in SCENARIOS))
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConformanceUsageError(f"run_conformance: workers must be a positive integer, not {workers!r}")
    isolation = isolate(spec, adapter=adapter, in_process=in_process, workers=workers)
    return run_suite(
        isolation.resolved.spec,
        clauses=clauses,
        scenarios=scenarios,
        timeout=timeout,
        examples=examples,
        seed=seed,
        cassette_dir=cassette_dir,
        strict=strict,
        baseline=known,
        isolation=isolation,
    )
