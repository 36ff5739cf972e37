"""The Cohere v2 chat counterpart of ``_base``: a hookable reference and the ``broken_cohere`` helper.

``HookedCohereAdapter`` is ``reference_adapters.cohere`` with the body and the stream accumulator as hooks, so
each broken adapter overrides one of them and nothing else. ``COHERE_BASELINE`` is the hooked adapter with no
override: the control tests prove it passes every Cohere selection a broken adapter fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import httpx

from helix_conformance.contract import LLMGenerateInput, StepResult
from reference_adapters._http import RetryableFailure, SafeCallbacks, StreamGuard, exchange
from reference_adapters._sse import SSEDecoder
from reference_adapters.cohere import PROVIDER, CohereAdapter, _ChatStream, build_request_body
from reference_adapters.cohere import spec as reference_spec

from ._base import AdapterClass, BrokenAdapter, broken

__all__ = ["COHERE_BASELINE", "HookedChatStream", "HookedCohereAdapter", "broken_cohere"]


def broken_cohere(
    name: str, adapter: AdapterClass, caught_by: str, scenarios: Sequence[str], description: str
) -> BrokenAdapter:
    """A registry entry built like ``reference_adapters.cohere.spec``: same profile, model, capabilities."""
    return broken(
        name,
        adapter,
        caught_by,
        scenarios,
        description,
        capabilities=reference_spec.capabilities,
        wire_profile="cohere-chat",
        model=reference_spec.model,
    )


class HookedChatStream(_ChatStream):
    """The reference accumulator; broken adapters override its handlers (``_event``, ``_call_piece``,
    ``_message_end``, ``result``) directly."""


class HookedCohereAdapter(CohereAdapter):
    stream_class: ClassVar[type[_ChatStream]] = HookedChatStream

    def _request_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        return build_request_body(input)

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        parser = self.stream_class(emit)
        return await exchange(
            client,
            request,
            guard,
            PROVIDER,
            status_error=self._status_error,
            parser=parser,
            decoder=SSEDecoder(),
        )


COHERE_BASELINE = broken_cohere(
    "cohere_baseline",
    HookedCohereAdapter,
    "HARN-01",
    ("text_basic",),
    "The hooked Cohere reference with no override: must pass everything the reference passes (control).",
)
"""Not a broken adapter: the control tests run it on every Cohere selection of the registry."""
