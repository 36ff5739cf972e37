"""Replay one recorded interaction through an adapter and compare its result with a written expectation.

Each recorded response is served for the adapter's single request (``max_retries=0``, so an error is not
retried into a second request), through the same interception and delivery plan as the conformance suite.
The response is served at the profile's streaming endpoint whatever URL the original client used: an error
answer or a demo endpoint's body does not depend on it, and matching stays about what the adapter sends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..contract import AdapterSpec, UserMessage
from ..profiles import get_profile
from ..replay.cassette import Interaction
from ..replay.interactions import ReplayInteraction
from ..replay.judging import run_scenario
from ..replay.runner import RunOptions, ScenarioRun
from ..scenarios.model import Expected, Scenario

_HOP = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection"})
_TYPES = {
    "TextStepResult": "text",
    "ToolCallsStepResult": "tool_calls",
    "StructuredOutputStepResult": "structured_output",
    "ErrorStepResult": "error",
}


@dataclass(frozen=True)
class Replayed:
    """What the adapter did with one recorded response: its canonical outcome and any mismatch."""

    outcome: dict[str, Any]
    problems: list[str]
    trace: str = ""
    """The run's requests, chunks and callbacks in order (``helix-conformance replay --cassette``)."""


def outcome_of(result: Any) -> dict[str, Any]:
    """The canonical outcome of a StepResult, in the vocabulary of the expectations file."""
    kind = _TYPES.get(type(result).__name__, type(result).__name__)
    out: dict[str, Any] = {"type": kind}
    if kind == "error":
        error = result.error
        out["error_code"] = getattr(error, "code", type(error).__name__)
        out["status_code"] = getattr(error, "status_code", None)
        out["retryable"] = getattr(error, "retryable", None)
        return out
    out["stop_reason"] = getattr(result, "stop_reason", None)
    thinking = getattr(result, "thinking", None)
    out["thinking"] = thinking.content if thinking is not None else None
    if kind == "structured_output":
        out["output"] = result.output
        return out
    out["content"] = result.content or ""
    if kind == "tool_calls":
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in result.tool_calls
        ]
    return out


def _text_problems(name: str, actual: str | None, expected: dict[str, Any]) -> list[str]:
    """Exact ``<name>``, or ``<name>_starts``/``<name>_ends`` for long texts; nothing given means none."""
    actual = actual or ""
    keys = (name, f"{name}_starts", f"{name}_ends")
    if not any(key in expected for key in keys):
        return [f"{name}: expected none, got {actual[:80]!r}"] if actual else []
    problems = []
    if name in expected and actual != (expected[name] or ""):
        problems.append(f"{name}: expected {str(expected[name])[:80]!r}, got {actual[:80]!r}")
    if f"{name}_starts" in expected and not actual.startswith(expected[f"{name}_starts"]):
        problems.append(f"{name}: expected to start {expected[f'{name}_starts'][:60]!r}, got {actual[:60]!r}")
    if f"{name}_ends" in expected and not actual.endswith(expected[f"{name}_ends"]):
        problems.append(f"{name}: expected to end {expected[f'{name}_ends'][-60:]!r}, got {actual[-60:]!r}")
    return problems


def compare(outcome: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """Every way ``outcome`` departs from ``expected`` (an entry of the expectations file)."""
    if outcome["type"] != expected["type"]:
        detail = outcome.get("error_code") or outcome.get("stop_reason")
        return [f"type: expected {expected['type']}, got {outcome['type']} ({detail})"]
    problems: list[str] = []
    if outcome["type"] == "error":
        for key in ("error_code", "status_code", "retryable"):  # retryable: where the outcome has it
            if key in expected and key in outcome and outcome[key] != expected[key]:
                problems.append(f"{key}: expected {expected[key]!r}, got {outcome[key]!r}")
        return problems
    if "stop_reason" in expected and outcome["stop_reason"] != expected["stop_reason"]:
        problems.append(f"stop_reason: expected {expected['stop_reason']}, got {outcome['stop_reason']}")
    problems += _text_problems("thinking", outcome["thinking"], expected)
    if outcome["type"] == "structured_output":
        if outcome["output"] != expected.get("output"):
            problems.append(f"output: expected {expected.get('output')!r}, got {outcome['output']!r}")
        return problems
    problems += _text_problems("content", outcome["content"], expected)
    if outcome["type"] == "tool_calls":
        problems += _call_problems(outcome["tool_calls"], expected.get("tool_calls") or [])
    return problems


def _call_problems(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[str]:
    if len(actual) != len(expected):
        names = [c["name"] for c in actual]
        return [f"tool_calls: expected {len(expected)}, got {len(actual)} {names}"]
    problems = []
    for i, (got, want) in enumerate(zip(actual, expected)):
        if got["name"] != want["name"] or got["arguments"] != want.get("arguments", {}):
            problems.append(
                f"tool_calls[{i}]: expected {want['name']}({want.get('arguments', {})}), got "
                f"{got['name']}({got['arguments']})"
            )
        if want.get("id") is not None and got["id"] != want["id"]:
            problems.append(f"tool_calls[{i}].id: expected {want['id']!r}, got {got['id']!r}")
        if not got["id"]:
            problems.append(f"tool_calls[{i}].id is empty (RES-03)")
    return problems


def replay_interaction(
    spec: AdapterSpec,
    recorded: Interaction,
    source: str,
    *,
    timeout: float = 10.0,
    executor: Callable[..., ScenarioRun] = run_scenario,
) -> Replayed:
    """Serve ``recorded`` to a fresh adapter built from ``spec`` and capture its canonical outcome
    (``executor``: where the adapter runs, e.g. its worker's ``run_scenario``)."""
    profile = get_profile(spec.wire_profile)
    headers = {k: v for k, v in recorded.headers.items() if k not in _HOP}
    served = ReplayInteraction(
        profile.endpoint_method,
        urlsplit(profile.endpoint_url(spec.model)).path,
        recorded.status,
        headers,
        recorded.body,
        None,
        False,
        source,
    )
    scenario = Scenario(
        id=f"recorded:{source}",
        description="a recorded exchange replayed as it was recorded",
        messages=(UserMessage(content="(the request of a replayed recording)"),),
        exchanges=(),
        expect=Expected("text"),
        config={"max_retries": 0},
    )
    run = executor(scenario, spec, profile, [served], RunOptions(timeout=timeout))
    problems: list[str] = []
    if run.setup_error or run.raised is not None or run.timed_out:
        what = run.setup_error or (f"raised {run.raised!r}" if run.raised is not None else "timed out")
        problem = f"generate_step {what} (NT-01: it must return a StepResult)"
        return Replayed({"type": "raised"}, [problem], run.trace.describe())
    if run.unintercepted or run.unused_interactions:
        problems.append("the adapter did not make exactly the one request the recording answers")
    outcome = outcome_of(run.result)
    if outcome["type"] in ("text", "tool_calls"):
        streamed = "".join(run.trace.text_deltas())
        if streamed != outcome["content"]:
            problems.append(
                f"STR-01: text deltas {streamed[:60]!r} differ from content {outcome['content'][:60]!r}"
            )
    return Replayed(outcome, problems, run.trace.describe())
