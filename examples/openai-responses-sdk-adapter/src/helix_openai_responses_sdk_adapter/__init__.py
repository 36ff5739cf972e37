"""A Helix Agents LLM adapter on the official ``openai`` SDK's Responses API, and its conformance spec.

``pytest --adapter=openai-responses-sdk`` (entry point ``openai-responses-sdk`` in group
``helix_conformance.adapters``) runs the helix-conformance suite of the ``openai-responses`` profile against
``spec``.
"""

from __future__ import annotations

from helix_conformance.contract import AdapterContext, AdapterSpec

from ._adapter import OpenAIResponsesSDKAdapter

__all__ = ["OpenAIResponsesSDKAdapter", "spec"]


def _factory(ctx: AdapterContext) -> OpenAIResponsesSDKAdapter:
    """Called for every scenario run: in replay the key is a dummy, the base URL the provider's and the timeout
    short (a stalled stream must end by the adapter's own read timeout, NT-04)."""
    return OpenAIResponsesSDKAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout)


spec = AdapterSpec(
    name="openai-responses-sdk",
    factory=_factory,
    wire_profile="openai-responses",
    model="gpt-5-mini",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="Example: OpenAI's Responses API through the official openai SDK (AsyncOpenAI).",
)
