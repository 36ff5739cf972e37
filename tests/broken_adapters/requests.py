"""Broken adapters that send the wrong request: MSG, TOOL, CFG-01/02 and CACHE clauses.

Most post-process the fresh body ``build_request_body`` returns; two mutate the input on purpose.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from helix_conformance.contract import (
    AssistantMessage,
    LLMGenerateInput,
    StepResult,
    TextStepResult,
    ToolCallsStepResult,
)
from reference_adapters.openai_chat import OpenAIChatAdapter

from ._base import BrokenAdapter, HookedAdapter, broken

Body = dict[str, Any]


def _each_message(body: Body, change: Callable[[dict[str, Any]], None]) -> Body:
    for message in body["messages"]:
        change(message)
    return body


def _each_function(body: Body, change: Callable[[dict[str, Any]], None]) -> Body:
    for tool in body.get("tools", []):
        change(tool["function"])
    return body


def _without(schema: Any, keyword: str) -> Any:
    """A copy of a JSON Schema with ``keyword`` removed wherever it appears as a key."""
    if isinstance(schema, dict):
        return {k: _without(v, keyword) for k, v in schema.items() if k != keyword}
    if isinstance(schema, list):
        return [_without(v, keyword) for v in schema]
    return schema


# --- MSG: messages ------------------------------------------------------------------------------------------


class SystemSentAsUser(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def demote(message: dict[str, Any]) -> None:
            if message["role"] == "system":  # Bug: "some models have no system role"
                message["role"] = "user"

        return _each_message(super().build_body(input), demote)


class StripsMessageWhitespace(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def strip(message: dict[str, Any]) -> None:
            if isinstance(message.get("content"), str):
                message["content"] = message["content"].strip()  # Bug: "tidies" the user's text

        return _each_message(super().build_body(input), strip)


class DoubleEncodesHistoryArguments(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def encode_again(message: dict[str, Any]) -> None:
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = json.dumps(call["function"]["arguments"])  # Bug: twice

        return _each_message(super().build_body(input), encode_again)


class LinksToolResultsByName(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        names = iter(m.tool_name for m in input.messages if m.role == "tool")

        def relink(message: dict[str, Any]) -> None:
            if message["role"] == "tool":
                message["tool_call_id"] = next(names)  # Bug: the tool's name where its call id belongs

        return _each_message(super().build_body(input), relink)


class SendsOnlyTheLastTurn(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        # Bug: "stateless" — the system prompt and the last message, the history is dropped.
        body["messages"] = [m for m in body["messages"] if m["role"] == "system"] + body["messages"][-1:]
        return body


class AppendsReplyToHistory(OpenAIChatAdapter):
    """Bug: keeps the conversation up to date by appending the reply to ``input.messages``."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        result = await super().generate_step(input)
        if isinstance(result, (TextStepResult, ToolCallsStepResult)):
            input.messages.append(AssistantMessage(content=result.content or ""))
        return result


class StripsContentInPlace(OpenAIChatAdapter):
    """Bug: normalises the messages in place before sending: ``message.content = message.content.strip()``."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        for message in input.messages:
            message.content = message.content.strip()
        return await super().generate_step(input)


class OmitsStreamFlag(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        del body["stream"], body["stream_options"]  # Bug: never asks for a stream (parses one anyway)
        return body


# --- TOOL: tools ---------------------------------------------------------------------------------------------


class DropsToolDescriptions(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        return _each_function(super().build_body(input), lambda f: f.pop("description"))  # Bug


class SchemaWithoutRequired(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def loosen(function: dict[str, Any]) -> None:
            if not function.get("strict"):  # Bug: "let the model omit what it does not know"
                function["parameters"] = _without(function["parameters"], "required")

        return _each_function(super().build_body(input), loosen)


class StripsPatternKeyword(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def simplify(function: dict[str, Any]) -> None:
            if function.get(
                "strict"
            ):  # Bug: strict mode once rejected `pattern`; dropping it changes the tool
                function["parameters"] = _without(function["parameters"], "pattern")

        return _each_function(super().build_body(input), simplify)


class StrictFlagWithoutStrictSchema(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        originals = {tool.name: tool.json_schema() for tool in input.tools}

        def raw_schema(function: dict[str, Any]) -> None:
            if function.get("strict"):  # Bug: sets strict but sends the schema as given (objects left open)
                function["parameters"] = originals[function["name"]]

        return _each_function(super().build_body(input), raw_schema)


class EmptyToolsList(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        body.setdefault("tools", [])  # Bug: `tools: []` and a tool choice when there are no tools
        body.setdefault("tool_choice", "auto")
        return body


class SendsInvalidToolNames(HookedAdapter):
    def accepts_tool_name(self, name: str) -> bool:
        return True  # Bug: no local validation; the provider's 400 is the first sign of trouble


# --- CFG-01/02: configuration -------------------------------------------------------------------------------


class IgnoresTemperature(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        body.pop("temperature", None)  # Bug: "not supported yet" (it is)
        return body


class DefaultsTemperature(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        body["temperature"] = input.config.temperature or 1.0  # Bug: unset is sent (and 0 becomes 1.0)
        return body


class IgnoresConfigHeaders(HookedAdapter):
    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json"}  # Bug


# --- CACHE: prompt caching ----------------------------------------------------------------------------------


class AlwaysSendsCacheKey(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        body["prompt_cache_key"] = f"helix-{input.agent_id}"  # Bug: whatever config.caching says
        return body


class CacheKeyPerRequest(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        if "prompt_cache_key" in body:
            body["prompt_cache_key"] = f"helix-{uuid.uuid4()}"  # Bug: a new key every step: no cache hits
        return body


class CacheKeyFromModel(HookedAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        if "prompt_cache_key" in body:
            body["prompt_cache_key"] = f"helix-{input.config.model}"  # Bug: every session shares one key
        return body


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "system_sent_as_user",
        SystemSentAsUser,
        "MSG-01",
        ["system_multiturn", "caching_auto"],
        "Sends system messages with role 'user'.",
    ),
    broken(
        "strips_message_whitespace",
        StripsMessageWhitespace,
        "MSG-02",
        ["text_unicode"],
        "Strips leading and trailing whitespace from message content.",
    ),
    broken(
        "strips_content_in_place",
        StripsContentInPlace,
        "MSG-02",
        ["text_unicode"],
        "Strips message content in place, on the caller's message objects.",
    ),
    broken(
        "double_encodes_history_arguments",
        DoubleEncodesHistoryArguments,
        "MSG-03",
        ["tool_result_roundtrip"],
        "json.dumps() the history's tool-call arguments twice: the provider sees a JSON string.",
    ),
    broken(
        "links_tool_results_by_name",
        LinksToolResultsByName,
        "MSG-04",
        ["tool_result_roundtrip"],
        "Puts the tool's name in tool_call_id.",
    ),
    broken(
        "sends_only_the_last_turn",
        SendsOnlyTheLastTurn,
        "MSG-05",
        ["system_multiturn"],
        "Sends the system prompt and the last message only: the history is dropped.",
    ),
    broken(
        "appends_reply_to_history",
        AppendsReplyToHistory,
        "MSG-07",
        ["text_basic", "tool_call"],
        "Appends the reply to input.messages.",
    ),
    broken(
        "omits_stream_flag",
        OmitsStreamFlag,
        "MSG-10",
        ["text_basic", "tool_call"],
        "Never sends stream: true.",
    ),
    broken(
        "drops_tool_descriptions",
        DropsToolDescriptions,
        "TOOL-01",
        ["tool_call", "tool_schemas"],
        "Sends tools with name and parameters only, without their description.",
    ),
    broken(
        "schema_without_required",
        SchemaWithoutRequired,
        "TOOL-02",
        ["tool_call", "tool_schemas"],
        "Removes `required` from non-strict tool schemas.",
    ),
    broken(
        "strips_pattern_keyword",
        StripsPatternKeyword,
        "TOOL-02",
        ["tool_schemas"],
        "Removes `pattern` from strict tool schemas.",
    ),
    broken(
        "strict_flag_without_strict_schema",
        StrictFlagWithoutStrictSchema,
        "TOOL-03",
        ["tool_schemas"],
        "Sends strict: true with the schema as given (objects open, optional properties).",
    ),
    broken(
        "empty_tools_list",
        EmptyToolsList,
        "TOOL-04",
        ["text_basic", "system_multiturn"],
        'Sends tools: [] and tool_choice: "auto" when there are no tools.',
    ),
    broken(
        "sends_invalid_tool_names",
        SendsInvalidToolNames,
        "TOOL-05",
        ["invalid_tool_name"],
        "Does not check tool names before sending (a SHOULD clause: reported as failed).",
    ),
    broken(
        "ignores_temperature",
        IgnoresTemperature,
        "CFG-01",
        ["config_passthrough"],
        "Never sends temperature.",
    ),
    broken(
        "defaults_temperature",
        DefaultsTemperature,
        "CFG-01",
        ["text_basic"],
        "Sends temperature=1.0 when it is unset (`temperature or 1.0`).",
    ),
    broken(
        "ignores_config_headers",
        IgnoresConfigHeaders,
        "CFG-02",
        ["config_passthrough"],
        "Never sends config.headers.",
    ),
    broken(
        "always_sends_cache_key",
        AlwaysSendsCacheKey,
        "CACHE-01",
        ["text_basic", "tool_call", "system_multiturn"],
        "Sends prompt_cache_key although caching is off.",
    ),
    broken(
        "cache_key_per_request",
        CacheKeyPerRequest,
        "CACHE-03",
        ["caching_auto"],
        "Sends a new random prompt_cache_key on every step.",
    ),
    broken(
        "cache_key_from_model",
        CacheKeyFromModel,
        "CACHE-03",
        ["caching_auto"],
        "Derives prompt_cache_key from the model name, not the session: every session shares one key.",
    ),
]
