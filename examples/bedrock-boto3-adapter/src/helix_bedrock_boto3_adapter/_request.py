"""Contract messages and tools -> the keyword arguments of ``converse_stream`` (boto3 builds the JSON)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from helix_conformance.contract import AssistantMessage, LLMGenerateInput, SystemMessage, Tool, ToolMessage

PROVIDER = "bedrock"  # the key of config.provider_options, and the prefix of error messages


def converse_arguments(input: LLMGenerateInput) -> dict[str, Any]:
    """``client.converse_stream(**converse_arguments(input))``. ``input`` is only read (MSG-07)."""
    config = input.config
    arguments: dict[str, Any] = {"modelId": config.model, "messages": _turns(input)}
    system = [
        {"text": m.content} for m in input.messages if isinstance(m, SystemMessage) and m.content.strip()
    ]
    if system:  # MSG-01: the system slot; MSG-06: never a blank block
        arguments["system"] = system
    inference = {  # CFG-01: unset -> absent
        "maxTokens": config.max_output_tokens,
        "temperature": config.temperature,
        "topP": config.top_p,
        "stopSequences": list(config.stop_sequences) if config.stop_sequences is not None else None,
    }
    inference = {name: value for name, value in inference.items() if value is not None}
    if inference:
        arguments["inferenceConfig"] = inference
    if input.tools:  # TOOL-04: no tools -> no toolConfig
        arguments["toolConfig"] = {"tools": [_tool(tool) for tool in input.tools]}
    arguments.update((config.provider_options or {}).get(PROVIDER, {}))  # CFG-02
    return arguments


def _turns(input: LLMGenerateInput) -> list[dict[str, Any]]:
    """Alternating user/assistant turns (MSG-05); tool results in the next user turn, first (MSG-04)."""
    turns: list[dict[str, Any]] = []
    for message in input.messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, AssistantMessage):
            role, blocks = "assistant", _assistant_blocks(message)
        elif isinstance(message, ToolMessage):
            content = [{"text": message.content}] if message.content.strip() else []
            role, blocks = "user", [{"toolResult": {"toolUseId": message.tool_call_id, "content": content}}]
        else:  # MSG-02 as given; MSG-06: a blank text block is rejected by the service
            role, blocks = "user", [{"text": message.content}] if message.content.strip() else []
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    thinking = message.thinking
    if thinking is not None:  # MSG-08: signed and redacted reasoning go back unchanged
        if thinking.signature:
            text = {"text": thinking.content, "signature": thinking.signature}
            blocks.append({"reasoningContent": {"reasoningText": text}})
        for data in thinking.redacted:  # kept as the wire's base64; boto3 wants the bytes
            blocks.append({"reasoningContent": {"redactedContent": _blob(data)}})
    if message.content.strip():
        blocks.append({"text": message.content})
    for call in message.tool_calls or ():  # MSG-03
        blocks.append({"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}})
    return blocks


def _blob(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return data.encode("utf-8")


def _tool(tool: Tool) -> dict[str, Any]:
    schema = tool.json_schema()
    if schema.get("type") != "object":  # TOOL-03
        schema = {**schema, "type": "object"}
    spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": schema}}  # TOOL-01, TOOL-02
    if tool.description:
        spec["description"] = tool.description
    if tool.strict:
        spec["strict"] = True
    return {"toolSpec": spec}
