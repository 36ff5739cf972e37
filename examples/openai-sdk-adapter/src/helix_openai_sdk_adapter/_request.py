"""Helix messages, tools and config as keyword arguments of ``client.chat.completions.create``.

Only reads the input (MSG-07): every dict sent is built here, nothing of the caller's is modified.
"""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.contract import AssistantMessage, LLMGenerateInput, Message, Tool, ToolMessage

PROVIDER = "openai"  # the key of config.provider_options read by this adapter (CFG-02)


def create_kwargs(input: LLMGenerateInput) -> dict[str, Any]:
    """Everything ``create(**kwargs)`` needs for one streamed step."""
    config = input.config
    kwargs: dict[str, Any] = {
        "model": config.model,
        "messages": [_message(message) for message in input.messages],
        "stream": True,  # MSG-10: callbacks fire as the answer arrives
        "stream_options": {"include_usage": True},
    }
    if input.tools:  # TOOL-04: no tools -> no `tools` argument at all
        kwargs["tools"] = [_tool(tool) for tool in input.tools]
    generation = {  # CFG-01: only what is set. Chat Completions has no top_k
        "max_completion_tokens": config.max_output_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "presence_penalty": config.presence_penalty,
        "frequency_penalty": config.frequency_penalty,
        "stop": list(config.stop_sequences) if config.stop_sequences is not None else None,
        "seed": config.seed,
    }
    kwargs.update((name, value) for name, value in generation.items() if value is not None)
    if config.caching == "auto":  # CACHE-03: stable for the agent's session; CACHE-01: absent otherwise
        kwargs["prompt_cache_key"] = f"helix-{input.agent_id}"
    if config.headers:  # CFG-02
        kwargs["extra_headers"] = dict(config.headers)
    options = (config.provider_options or {}).get(PROVIDER)
    if options:  # CFG-02: merged into the JSON body by the SDK
        kwargs["extra_body"] = dict(options)
    return kwargs


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message, ToolMessage):  # MSG-04: linked to its call by id
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if isinstance(message, AssistantMessage) and message.tool_calls:  # MSG-03, MSG-06 (no empty text)
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
        return {"role": "assistant", "content": message.content or None, "tool_calls": calls}
    return {"role": message.role, "content": message.content}  # MSG-01, MSG-02: content exactly as given


def _tool(tool: Tool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "description": tool.description}  # TOOL-01
    function["parameters"] = tool.json_schema()  # TOOL-02
    if tool.strict:  # TOOL-03: strict mode wants closed objects with every property required
        function.update(parameters=strict_schema(function["parameters"]), strict=True)
    return {"type": "function", "function": function}


_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SINGLE = ("items", "additionalProperties", "not", "contains", "if", "then", "else")


def strict_schema(schema: Any) -> Any:
    """A copy of ``schema`` with every object closed and all its properties required (OpenAI strict mode)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key, value in schema.items():
        if key in _MAPS and isinstance(value, dict):
            out[key] = {name: strict_schema(sub) for name, sub in value.items()}
        elif key in _LISTS and isinstance(value, list):
            out[key] = [strict_schema(sub) for sub in value]
        elif key in _SINGLE:
            out[key] = strict_schema(value)
    if "default" in out and out["default"] is None:
        del out["default"]
    types = out.get("type")
    if "properties" in out or types == "object" or (isinstance(types, list) and "object" in types):
        properties = out.get("properties")
        out["additionalProperties"] = False
        out["required"] = list(properties) if isinstance(properties, dict) else []
    return out
