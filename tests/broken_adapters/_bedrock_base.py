"""The Bedrock ConverseStream counterpart of ``_base``: a hookable reference and the ``broken_bedrock`` helper.

``HookedBedrockAdapter`` behaves exactly like ``reference_adapters.bedrock_converse`` (it is that adapter,
built with the replay's dummy credentials), but the body, the stream accumulator and the event-stream
decoder are class attributes or methods, so each broken adapter overrides one of them and nothing else.
``BEDROCK_BASELINE`` is the hooked adapter with no override: the control tests prove it passes every Bedrock
selection a broken adapter fails, so a failure comes from the injected bug, not from this plumbing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import httpx

from helix_conformance.contract import LLMGenerateInput, StepResult
from reference_adapters._http import RetryableFailure, SafeCallbacks, StreamGuard, exchange
from reference_adapters.bedrock_converse import (
    MEDIA_TYPE,
    PROVIDER,
    REPLAY_ACCESS_KEY_ID,
    AwsCredentials,
    BedrockConverseAdapter,
    _ConverseStream,
    _Decoder,
    build_request_body,
)
from reference_adapters.bedrock_converse import spec as reference_spec

from ._base import AdapterClass, BrokenAdapter, broken

__all__ = ["BEDROCK_BASELINE", "HookedBedrockAdapter", "HookedConverseStream", "broken_bedrock"]


def broken_bedrock(
    name: str,
    adapter: AdapterClass,
    caught_by: str,
    scenarios: Sequence[str],
    description: str,
    *,
    harness_gap: str | None = None,
) -> BrokenAdapter:
    """A registry entry built like ``reference_adapters.bedrock_converse.spec``: profile, model, capabilities."""
    return broken(
        name,
        adapter,
        caught_by,
        scenarios,
        description,
        harness_gap=harness_gap,
        capabilities=reference_spec.capabilities,
        wire_profile="bedrock-converse",
        model=reference_spec.model,
    )


class HookedConverseStream(_ConverseStream):
    """The reference accumulator; broken adapters override its handlers (``_message``, ``_start``,
    ``_delta``, ``result``) directly."""


class HookedBedrockAdapter(BedrockConverseAdapter):
    """The reference adapter, signed with the replay's dummy key pair, with its parts as hooks."""

    stream_class: ClassVar[type[_ConverseStream]] = HookedConverseStream
    decoder_class: ClassVar[type[Any]] = _Decoder

    def __init__(self, *, api_key: str, base_url: str, timeout: float) -> None:
        credentials = AwsCredentials(REPLAY_ACCESS_KEY_ID, api_key)
        super().__init__(credentials=credentials, base_url=base_url, timeout=timeout)

    def _request_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        return build_request_body(input)

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        return await exchange(
            client,
            request,
            guard,
            PROVIDER,
            status_error=self._status_error,
            parser=self.stream_class(emit),
            decoder=self.decoder_class(),
            media_type=MEDIA_TYPE,
        )


BEDROCK_BASELINE = broken_bedrock(
    "bedrock_baseline",
    HookedBedrockAdapter,
    "HARN-01",
    ("text_basic",),
    "The hooked Bedrock reference with no override: must pass everything the reference passes (control).",
)
"""Not a broken adapter: the control tests run it on every Bedrock selection of the registry."""
