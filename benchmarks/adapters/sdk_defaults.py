"""The openai SDK example left on the SDK's own defaults: 2 retries with exponential backoff and jitter
(0.5 s doubling, up to 8 s), a 600 s read timeout, and a default HTTP client built per adapter (its own TLS
context). This is how adapters are written elsewhere; the speed benchmark runs it beside the reference."""

from __future__ import annotations

import openai
from helix_openai_sdk_adapter import OpenAISDKAdapter
from helix_openai_sdk_adapter import spec as example

from helix_conformance.contract import AdapterContext, AdapterSpec


class SDKDefaultsAdapter(OpenAISDKAdapter):
    def __init__(self, *, api_key: str, base_url: str | None) -> None:
        super().__init__(api_key=api_key, base_url=base_url)
        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url)


spec = AdapterSpec(
    name="openai-sdk-defaults",
    factory=lambda ctx: SDKDefaultsAdapter(api_key=ctx.api_key, base_url=ctx.base_url),
    wire_profile="openai-chat",
    model=example.model,
    capabilities=example.capabilities,
    description="The openai SDK example on the SDK's defaults (retries, backoff, timeout, client).",
)


def wrong_profile_factory(ctx: AdapterContext) -> OpenAISDKAdapter:
    return OpenAISDKAdapter(api_key=ctx.api_key, base_url=ctx.base_url, timeout=ctx.timeout)


wrong_profile = AdapterSpec(
    name="openai-sdk-declared-anthropic",
    factory=wrong_profile_factory,
    wire_profile="anthropic-messages",
    model="claude-sonnet-4-5",
    capabilities=example.capabilities,
    description="An OpenAI adapter declared with the Anthropic profile by mistake: the run must stop fast.",
)
