"""Broken Gemini adapters, request side: the body and URL a Chat Completions port gets wrong.

Each is ``reference_adapters.gemini`` with one realistic mistake in the body ``build_request_body`` returns
(post-processed, or the turns rebuilt message by message), in its headers or in its URL. Gemini is the most
foreign of the three wire formats: ``user``/``model`` turns that strictly alternate, the system prompt in
``systemInstruction``, tool results linked to calls by name and position, an OpenAPI subset for tool schemas
(no ``$ref``), the thought signature sent back on the function call, and the stream requested in the URL
(``:streamGenerateContent?alt=sse``).
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any

from helix_conformance.contract import LLMGenerateInput, SystemMessage, ToolMessage, UserMessage
from reference_adapters.gemini import _model_parts

from ._base import BrokenAdapter
from ._gemini_base import HookedGeminiAdapter, broken_gemini

Body = dict[str, Any]
Turn = dict[str, Any]
Part = dict[str, Any]


def _each_turn(body: Body, role: str, change: Callable[[list[Part]], None]) -> Body:
    for turn in body["contents"]:
        if turn["role"] == role:
            change(turn["parts"])
    return body


def _declarations(body: Body) -> list[dict[str, Any]]:
    return [fn for tool in body.get("tools", []) for fn in tool["functionDeclarations"]]


# --- MSG: messages ------------------------------------------------------------------------------------------


class SystemAsUserTurn(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        system = body.pop("systemInstruction", None)
        if system is not None:
            # Bug: "Gemini has no system role", so the system prompt becomes the first user turn.
            body["contents"][:0] = [{"role": "user", "parts": system["parts"]}]
        return body


class SplitsFunctionResponses(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        turns: list[Turn] = []
        for turn in body["contents"]:
            responses = [p for p in turn["parts"] if "functionResponse" in p]
            if turn["role"] != "user" or len(responses) < 2:
                turns.append(turn)
                continue
            # Bug: one user turn per tool result, as OpenAI has one `role: tool` message per result.
            turns.extend({"role": "user", "parts": [part]} for part in turn["parts"])
        body["contents"] = turns
        return body


class ResponsesKeyedByName(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def by_name(parts: list[Part]) -> None:
            # Bug: "Gemini links results by name", so they are collected in a dict keyed by name: two calls
            # of the same tool leave one result.
            responses = {p["functionResponse"]["name"]: p for p in parts if "functionResponse" in p}
            parts[:] = [*responses.values(), *(p for p in parts if "functionResponse" not in p)]

        return _each_turn(super().build_body(input), "user", by_name)


class TextBeforeFunctionResponses(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def words_first(parts: list[Part]) -> None:
            parts.sort(key=lambda p: "text" not in p)  # Bug: "the user's words first, then the results"

        return _each_turn(super().build_body(input), "user", words_first)


class AssistantRole(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for turn in body["contents"]:
            if turn["role"] == "model":
                turn["role"] = "assistant"  # Bug: the role name every other API uses
        return body


class EmptyTextBesideFunctionCall(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def text_always(parts: list[Part]) -> None:
            if parts and "text" not in parts[0]:
                parts.insert(0, {"text": ""})  # Bug: `{"text": message.content}` whether there is text or not

        return _each_turn(super().build_body(input), "model", text_always)


class DropsSignatureFromHistory(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def unsigned(parts: list[Part]) -> None:
            for part in parts:
                part.pop("thoughtSignature", None)  # Bug: "an opaque blob, not content": not sent back

        return _each_turn(super().build_body(input), "model", unsigned)


class SignatureOnTheFirstPart(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def first_part_signed(parts: list[Part]) -> None:
            signature = next((p.pop("thoughtSignature") for p in parts if "thoughtSignature" in p), None)
            if signature and parts:  # Bug: "the signature goes on the turn": put on parts[0], the text
                parts[0]["thoughtSignature"] = signature

        return _each_turn(super().build_body(input), "model", first_part_signed)


class DoubleEncodedSignature(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def re_encoded(parts: list[Part]) -> None:
            for part in parts:
                if "thoughtSignature" in part:  # Bug: the base64 text handed over as the bytes themselves
                    part["thoughtSignature"] = base64.b64encode(part["thoughtSignature"].encode()).decode()

        return _each_turn(super().build_body(input), "model", re_encoded)


class StringArgsInHistory(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def string_args(parts: list[Part]) -> None:
            for part in parts:
                if "functionCall" in part:  # Bug: OpenAI's `arguments` habit: the arguments as a JSON string
                    part["functionCall"]["args"] = json.dumps(part["functionCall"]["args"])

        return _each_turn(super().build_body(input), "model", string_args)


class StringFunctionResponse(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def bare_result(parts: list[Part]) -> None:
            for part in parts:
                if "functionResponse" in part:  # Bug: the tool's text as is; `response` must be an object
                    part["functionResponse"]["response"] = part["functionResponse"]["response"]["result"]

        return _each_turn(super().build_body(input), "user", bare_result)


# --- MSG-09 / MSG-10: the request format and the URL ---------------------------------------------------------


class MissingAltSse(HookedGeminiAdapter):
    def url(self, model: str) -> str:
        # Bug: streamGenerateContent without alt=sse streams one JSON array, not server-sent events.
        return super().url(model).removesuffix("?alt=sse")


class NonStreamingEndpoint(HookedGeminiAdapter):
    def url(self, model: str) -> str:
        # Bug: the non-streaming method: the whole response at once, no incremental callbacks. (The harness
        # has no :generateContent interaction to serve, so the step also ends in a replay error: HARN-01.)
        return super().url(model).replace(":streamGenerateContent?alt=sse", ":generateContent")


# --- TOOL: tools ---------------------------------------------------------------------------------------------


class SendsJsonSchemaAsIs(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        schemas = {tool.name: tool.json_schema() for tool in input.tools}
        for fn in _declarations(body):
            fn["parameters"] = copy.deepcopy(schemas[fn["name"]])  # Bug: pydantic's schema, $defs and all
        return body


class ClosesStrictTools(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        strict = {tool.name for tool in input.tools if tool.strict}
        for fn in _declarations(body):
            if fn["name"] in strict:
                # Bug: ported from the OpenAI adapter: strict tools get additionalProperties: false.
                fn["parameters"]["additionalProperties"] = False
        return body


class DropsToolParameters(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for fn in _declarations(body):
            # Bug: "parameters is optional" (true for a tool without arguments) taken as "parameters can go".
            fn.pop("parameters", None)
        return body


class ToolConfigAlways(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        body["toolConfig"] = {"functionCallingConfig": {"mode": "AUTO"}}  # Bug: even with no tools
        return body


# --- CFG / CACHE: configuration --------------------------------------------------------------------------------


class GenerationParamsAtTopLevel(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        body.update(body.pop("generationConfig", {}))  # Bug: the OpenAI layout: sampling fields at top level
        return body


class MergesEveryProviderOptions(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        options = input.config.provider_options or {}
        bare = input.model_copy(update={"config": input.config.model_copy(update={"provider_options": None})})
        body = super().build_body(bare)
        body.update(copy.deepcopy(options))  # Bug: the whole dict, every provider's key as a request field
        return body


class CachedContentOnAuto(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        if input.config.caching == "auto":
            # Bug: "caching on" becomes a cachedContent reference to a cache that was never created.
            body["cachedContent"] = f"cachedContents/{input.agent_id or 'auto'}"
        return body


# --- hand-written history conversion ---------------------------------------------------------------------------


class UnmergedUserTurns(HookedGeminiAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        turns: list[Turn] = []
        for message in input.messages:  # Bug: one turn per message, never merged: user, user...
            if isinstance(message, SystemMessage):
                continue
            if isinstance(message, ToolMessage):
                response = {"name": message.tool_name, "response": {"result": message.content}}
                turns.append({"role": "user", "parts": [{"functionResponse": response}]})
            elif isinstance(message, UserMessage):
                turns.append({"role": "user", "parts": [{"text": message.content}]})
            elif message.content or message.tool_calls:
                turns.append({"role": "model", "parts": _model_parts(message)})
        body["contents"] = turns
        return body


ADAPTERS: list[BrokenAdapter] = [
    broken_gemini(
        "gemini_system_as_user_turn",
        SystemAsUserTurn,
        "MSG-01",
        ["system_multiturn", "caching_auto"],
        "Sends the system prompt as the first user turn instead of systemInstruction.",
    ),
    broken_gemini(
        "gemini_splits_function_responses",
        SplitsFunctionResponses,
        "MSG-04",
        ["tool_result_roundtrip"],
        "Sends each functionResponse in a user turn of its own (OpenAI's one message per tool result).",
    ),
    broken_gemini(
        "gemini_responses_keyed_by_name",
        ResponsesKeyedByName,
        "MSG-04",
        ["tool_result_roundtrip"],
        "Collects functionResponses in a dict keyed by tool name: two calls of one tool leave one result.",
    ),
    broken_gemini(
        "gemini_text_before_function_responses",
        TextBeforeFunctionResponses,
        "MSG-05",
        ["tool_result_then_user"],
        "Puts the user's text before the functionResponse parts of the merged user turn.",
    ),
    broken_gemini(
        "gemini_unmerged_user_turns",
        UnmergedUserTurns,
        "MSG-05",
        ["tool_result_roundtrip", "system_multiturn"],
        "Converts message by message: consecutive user-side messages become user turns in a row (two "
        "functionResponse turns, two text turns; a text turn after a functionResponse turn is allowed).",
    ),
    broken_gemini(
        "gemini_assistant_role",
        AssistantRole,
        "MSG-09",
        ["system_multiturn", "tool_result_roundtrip"],
        'Sends the model turns with role "assistant" (the API knows only "user" and "model").',
    ),
    broken_gemini(
        "gemini_empty_text_beside_function_call",
        EmptyTextBesideFunctionCall,
        "MSG-06",
        ["tool_result_roundtrip"],
        'Sends {"text": ""} before the functionCall parts of a model turn without text.',
    ),
    broken_gemini(
        "gemini_drops_signature_from_history",
        DropsSignatureFromHistory,
        "MSG-08",
        ["thinking_history"],
        "Leaves the thoughtSignature of the history's function call out of the request.",
    ),
    broken_gemini(
        "gemini_signature_on_the_first_part",
        SignatureOnTheFirstPart,
        "MSG-08",
        ["thinking_history"],
        "Sends the history's thoughtSignature on the turn's first part (its text), not on the first functionCall.",
    ),
    broken_gemini(
        "gemini_double_encoded_signature",
        DoubleEncodedSignature,
        "MSG-08",
        ["thinking_history"],
        "Base64-encodes the history's thoughtSignature text once more: other bytes than the API issued.",
    ),
    broken_gemini(
        "gemini_string_args_in_history",
        StringArgsInHistory,
        "MSG-03",
        ["tool_result_roundtrip", "tool_result_then_user"],
        "Sends the history's functionCall args as a JSON string (OpenAI's arguments), not an object.",
    ),
    broken_gemini(
        "gemini_string_function_response",
        StringFunctionResponse,
        "MSG-04",
        ["tool_result_roundtrip", "tool_result_then_user"],
        "Sends functionResponse.response as the tool's bare text; the API wants an object.",
    ),
    broken_gemini(
        "gemini_missing_alt_sse",
        MissingAltSse,
        "MSG-10",
        ["text_basic", "tool_call"],
        "Calls :streamGenerateContent without ?alt=sse (the API then streams a JSON array, not SSE).",
    ),
    broken_gemini(
        "gemini_non_streaming_endpoint",
        NonStreamingEndpoint,
        "MSG-10",
        ["text_basic", "tool_call"],
        "Calls :generateContent, the non-streaming method.",
    ),
    broken_gemini(
        "gemini_sends_json_schema_as_is",
        SendsJsonSchemaAsIs,
        "TOOL-03",
        ["tool_call", "tool_schemas"],
        "Sends pydantic's JSON Schema as parameters unchanged: $defs and $ref, which Gemini rejects.",
    ),
    broken_gemini(
        "gemini_closes_strict_tools",
        ClosesStrictTools,
        "TOOL-03",
        ["tool_schemas"],
        "Adds additionalProperties: false to strict tools (OpenAI's strict mode), a keyword Gemini rejects.",
    ),
    broken_gemini(
        "gemini_drops_tool_parameters",
        DropsToolParameters,
        "TOOL-02",
        ["tool_call", "tool_schemas"],
        "Leaves parameters out of every function declaration, also of tools that take arguments.",
    ),
    broken_gemini(
        "gemini_tool_config_always",
        ToolConfigAlways,
        "TOOL-04",
        ["text_basic", "system_multiturn"],
        "Sends toolConfig (function calling mode AUTO) even when there are no tools.",
    ),
    broken_gemini(
        "gemini_generation_params_at_top_level",
        GenerationParamsAtTopLevel,
        "CFG-01",
        ["config_passthrough"],
        "Sends temperature, topP, maxOutputTokens... at the top level of the body, not in generationConfig.",
    ),
    broken_gemini(
        "gemini_merges_every_provider_options",
        MergesEveryProviderOptions,
        "CFG-02",
        ["config_passthrough"],
        "Merges the whole provider_options dict (every provider's key) instead of its own key's options.",
    ),
    broken_gemini(
        "gemini_cached_content_on_auto",
        CachedContentOnAuto,
        "CACHE-04",
        ["caching_auto"],
        "With caching='auto' sends a cachedContent name although no cache was ever created.",
    ),
]
