"""The servers behind each wire profile: who speaks it, with which quirks, at which URL.

One wire protocol is served by several servers: OpenAI Chat by OpenAI, Azure OpenAI, DeepSeek, OpenRouter,
Mistral…; Gemini by the Gemini API and Vertex AI; Anthropic Messages by Anthropic and Vertex AI; Bedrock's
ConverseStream by the Bedrock runtime and Cohere's v2 chat by Cohere. A scenario
whose response only some servers send names them (``scenarios/preconditions.Precondition.servers``); an
adapter declares the servers it targets (``AdapterSpec.servers``, by default its profile's own provider). The
quirks of declared servers are judged by the gate; the others are run and shown in a compatibility matrix.
Where a server has its own URL shape (Azure's deployments, Vertex's publishers), the request's URL tells it
(``server_of``), and the replay matches that shape too. Request shapes some of them answer with 400 are
``profiles/server_rejections.py``'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    from ..contract import AdapterSpec


@dataclass(frozen=True)
class Server:
    id: str
    name: str
    profile: str
    evidence: str
    """A documentation URL or the recordings of it (``../shared/recordings/<dir>``)."""
    path: str | None = None
    """A regular expression matching the path of its streaming endpoint, where it differs from the profile's
    own (the request's URL then says which server it addresses); a ``model`` group where the URL names the
    model (or deployment) instead of the body."""


def _servers(profile: str, *rows: tuple[str, str, str] | tuple[str, str, str, str]) -> tuple[Server, ...]:
    return tuple(Server(row[0], row[1], profile, row[2], row[3] if len(row) > 3 else None) for row in rows)


SERVERS: tuple[Server, ...] = (
    *_servers(
        "openai-chat",
        ("openai", "OpenAI", "https://platform.openai.com/docs/api-reference/chat/create"),
        (
            "azure-openai",
            "Azure OpenAI",
            "https://learn.microsoft.com/azure/ai-foundry/openai/reference (POST /openai/deployments/"
            "{deployment-id}/chat/completions?api-version=…, `api-key` header); ../shared/recordings/azure-openai",
            r"/openai/deployments/(?P<model>[^/]+)/chat/completions$",
        ),
        ("deepseek", "DeepSeek", "https://api-docs.deepseek.com/; ../shared/recordings/deepseek"),
        ("openrouter", "OpenRouter", "https://openrouter.ai/docs; ../shared/recordings/openrouter"),
        ("mistral", "Mistral", "https://docs.mistral.ai/api/; ../shared/recordings/mistral"),
        ("groq", "Groq", "https://console.groq.com/docs/openai; ../shared/recordings/groq"),
        (
            "ollama",
            "Ollama",
            "https://github.com/ollama/ollama/blob/main/docs/openai.md; ../shared/recordings/ollama",
        ),
        (
            "gemini-openai",
            "Gemini (OpenAI-compatible)",
            "https://ai.google.dev/gemini-api/docs/openai; ../shared/recordings/google-openai-compat",
        ),
        (
            "anthropic-openai",
            "Claude (OpenAI-compatible)",
            "https://docs.anthropic.com/en/api/openai-sdk; ../shared/recordings/anthropic-openai-compat",
        ),
        ("xai", "xAI", "https://docs.x.ai/docs/api-reference; cassettes/recorded/xai"),
        (
            "alibaba",
            "Alibaba Qwen (DashScope)",
            "https://www.alibabacloud.com/help/en/model-studio/; cassettes/recorded/alibaba; refuses `developer` "
            "(https://github.com/haru/redmine_ai_helper/issues/242)",
        ),
        (
            "volcengine",
            "Volcengine Ark",
            "https://www.volcengine.com/docs/82379; refuses `developer` (https://github.com/agno-agi/agno/issues/6697)",
        ),
        (
            "vercel-ai-gateway",
            "Vercel AI Gateway",
            "https://vercel.com/docs/ai-gateway; refuses `developer` "
            "(https://github.com/egoist/chatwise-releases/issues/971)",
        ),
        ("perplexity", "Perplexity", "https://docs.perplexity.ai/; cassettes/recorded/perplexity"),
        (
            "huggingface",
            "Hugging Face",
            "https://huggingface.co/docs/inference-providers; ../shared/recordings/huggingface",
        ),
        ("glm", "GLM (Zhipu)", "https://github.com/HKUDS/nanobot/pull/3943"),
        ("kimi", "Kimi (Moonshot)", "https://github.com/HKUDS/nanobot/issues/4473"),
        ("snowflake", "Snowflake Cortex", "https://github.com/truera/trulens/pull/2240"),
        ("novita", "Novita", "https://openrouter.ai/provider/novita (docs/contract.md STOP-01)"),
        ("nvidia-nim", "NVIDIA NIM", "https://github.com/NousResearch/hermes-agent/pull/11984"),
        ("litellm", "LiteLLM proxy", "https://docs.litellm.ai/docs/simple_proxy"),
        (
            "anthropic-openai-proxy",
            "OpenAI-compatible gateways in front of Claude",
            "https://github.com/NousResearch/hermes-agent/pull/31582, https://github.com/vercel/ai/pull/14888 "
            '(`content: ""` beside `tool_calls` answered 400 `text content blocks must be non-empty`)',
        ),
        (
            "cliproxyapi",
            "CLIProxyAPI",
            "https://github.com/router-for-me/CLIProxyAPI/issues/749 (routing to Vertex Claude)",
        ),
        (
            "chat-gateways",
            "Responses-to-Chat gateways",
            "https://github.com/mcowger/plexus/pull/694, https://github.com/QwenLM/Qwen-Agent/pull/943",
        ),
        (
            "sse-framing",
            "SSE framing by the standard",
            "https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation "
            "(proxies and servers that frame events otherwise than OpenAI)",
        ),
    ),
    *_servers(
        "anthropic-messages",
        ("anthropic", "Anthropic", "https://docs.anthropic.com/en/api/messages"),
        (
            "vertex-anthropic",
            "Claude on Vertex AI",
            "https://docs.anthropic.com/en/api/claude-on-vertex-ai (POST …/publishers/anthropic/models/"
            "{model}:streamRawPredict, `anthropic_version: vertex-2023-10-16` in the body, no `model`)",
            r"/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/(?P<model>[^/:]+):streamRawPredict$",
        ),
        (
            "bedrock-anthropic",
            "Claude on Amazon Bedrock (behind a Messages proxy)",
            "https://docs.anthropic.com/en/api/claude-on-amazon-bedrock; its events come as AWS event-stream "
            "frames, which a proxy or SDK turns back into these SSE events",
        ),
    ),
    *_servers(
        "gemini",
        ("gemini-api", "Gemini API", "https://ai.google.dev/api/generate-content"),
        (
            "vertex",
            "Vertex AI",
            "https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations."
            "publishers.models/streamGenerateContent (POST /v1/projects/{p}/locations/{l}/publishers/google/"
            "models/{m}:streamGenerateContent?alt=sse)",
            r"/projects/[^/]+/locations/[^/]+/publishers/google/models/(?P<model>[^/:]+):streamGenerateContent$",
        ),
    ),
    *_servers(
        "openai-responses",
        ("openai", "OpenAI", "https://platform.openai.com/docs/api-reference/responses/create"),
        (
            "azure-openai",
            "Azure OpenAI",
            "https://learn.microsoft.com/azure/ai-foundry/openai/how-to/responses (POST /openai/v1/responses)",
            r"/openai/(v1/)?responses$",
        ),
        (
            "openrouter",
            "OpenRouter",
            "https://openrouter.ai/docs/api-reference/responses-api/overview (ends a stream with `data: [DONE]` "
            "after `response.completed`: docs/contract.md)",
        ),
    ),
    *_servers(
        "bedrock-converse",
        (
            "bedrock",
            "Amazon Bedrock",
            "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html (POST "
            "/model/{modelId}/converse-stream, SigV4 or a Bedrock API key); cassettes/recorded/bedrock (Nova, "
            "Claude, gpt-oss)",
        ),
    ),
    *_servers(
        "cohere-chat",
        ("cohere", "Cohere", "https://docs.cohere.com/reference/chat-stream; cassettes/recorded/cohere"),
    ),
)
"""One Bedrock runtime serves every model behind ConverseStream (Claude, Nova, Llama, gpt-oss…): what differs by
model is what the request must ask for (Claude's reasoning only with ``additionalModelRequestFields.thinking``,
gpt-oss's always), which the decoder reads as request options, not a server of its own."""


def servers_of(profile: str) -> tuple[Server, ...]:
    """The servers of a wire profile, its own provider first (none for ``custom`` and ``scripted``)."""
    return tuple(s for s in SERVERS if s.profile == profile)


def default_servers(profile: str) -> frozenset[str]:
    """What an adapter targets unless it says otherwise: its profile's own provider."""
    own = servers_of(profile)
    return frozenset({own[0].id}) if own else frozenset()


def declared_servers(spec: AdapterSpec, profile: str) -> frozenset[str]:
    """The servers an adapter targets: the ones its spec names, else its profile's own provider."""
    return spec.servers or default_servers(profile)


def server_name(profile: str, server: str) -> str:
    return next((s.name for s in servers_of(profile) if s.id == server), server)


def server_of(profile: str, path: str) -> str | None:
    """The server a request's path addresses, where its URL shape tells (Azure, Vertex); else None."""
    addressed = addressed_by(profile, path)
    return addressed[0] if addressed else None


def addressed_by(profile: str, path: str) -> tuple[str, str | None] | None:
    """(server, the model its URL names) for a path of a server's own shape; None for the profile's own."""
    for server in servers_of(profile):
        match = re.search(server.path, unquote(path)) if server.path else None
        if match:
            return server.id, match.groupdict().get("model")
    return None


def unknown_servers(profile: str, servers: frozenset[str]) -> str | None:
    """A usage error for servers the profile does not know (with the ones it does), or None."""
    known = [s.id for s in servers_of(profile)]
    unknown = sorted(servers - set(known))
    if not unknown:
        return None
    return (
        f"unknown server(s) {', '.join(repr(s) for s in unknown)} for wire profile {profile!r} "
        f"(AdapterSpec.servers); known: {', '.join(known) or 'none (this profile has no server list)'}"
    )
