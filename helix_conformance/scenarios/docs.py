"""Render the scenario catalogue as Markdown (docs/scenarios.md); the tests fail when the file is stale.

``python -m helix_conformance.scenarios.docs > docs/scenarios.md`` rewrites it.
"""

from __future__ import annotations

from ..profiles import KNOWN_PROFILES
from ..profiles.servers import servers_of
from . import SCENARIOS
from .fault_kinds import DEFAULT_EXAMPLES, FULL_SWEEP_EXAMPLES, KINDS, PRECONDITIONS
from .model import HttpError, Raw, Reuse, Scenario, Stream, StreamError
from .preconditions import OPTIONS, Precondition


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
    return "\n".join([*lines, *_fault_corpus(), *_preconditions(), *_servers()]) + "\n"


def _fault_corpus() -> list[str]:
    """The generated faults the first success scenario of each delivery shape also runs under (replay/faults.py)."""
    lines = [
        "",
        "## The fault corpus",
        "",
        "The first success scenario of each delivery shape (its part kinds, one tool call or several, multi-byte",
        "text or not: checks/draws.py), and the first recorded stream of each shape per server and",
        "source, are also run, on every wire profile, under faults generated",
        "from its cassette at run time (nothing is stored): the clause in the table judges each kind, and NT-01",
        "(never raises) and NT-02 (a valid StepResult in time) judge every variant. The failure names the fault,",
        "its position and the scenario, e.g. `truncated after event 4 of 9 (tool_call_parallel)`.",
        f"At the default `--helix-examples={DEFAULT_EXAMPLES}` each kind is tried at a few telling positions (the",
        "middle of the content, just before the finish event, inside the finish event); more examples try more",
        f"positions, and `--helix-examples={FULL_SWEEP_EXAMPLES}` or more tries every event boundary.",
        "",
        "| fault | judged by | a conforming adapter returns | request precondition |",
        "|---|---|---|---|",
    ]
    for kind, (clause, expected) in KINDS.items():
        lines.append(f"| `{kind}` | {clause} | {expected} | {_stated(PRECONDITIONS[kind])} |")
    return lines


def _stated(precondition: Precondition) -> str:
    """A precondition in a table cell: what it needs, why, and its evidence."""
    evidence = "; ".join(precondition.evidence)
    return f"{precondition.summary()}: {precondition.why} (evidence: {evidence})".replace("|", "\\|")


def _preconditions() -> list[str]:
    """Every scenario's request precondition, per profile where they differ (scenarios/preconditions.py)."""
    lines = [
        "",
        "## Request preconditions",
        "",
        "When a provider sends each scenario's response (`scenarios/served.py`, `scenarios/preconditions.py`):",
        'the request options it needs, the servers that send it, or "none: any request gets this", each with',
        "its evidence. They are read on the adapter's decoded request after the run: where the request does not",
        "meet them, the scenario's response-side checks are *not applicable to this adapter's request* (a skip",
        "that says why, in every report), and a scenario of servers the adapter does not declare",
        "(`AdapterSpec.servers`) goes to the compatibility matrix instead of the gate. The options:",
        "",
    ]
    lines += [f"- `{name}`: a request that {meaning}" for name, meaning in OPTIONS.items()]
    lines += ["", "| scenario | profiles | precondition |", "|---|---|---|"]
    for s in SCENARIOS:
        for precondition in s.preconditions:
            where = precondition.profiles or s.profiles
            shown = ", ".join(sorted(where)) if where else "every profile"
            lines.append(f"| `{s.id}` | {shown} | {_stated(precondition)} |")
    lines += [
        "",
        "The recorded scenarios (`cassettes/recorded/expected.yml`, `needs` and `servers`) state theirs the same",
        "way, with the recording as evidence:",
        "",
        "| recorded scenario | precondition |",
        "|---|---|",
    ]
    from ..profiles import get_profile
    from ..replay.recorded import recorded_scenarios
    from ..suite import bundled_cassettes

    for profile in KNOWN_PROFILES:
        for scenario in recorded_scenarios(get_profile(profile), (bundled_cassettes() / "recorded",)):
            stated = scenario.precondition(profile)
            lines.append(f"| `{scenario.id}` | {stated.summary() if stated else 'not stated'} |")
    return lines


def _servers() -> list[str]:
    """The servers of each wire profile an adapter can declare (profiles/servers.py)."""
    lines = ["", "## Servers", "", "| profile | server | name | evidence |", "|---|---|---|---|"]
    for profile in KNOWN_PROFILES:
        for server in servers_of(profile):
            lines.append(f"| {profile} | `{server.id}` | {server.name} | {server.evidence} |")
    return lines


if __name__ == "__main__":
    print(render(), end="")
