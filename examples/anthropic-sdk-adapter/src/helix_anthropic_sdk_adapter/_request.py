"""Helix messages, tools and config as keyword arguments of ``client.messages.create``.

The Messages API is strict: user/assistant turns alternate, no empty text blocks, ``max_tokens`` required,
unknown fields rejected. Only reads the input (MSG-07): every dict sent is a new one, so cache markers land
on our copies.
"""

from __future__ import annotations

from typing import Any

from helix_conformance.contract import (
    AssistantMessage,
    LLMGenerateInput,
    SystemMessage,
    Tool,
    ToolMessage,
)

PROVIDER = "anthropic"  # the key of config.provider_options read by this adapter (CFG-02)
DEFAULT_MAX_TOKENS = 4096
"""Sent when ``config.max_output_tokens`` is unset: the Messages API requires ``max_tokens``."""


def create_kwargs(input: LLMGenerateInput) -> dict[str, Any]:
    """Everything ``messages.create(**kwargs)`` needs for one streamed step."""
    config = input.config
    kwargs: dict[str, Any] = {
        "model": config.model,
        "max_tokens": config.max_output_tokens
        if config.max_output_tokens is not None
        else DEFAULT_MAX_TOKENS,
        "messages": _turns(input),
        "stream": True,  # MSG-10: callbacks fire as the answer arrives
    }
    system = [
        {"type": "text", "text": m.content}
        for m in input.messages
        if isinstance(m, SystemMessage) and m.content
    ]
    if system:  # MSG-01: the top-level system slot, never a message
        kwargs["system"] = system
    if input.tools:  # TOOL-04: no tools -> no `tools` argument at all
        kwargs["tools"] = [_tool(tool) for tool in input.tools]
    if config.stop_sequences is not None:  # CFG-01: only what is set
        kwargs["stop_sequences"] = list(config.stop_sequences)
    # The SDK's typed create() has no temperature/top_p/top_k keywords any more (a TypeError before any
    # request); the API still takes them, so they go in extra_body. No penalties or seed in the Messages API.
    sampling = {"temperature": config.temperature, "top_p": config.top_p, "top_k": config.top_k}
    extra_body = {name: value for name, value in sampling.items() if value is not None}
    extra_body.update((config.provider_options or {}).get(PROVIDER, {}))  # CFG-02: merged into the body
    if extra_body:
        kwargs["extra_body"] = extra_body
    if config.caching == "auto":  # CACHE-02; CACHE-01: no markers otherwise
        _mark_cache_breakpoints(kwargs)
    if config.headers:  # CFG-02
        kwargs["extra_headers"] = dict(config.headers)
    return kwargs


def _turns(input: LLMGenerateInput) -> list[dict[str, Any]]:
    """Strictly alternating turns (MSG-05): consecutive user-side messages (text, tool results) share one
    user turn, so consecutive tool results sit in one message (MSG-04); empty messages are left out (MSG-06)."""
    turns: list[dict[str, Any]] = []
    for message in input.messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, AssistantMessage):
            role, blocks = "assistant", _assistant_blocks(message)
        elif isinstance(message, ToolMessage):
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            if message.content:
                result["content"] = message.content
            role, blocks = "user", [result]
        else:  # MSG-02: user text exactly as given
            role, blocks = "user", [{"type": "text", "text": message.content}] if message.content else []
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """Thinking, text, tool calls: the order the API produced and expects back."""
    blocks: list[dict[str, Any]] = []
    thinking = message.thinking
    if thinking is not None:  # MSG-08: only signed thinking can go back; redacted blocks verbatim
        if thinking.signature:
            blocks.append({"type": "thinking", "thinking": thinking.content, "signature": thinking.signature})
        blocks.extend({"type": "redacted_thinking", "data": data} for data in thinking.redacted)
    if message.content:  # MSG-06: no empty text block beside tool calls
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls or ():  # MSG-03
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return blocks


def _tool(tool: Tool) -> dict[str, Any]:
    schema = tool.json_schema()  # TOOL-02
    if schema.get("type") != "object":  # TOOL-03: input_schema must be an object schema
        schema = {**schema, "type": "object"}
    return {"name": tool.name, "description": tool.description, "input_schema": schema}  # TOOL-01


def _mark_cache_breakpoints(kwargs: dict[str, Any]) -> None:
    """CACHE-02: the system prompt, the last tool and the last message; never more than 4. Every block
    marked here was built by this module, so the caller's messages and tools stay untouched (MSG-07)."""
    spots: list[dict[str, Any]] = []
    if kwargs.get("system"):
        spots.append(kwargs["system"][-1])
    if kwargs.get("tools"):
        spots.append(kwargs["tools"][-1])
    if kwargs["messages"] and kwargs["messages"][-1]["content"]:
        spots.append(kwargs["messages"][-1]["content"][-1])
    for spot in spots:
        spot["cache_control"] = {"type": "ephemeral"}
