"""MSG-08: reasoning the provider needs back (Anthropic signatures and redacted blocks) survives the round trip.

Two halves under one clause: a streamed thinking block's signature is kept on the result (or the adapter could
never send it back; redacted blocks kept on the result are RES-08's), and thinking in the history is sent back
with its signature and redacted data. Where the
signature is a proto ``bytes`` field (Gemini), signatures are compared as the bytes they encode: SDKs re-encode
them in either base64 alphabet, with or without padding.
"""

from __future__ import annotations

from typing import Any

from ..contract import AssistantMessage
from ..profiles.base import WireProfile
from ..profiles.proto_json import bytes_value
from ..scenarios.model import Scenario, Thinking
from .common import sends_request, streamed_parts
from .context import CheckContext
from .registry import check, fail


def _streamed_signature(scenario: Scenario) -> str | None:
    signatures = [p.signature for p in streamed_parts(scenario) if isinstance(p, Thinking) and p.signature]
    return signatures[-1] if signatures else None


def _history_thinking(scenario: Scenario) -> bool:
    return any(isinstance(m, AssistantMessage) and m.thinking for m in scenario.messages)


def _applies(scenario: Scenario, profile: WireProfile) -> bool:
    if not profile.round_trips_thinking:
        return False
    signature = _streamed_signature(scenario)
    streamed = scenario.expect.type != "error" and signature is not None
    return streamed or (_history_thinking(scenario) and sends_request(scenario, profile))


def _proof(thinking: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    proof = {
        "content": getattr(thinking, "content", None),
        "signature": getattr(thinking, "signature", None),
        "redacted": list(getattr(thinking, "redacted", None) or []),
    }
    return {name: proof[name] for name in fields}


def _same_signature(profile: WireProfile, a: Any, b: Any) -> bool:
    """Equal signatures; a bytes signature compares by the bytes it encodes, undecodable ones as text."""
    if a == b:
        return True
    if not (profile.signatures_are_bytes and isinstance(a, str) and isinstance(b, str)):
        return False
    decoded = bytes_value(a)
    return decoded is not None and decoded == bytes_value(b)


def _same_proofs(profile: WireProfile, given: list[dict[str, Any]], sent: list[dict[str, Any]]) -> bool:
    def rest(proof: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in proof.items() if k != "signature"}

    return len(given) == len(sent) and all(
        rest(g) == rest(s) and _same_signature(profile, g.get("signature"), s.get("signature"))
        for g, s in zip(given, sent)
    )


@check("MSG-08", applies=_applies, requires=("thinking",))
def thinking_round_trips_with_its_signature(ctx: CheckContext) -> None:
    signature = _streamed_signature(ctx.scenario)
    if ctx.scenario.expect.type != "error" and signature is not None:  # redacted blocks: RES-08's
        got = _proof(getattr(ctx.result, "thinking", None), ("signature",))
        if not _same_signature(ctx.profile, got["signature"], signature):
            fail(
                ctx,
                "the result's thinking must keep the provider's signature, or the reasoning cannot be sent "
                "back on the next step",
                expected={"signature": signature},
                actual={"signature": got["signature"]},
            )
    if not _history_thinking(ctx.scenario):
        return
    requests = ctx.requests()
    if not requests:
        fail(ctx, "the adapter sent no request", expected="one request", actual="none")
    fields = ctx.profile.round_trips_thinking
    given = [
        _proof(m.thinking, fields)
        for m in ctx.profile.expected_history(ctx.scenario.messages)
        if isinstance(m, AssistantMessage)
    ]
    sent = [_proof(m.thinking, fields) for m in requests[0].messages if isinstance(m, AssistantMessage)]
    misplaced = requests[0].violations_of("MSG-08")
    if misplaced:
        fail(ctx, "the reasoning's signature is not where the provider looks for it", actual=misplaced)
    if not _same_proofs(ctx.profile, given, sent):
        fail(
            ctx,
            "thinking in the history must be sent back as the provider's reasoning blocks, signature and "
            "redacted data unchanged",
            expected=given,
            actual=sent,
        )
