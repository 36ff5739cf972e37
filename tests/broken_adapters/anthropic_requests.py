"""Broken Anthropic Messages adapters, request side: the body a Chat Completions port gets wrong.

Each is ``reference_adapters.anthropic`` with one realistic mistake in the body ``build_request_body`` returns
(post-processed, or the turns rebuilt message by message) or in its headers. The Messages API is stricter than
Chat Completions: tool results first and together, no empty text, ``max_tokens`` and ``anthropic-version``
required, unknown fields rejected, ``cache_control`` only where it belongs. Consecutive same-role turns are
not a mistake (the API combines them; ``tests/test_foreign_wire.py`` passes an adapter that never merges), but
merging them wrongly is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helix_conformance.contract import (
    AssistantMessage,
    LLMGenerateInput,
    SystemMessage,
    ToolMessage,
)
from reference_adapters.anthropic import (
    _assistant_blocks,
    _mark_cache_breakpoints,
)

from ._anthropic_base import HookedAnthropicAdapter, broken_anthropic
from ._base import BrokenAdapter

Body = dict[str, Any]
Turn = dict[str, Any]
Block = dict[str, Any]


def _each_turn(body: Body, role: str, change: Callable[[list[Block]], None]) -> Body:
    for turn in body["messages"]:
        if turn["role"] == role:
            change(turn["content"])
    return body


def _one_turn_per_message(input: LLMGenerateInput, *, keep_empty: bool) -> list[Turn]:
    """The conversation converted message by message, the way an OpenAI Chat port does it: one wire message
    per canonical message (blocks as the reference builds them), nothing merged."""
    turns: list[Turn] = []
    for message in input.messages:
        content: list[Block] | str
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, AssistantMessage):
            role, content = "assistant", _assistant_blocks(message)
            if not content and keep_empty:
                content = message.content
        elif isinstance(message, ToolMessage):
            role = "user"
            content = [
                {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
            ]
        else:
            role, content = "user", [{"type": "text", "text": message.content}] if message.content else []
        if content or keep_empty:
            turns.append({"role": role, "content": content})
    return turns


def _merge_same_role(turns: list[Turn]) -> list[Turn]:
    """Consecutive same-role turns of blocks as one (the reference's merge)."""
    merged: list[Turn] = []
    for turn in turns:
        previous: Turn = merged[-1] if merged else {"role": None, "content": ""}
        content: list[Block] | str = previous["content"]
        if (
            isinstance(content, list)
            and isinstance(turn["content"], list)
            and previous["role"] == turn["role"]
        ):
            content.extend(turn["content"])
        else:
            merged.append(turn)
    return merged


# --- MSG: messages ------------------------------------------------------------------------------------------


class SystemSentAsMessage(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        system = body.pop("system", [])
        # Bug: the OpenAI habit: the system prompt as the first message, not the top-level `system` field.
        body["messages"][:0] = [{"role": "system", "content": block["text"]} for block in system]
        return body


class SplitsToolResults(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        turns: list[Turn] = []
        for turn in body["messages"]:
            results = [b for b in turn["content"] if b["type"] == "tool_result"]
            if turn["role"] != "user" or not results:
                turns.append(turn)
                continue
            # Bug: one user message per tool result, as OpenAI has one `role: tool` message per result.
            turns.extend({"role": "user", "content": [result]} for result in results)
            rest = [b for b in turn["content"] if b["type"] != "tool_result"]
            if rest:
                turns.append({"role": "user", "content": rest})
        body["messages"] = turns
        return body


class TextBeforeToolResults(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def words_first(blocks: list[Block]) -> None:
            blocks.sort(key=lambda b: b["type"] != "text")  # Bug: "the user's words first, then the results"

        return _each_turn(super().build_body(input), "user", words_first)


class MergeKeepsTheLastTurn(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        turns: list[Turn] = []
        for turn in _one_turn_per_message(input, keep_empty=False):
            if turns and turns[-1]["role"] == turn["role"]:
                turns[-1] = turn  # Bug: "merging" same-role turns by overwriting: the earlier one is lost
            else:
                turns.append(turn)
        body["messages"] = turns
        return body


class SendsEmptyAssistantTurn(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        # Bug: an assistant turn with nothing in it is sent as is, `content: ""` (the API rejects it).
        body["messages"] = _merge_same_role(_one_turn_per_message(input, keep_empty=True))
        return body


class EmptyTextBesideToolUse(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        def text_always(blocks: list[Block]) -> None:
            kinds = [b["type"] for b in blocks]
            if "tool_use" in kinds and "text" not in kinds:
                # Bug: `{"type": "text", "text": message.content}` whether there is text or not.
                blocks.insert(kinds.index("tool_use"), {"type": "text", "text": ""})

        return _each_turn(super().build_body(input), "assistant", text_always)


# --- MSG-09: what the Messages API rejects ------------------------------------------------------------------


class OmitsMaxTokensWhenUnset(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        if input.config.max_output_tokens is None:
            del body["max_tokens"]  # Bug: "unset is absent" (CFG-01), but the Messages API requires it
        return body


class SendsPenaltiesAndSeed(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        config = input.config
        extra = {
            "presence_penalty": config.presence_penalty,
            "frequency_penalty": config.frequency_penalty,
            "seed": config.seed,
        }
        body.update((k, v) for k, v in extra.items() if v is not None)  # Bug: fields the API rejects
        return body


class OmitsVersionHeader(HookedAnthropicAdapter):
    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        headers = super().build_headers(input)
        del headers["anthropic-version"]  # Bug: the SDK adds it; a hand-written client must too
        return headers


# --- TOOL: tools ---------------------------------------------------------------------------------------------


class OpenAIToolShape(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        body["tools"] = [  # Bug: the Chat Completions shape, unchanged from the OpenAI adapter
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["input_schema"],
                },
            }
            for t in body.get("tools", [])
        ]
        if not body["tools"]:
            del body["tools"]
        return body


class SchemaWithoutObjectType(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        for tool in body.get("tools", []):
            schema = tool["input_schema"]
            # Bug: copies "the parts that matter" of the schema; `type: object` is not one of them.
            tool["input_schema"] = {k: schema[k] for k in ("properties", "required", "$defs") if k in schema}
        return body


# --- CACHE: prompt caching ----------------------------------------------------------------------------------


def _unmark(blocks: list[Block]) -> None:
    for block in blocks:
        block.pop("cache_control", None)


class CachesOnlyTheSystemPrompt(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        _unmark(body.get("tools", []))  # Bug: "the system prompt is the stable part": tools and the
        for turn in body["messages"]:  # conversation are never cached
            _unmark(turn["content"])
        return body


class CachesEveryBlock(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        if input.config.caching == "auto":  # Bug: a breakpoint on everything; the API allows 4
            blocks = [*body.get("system", []), *body.get("tools", [])]
            blocks += [block for turn in body["messages"] for block in turn["content"]]
            for block in blocks:
                block["cache_control"] = {"type": "ephemeral"}
        return body


class AlwaysCaches(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        _mark_cache_breakpoints(body)  # Bug: "caching only saves money": on whatever config.caching says
        return body


class AlwaysCachesAutomatically(HookedAnthropicAdapter):
    def build_body(self, input: LLMGenerateInput) -> Body:
        body = super().build_body(input)
        body["cache_control"] = {"type": "ephemeral"}  # Bug: automatic caching, whatever config.caching says
        return body


ADAPTERS: list[BrokenAdapter] = [
    broken_anthropic(
        "anthropic_system_sent_as_message",
        SystemSentAsMessage,
        "MSG-01",
        ["system_multiturn", "caching_auto"],
        'Sends the system prompt as a {"role": "system"} message instead of the top-level system field.',
    ),
    broken_anthropic(
        "anthropic_splits_tool_results",
        SplitsToolResults,
        "MSG-04",
        ["tool_result_roundtrip"],
        "Sends each tool result in a user message of its own (OpenAI's one message per tool result).",
    ),
    broken_anthropic(
        "anthropic_text_before_tool_results",
        TextBeforeToolResults,
        "MSG-04",
        ["tool_result_then_user"],
        "Puts the user's text before the tool_result blocks of the merged user turn.",
    ),
    broken_anthropic(
        "anthropic_merge_keeps_the_last_turn",
        MergeKeepsTheLastTurn,
        "MSG-05",
        ["system_multiturn", "tool_result_then_user", "tool_result_roundtrip"],
        "Merges consecutive same-role turns by keeping only the last: a user message or tool result is lost.",
    ),
    broken_anthropic(
        "anthropic_sends_empty_assistant_turn",
        SendsEmptyAssistantTurn,
        "MSG-05",
        ["system_multiturn"],
        'Sends an empty assistant turn as is (content "") instead of leaving it out.',
    ),
    broken_anthropic(
        "anthropic_empty_text_beside_tool_use",
        EmptyTextBesideToolUse,
        "MSG-06",
        ["tool_result_roundtrip"],
        'Sends {"type": "text", "text": ""} beside tool_use blocks in the history.',
    ),
    broken_anthropic(
        "anthropic_omits_max_tokens_when_unset",
        OmitsMaxTokensWhenUnset,
        "MSG-09",
        ["text_basic", "tool_call"],
        "Sends max_tokens only when max_output_tokens is set; the Messages API requires it (SHOULD).",
    ),
    broken_anthropic(
        "anthropic_sends_penalties_and_seed",
        SendsPenaltiesAndSeed,
        "MSG-09",
        ["config_passthrough"],
        "Sends presence_penalty, frequency_penalty and seed, fields the Messages API rejects (SHOULD).",
    ),
    broken_anthropic(
        "anthropic_omits_version_header",
        OmitsVersionHeader,
        "MSG-09",
        ["text_basic", "tool_call"],
        "Sends no anthropic-version header (SHOULD).",
    ),
    broken_anthropic(
        "anthropic_openai_tool_shape",
        OpenAIToolShape,
        "TOOL-03",
        ["tool_call", "tool_schemas"],
        'Sends tools as {"type": "function", "function": {...}}, the Chat Completions shape.',
    ),
    broken_anthropic(
        "anthropic_schema_without_object_type",
        SchemaWithoutObjectType,
        "TOOL-03",
        ["tool_call", "tool_schemas"],
        'Sends input_schema with properties, required and $defs but without "type": "object".',
    ),
    broken_anthropic(
        "anthropic_caches_only_the_system_prompt",
        CachesOnlyTheSystemPrompt,
        "CACHE-02",
        ["caching_auto"],
        "With caching='auto' puts a breakpoint on the system prompt only, not the last tool or message.",
    ),
    broken_anthropic(
        "anthropic_caches_every_block",
        CachesEveryBlock,
        "CACHE-02",
        ["caching_auto"],
        "With caching='auto' puts cache_control on every block: more than 4 breakpoints on a long history.",
    ),
    broken_anthropic(
        "anthropic_always_caches",
        AlwaysCaches,
        "CACHE-01",
        ["text_basic", "tool_call", "system_multiturn"],
        "Sends cache_control breakpoints although caching is off.",
    ),
    broken_anthropic(
        "anthropic_always_caches_automatically",
        AlwaysCachesAutomatically,
        "CACHE-01",
        ["text_basic", "tool_call", "system_multiturn"],
        "Sends the top-level cache_control (automatic caching) although caching is off.",
    ),
]
