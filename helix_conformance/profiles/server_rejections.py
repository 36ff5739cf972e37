"""Server rejections: request shapes a wire profile's API accepts that named servers of it answer with 400.

OpenAI Chat is spoken by many servers (``profiles/servers.py``, the registry every id here belongs to), and
some refuse what OpenAI itself takes. Such a shape is no breach of the profile (the clause passes), but it is
one for an adapter that targets one of those servers (``profiles.servers.declared_servers``: the ones its
``AdapterSpec.servers`` names, else its profile's own provider): the check of the rule's clause fails then,
naming the server and the evidence. For servers the adapter does not target it is a compatibility finding,
never the gate's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class ServerRejection:
    """A request shape the profile's API accepts and ``servers`` answer with a 400."""

    id: str
    profile: str
    clause: str
    """The clause whose check fails the shape for an adapter declaring one of ``servers``."""
    servers: frozenset[str]
    shape: str
    """What the servers reject, in words."""
    evidence: tuple[str, ...]
    """The servers' own error messages, as reported."""


DEVELOPER_ROLE = ServerRejection(
    id="developer_role",
    profile="openai-chat",
    clause="MSG-01",
    servers=frozenset({"deepseek", "volcengine", "alibaba", "vercel-ai-gateway"}),
    shape="a `developer` message as the system prompt (OpenAI's role for reasoning models)",
    evidence=(
        "DeepSeek: 400 `messages[1].role: unknown variant `developer`, expected one of `system`, `user`, "
        "`assistant`, `tool`` (https://github.com/BenedictKing/ccx/issues/149)",
        "Volcengine: `The parameter messages.role ... invalid value: developer, supported values are: system, "
        "assistant, user, tool` (https://github.com/agno-agi/agno/issues/6697)",
        "Alibaba DashScope (Qwen): `developer is not one of ['system', 'assistant', 'user', 'tool', 'function']` "
        "(https://github.com/haru/redmine_ai_helper/issues/242)",
        "Vercel AI Gateway: `Invalid enum value. Expected 'system' | 'user' | 'assistant' | 'tool', received "
        "'developer'` (https://github.com/egoist/chatwise-releases/issues/971)",
    ),
)
EMPTY_CONTENT_BESIDE_TOOL_CALLS = ServerRejection(
    id="empty_content_beside_tool_calls",
    profile="openai-chat",
    clause="MSG-06",
    servers=frozenset({"anthropic-openai-proxy", "cliproxyapi"}),
    shape='`content: ""` on an assistant message that carries `tool_calls` (OpenAI takes it; `null` is safe)',
    evidence=(
        "OpenAI-compatible gateways in front of Claude: 400 `messages: text content blocks must be non-empty` "
        "(https://github.com/NousResearch/hermes-agent/pull/31582; Bedrock-backed endpoints, "
        "https://github.com/vercel/ai/pull/14888)",
        "CLIProxyAPI routing to Antigravity/Vertex Claude: 400 `messages.1.content.0.text.text: Field required` "
        "(https://github.com/router-for-me/CLIProxyAPI/issues/749)",
    ),
)

SERVER_REJECTIONS: dict[str, ServerRejection] = {
    rule.id: rule for rule in (DEVELOPER_ROLE, EMPTY_CONTENT_BESIDE_TOOL_CALLS)
}


def rejected_by(findings: Iterable[tuple[str, str]], clause: str, servers: frozenset[str]) -> list[str]:
    """The findings of ``clause`` (rule id, where) that one of ``servers`` (the targeted ones) rejects, each
    said with its servers and evidence."""
    problems = []
    for rule_id, where in findings:
        rule = SERVER_REJECTIONS[rule_id]
        hit = sorted(rule.servers & servers)
        if rule.clause == clause and hit:
            problems.append(
                f"{where}: {rule.shape}, which {', '.join(hit)} answer with 400: {rule.evidence[0]}"
            )
    return problems


def rejecting(findings: Iterable[tuple[str, str]], clause: str) -> frozenset[str]:
    """Every server that rejects one of the findings of ``clause``, targeted or not (the compatibility matrix's)."""
    return frozenset(
        server
        for rule_id, _ in findings
        if (rule := SERVER_REJECTIONS[rule_id]).clause == clause
        for server in rule.servers
    )
