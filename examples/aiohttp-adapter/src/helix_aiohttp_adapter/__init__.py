"""A Helix Agents LLM adapter on aiohttp (OpenAI Chat Completions, streamed), and its conformance spec.

``pytest --adapter=openai-aiohttp`` (entry point ``openai-aiohttp`` in group ``helix_conformance.adapters``) runs
the helix-conformance suite against ``spec``.
"""

from __future__ import annotations

from helix_conformance.contract import AdapterContext, AdapterSpec

from ._adapter import AiohttpChatAdapter

__all__ = ["AiohttpChatAdapter", "spec"]


def _factory(ctx: AdapterContext) -> AiohttpChatAdapter:
    """Called for every scenario run: in replay the key is a dummy, the base URL the harness's replay host and
    the timeout short (a stalled stream must end by the adapter's own read timeout, NT-04)."""
    return AiohttpChatAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout)


spec = AdapterSpec(
    name="openai-aiohttp",
    factory=_factory,
    wire_profile="openai-chat",
    model="gpt-4o-mini",
    capabilities=frozenset({"parallel_tool_calls", "retries", "abort"}),
    description="Example: OpenAI Chat Completions over aiohttp.",
)
