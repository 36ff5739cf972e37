"""Helix messages, tools and config as keyword arguments of ``client.responses.create``.

Only reads the input (MSG-07): every dict sent is built here, nothing of the caller's is modified. Stateless:
the whole history every step, ``store=False``, and the reasoning asked back encrypted so it can be re-sent.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from helix_conformance.contract import (
    AssistantMessage,
    LLMGenerateInput,
    Message,
    SystemMessage,
    Tool,
    ToolMessage,
)

PROVIDER = "openai"  # the key of config.provider_options read by this adapter (CFG-02)


def create_kwargs(input: LLMGenerateInput, reasoning_ids: dict[str, str]) -> dict[str, Any]:
    """Everything ``create(**kwargs)`` needs for one streamed step."""
    config = input.config
    messages = list(input.messages)
    kwargs: dict[str, Any] = {"model": config.model, "stream": True}  # MSG-10
    if messages and isinstance(messages[0], SystemMessage):  # MSG-01: the system slot is `instructions`
        kwargs["instructions"] = messages.pop(0).content
    kwargs["input"] = [item for message in messages for item in _items(message, reasoning_ids)]
    if input.tools:  # TOOL-04: no tools -> no `tools` argument at all
        kwargs["tools"] = [_tool(tool) for tool in input.tools]
    generation = {  # CFG-01: only what is set; the Responses API has no stop, seed, penalties or top_k
        "max_output_tokens": config.max_output_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
    }
    kwargs.update((name, value) for name, value in generation.items() if value is not None)
    if config.caching == "auto":  # CACHE-03: stable for the agent's session; CACHE-01: absent otherwise
        kwargs["prompt_cache_key"] = f"helix-{input.agent_id}"
    kwargs["store"] = False
    kwargs["include"] = ["reasoning.encrypted_content"]  # MSG-08: the reasoning comes back to be re-sent
    if config.headers:  # CFG-02
        kwargs["extra_headers"] = dict(config.headers)
    options = (config.provider_options or {}).get(PROVIDER)
    if options:  # CFG-02: merged into the JSON body by the SDK
        kwargs["extra_body"] = dict(options)
    return kwargs


def _items(message: Message, reasoning_ids: dict[str, str]) -> list[dict[str, Any]]:
    if isinstance(message, ToolMessage):  # MSG-04: linked to its call by call_id
        return [{"type": "function_call_output", "call_id": message.tool_call_id, "output": message.content}]
    if not isinstance(message, AssistantMessage):  # MSG-01, MSG-02: content exactly as given, in place
        return [{"role": message.role, "content": message.content}]
    items: list[dict[str, Any]] = []
    if message.thinking is not None and message.thinking.signature:  # MSG-08: encrypted reasoning re-sent
        signature = message.thinking.signature
        item_id = reasoning_ids.get(signature) or "rs_" + hashlib.sha256(signature.encode()).hexdigest()[:48]
        text = message.thinking.content
        summary = [{"type": "summary_text", "text": text}] if text else []
        items.append({"type": "reasoning", "id": item_id, "summary": summary, "encrypted_content": signature})
    if message.content or not message.tool_calls:
        items.append({"role": "assistant", "content": message.content})
    for call in message.tool_calls or []:  # MSG-03: same ids, names and arguments
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": json.dumps(call.arguments),
            }
        )
    return items


def _tool(tool: Tool) -> dict[str, Any]:
    """A flat function tool, as the Responses API wants it (not nested under ``function``) (TOOL-01..03)."""
    parameters = tool.json_schema()  # TOOL-02
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": strict_schema(parameters) if tool.strict else parameters,
        "strict": bool(tool.strict),
    }


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
