"""When a provider sends a scenario's response: the request preconditions of every scenario and fault kind.

A provider's answer depends on the request: Vertex streams a call's arguments in pieces only when asked to,
Anthropic sends thinking blocks only when thinking is enabled, a tool call answers only a request that
declares the tool. A scenario states what its response needs (``Precondition``): request options it needs or
must not carry, and the servers of the wire profile that send it, each with its evidence (a provider's
documentation or a real recording). Options are facts the profile's request decoder reads from the adapter's
request (``DecodedRequest.options``), so a precondition is checked after the run, on the request the adapter
really sent (``checks/context.ScenarioSession.applicability``): a response the provider would not have sent to
that request is not judged, and the report says so with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

OPTIONS: dict[str, str] = {
    "tools": "declares tools (`tools`, Gemini `functionDeclarations`)",
    "stop_sequences": "sets stop sequences (`stop`, `stop_sequences`, `stopSequences`)",
    "thinking": (
        "asks for the model's reasoning (Anthropic `thinking.type` enabled or adaptive, Gemini "
        "`generationConfig.thinkingConfig.includeThoughts: true`, OpenAI Responses `reasoning.summary`, Bedrock "
        "`additionalModelRequestFields.thinking` or a model that always reasons, Cohere `thinking.type` enabled "
        "or left unset on a reasoning model)"
    ),
    "reasoning_encrypted": "includes the encrypted reasoning (OpenAI Responses `include: [reasoning.encrypted_content]`)",
    "include_usage": "asks for usage (OpenAI Chat `stream_options.include_usage: true`)",
    "stream_function_call_arguments": (
        "asks Vertex AI to stream call arguments (`toolConfig.functionCallingConfig.streamFunctionCallArguments: "
        "true`)"
    ),
    "server_tools": (
        "enables the provider's server tools (Anthropic: a `web_search_…`, `web_fetch_…` or "
        "`code_execution_…` tool, or `mcp_servers`; Bedrock: a `systemTool` such as `nova_code_interpreter`)"
    ),
    "several_choices": "asks for several choices (OpenAI Chat `n` > 1)",
    "guardrail": "applies a guardrail (Bedrock `guardrailConfig`)",
    "parallel_tool_calls_off": (
        "forbids parallel tool calls (OpenAI `parallel_tool_calls: false`, Anthropic "
        "`tool_choice.disable_parallel_tool_use: true`)"
    ),
}
"""The request options a precondition can name, as the profiles' request decoders report them: each says what a
request carrying it does ("a request that …")."""

OPTION_EVIDENCE: dict[str, tuple[str, ...]] = {
    "tools": (
        "https://platform.openai.com/docs/guides/function-calling",
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/overview",
        "https://ai.google.dev/gemini-api/docs/function-calling",
    ),
    "stop_sequences": (
        "https://platform.openai.com/docs/api-reference/chat/object (finish_reason `stop`: a natural stop point "
        "or a provided stop sequence)",
        "https://docs.anthropic.com/en/api/messages (stop_reason `stop_sequence`: one of your provided custom "
        "stop_sequences was generated)",
    ),
    "thinking": (
        "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking (thinking blocks come back when "
        "`thinking` is enabled)",
        "https://ai.google.dev/gemini-api/docs/thinking (thought summaries: set `includeThoughts` to true)",
        "https://platform.openai.com/docs/guides/reasoning (reasoning summaries: set `reasoning.summary`)",
        "https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html (Claude on "
        "Bedrock: `thinking` in `additionalModelRequestFields`; cassettes/recorded/bedrock/"
        "test_bedrock_model_thinking_part_stream.yaml)",
        "cassettes/recorded/bedrock/test_bedrock_model_stream_empty_text_delta.yaml (openai.gpt-oss-120b on "
        "Bedrock streams reasoningContent to a request that asks for none)",
        'https://docs.cohere.com/docs/reasoning (Cohere\'s reasoning models are "hybrid": reasoning enabled or '
        "disabled, in `thinking` content blocks)",
        "https://docs.oracle.com/en-us/iaas/tools/dotnet/latest/api/Oci.GenerativeaiinferenceService.Models."
        'CohereThinkingV2.html ("Reasoning is enabled by default for models that support it, but can be turned '
        'off by setting type = disabled")',
    ),
    "reasoning_encrypted": (
        "https://platform.openai.com/docs/guides/reasoning (encrypted reasoning items: "
        '`include: ["reasoning.encrypted_content"]`)',
    ),
    "include_usage": (
        'https://platform.openai.com/docs/api-reference/chat/create (stream_options.include_usage: "If set, an '
        "additional chunk will be streamed before the data: [DONE] message … the choices field will always be "
        'an empty array")',
    ),
    "stream_function_call_arguments": (
        'google-genai (Python SDK 3.6.1) types.py: FunctionCallingConfig.stream_function_call_arguments "When '
        "set to true, arguments of a single function call will be streamed out in multiple "
        "parts/contents/responses. Partial parameter results will be returned in the FunctionCall.partial_args "
        'field. This field is not supported in Gemini API."; FunctionCall.partial_args and will_continue '
        '"This field is not supported in Gemini API."',
        'google-genai models.py _FunctionCallingConfig_to_mldev: raises "stream_function_call_arguments '
        'parameter is only supported in Gemini Enterprise Agent Platform mode, not in Gemini Developer API mode"',
        "https://googleapis.github.io/java-genai/javadoc/google-genai/com.google.genai.types/"
        "-function-calling-config/stream-function-call-arguments.html",
        "https://docs.cloud.google.com/dotnet/docs/reference/Google.Cloud.AIPlatform.V1/latest/"
        "Google.Cloud.AIPlatform.V1.FunctionCall (Vertex AI v1: PartialArgs, WillContinue)",
    ),
    "server_tools": (
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool",
        "https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector",
        "https://docs.aws.amazon.com/nova/latest/userguide/tool-built-in.html (Nova's code interpreter: "
        '`toolConfig.tools: [{"systemTool": {"name": "nova_code_interpreter"}}]`, answered with a toolUse of '
        "type server_tool_use and its toolResult)",
    ),
    "guardrail": (
        "https://docs.aws.amazon.com/bedrock/latest/userguide/guardrails-use-converse-api.html (a guardrail "
        "assesses a Converse or ConverseStream call that includes its `guardrailConfig`)",
    ),
    "several_choices": (
        "https://platform.openai.com/docs/api-reference/chat/create (n: how many chat completion choices to "
        "generate for each input message)",
    ),
    "parallel_tool_calls_off": (
        "https://platform.openai.com/docs/guides/function-calling (parallel_tool_calls)",
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use "
        "(disable_parallel_tool_use)",
    ),
}
"""Why each option changes what a provider sends: the documentation that says so."""


@dataclass(frozen=True)
class Precondition:
    """When a provider sends a scenario's response (for the wire profiles in ``profiles``, None: all).

    ``needs``: request options it needs; ``forbids``: options under which it is never sent (``OPTIONS``);
    ``servers``: the servers of the wire profile that send it (``profiles/servers.py``), None for every one.
    ``why`` says it in a sentence and ``evidence`` proves it: documentation URLs or recordings. No options
    and no servers is "none: any request gets this", which needs its evidence too."""

    why: str
    evidence: tuple[str, ...]
    needs: frozenset[str] = frozenset()
    forbids: frozenset[str] = frozenset()
    servers: frozenset[str] | None = None
    profiles: frozenset[str] | None = None

    def __post_init__(self) -> None:
        unknown = sorted((self.needs | self.forbids) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown request option(s) {unknown}; known: {', '.join(OPTIONS)}")
        if not self.evidence:
            raise ValueError(f"a precondition needs its evidence: {self.why!r}")

    @property
    def any_request(self) -> bool:
        return not self.needs and not self.forbids and self.servers is None

    def unmet_by(self, options: Iterable[str]) -> str | None:
        """Why a request carrying ``options`` would not get this response, or None when it would."""
        sent = frozenset(options)
        missing = [OPTIONS[o] for o in sorted(self.needs - sent)]
        barred = [OPTIONS[o] for o in sorted(self.forbids & sent)]
        if not missing and not barred:
            return None
        wanted = f"only to a request that {'; that '.join(missing)}" if missing else ""
        refused = f"never to a request that {'; that '.join(barred)}" if barred else ""
        return (
            f"the provider sends this response {', and '.join(filter(None, (wanted, refused)))}; this adapter's "
            f"request is not one ({self.why})"
        )

    def summary(self) -> str:
        """The precondition in a few words (docs/scenarios.md, the reports)."""
        parts = [f"needs `{o}`" for o in sorted(self.needs)] + [f"not `{o}`" for o in sorted(self.forbids)]
        if self.servers is not None:
            parts.append("servers: " + ", ".join(sorted(self.servers)))
        return "; ".join(parts) or "none: any request gets this"


def any_request(why: str, *evidence: str, profiles: Iterable[str] | None = None) -> Precondition:
    """ "None, any request gets this" — still with the evidence that it is so."""
    return Precondition(why, evidence, profiles=frozenset(profiles) if profiles is not None else None)


def when(
    *needs: str,
    why: str,
    evidence: Iterable[str] = (),
    forbids: Iterable[str] = (),
    servers: Iterable[str] | None = None,
    profiles: Iterable[str] | None = None,
) -> Precondition:
    """A precondition on request options and/or servers; the options' own documentation is evidence too."""
    named = [*needs, *forbids]
    docs = [url for option in named for url in OPTION_EVIDENCE.get(option, ())]
    return Precondition(
        why,
        tuple(dict.fromkeys([*evidence, *docs])),
        frozenset(needs),
        frozenset(forbids),
        frozenset(servers) if servers is not None else None,
        frozenset(profiles) if profiles is not None else None,
    )


def choose(preconditions: Iterable[Precondition], profile: str) -> Precondition | None:
    """The precondition stated for ``profile``: the first whose ``profiles`` name it, or that is for all."""
    return next((p for p in preconditions if p.profiles is None or profile in p.profiles), None)
