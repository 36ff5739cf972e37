"""The ``cohere-chat`` wire profile: Cohere's v2 Chat API (``POST /v2/chat`` with ``"stream": true``).

The decoder reads a v2 chat request back as canonical messages, tools and config: ``messages`` with roles
``system``, ``user``, ``assistant`` (text or thinking content, ``tool_plan``, ``tool_calls`` whose
``arguments`` are a JSON string) and ``tool`` (``tool_call_id``, text or document content); ``tools`` in the
function shape; the generation fields ``max_tokens``, ``temperature``, ``p``, ``k``, ``stop_sequences``,
``seed`` and the penalties (Cohere's OpenAPI spec, cohere-openapi.yaml ``/v2/chat``; the ``cohere`` SDK's
``ClientV2.chat_stream``). What the canonical form cannot show is reported with the API's own 400 as
evidence (https://docs.cohere.com/reference/errors): a tool result whose call is not in the turn before
("tool call id not found in previous tool calls", MSG-04), an empty message ("message must not be empty in a
turn", MSG-06) and fields v2 chat does not have (MSG-09). The assistant's ``tool_plan`` is the text of a
tool-calling turn: it reads back as the message's content (RES-07's text, sent back). The response side is in
``cohere_stream``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..contract import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCallInfo,
    ToolMessage,
    UserMessage,
)
from ..scenarios.model import HttpError, Stream, StreamError
from . import cohere_stream, cohere_summary
from .base import DecodedRequest, DecodedTool, WireProfile, json_content_type_problems, sse_event_json
from .gemini import tool_result_text
from .summary import ResponseSummary
from .wire import WireRules

_CONFIG_FIELDS = {
    "max_tokens": "max_output_tokens",
    "temperature": "temperature",
    "p": "top_p",
    "k": "top_k",
    "stop_sequences": "stop_sequences",
    "seed": "seed",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
}
_FIELDS = frozenset(
    {
        "stream",
        "model",
        "messages",
        "tools",
        "strict_tools",
        "documents",
        "citation_options",
        "response_format",
        "safety_mode",
        "logprobs",
        "tool_choice",
        "thinking",
        "priority",
        *_CONFIG_FIELDS,
    }
)
"""The request properties of ``/v2/chat`` in Cohere's OpenAPI spec."""
_INTERPRETED = frozenset({"stream", "model", "messages", "tools", "tool_choice", *_CONFIG_FIELDS})
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
""""tool names can only contain certain characters (A-Za-z0-9_) and can't begin with a digit" (the 400)."""


@dataclass
class _Decoding:
    problems: list[str] = field(default_factory=list)
    empty_text: list[str] = field(default_factory=list)
    violations: list[tuple[str, str]] = field(default_factory=list)

    def text(self, content: Any, where: str, kinds: tuple[str, ...] = ("text",)) -> tuple[str, str]:
        """(text, thinking) of a content that is a string or a list of typed blocks."""
        if isinstance(content, str):
            return content, ""
        if not isinstance(content, list):
            self.problems.append(f"{where}: content is neither a string nor a list of content blocks")
            return "", ""
        texts, thoughts = [], []
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and "text" in kinds and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "thinking" and "thinking" in kinds and isinstance(block.get("thinking"), str):
                thoughts.append(block["thinking"])
            elif kind == "document" and "document" in kinds and isinstance(block.get("document"), dict):
                data = block["document"].get("data")
                texts.append(data if isinstance(data, str) else json.dumps(data, sort_keys=True))
            else:
                self.problems.append(f"{where}[{j}]: a block of type {kind!r} is not allowed here")
        return "".join(texts), "".join(thoughts)


def _decode_assistant(raw: dict[str, Any], where: str, d: _Decoding) -> AssistantMessage:
    content = raw.get("content")
    text = (
        "" if content is None else d.text(content, where, ("text", "thinking"))[0]
    )  # reasoning: not needed back
    plan = raw.get("tool_plan")
    if isinstance(plan, str):
        text = plan + text
    calls = []
    for k, call in enumerate(raw.get("tool_calls") or []):
        at = f"{where}.tool_calls[{k}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str):
            d.problems.append(f"{at} is not {{id, type: function, function: {{name, arguments}}}}")
            continue
        raw_arguments = function.get("arguments")
        try:
            arguments = json.loads(raw_arguments) if isinstance(raw_arguments, str) else None
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            d.problems.append(f"{at}.function.arguments must be a JSON object in a string")
            arguments = {"<not an object>": raw_arguments}
        calls.append(ToolCallInfo(id=call["id"], name=str(function.get("name", "")), arguments=arguments))
    return AssistantMessage(content=text, tool_calls=calls or None)


def _decode_messages(raw_messages: list[Any], d: _Decoding) -> list[Message]:
    messages: list[Message] = []
    called: set[str] = set()
    for i, raw in enumerate(raw_messages):
        where = f"messages[{i}]"
        role = raw.get("role") if isinstance(raw, dict) else None
        if not isinstance(raw, dict) or role not in ("system", "user", "assistant", "tool"):
            d.problems.append(f"{where}: not a message of role system, user, assistant or tool")
            continue
        content = raw.get("content")
        if role == "assistant":
            message = _decode_assistant(raw, f"{where}.content", d)
            called = {c.id for c in message.tool_calls or []}
            if not (message.content or message.tool_calls or content):
                d.empty_text.append(f"{where}: an assistant message with nothing in it")
            messages.append(message)
            continue
        if role == "tool":
            call_id = raw.get("tool_call_id")
            if call_id not in called:
                d.violations.append(
                    ("MSG-04", f"{where}: tool call id {call_id!r} not found in previous tool calls")
                )
            text, _ = d.text(content, f"{where}.content", ("text", "document"))
            messages.append(ToolMessage(tool_call_id=str(call_id or ""), tool_name="", content=text))
            continue
        text, _ = d.text(content, f"{where}.content")
        if not text.strip():
            d.empty_text.append(f"{where}: message must not be empty in a turn")
        messages.append(SystemMessage(content=text) if role == "system" else UserMessage(content=text))
    return messages


def _decode_tool(raw: Any, index: int, d: _Decoding) -> DecodedTool:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(raw, dict) or raw.get("type") != "function" or not isinstance(function, dict):
        d.problems.append(
            f"tools[{index}] is not {{type: function, function: {{name, description, parameters}}}}"
        )
        return DecodedTool(name="", description=None, parameters=None)
    if "parameters" not in function:
        d.problems.append(f"tools[{index}].function.parameters is required")
    return DecodedTool(str(function.get("name", "")), function.get("description"), function.get("parameters"))


_REASONING_MODEL = re.compile(r"^command-a-reasoning")
"""Cohere's reasoning models (https://docs.cohere.com/docs/reasoning: ``command-a-reasoning-08-2025``)."""


def _options(data: dict[str, Any]) -> frozenset[str]:
    """The request options that change what Cohere sends (``scenarios/preconditions.OPTIONS``): ``thinking``
    content when the request enables it, or leaves it unset on a reasoning model ("Reasoning is enabled by
    default for models that support it, but can be turned off by setting type = disabled")."""
    thinking = data.get("thinking")
    kind = str(thinking.get("type", "")).lower() if isinstance(thinking, dict) else None
    model = data.get("model")
    if kind == "enabled" or (
        kind is None and isinstance(model, str) and _REASONING_MODEL.match(model) is not None
    ):
        return frozenset({"thinking"})
    return frozenset()


class CohereChatProfile(WireProfile):
    name = "cohere-chat"
    provider_key = "cohere"
    default_base_url = "https://api.cohere.com"
    secret_headers = ("authorization", "cookie")
    supported_config = frozenset(_CONFIG_FIELDS.values())
    null_is_unset = False
    wire = WireRules("cohere-chat", tail="/v2/chat")

    def endpoint_url(self, model: str) -> str:
        return f"{self.default_base_url}/v2/chat"

    def expected_history(self, messages: Sequence[Message]) -> list[Message]:
        """Empty messages are rejected ("message must not be empty in a turn"), a tool result may go as a
        JSON document (compared by its value), and reasoning need not go back (Cohere asks for none)."""
        kept: list[Message] = []
        for m in messages:
            if isinstance(m, ToolMessage):
                kept.append(m.model_copy(update={"content": tool_result_text(m.content)}))
            elif isinstance(m, AssistantMessage) and (m.content or m.tool_calls):
                kept.append(m.model_copy(update={"thinking": None}))
            elif m.content.strip():
                kept.append(m)
        return kept

    def response_tool_call_id(self, neutral_id: str) -> str:
        return cohere_stream.tool_call_id("call", neutral_id)

    def request_header_problems(self, headers: Mapping[str, str], url: str = "") -> list[str]:
        problems = json_content_type_problems(headers)
        if not headers.get("authorization", "").lower().startswith("bearer "):
            problems.append("no Authorization: bearer <key> header (the API's authentication)")
        return problems

    def decode_request(self, body: bytes, url: str = "") -> DecodedRequest:
        try:
            data = json.loads(body)
        except ValueError as exc:
            return DecodedRequest(None, [], None, False, {}, False, {}, {}, [f"body is not JSON: {exc}"])
        if not isinstance(data, dict):
            return DecodedRequest(None, [], None, False, {}, False, {}, {}, ["body is not a JSON object"])
        d = _Decoding()
        if not isinstance(data.get("model"), str):
            d.problems.append("model is missing or not a string")
        raw_messages = data.get("messages")
        if not isinstance(raw_messages, list) or not raw_messages:
            d.problems.append("messages must be a non-empty list")
            raw_messages = []
        messages = _decode_messages(raw_messages, d)
        tools = None
        if "tools" in data:
            tools = [_decode_tool(t, i, d) for i, t in enumerate(data["tools"] or [])]
        d.problems.extend(f"{name} is not a v2 chat request field" for name in sorted(data.keys() - _FIELDS))
        return DecodedRequest(
            model=data.get("model"),
            messages=messages,
            tools=tools,
            tool_choice_present="tool_choice" in data,
            config={canonical: data[wire] for wire, canonical in _CONFIG_FIELDS.items() if wire in data},
            streaming=data.get("stream") is True,
            cache={},
            extra={k: v for k, v in data.items() if k not in _INTERPRETED},
            problems=d.problems,
            empty_text=d.empty_text,
            violations=d.violations,
            options=_options(data),
        )

    def tool_problems(self, tool: DecodedTool) -> list[str]:
        problems = []
        if not _TOOL_NAME.match(tool.name):
            problems.append(f"tool name {tool.name!r}: only A-Za-z0-9_, not starting with a digit")
        if not isinstance(tool.parameters, dict) or tool.parameters.get("type") != "object":
            problems.append(
                f"{tool.name}: parameters must be an object schema (the 400: 'schema must be an object')"
            )
        return problems

    def render_stream(self, response: Stream | StreamError, *, seed: str, model: str) -> bytes:
        return cohere_stream.EventWriter(seed, self.response_tool_call_id).render(response)

    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        return cohere_stream.error_response(error, seed=f"{error.status}:{error.kind}")

    def summarise_response(self, status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
        return cohere_summary.summarise(status, headers, body)

    def carries_finish(self, event: bytes) -> bool:
        data = sse_event_json(event)
        return isinstance(data, dict) and data.get("type") == "message-end"

    def is_terminator(self, event: bytes) -> bool:
        return self.carries_finish(event)

    def unknown_event(self) -> bytes:
        return (
            b'event: x-helix-future-event\ndata: {"type":"x-helix-future-event","delta":{"nested":[1,2]}}\n\n'
        )

    def validate_event(self, event: bytes) -> None:
        cohere_stream.validate_event(event)


PROFILE = CohereChatProfile()
