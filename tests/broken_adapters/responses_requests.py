"""Broken Responses API adapters, request side: a Chat Completions habit, or a field the port forgot.

Each is ``reference_adapters.openai_responses`` with ``_body`` changed: the system prompt dropped instead of
sent as ``instructions``, tools nested under ``function`` as Chat Completions has them, ``max_tokens`` for
``max_output_tokens``, tool results linked by the call's item id, the encrypted reasoning left out of the
history, and no ``stream: true``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from helix_conformance.contract import LLMGenerateInput

from ._base import BrokenAdapter
from ._responses_base import HookedResponsesAdapter, broken_responses


class DropsInstructions(HookedResponsesAdapter):
    def _body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._body(input)
        body.pop("instructions", None)  # Bug: the system prompt was only ever a Chat `messages` entry
        return body


class NestsToolsLikeChat(HookedResponsesAdapter):
    def _body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._body(input)
        if "tools" in body:  # Bug: the Chat Completions tool shape, {type, function: {name, ...}}
            body["tools"] = [
                {"type": "function", "function": {k: v for k, v in t.items() if k != "type"}}
                for t in body["tools"]
            ]
        return body


class SendsChatMaxTokens(HookedResponsesAdapter):
    def _body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._body(input)
        if "max_output_tokens" in body:  # Bug: the Chat Completions name of the token limit
            body["max_tokens"] = body.pop("max_output_tokens")
        return body


class LinksOutputsByItemId(HookedResponsesAdapter):
    def _body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._body(input)
        for item in body["input"]:  # Bug: outputs name an item id made up from the call, not its call_id
            if item.get("type") == "function_call_output":
                item["call_id"] = "fc_" + hashlib.sha256(item["call_id"].encode()).hexdigest()[:24]
        return body


class DropsEncryptedReasoning(HookedResponsesAdapter):
    def _body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._body(input)
        # Bug: reasoning is "the model's business": never sent back, so a stateless turn loses it
        body["input"] = [item for item in body["input"] if item.get("type") != "reasoning"]
        return body


class DoesNotStream(HookedResponsesAdapter):
    def _body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._body(input)
        body.pop("stream")  # Bug: the stream flag is left to a client default that does not exist
        return body


ADAPTERS: list[BrokenAdapter] = [
    broken_responses(
        "responses_drops_instructions",
        DropsInstructions,
        "MSG-01",
        ["system_multiturn", "caching_auto"],
        "Drops the system prompt: it never reaches `instructions`.",
    ),
    broken_responses(
        "responses_tools_nested_like_chat",
        NestsToolsLikeChat,
        "MSG-09",
        ["tool_call", "tool_schemas"],
        "Nests each tool under `function` (the Chat Completions shape); the Responses API wants them flat.",
    ),
    broken_responses(
        "responses_tools_nested_like_chat_tool_01",
        NestsToolsLikeChat,
        "TOOL-01",
        ["tool_call", "finish_tool"],
        "Nests each tool under `function`: the API reads no name or description where it looks for them.",
    ),
    broken_responses(
        "responses_chat_max_tokens",
        SendsChatMaxTokens,
        "CFG-01",
        ["config_passthrough"],
        "Sends the token limit as `max_tokens` (Chat Completions) instead of `max_output_tokens`.",
    ),
    broken_responses(
        "responses_outputs_by_item_id",
        LinksOutputsByItemId,
        "MSG-04",
        ["tool_result_roundtrip", "tool_result_then_user"],
        "Links function_call_output by an item id instead of the call's call_id.",
    ),
    broken_responses(
        "responses_drops_encrypted_reasoning",
        DropsEncryptedReasoning,
        "MSG-08",
        ["thinking_history"],
        "Leaves the reasoning item (its encrypted_content) out of the history it sends back.",
    ),
    broken_responses(
        "responses_does_not_stream",
        DoesNotStream,
        "MSG-10",
        ["text_basic"],
        "Never asks for a stream (`stream: true` missing).",
    ),
]
