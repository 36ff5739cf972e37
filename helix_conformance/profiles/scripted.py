"""The ``scripted`` profile: no wire at all. Used by MockLLMAdapter (``--adapter=mock``).

Each scenario's expected result is handed to the adapter as its scripted response, so only the clauses about
results, callbacks, abort-before and the harness apply: they check that a test double behaves like a
conforming adapter, so unit tests written against it do not rely on behaviour real adapters lack.
"""

from __future__ import annotations

from ..contract import (
    ErrorStepResult,
    HelixError,
    ParsedToolCall,
    StructuredOutputStepResult,
    TextStepResult,
    ThinkingContent,
    ToolCallsStepResult,
)
from ..scenarios.model import HttpError, RedactedThinking, Scenario, Stream, StreamError
from .base import DecodedRequest, DecodedTool, WireProfile

WIRE_FREE_CLAUSES = frozenset(
    {
        "RES-01",
        "RES-02",
        "RES-03",
        "RES-04",
        "RES-05",
        "RES-06",
        "RES-07",
        "RES-08",
        "RES-11",
        "FIN-01",
        "FIN-02",
        "FIN-04",
        "FIN-05",
        "STOP-02",
        "STR-01",
        "STR-03",
        "STR-04",
        "STR-05",
        "STR-06",
        "STR-07",
        "STR-08",
        "STR-09",
        "STR-11",
        "ERR-06",
        "ERR-07",
        "NT-01",
        "AB-01",
        "AB-03",
        "MSG-07",
        "HARN-01",
        "HARN-02",
        "HARN-03",
        "HARN-04",
    }
)
_WIRE_TAGS = frozenset({"transport", "bad_body", "partial", "stall", "retry", "invalid_tool", "cut_off"})


def scripted_result(scenario: Scenario) -> object:
    """The scenario's expected outcome as the StepResult a scripted adapter returns."""
    expect = scenario.expect
    redacted = [  # redacted reasoning is returned too, verbatim (RES-08)
        part.data
        for exchange in scenario.exchanges
        if isinstance(exchange.response, (Stream, StreamError))
        for part in exchange.response.parts
        if isinstance(part, RedactedThinking)
    ]
    thinking = (
        ThinkingContent(content=expect.thinking or "", redacted=redacted)
        if expect.thinking is not None or redacted
        else None
    )
    if expect.type == "text":
        return TextStepResult(
            content=expect.content or "",
            thinking=thinking,
            should_stop=True,
            stop_reason=expect.stop_reason or "end_turn",
        )
    if expect.type == "tool_calls":
        return ToolCallsStepResult(
            tool_calls=_with_minted_ids(expect.tool_calls), content=expect.content, thinking=thinking
        )
    if expect.type == "structured_output":
        return StructuredOutputStepResult(output=expect.output, thinking=thinking)
    code = expect.error_codes[0] if expect.error_codes else "provider_error"
    return ErrorStepResult(
        error=HelixError(
            f"scripted {code}", code=code, retryable=bool(expect.retryable), status_code=expect.status_code
        )
    )


def _with_minted_ids(calls: tuple[ParsedToolCall, ...]) -> list[ParsedToolCall]:
    """The calls with an id where the scenario expects none: an expected id "" means the provider sent none
    usable (missing, or repeated) and a conforming adapter mints one, non-empty and unique in the step (RES-03)."""
    taken = {c.id for c in calls if c.id}
    minted = (
        f"call_scripted_{n}" for n in range(len(calls) + len(taken)) if f"call_scripted_{n}" not in taken
    )
    return [c if c.id else c.model_copy(update={"id": next(minted)}) for c in calls]


class ScriptedProfile(WireProfile):
    name = "scripted"
    provider_key = "scripted"
    default_base_url = "http://scripted.invalid"
    replays = False

    def runs_scenario(self, scenario: Scenario) -> bool:
        return not (scenario.tags & _WIRE_TAGS or (scenario.abort is not None and not scenario.abort.before))

    def runs_clause(self, clause: str) -> bool:
        return clause in WIRE_FREE_CLAUSES

    def scripted(self, scenario: Scenario) -> tuple[object, ...]:
        return (scripted_result(scenario),)

    def endpoint_url(self, model: str) -> str:
        return self.default_base_url

    def decode_request(self, body: bytes, url: str = "") -> DecodedRequest:
        return DecodedRequest(None, [], None, False, {}, False, {}, {}, ["the scripted profile has no wire"])

    def render_stream(self, response: Stream | StreamError, *, seed: str, model: str) -> bytes:
        raise NotImplementedError("the scripted profile has no wire format")

    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        raise NotImplementedError("the scripted profile has no wire format")

    def tool_problems(self, tool: DecodedTool) -> list[str]:
        return []


PROFILE = ScriptedProfile()
