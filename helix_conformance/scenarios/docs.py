"""Render the scenario catalogue as Markdown (docs/scenarios.md); the tests fail when the file is stale.

``python -m helix_conformance.scenarios.docs > docs/scenarios.md`` rewrites it.
"""

from __future__ import annotations

from . import SCENARIOS
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
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
