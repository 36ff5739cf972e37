"""A Helix Agents LLM adapter on boto3 (Amazon Bedrock ConverseStream), and its conformance spec.

``pytest --adapter=bedrock-boto3`` (entry point ``bedrock-boto3`` in group ``helix_conformance.adapters``) runs the
helix-conformance suite against ``spec``.
"""

from __future__ import annotations

from helix_conformance.contract import AdapterContext, AdapterSpec

from ._adapter import BedrockBoto3Adapter

__all__ = ["BedrockBoto3Adapter", "spec"]

REPLAY_ACCESS_KEY_ID = "AKIAHELIXREPLAY00000"
"""In replay boto3 signs with this id and the context's dummy key: the replay accepts any signature."""


def _factory(ctx: AdapterContext) -> BedrockBoto3Adapter:
    """Called for every scenario run: in replay the key is a dummy, the endpoint the harness's replay host
    (boto3's ``endpoint_url``) and the timeout short (a stalled stream ends at the adapter's read timeout)."""
    return BedrockBoto3Adapter(
        endpoint_url=ctx.base_url,
        aws_access_key_id=REPLAY_ACCESS_KEY_ID,
        aws_secret_access_key=ctx.api_key,
        timeout=ctx.timeout,
    )


spec = AdapterSpec(
    name="bedrock-boto3",
    factory=_factory,
    wire_profile="bedrock-converse",
    model="us.anthropic.claude-sonnet-4-20250514-v1:0",
    capabilities=frozenset({"parallel_tool_calls", "retries", "abort", "thinking"}),
    description="Example: Amazon Bedrock ConverseStream through boto3.",
)
