"""Contract input -> the JSON body of ``POST /chat/completions``. The input is only read, never changed (MSG-07)."""

from __future__ import annotations

import json
from typing import Any

from helix_conformance.contract import AssistantMessage, LLMGenerateInput, Message, Tool, ToolMessage

PROVIDER = "openai"
"""The key of ``config.provider_options`` this adapter reads, and the prefix of its error messages."""


def request_body(input: LLMGenerateInput) -> dict[str, Any]:
    config = input.config
    body: dict[str, Any] = {"model": config.model, "messages": [_message(m) for m in input.messages]}
    if input.tools:  # TOOL-04: no tools, no `tools` field
        body["tools"] = [_tool(tool) for tool in input.tools]
    settings = {  # CFG-01: what is unset stays absent (Chat Completions has no top_k)
        "max_completion_tokens": config.max_output_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "presence_penalty": config.presence_penalty,
        "frequency_penalty": config.frequency_penalty,
        "stop": list(config.stop_sequences) if config.stop_sequences is not None else None,
        "seed": config.seed,
    }
    body.update((key, value) for key, value in settings.items() if value is not None)
    body.update((config.provider_options or {}).get(PROVIDER, {}))  # CFG-02
    body["stream"] = True  # MSG-10
    return body


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message, ToolMessage):  # MSG-04: answered by id
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if isinstance(message, AssistantMessage) and message.tool_calls:  # MSG-03, MSG-06
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
        return {"role": "assistant", "content": message.content or None, "tool_calls": calls}
    return {"role": message.role, "content": message.content}  # MSG-01, MSG-02


def _tool(tool: Tool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "description": tool.description}
    function["parameters"] = tool.json_schema()  # TOOL-01, TOOL-02: as given
    if tool.strict:  # TOOL-03: OpenAI's strict mode closes every object and requires every property
        function.update(parameters=_strict(function["parameters"]), strict=True)
    return {"type": "function", "function": function}


_NESTED_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_NESTED_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_NESTED = ("items", "additionalProperties", "not", "contains", "if", "then", "else")


def _strict(schema: Any) -> Any:
    """A strict-mode copy of ``schema`` (the tool's own dict is left alone)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key, value in schema.items():
        if key in _NESTED_MAPS and isinstance(value, dict):
            out[key] = {name: _strict(sub) for name, sub in value.items()}
        elif key in _NESTED_LISTS and isinstance(value, list):
            out[key] = [_strict(sub) for sub in value]
        elif key in _NESTED:
            out[key] = _strict(value)
    if out.get("default", 0) is None:  # the official SDK drops null defaults in strict schemas
        del out["default"]
    kinds = out.get("type")
    if "properties" in out or kinds == "object" or (isinstance(kinds, list) and "object" in kinds):
        properties = out.get("properties")
        out["additionalProperties"] = False
        out["required"] = list(properties) if isinstance(properties, dict) else []
    return out
