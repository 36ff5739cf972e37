"""Bugs adapters written elsewhere shipped (issue 32), each caught on the clause the class of bug breaks.

Every adapter here is one bug from a public tracker, planted in the hooked reference of its wire profile: an
input no scenario sent (an empty user message, thinking without its signature, a dashed or dotted tool name,
more tools and turns than cache breakpoints), a wire shape no scenario served (a Gemini candidate without
content, Gemini 3's own call ids, two OpenAI choices, Responses reasoning text, OpenRouter's ``[DONE]``, the
flat Responses ``error`` event, a U+FEFF at a chunk's start), or a rule the contract judged at the wrong
level or not at all (retries after streamed output, in-stream errors' retryable flag, an ``on_error`` that
raises, redacted reasoning dropped from the result, history arguments sent as objects, shapes a declared
server refuses, Retry-After in seconds).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import httpx

from helix_conformance.contract import (
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    LLMStreamCallbacks,
    StepResult,
    invoke_callback,
)
from reference_adapters._gemini_schema import gemini_schema
from reference_adapters._http import RetryableFailure, SafeCallbacks, StreamGuard
from reference_adapters._sse import SSEDecoder, SSEEvent
from reference_adapters.openai_responses import _ResponsesStream

from ._anthropic_base import HookedAnthropicAdapter, broken_anthropic
from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken
from ._gemini_base import HookedGeminiAdapter, HookedGeminiStream, broken_gemini
from ._responses_base import HookedResponsesAdapter, broken_responses
from .power import KeyInQueryGemini

Body = dict[str, Any]


def declaring(entry: BrokenAdapter, *servers: str) -> BrokenAdapter:
    """``entry`` with a spec that targets ``servers`` alone (``AdapterSpec.servers``): the shapes those servers
    refuse (``profiles/server_rejections.py``) are breaches for it."""
    return dataclasses.replace(entry, spec=dataclasses.replace(entry.spec, servers=frozenset(servers)))


# --- OpenAI Chat ------------------------------------------------------------------------------------------------


class _EveryChoiceStream(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        try:
            payload = json.loads(event.data)
        except ValueError:
            return await super()._event(event)
        for choice in payload.get("choices") or [] if isinstance(payload, dict) else []:
            if isinstance(choice, dict):
                choice["index"] = 0  # Bug: "n is always 1": every choice is read as the answer
        return await super()._event(SSEEvent(event.event, json.dumps(payload)))


class MergesEveryChoice(HookedAdapter):
    stream_class = _EveryChoiceStream


class RetriesAfterOutput(HookedAdapter):
    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        result = await super()._attempt(client, request, guard, emit)
        if (
            isinstance(result, ErrorStepResult)
            and isinstance(result.error, HelixError)
            and result.error.retryable
        ):
            return RetryableFailure(
                result.error
            )  # Bug: "retryable is retryable", text already streamed or not
        return result


class _FinalStreamErrors(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        try:
            return await super()._event(event)
        except HelixError as error:
            error.retryable = False  # Bug: "an error inside a 200 is the model's answer": never retried
            raise


class InStreamErrorsNotRetryable(HookedAdapter):
    stream_class = _FinalStreamErrors


class _BareOnError(SafeCallbacks):
    def __init__(self, callbacks: LLMStreamCallbacks | None, guard: StreamGuard) -> None:
        super().__init__(callbacks, guard)
        self._user = callbacks

    async def error(self, error: Exception) -> None:
        if self._user is not None and self._user.on_error is not None:
            await invoke_callback(self._user.on_error, error)  # Bug: on_error is "ours", called bare


class OnErrorUnguarded(HookedAdapter):
    def make_emit(self, input: LLMGenerateInput, guard: StreamGuard) -> SafeCallbacks:
        return _BareOnError(input.callbacks, guard)


class DeveloperRole(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for message in body["messages"]:
            if message["role"] == "system":
                message["role"] = "developer"  # Bug: "developer replaced system" (OpenAI's reasoning models)
        return body


class EmptyContentBesideCalls(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for message in body["messages"]:
            if message.get("tool_calls") and not message.get("content"):
                message["content"] = ""  # Bug: `content or ""`, never null
        return body


class IgnoresRetryAfterSeconds(HookedAdapter):
    def retry_or_fail(
        self, error: HelixError, headers: httpx.Headers | None = None
    ) -> RetryableFailure | StepResult:
        # Bug: only `retry-after-ms` is read, the seconds form is dropped
        kept = httpx.Headers({k: v for k, v in (headers or {}).items() if k.lower() != "retry-after"})
        return super().retry_or_fail(error, kept)


class SanitisedToolNames(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for tool in body.get("tools", []):
            tool["function"]["name"] = tool["function"]["name"].replace(
                "-", "_"
            )  # Bug: "names are identifiers"
        return body


class _BomEveryChunk(SSEDecoder):
    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._started = False  # Bug: the byte-order mark is stripped from the start of every chunk
        return super().feed(chunk)


class StripsBomEveryChunk(HookedAdapter):
    def make_decoder(self) -> SSEDecoder:
        return _BomEveryChunk()


class _TakesEveryCrForACrlf(SSEDecoder):
    def _feed_text(self, text: str) -> list[SSEEvent]:
        if self._skip_lf and text:
            self._skip_lf = False
            text = text[
                1:
            ]  # Bug: a CR that ended the last chunk is taken for half a CRLF, whatever comes next
        return super()._feed_text(text)


class TakesEveryCrForACrlf(HookedAdapter):
    def make_decoder(self) -> SSEDecoder:
        return _TakesEveryCrForACrlf()


# --- Anthropic Messages ---------------------------------------------------------------------------------------


def _user_turns(body: Body) -> list[Body]:
    return [m for m in body["messages"] if m["role"] == "user"]


class EmptyUserTextBlock(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        empty = sum(1 for m in input.messages if m.role == "user" and m.content == "")
        first = _user_turns(body)[0]
        if isinstance(first["content"], str):
            first["content"] = [{"type": "text", "text": first["content"]}]
        first["content"][:0] = [{"type": "text", "text": ""}] * empty  # Bug: every user message a text block
        return body


class UnsignedThinkingBlock(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        turns = [m for m in body["messages"] if m["role"] == "assistant"]
        history = [m for m in input.messages if m.role == "assistant"]
        for turn, message in zip(turns, history):
            if message.thinking is not None and message.thinking.content and not message.thinking.signature:
                # Bug: thinking goes back as a thinking block whatever it carries
                turn["content"].insert(0, {"type": "thinking", "thinking": message.thinking.content})
        return body


class DropsRedactedOnlyHistory(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for turn in body["messages"]:
            blocks = turn["content"] if isinstance(turn["content"], list) else []
            if not any(b.get("type") == "thinking" for b in blocks):
                # Bug: `if thinking.content:` guards the redacted blocks too
                turn["content"] = [b for b in blocks if b.get("type") != "redacted_thinking"] or blocks
        return body


class CacheControlOnEveryTool(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for tool in body.get("tools", []):
            tool["cache_control"] = {"type": "ephemeral"}  # Bug: "cache every tool", whatever their number
        return body


class CacheControlOnFirstBlock(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        if input.config.caching == "auto":
            for turn in body["messages"]:
                if turn["role"] == "assistant" and isinstance(turn["content"], list) and turn["content"]:
                    turn["content"][0]["cache_control"] = {"type": "ephemeral"}  # Bug: the turn's first block
                    break
        return body


# --- Gemini ----------------------------------------------------------------------------------------------------


class _UnguardedContentStream(HookedGeminiStream):
    async def _candidate(self, candidate: dict[str, Any]) -> None:
        for part in candidate["content"]["parts"]:  # Bug: every candidate has content and parts
            await self._part(part)
        if candidate.get("finishReason"):
            self._finish_reason = candidate["finishReason"]


class ReadsContentUnguarded(HookedGeminiAdapter):
    stream_class = _UnguardedContentStream


class _MintedIdsStream(HookedGeminiStream):
    def _function_call(self, call: dict[str, Any]) -> None:
        super()._function_call({k: v for k, v in call.items() if k != "id"})  # Bug: "Gemini sends no ids"


class MintsOverGeminiIds(HookedGeminiAdapter):
    stream_class = _MintedIdsStream


class _RetranslatedGemini(HookedGeminiAdapter):
    """Every tool's parameters as ``self.translate(schema)``: the bug's translator."""

    def translate(self, schema: dict[str, Any]) -> dict[str, Any]:
        return gemini_schema(schema)

    def build_body(self, input: LLMGenerateInput) -> Body:
        tools = {tool.name: tool for tool in input.tools}
        stripped = input.model_copy(update={"tools": []})
        body = super().build_body(stripped)
        if tools:
            declarations = [
                {"name": t.name, "description": t.description, "parameters": self.translate(t.json_schema())}
                for t in tools.values()
            ]
            body["tools"] = [{"functionDeclarations": declarations}]
        return body


def _all_nullable(node: Any) -> Any:
    if isinstance(node, list):
        return [_all_nullable(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _all_nullable(value) for key, value in node.items()}
    if isinstance(out.get("properties"), dict):
        for sub in out["properties"].values():
            if isinstance(sub, dict) and "type" in sub:
                sub["nullable"] = True  # Bug: "the model may leave anything out", so everything is nullable
    return out


class NullableEverything(_RetranslatedGemini):
    def translate(self, schema: dict[str, Any]) -> dict[str, Any]:
        return _all_nullable(gemini_schema(schema))  # type: ignore[no-any-return]


class AnyAsString(_RetranslatedGemini):
    def translate(self, schema: dict[str, Any]) -> dict[str, Any]:
        def typed(node: Any) -> Any:
            if node is True:
                return {"type": "string"}  # Bug: "every Gemini property needs a type", so `true` is a string
            if isinstance(node, dict):
                return {k: typed(v) for k, v in node.items()}
            return node

        return gemini_schema(typed(copy.deepcopy(schema)))


class DropsDanglingRef(_RetranslatedGemini):
    def translate(self, schema: dict[str, Any]) -> dict[str, Any]:
        def resolvable(node: Any) -> Any:
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.rsplit("/", 1)[-1] not in schema.get("$defs", {}):
                    return {k: resolvable(v) for k, v in node.items() if k != "$ref"}  # Bug: dropped, sent
                return {k: resolvable(v) for k, v in node.items()}
            return node

        return gemini_schema(resolvable(copy.deepcopy(schema)))


class SanitisedDottedNames(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for group in body.get("tools", []):
            for declaration in group.get("functionDeclarations", []):
                declaration["name"] = declaration["name"].replace(".", "_")  # Bug: OpenAI's name rule
        return body


class KeyInEveryErrorMessage(KeyInQueryGemini):
    """Sends the key as ``?key=`` and describes every failure with the request it was for: the URL."""

    async def _attempt(
        self, client: httpx.AsyncClient, request: httpx.Request, guard: StreamGuard, emit: SafeCallbacks
    ) -> StepResult | RetryableFailure:
        outcome = await super()._attempt(client, request, guard, emit)
        failure = outcome.error if isinstance(outcome, (ErrorStepResult, RetryableFailure)) else None
        if isinstance(failure, HelixError) and failure.status_code is None:
            failure.message = f"{failure.message} (POST {request.url})"  # Bug: the URL carries the key
            failure.args = (failure.message,)
        return outcome


# --- OpenAI Responses ----------------------------------------------------------------------------------------


class _SummaryOnlyStream(_ResponsesStream):
    async def _content(self, kind: Any, payload: dict[str, Any]) -> None:
        if kind == "response.reasoning_text.delta":
            return  # Bug: only reasoning summaries are reasoning
        await super()._content(kind, payload)


class IgnoresReasoningText(HookedResponsesAdapter):
    def _parser(self, emit: SafeCallbacks) -> _ResponsesStream:
        return _SummaryOnlyStream(emit, self._reasoning_ids)


class _DoneAsJsonStream(_ResponsesStream):
    async def _event(self, event: SSEEvent) -> bool:
        if event.data.strip() == "[DONE]":
            # Bug: every data line of a Responses stream is JSON, and the body is read to its end
            raise HelixError("openai: stream event is not JSON", code="provider_error")
        await super()._event(event)
        return False


class DoneMarkerAsJson(HookedResponsesAdapter):
    def _parser(self, emit: SafeCallbacks) -> _ResponsesStream:
        return _DoneAsJsonStream(emit, self._reasoning_ids)


class _NestedErrorOnlyStream(_ResponsesStream):
    async def _event(self, event: SSEEvent) -> bool:
        payload = json.loads(event.data) if event.data.strip().startswith("{") else None
        if isinstance(payload, dict) and payload.get("type") == "error" and "error" not in payload:
            # Bug: the error's fields are read from `error` only, as the live stream nests them
            raise HelixError("openai: stream error: unknown", code="provider_error")
        return await super()._event(event)


class NestedErrorOnly(HookedResponsesAdapter):
    def _parser(self, emit: SafeCallbacks) -> _ResponsesStream:
        return _NestedErrorOnlyStream(emit, self._reasoning_ids)


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "merges_every_choice",
        MergesEveryChoice,
        "STR-01",
        ("compat_several_choices",),
        "Reads every choice of a chunk as the answer: with n=2 both choices' text is joined (LiteLLM's "
        "stream_chunk_builder, https://github.com/BerriAI/litellm/issues/35793).",
    ),
    broken(
        "retries_after_output",
        RetriesAfterOutput,
        "CFG-03",
        ("retry_not_after_output",),
        "Retries any retryable error, also one inside a stream whose text already reached on_text_delta: "
        "the user sees the text twice (https://github.com/HKUDS/nanobot/issues/4038).",
    ),
    broken(
        "in_stream_errors_not_retryable",
        InStreamErrorsNotRetryable,
        "ERR-03",
        ("midstream_error", "midstream_rate_limit", "midstream_overloaded"),
        "Marks every error inside a 200 stream retryable=False: an overload mid-stream is never retried "
        "(https://github.com/ax-llm/ax/pull/556, https://github.com/Podden/openwebui_anthropic_api_manifold_pipe/issues/19).",
    ),
    broken(
        "on_error_unguarded",
        OnErrorUnguarded,
        "STR-11",
        ("http_500", "midstream_error", "connect_error"),
        "Guards the content callbacks but calls the user's on_error bare: an on_error that raises makes the "
        "step raise (callback handlers that raise break the caller: https://github.com/langchain-ai/langchain/pull/11563).",
    ),
    declaring(
        broken(
            "developer_role_to_deepseek",
            DeveloperRole,
            "MSG-01",
            ("system_multiturn", "system_two_messages"),
            "Sends the system prompt as a `developer` message to an adapter declared for DeepSeek, which "
            "answers 400 `unknown variant developer` (https://github.com/BenedictKing/ccx/issues/149).",
        ),
        "deepseek",
    ),
    declaring(
        broken(
            "empty_content_beside_calls_to_a_claude_proxy",
            EmptyContentBesideCalls,
            "MSG-06",
            ("tool_result_roundtrip", "tool_result_empty"),
            'Sends `content: ""` beside tool_calls to an adapter declared for an OpenAI-compatible gateway in '
            "front of Claude, which answers 400 `text content blocks must be non-empty` "
            "(https://github.com/NousResearch/hermes-agent/pull/31582).",
        ),
        "anthropic-openai-proxy",
    ),
    broken(
        "ignores_retry_after_seconds",
        IgnoresRetryAfterSeconds,
        "CFG-05",
        ("retry_after_seconds",),
        "Reads only `retry-after-ms`: a server that sends `retry-after: 1` alone is retried at once "
        "(https://github.com/openclaw/openclaw/pull/111353).",
    ),
    broken(
        "sanitised_tool_names",
        SanitisedToolNames,
        "TOOL-01",
        ("tool_name_with_dash",),
        "Rewrites `-` in tool names to `_` (`get-weather` sent as `get_weather`): the model calls a tool the "
        "framework does not have (https://github.com/anomalyco/opencode/pull/1769).",
    ),
    broken(
        "strips_bom_every_chunk",
        StripsBomEveryChunk,
        "STR-10",
        ("text_byte_order_mark_inside",),
        "Strips a byte-order mark at the start of every chunk, not of the stream: a U+FEFF in the text is "
        "lost where the bytes happen to be cut.",
    ),
    declaring(
        broken(
            "takes_every_cr_for_a_crlf",
            TakesEveryCrForACrlf,
            "STR-10",
            ("compat_sse_framing",),
            "Holds a CR that ends a chunk and drops the next chunk's first character as the LF of a CRLF, "
            "whatever it is: on a server whose lines end with a lone CR (SSE allows it) the next line loses its "
            "first byte where the bytes happen to be cut (the CR/LF-across-chunks state that "
            "https://github.com/clacky-ai/openclacky/pull/489 and https://github.com/Effect-TS/effect/pull/6954 "
            "fix).",
        ),
        "sse-framing",
    ),
    broken_anthropic(
        "empty_user_text_block",
        EmptyUserTextBlock,
        "MSG-06",
        ("empty_user_message",),
        "Sends every user message as a text block, an empty one too: 400 `text content blocks must be "
        "non-empty` (https://github.com/anthropics/claude-code/issues/59812).",
    ),
    broken_anthropic(
        "unsigned_thinking_block",
        UnsignedThinkingBlock,
        "MSG-08",
        ("thinking_history_unsigned",),
        "Sends the history's thinking back as a `thinking` block even without its signature: 400 "
        "`thinking.signature: Field required` (https://github.com/JohnnyZ93/oai-compatible-copilot/issues/217).",
    ),
    broken_anthropic(
        "drops_redacted_only_history",
        DropsRedactedOnlyHistory,
        "MSG-08",
        ("thinking_history_redacted_only",),
        "Sends a turn's redacted reasoning back only when it also has visible thinking: all-redacted "
        "reasoning is lost (https://github.com/agentscope-ai/agentscope-java/issues/2219).",
    ),
    broken_anthropic(
        "cache_control_on_every_tool",
        CacheControlOnEveryTool,
        "CACHE-02",
        ("caching_auto_long",),
        "Marks every tool with cache_control: five tools and three other breakpoints make eight, and the API "
        "takes four.",
    ),
    broken_anthropic(
        "cache_control_on_a_thinking_block",
        CacheControlOnFirstBlock,
        "CACHE-02",
        ("caching_auto_long",),
        "Marks an assistant turn's first block, which is its thinking block: 400 `thinking.cache_control: "
        "Extra inputs are not permitted` (https://github.com/lbjlaq/Antigravity-Manager/issues/744).",
    ),
    broken_gemini(
        "reads_candidate_content_unguarded",
        ReadsContentUnguarded,
        "RES-02",
        ("finish_chunk_without_content",),
        "Reads `candidate.content.parts` on every chunk: a finish chunk without content fails the step "
        "(https://github.com/symfony/ai/pull/1610, https://github.com/Portkey-AI/gateway/pull/1705).",
    ),
    broken_gemini(
        "safety_stop_read_unguarded",
        ReadsContentUnguarded,
        "STOP-02",
        ("stop_safety_empty_content",),
        "Reads `candidate.content.parts` on every chunk: a SAFETY stop whose content is `{}` (as recorded) "
        "becomes an error instead of a content_filter text result (https://github.com/epam/ai-dial-adapter-vertexai/pull/149).",
    ),
    broken_gemini(
        "mints_over_gemini_ids",
        MintsOverGeminiIds,
        "RES-03",
        ("tool_call_gemini_ids",),
        "Ignores `functionCall.id` and mints its own ids: Gemini 3's ids never come back "
        "(https://github.com/vercel/ai/pull/15317, https://github.com/NousResearch/hermes-agent/pull/46077).",
    ),
    broken_gemini(
        "nullable_everything",
        NullableEverything,
        "TOOL-02",
        ("tool_call", "tool_schemas"),
        "Marks every typed property `nullable: true` in Gemini's schema: null becomes valid where the tool "
        "takes none (the surviving mutant of docs/harness-power.md).",
    ),
    broken_gemini(
        "any_as_string",
        AnyAsString,
        "TOOL-02",
        ("tool_schema_untyped_any",),
        "Sends a `true` (any value) subschema as `type: string` because Gemini wants a type: objects and "
        "numbers become invalid.",
    ),
    broken_gemini(
        "sends_dangling_ref_weakened",
        DropsDanglingRef,
        "TOOL-05",
        ("tool_schema_dangling_ref",),
        "Drops a `$ref` that resolves to nothing and sends the weakened schema instead of refusing the tool.",
    ),
    broken_gemini(
        "sanitised_dotted_names",
        SanitisedDottedNames,
        "TOOL-01",
        ("tool_name_with_dot",),
        "Rewrites `.` in Gemini function names to `_`, which Gemini allows: the call comes back under a name "
        "the framework does not know (https://github.com/mogenius/mogenius-operator/pull/840).",
    ),
    broken_gemini(
        "key_in_every_error_message",
        KeyInEveryErrorMessage,
        "ERR-07",
        ("connect_error", "midstream_error", "read_timeout"),
        "Sends the key as `?key=` and appends the request URL to transport and in-stream errors: the key "
        "leaks there too (https://github.com/BerriAI/litellm/issues/24902).",
    ),
    broken_responses(
        "ignores_reasoning_text",
        IgnoresReasoningText,
        "RES-08",
        ("responses_reasoning_text",),
        "Reads reasoning from summaries only: `response.reasoning_text.delta` (gpt-oss servers, OpenRouter) "
        "is dropped (https://github.com/aaif-goose/goose/pull/7375).",
    ),
    broken_responses(
        "done_marker_as_json",
        DoneMarkerAsJson,
        "RES-12",
        ("responses_done_marker",),
        "Parses every data line as JSON: OpenRouter's `data: [DONE]` after `response.completed` turns a "
        "finished answer into an error.",
    ),
    broken_responses(
        "nested_error_only",
        NestedErrorOnly,
        "ERR-03",
        ("midstream_error_flat",),
        "Reads an `error` event's fields from its nested `error` only: the SDK-shaped flat event loses its code.",
    ),
]
