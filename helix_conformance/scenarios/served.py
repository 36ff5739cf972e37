"""The preconditions many scenarios share (``preconditions.py``), each with its evidence, and the provider
options by which a scenario's input asks a provider for what its response needs.

A scenario whose precondition is peculiar to it states it beside itself; these are the common cases: a
stream any request gets, a tool call (the request declares the tool), parallel calls (not forbidden), reasoning
(asked for), an error status, a network fault.
"""

from __future__ import annotations

from typing import Any

from .preconditions import Precondition, any_request, when

RECORDINGS = "../shared/recordings"
"""Where the live recordings cited as evidence are (see its SOURCES.md); imported into cassettes/recorded."""

ANY_STREAM = any_request(
    "a streamed request is answered with a stream of this shape, whatever else the request sets",
    f"{RECORDINGS}/openai/test_run_stream_sync_streams_real_model.yaml",
    f"{RECORDINGS}/anthropic/test_stream_events_tool_calls.yaml",
    f"{RECORDINGS}/google/test_google_model_stream.yaml",
    f"{RECORDINGS}/openai-responses/test_openai_responses_stream.yaml",
)
TOOL_CALL = when(
    "tools",
    why="a model calls only a tool the request declares",
    evidence=(
        f"{RECORDINGS}/openai/test_run_stream_sync_streams_real_model.yaml",
        f"{RECORDINGS}/anthropic/test_stream_events_tool_calls.yaml",
        f"{RECORDINGS}/google/test_google_streaming_tool_call_thought_signature.yaml",
    ),
)
PARALLEL_CALLS = when(
    "tools",
    forbids=("parallel_tool_calls_off",),
    why="several calls in one response answer a request that declares the tools and does not forbid "
    "parallel calls (they are allowed by default)",
    evidence=(f"{RECORDINGS}/openai/test_complex_agent_run.yaml",),
)
STOP_SEQUENCE = when(
    "stop_sequences",
    why="a response stops on a stop sequence only when the request set one",
    evidence=(f"{RECORDINGS}/anthropic/test_prompt_with_prefill_and_stop_sequences.yaml",),
)
HTTP_ERROR = any_request(
    "any request can be answered with an error status and the provider's error body (a bad key, a bad "
    "request, a rate limit, an outage)",
    "https://platform.openai.com/docs/guides/error-codes",
    "https://docs.anthropic.com/en/api/errors",
    "https://ai.google.dev/gemini-api/docs/troubleshooting",
    f"{RECORDINGS}/openai/test_model_name_suggestion[openai-chat].yaml",
)
STREAM_ERROR = any_request(
    "an error event can end any stream once the answer started (overload, rate limit, a server error)",
    "https://docs.anthropic.com/en/api/messages-streaming (error events)",
    f"{RECORDINGS}/openrouter/test_openrouter_stream_error.yaml",
    f"{RECORDINGS}/groq/test_tool_use_failed_error_streaming.yaml",
)
NETWORK = any_request(
    "the network fails any request alike: a refused or reset connection, a read that times out, a body cut "
    "short",
    "https://www.python-httpx.org/exceptions/",
)
FOREIGN_BODY = any_request(
    "a proxy, load balancer or demo endpoint in front answers any request with a body of its own",
    f"{RECORDINGS}/openai/test_invalid_response.yaml",
    f"{RECORDINGS}/openai/test_text_response.yaml",
)
NOT_SENT = any_request(
    "the request is not sent, or the answer is not waited for: the response does not matter",
    "docs/contract.md (AB-01, TOOL-05)",
)

_REASONING_WHY = "reasoning comes back only when the request asks for it"

ASK: dict[str, dict[str, dict[str, dict[str, Any]]]] = {
    "thinking": {
        "anthropic-messages": {"anthropic": {"thinking": {"type": "enabled", "budget_tokens": 1024}}},
        "gemini": {
            key: {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}
            for key in ("gemini", "google")
        },
        "openai-responses": {"openai": {"reasoning": {"summary": "auto"}}},
        "bedrock-converse": {
            "bedrock": {
                "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}
            }
        },
        "cohere-chat": {"cohere": {"thinking": {"type": "enabled"}}},
    },
    "reasoning_encrypted": {"openai-responses": {"openai": {"include": ["reasoning.encrypted_content"]}}},
    "include_usage": {"openai-chat": {"openai": {"stream_options": {"include_usage": True}}}},
    "stream_function_call_arguments": {
        "gemini": {
            key: {"toolConfig": {"functionCallingConfig": {"streamFunctionCallArguments": True}}}
            for key in ("gemini", "google")
        }
    },
    "guardrail": {
        "bedrock-converse": {
            "bedrock": {
                "guardrailConfig": {
                    "guardrailIdentifier": "gr0example",
                    "guardrailVersion": "1",
                    "streamProcessingMode": "async",
                }
            }
        }
    },
    "server_tools": {
        "anthropic-messages": {
            "anthropic": {
                "mcp_servers": [{"type": "url", "url": "https://mcp.example.com/sse", "name": "web"}]
            }
        }
    },
}
"""How a scenario's input asks each provider for an option its response needs: option -> profile ->
provider_options (under every key the profile reads), which a conforming adapter merges into its request as
request fields (CFG-02). OpenAI Chat has no option for reasoning: the servers that stream it there do it by
model (DeepSeek's reasoner, Qwen). Tools and stop sequences are asked by the scenario's tools and config.
Bedrock's server tools are asked by the scenario itself: a ``systemTool`` goes in ``toolConfig.tools`` beside the
client's tools, so its input gives the whole ``toolConfig`` (``bedrock_cohere_shapes.py``)."""


def asking(*options: str, profiles: tuple[str, ...] | None = None) -> tuple[tuple[str, dict[str, Any]], ...]:
    """``Scenario.profile_config`` that asks for ``options`` (``ASK``) on each profile that has a way to."""
    chosen: dict[str, dict[str, dict[str, Any]]] = {}
    for option in options:
        for profile, by_key in ASK.get(option, {}).items():
            if profiles is None or profile in profiles:
                for key, fields in by_key.items():
                    chosen.setdefault(profile, {}).setdefault(key, {}).update(fields)
    return tuple((profile, {"provider_options": given}) for profile, given in chosen.items())


THINKING_CONFIG = asking("thinking", "reasoning_encrypted")
"""What a thinking scenario's input asks (``Scenario.profile_config``): the reasoning, encrypted where included."""
SERVER_TOOLS_CONFIG = asking("server_tools")
STREAMED_ARGUMENTS_CONFIG = asking("stream_function_call_arguments")
USAGE_CONFIG = asking("include_usage")
GUARDRAIL_CONFIG = asking("guardrail")


def thinking(*, tools: bool = False, signed: bool = True) -> tuple[Precondition, ...]:
    """A response with reasoning: asked for (Anthropic, Gemini, the Responses API; with its encrypted form
    where the response carries it signed), or, on OpenAI Chat, a server that streams it by model."""
    also = ("tools",) if tools else ()
    return (
        when(
            "thinking",
            *also,
            *(("reasoning_encrypted",) if signed else ()),
            why=_REASONING_WHY + " (a summary, and its encrypted form when included)",
            profiles=("openai-responses",),
        ),
        when(
            *also,
            why="OpenAI's Chat Completions never streams reasoning text; DeepSeek's reasoner and Qwen models "
            "stream it as `reasoning_content`",
            evidence=(
                "https://api-docs.deepseek.com/guides/reasoning_model",
                f"{RECORDINGS}/deepseek/test_deepseek_model_thinking_stream.yaml",
                "cassettes/recorded/alibaba/alibaba-reasoning.chunks.yaml",
            ),
            servers=("deepseek", "alibaba"),
            profiles=("openai-chat",),
        ),
        when("thinking", *also, why=_REASONING_WHY),
    )


# --- the stop reasons and wire shapes of one scenario each ---------------------------------------------------

TEXT_QUIRKS = (
    when(
        servers=("azure-openai", "openrouter"),
        why="on OpenAI Chat the stream also carries OpenRouter's `: OPENROUTER PROCESSING` comments and Azure's "
        "prompt-filter first chunk (`choices: []`), which OpenAI itself never sends",
        evidence=(
            f"{RECORDINGS}/azure-openai (azure-model-router.1.chunks.txt: the prompt-filter chunk)",
            "https://openrouter.ai/docs/api-reference/streaming (SSE comments)",
        ),
        profiles=("openai-chat",),
    ),
    any_request(
        "providers add event types, content blocks and fields without notice; any request may meet them",
        'https://docs.anthropic.com/en/api/messages-streaming ("we may add new event types")',
        "https://docs.anthropic.com/en/api/versioning (new fields and event types are not breaking changes)",
    ),
)
USAGE_CHUNK = when(
    "include_usage",
    why="OpenAI streams the usage chunk only to a request that asks for usage",
    evidence=(
        f"{RECORDINGS}/openai/test_run_stream_sync_streams_real_model.yaml (include_usage: true; the chunk "
        "with `choices: []` before [DONE])",
    ),
    profiles=("openai-chat",),
)
STOP_CONTENT_FILTER = (
    any_request(
        "a content filter can stop any answer",
        "https://platform.openai.com/docs/api-reference/chat/object (finish_reason content_filter)",
        "https://ai.google.dev/api/generate-content#FinishReason (SAFETY)",
        "https://platform.openai.com/docs/api-reference/responses/object (incomplete_details.reason "
        "content_filter)",
    ),
)
STOP_REFUSAL = (
    any_request(
        "the model may refuse any request; the refusal streams in its own field",
        "https://platform.openai.com/docs/api-reference/chat/streaming (delta.refusal)",
        "https://platform.openai.com/docs/guides/structured-outputs#refusals",
    ),
)
STOP_REFUSAL_NO_CONTENT = (
    any_request(
        "Claude's safety classifiers can stop any answer with stop_reason `refusal`",
        "https://docs.anthropic.com/en/api/handling-stop-reasons (refusal)",
        f"{RECORDINGS}/anthropic/test_refusal_raises.yaml",
    ),
)
STOP_CONTEXT_WINDOW = (
    any_request(
        "the context window can fill up on any request (`model_context_window_exceeded`)",
        "https://docs.anthropic.com/en/api/handling-stop-reasons (model_context_window_exceeded)",
    ),
)
STOP_PAUSE_TURN = (
    when(
        "server_tools",
        why="Anthropic pauses only long turns of its own server tools (web search, the MCP connector)",
        evidence=(
            "https://docs.anthropic.com/en/api/handling-stop-reasons (pause_turn)",
            f"{RECORDINGS}/anthropic/test_pause_turn_web_search_streaming_vcr.yaml",
        ),
    ),
)
STOP_PROMPT_BLOCKED = (
    any_request(
        "any prompt can be blocked (promptFeedback.blockReason, no candidates)",
        "https://ai.google.dev/api/generate-content#BlockReason",
        f"{RECORDINGS}/google/issue-19758-prompt-block.chunks.txt",
    ),
)
STOP_RECITATION = (
    any_request(
        "any answer can be stopped for reciting training data",
        "https://ai.google.dev/api/generate-content#FinishReason (RECITATION)",
    ),
)
STOP_MALFORMED_FUNCTION_CALL = (
    when(
        "tools",
        why="only a model given tools can produce a function call the API cannot parse",
        evidence=("https://ai.google.dev/api/generate-content#FinishReason (MALFORMED_FUNCTION_CALL)",),
    ),
)
STOP_FUNCTION_CALL = (
    when(
        "tools",
        why="`function_call` is in the finish_reason enum beside `tool_calls` (the legacy functions API); a "
        "tool call answers a request that declares the tool",
        evidence=("https://platform.openai.com/docs/api-reference/chat/streaming (finish_reason)",),
    ),
)
STOP_UNKNOWN = (
    any_request(
        "providers add finish reasons (Gemini's MALFORMED_FUNCTION_CALL, MODEL_ARMOR…); any answer may end "
        "with one the adapter has never seen",
        "https://ai.google.dev/api/generate-content#FinishReason",
        "https://docs.anthropic.com/en/api/handling-stop-reasons",
    ),
)
KEY_ECHOED = (
    when(
        servers=("litellm",),
        why="the LiteLLM proxy's 401 repeats the key it was sent; OpenAI's never does",
        evidence=("https://github.com/aliasrobotics/cai/issues/281",),
    ),
)
INPUT_AT_BLOCK_START = (
    when(
        "tools",
        servers=("bedrock-anthropic",),
        why="Anthropic starts a tool_use block with `input: {}` and streams the input as deltas; Bedrock and "
        "proxies send the whole input on content_block_start",
        evidence=(
            "https://github.com/crewAIInc/crewAI/pull/6152",
            "https://github.com/microsoft/autogen/pull/6979",
        ),
    ),
)
SERVER_TOOL_BLOCKS = (
    when(
        "server_tools",
        why="server tool blocks come only from tools Anthropic runs itself, which the request enables",
        evidence=(
            f"{RECORDINGS}/anthropic/test_pause_turn_web_search_streaming_vcr.yaml",
            "https://github.com/vercel/ai/blob/main/packages/anthropic/src/__fixtures__/anthropic-mcp.1.chunks.txt",
        ),
    ),
)
VERTEX_STREAMED_ARGUMENTS = (
    when(
        "tools",
        "stream_function_call_arguments",
        servers=("vertex",),
        why="Vertex AI streams a call's arguments (`partialArgs`, `willContinue`) only when the request sets "
        "`toolConfig.functionCallingConfig.streamFunctionCallArguments: true`; the Gemini API never does (the "
        'fields are "not supported in Gemini API", and google-genai refuses to send the option there)',
        evidence=(f"{RECORDINGS}/google/google-stream-tool-call-arguments.chunks.txt (Vertex, Gemini 3)",),
    ),
)
STOP_BLOCKLIST = (
    any_request(
        "a blocklist can stop any answer (BLOCKLIST)",
        "https://ai.google.dev/api/generate-content#FinishReason (BLOCKLIST)",
    ),
)
STOP_MODEL_ARMOR = (
    when(
        servers=("vertex",),
        why="Model Armor templates screen answers on Vertex AI only (finish reason MODEL_ARMOR)",
        evidence=(
            f"{RECORDINGS}/google/test_google_model_armor_response_template_real_block.yaml",
            "https://cloud.google.com/vertex-ai/generative-ai/docs/model-armor",
        ),
    ),
)

# --- Amazon Bedrock ConverseStream -----------------------------------------------------------------------------

_CONVERSE_STREAM_OUTPUT = (
    "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html"
)
STOP_GUARDRAIL_INTERVENED = (
    when(
        "guardrail",
        why="a guardrail stops the output (stopReason guardrail_intervened) only of a call that applies one in "
        "its `guardrailConfig`",
        evidence=(
            "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html "
            "(stopReason guardrail_intervened; guardrailConfig: GuardrailStreamConfiguration)",
        ),
        profiles=("bedrock-converse",),
    ),
)
NOVA_CODE_INTERPRETER = (
    when(
        "tools",
        "server_tools",
        why="Nova streams a toolUse of type server_tool_use and its toolResult only when the request offers the "
        "`nova_code_interpreter` system tool; the client's call answers the tools it declares",
        evidence=(
            "cassettes/recorded/bedrock/test_bedrock_model_code_execution_tool_stream.yaml (nova-2-lite, "
            "toolConfig with a toolSpec and the systemTool)",
        ),
        profiles=("bedrock-converse",),
    ),
)
BEDROCK_STREAM_EXCEPTION = (
    any_request(
        "ConverseStream's output union carries exception events (modelStreamErrorException: \"A streaming error "
        'occurred. Retry your request.", validationException, throttlingException…) that can end any stream',
        f"{_CONVERSE_STREAM_OUTPUT} (modelStreamErrorException, HTTP 424; validationException, HTTP 400)",
        "https://docs.aws.amazon.com/botocore/latest/reference/services/bedrock-runtime/client/exceptions/"
        "ModelStreamErrorException.html",
        profiles=("bedrock-converse",),
    ),
)
