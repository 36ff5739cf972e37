"""Helix messages, tools and config as the ``contents`` and ``config`` of ``generate_content_stream``.

Gemini turns are ``user``/``model`` and strictly alternate; tool results are linked to calls by name and
order (Gemini issues no call ids); reasoning goes back only as its ``thought_signature``. Only reads the input
(MSG-07): every SDK object is built here, arguments and options deep-copied.
"""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

from google.genai import types

from helix_conformance.contract import (
    AssistantMessage,
    LLMGenerateInput,
    Message,
    SystemMessage,
    Tool,
    ToolMessage,
)

PROVIDER = "gemini"  # the key of config.provider_options read by this adapter (CFG-02)


def request_config(input: LLMGenerateInput, timeout_ms: int) -> types.GenerateContentConfig:
    """The ``config`` of one streamed step: system prompt, tools, generation parameters, headers, options."""
    config = input.config
    system = [
        types.Part(text=m.content) for m in input.messages if isinstance(m, SystemMessage) and m.content
    ]
    options = copy.deepcopy((config.provider_options or {}).get(PROVIDER) or {})
    http_options = types.HttpOptions(
        timeout=timeout_ms,  # milliseconds, as every HttpOptions.timeout
        headers=dict(config.headers) if config.headers else None,  # CFG-02
        extra_body=options or None,  # CFG-02: merged into the JSON body, recursively, by the SDK
    )
    return types.GenerateContentConfig(
        http_options=http_options,
        system_instruction=types.Content(parts=system) if system else None,  # MSG-01
        tools=[types.Tool(function_declarations=[_declaration(t) for t in input.tools])]
        if input.tools
        else None,
        # The SDK would call Python callables passed as tools itself (automatic function calling); ours are
        # declarations only, and the agent framework runs them: switched off so it never loops on its own.
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        max_output_tokens=config.max_output_tokens,  # CFG-01: None is left out of the request
        temperature=config.temperature,
        top_p=config.top_p,
        top_k=config.top_k,
        presence_penalty=config.presence_penalty,
        frequency_penalty=config.frequency_penalty,
        stop_sequences=list(config.stop_sequences) if config.stop_sequences is not None else None,
        seed=config.seed,
    )  # CACHE-04: caching='auto' changes nothing; Gemini caches implicitly


def contents(messages: list[Message]) -> list[types.Content]:
    """The conversation as strictly alternating ``user``/``model`` turns (MSG-05): consecutive user-side
    messages (text, tool results) share one turn, so all results of a model turn sit together, in order
    (MSG-04); a message with nothing to send is dropped, since Gemini rejects turns without parts (MSG-06)."""
    turns: list[types.Content] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue  # MSG-01: the system_instruction slot
        if isinstance(message, AssistantMessage):
            role, parts = "model", _model_parts(message)
        elif isinstance(message, ToolMessage):  # MSG-04: linked by name and position
            result = types.FunctionResponse(name=message.tool_name, response={"result": message.content})
            role, parts = "user", [types.Part(function_response=result)]
        else:  # MSG-02: exactly as given; no empty text part
            role, parts = "user", [types.Part(text=message.content)] if message.content else []
        if not parts:
            continue
        if turns and turns[-1].role == role and turns[-1].parts is not None:
            turns[-1].parts.extend(parts)
        else:
            turns.append(types.Content(role=role, parts=parts))
    return turns


def _model_parts(message: AssistantMessage) -> list[types.Part]:
    """Text, then one function_call part per call (MSG-03, without our ids: Gemini did not issue them); the
    thought signature rides on the first call, or on the first part when there is none (MSG-08)."""
    parts: list[types.Part] = []
    if message.content:
        parts.append(types.Part(text=message.content))
    for call in message.tool_calls or ():
        function_call = types.FunctionCall(name=call.name, args=copy.deepcopy(call.arguments))
        parts.append(types.Part(function_call=function_call))
    signature = signature_bytes(message.thinking.signature if message.thinking is not None else None)
    if signature is not None and parts:
        target = next((part for part in parts if part.function_call is not None), parts[0])
        target.thought_signature = signature
    return parts


def signature_bytes(signature: str | None) -> bytes | None:
    """The SDK holds ``thought_signature`` as bytes; Helix as text (base64, see ``_stream``). Both base64
    alphabets are read: histories may carry the URL-safe form the SDK itself writes on the wire."""
    if not signature:
        return None
    text = signature.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return signature.encode()  # not base64: an opaque token, sent back byte for byte


def _declaration(tool: Tool) -> types.FunctionDeclaration:
    """Name and description unchanged (TOOL-01); the schema as JSON Schema, in ``parameters_json_schema``:
    no translation to Gemini's OpenAPI subset, ``$ref`` and all (TOOL-02, TOOL-03)."""
    schema: dict[str, Any] = copy.deepcopy(tool.json_schema())  # the SDK must not touch the tool's own
    return types.FunctionDeclaration(
        name=tool.name, description=tool.description, parameters_json_schema=schema
    )
