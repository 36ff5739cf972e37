"""A Helix Agents LLM adapter built on the official ``openai`` SDK, and its conformance spec.

``pytest --adapter=openai-sdk`` (entry point ``openai-sdk`` in group ``helix_conformance.adapters``) runs the
helix-conformance suite against ``spec``.
"""

from __future__ import annotations

from helix_conformance.contract import AdapterContext, AdapterSpec

from ._adapter import OpenAISDKAdapter

__all__ = ["OpenAISDKAdapter", "spec"]


def _factory(ctx: AdapterContext) -> OpenAISDKAdapter:
    """Called for every scenario run: in replay the key is a dummy, the base URL the provider's and the timeout
    short (a stalled stream must end by the adapter's own read timeout, NT-04)."""
    return OpenAISDKAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout)


spec = AdapterSpec(
    name="openai-sdk",
    factory=_factory,
    wire_profile="openai-chat",
    model="gpt-4o-mini",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="Example: OpenAI Chat Completions through the official openai SDK (AsyncOpenAI).",
)
