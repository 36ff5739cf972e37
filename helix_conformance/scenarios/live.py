"""Which scenarios have a live form: ones a real provider can be asked for and will answer in kind.

Errors, faults, wire quirks of other servers and stops only the provider decides on stay authored; recording
says why for each (``why_not_live``), and the custom wire profile runs only what can be recorded.
"""

from __future__ import annotations

from .model import HttpError, Scenario, Stream, StreamError

PROVIDER_DECIDED_STOPS = frozenset({"content_filter", "refusal", "unknown"})
"""Stop reasons the provider alone decides on (filters, refusals, reasons it has not invented yet)."""


def why_not_live(scenario: Scenario) -> str | None:
    """None when the scenario has a live form; otherwise why it stays authored (said in the record log)."""
    if scenario.not_live:
        return scenario.not_live
    if not scenario.recorded_exchanges:
        return "it has no recorded response of its own (its responses are generated or reused)"
    if scenario.abort is not None:
        return "the harness aborts it at a chosen event, which only an authored stream fixes in place"
    for exchange in scenario.exchanges:
        response = exchange.response
        if isinstance(response, StreamError):
            return "it needs a provider error inside the stream, which cannot be provoked live"
        if isinstance(response, HttpError):
            return f"it needs an HTTP {response.status} error, which cannot be provoked live"
        if not isinstance(response, Stream):
            return "it needs a response the live provider cannot be made to send"
        if exchange.fault is not None:
            return f"it needs a transport fault ({exchange.fault.kind})"
        if response.quirks:
            return f"it reproduces a wire quirk of other servers ({', '.join(sorted(response.quirks))})"
    if scenario.expect.type == "error":
        return "its response is deliberately broken"
    if scenario.expect.stop_reason in PROVIDER_DECIDED_STOPS:
        return f"the provider alone decides when to stop with {scenario.expect.stop_reason}"
    return None
