"""Render the scenario catalogue as Markdown (docs/scenarios.md); the tests fail when the file is stale.

``python -m helix_conformance.scenarios.docs > docs/scenarios.md`` rewrites it.
"""

from __future__ import annotations

from . import SCENARIOS
from .fault_kinds import DEFAULT_EXAMPLES, FULL_SWEEP_EXAMPLES, KINDS
from .model import HttpError, Raw, Reuse, Scenario, Stream, StreamError


def _responses(scenario: Scenario) -> str:
    parts = []
    for exchange in scenario.exchanges:
        response = exchange.response
        if isinstance(response, Stream):
            text = "stream" + (f", finish {response.finish.reason}" if response.finish else ", no finish")
        elif isinstance(response, StreamError):
            text = f"stream then {response.kind} error event"
        elif isinstance(response, HttpError):
            text = f"HTTP {response.status}" + (f" ({response.kind})" if response.kind else "")
        elif isinstance(response, Raw):
            text = f"HTTP {response.status} {response.content_type}"
        elif isinstance(response, Reuse):
            text = f"{response.scenario}'s response"
        else:  # pragma: no cover - exhaustive
            text = type(response).__name__
        if exchange.fault:
            text += f" + {exchange.fault.kind} after {exchange.fault.after_events} events"
        if exchange.optional:
            text += " (may never be requested)"
        parts.append(text)
    return "; ".join(parts) or "no request"


def render() -> str:
    lines = [
        "# Scenarios",
        "",
        "Provider-neutral scenarios of the conformance suite: each is a canonical input, what the replayed provider",
        "answers (rendered per wire profile), and the outcome a conforming adapter returns. Generated from",
        "`helix_conformance/scenarios/` by `python -m helix_conformance.scenarios.docs`.",
        "",
        "| scenario | what it tests | provider answers | expected | requires |",
        "|---|---|---|---|---|",
    ]
    for s in SCENARIOS:
        expect = s.expect.type + (
            f" ({s.expect.stop_reason})"
            if s.expect.type != "error" and s.expect.stop_reason
            else f" ({'/'.join(s.expect.error_codes)})"
            if s.expect.error_codes
            else ""
        )
        requires = ", ".join(sorted(s.requires)) or "–"
        only = f" Only for {', '.join(sorted(s.profiles))}." if s.profiles else ""
        lines.append(f"| `{s.id}` | {s.description}{only} | {_responses(s)} | {expect} | {requires} |")
    return "\n".join([*lines, *_fault_corpus()]) + "\n"


def _fault_corpus() -> list[str]:
    """The generated faults every success scenario also runs under (replay/faults.py)."""
    lines = [
        "",
        "## The fault corpus",
        "",
        "Every success scenario with a recorded stream is also run, on every wire profile, under faults generated",
        "from its cassette at run time (nothing is stored): the clause in the table judges each kind, and NT-01",
        "(never raises) and NT-02 (a valid StepResult in time) judge every variant. The failure names the fault,",
        "its position and the scenario, e.g. `truncated after event 4 of 9 (tool_call_parallel)`.",
        f"At the default `--helix-examples={DEFAULT_EXAMPLES}` each kind is tried at a few telling positions (the",
        "middle of the content, just before the finish event, inside the finish event); more examples try more",
        f"positions, and `--helix-examples={FULL_SWEEP_EXAMPLES}` or more tries every event boundary.",
        "",
        "| fault | judged by | a conforming adapter returns |",
        "|---|---|---|",
    ]
    for kind, (clause, expected) in KINDS.items():
        lines.append(f"| `{kind}` | {clause} | {expected} |")
    return lines


if __name__ == "__main__":
    print(render(), end="")
