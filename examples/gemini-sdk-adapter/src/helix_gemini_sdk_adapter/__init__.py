"""A Helix Agents LLM adapter built on the official ``google-genai`` SDK, and its conformance spec.

``pytest --adapter=gemini-sdk`` (entry point ``gemini-sdk`` in group ``helix_conformance.adapters``) runs the
helix-conformance suite against ``spec``.
"""

from __future__ import annotations

from helix_conformance.contract import AdapterContext, AdapterSpec

from ._adapter import GeminiSDKAdapter

__all__ = ["GeminiSDKAdapter", "spec"]


def _factory(ctx: AdapterContext) -> GeminiSDKAdapter:
    """Called for every scenario run: in replay the key is a dummy, the base URL the provider's and the timeout
    short (a stalled stream must end by the adapter's own read timeout, NT-04)."""
    return GeminiSDKAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout)


spec = AdapterSpec(
    name="gemini-sdk",
    factory=_factory,
    wire_profile="gemini",
    model="gemini-2.5-flash",
    # "caching": honoured by sending nothing for it (CACHE-04: Gemini caches implicitly).
    capabilities=frozenset({"thinking", "parallel_tool_calls", "retries", "caching", "abort"}),
    description="Example: Gemini through the official google-genai SDK (client.aio, streamed).",
)
