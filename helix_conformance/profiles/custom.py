"""The ``custom`` wire profile: a provider helix-conformance has no profile for.

Its author records the cassettes (``--helix-record-mode``) into the spec's own ``cassette_dir``; the suite
then replays them with the provider-neutral clauses — results, streaming, never-throw, abort, harness — and
judges the request by regression against the recorded one (HARN-01) instead of decoding it. The expected
result is what the adapter returned live at record time, kept in the cassette's provenance. Clauses that
need the provider's format (request decoding, error bodies, stop-reason table) are skipped, saying why.
"""

from __future__ import annotations

from ..scenarios.live import why_not_live
from ..scenarios.model import HttpError, Reuse, Scenario, Stream, StreamError
from .base import DecodedRequest, DecodedTool, WireProfile
from .scripted import WIRE_FREE_CLAUSES
from .wire import WireRules

NEUTRAL_CLAUSES = WIRE_FREE_CLAUSES | {"STR-10", "NT-02", "NT-03", "NT-04", "ERR-04", "ERR-05", "AB-02"}
"""Clauses judged without knowing the provider's format: on results, callbacks, bytes and transport faults."""
REQUEST_CLAUSES = ("MSG-", "TOOL-", "CFG-", "CACHE-")


class CustomProfile(WireProfile):
    name = "custom"
    provider_key = "custom"
    default_base_url = ""
    """The adapter keeps its own URL unless ``--helix-record-base-url`` gives one."""
    by_regression = True
    wire = WireRules("custom", exact=True)
    """Exactly the recorded path: the adapter keeps its own URL, so the recording's paths are its own."""

    def runs_scenario(self, scenario: Scenario) -> bool:
        """Scenarios with a live form, and transport faults on the recorded ``text_basic``."""
        if why_not_live(scenario) is None or (scenario.abort is not None and scenario.abort.before):
            return True
        return bool(scenario.exchanges) and all(
            isinstance(e.response, Reuse) and e.response.scenario == "text_basic" and e.fault is not None
            for e in scenario.exchanges
        )

    def clause_skip_reason(self, clause: str) -> str | None:
        if clause in NEUTRAL_CLAUSES or clause.startswith("HARN-"):
            return None
        if clause.startswith(REQUEST_CLAUSES):
            return (
                "wire profile 'custom' has no request decoder: the request is judged by regression against "
                "the recorded one (HARN-01) instead"
            )
        return (
            "wire profile 'custom' does not know the provider's format (error bodies, stop-reason table, "
            "event types) this clause is judged against"
        )

    def endpoint_url(self, model: str) -> str:
        return "/"

    def decode_request(self, body: bytes, url: str = "") -> DecodedRequest:
        return DecodedRequest(None, [], None, False, {}, True, {}, {})

    def render_stream(self, response: Stream | StreamError, *, seed: str, model: str) -> bytes:
        raise NotImplementedError("wire profile 'custom' has no authored cassettes: record them")

    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        raise NotImplementedError("wire profile 'custom' has no error bodies")

    def tool_problems(self, tool: DecodedTool) -> list[str]:
        return []


PROFILE = CustomProfile()
