"""A Helix Agents LLM adapter built on the official ``anthropic`` SDK, and its conformance spec.

``pytest --adapter=anthropic-sdk`` (entry point ``anthropic-sdk`` in group ``helix_conformance.adapters``) runs
the helix-conformance suite against ``spec``.
"""

from __future__ import annotations

from helix_conformance.contract import AdapterContext, AdapterSpec

from ._adapter import AnthropicSDKAdapter

__all__ = ["AnthropicSDKAdapter", "spec"]


def _factory(ctx: AdapterContext) -> AnthropicSDKAdapter:
    """Called for every scenario run: in replay the key is a dummy, the base URL the provider's and the timeout
    short (a stalled stream must end by the adapter's own read timeout, NT-04)."""
    return AnthropicSDKAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout)


spec = AdapterSpec(
    name="anthropic-sdk",
    factory=_factory,
    wire_profile="anthropic-messages",
    model="claude-haiku-4-5-20251001",
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="Example: Anthropic Messages through the official anthropic SDK (AsyncAnthropic).",
)
