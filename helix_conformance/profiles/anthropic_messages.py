"""The ``anthropic-messages`` wire profile: Anthropic's Messages API (``POST /v1/messages``, streamed).

The request decoder reads a Messages request back as canonical messages, tools and config, and reports what
the canonical form cannot show: a conversation that does not open with a user turn (MSG-05), tool results
split across turns or placed after text (MSG-04), empty text blocks (MSG-06), where the ``cache_control``
breakpoints sit (CACHE-02) and fields the API rejects (MSG-09). Consecutive turns of one role are not a breach:
"Consecutive ``user`` or ``assistant`` turns in your request will be combined into a single turn" (Messages API
reference, ``messages``), so merging them is the adapter's choice. The response side is in ``anthropic_stream``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..contract import (
    AssistantMessage,
    Message,
    SystemMessage,
    ThinkingContent,
    ToolCallInfo,
    ToolMessage,
    UserMessage,
)
from ..scenarios.model import HttpError, Stream, StreamError
from . import anthropic_stream, anthropic_strict, anthropic_summary, servers
from .base import DecodedRequest, DecodedTool, WireProfile, json_content_type_problems, sse_event_json
from .summary import ResponseSummary
from .wire import WireRules

_CONFIG_FIELDS = {
    "max_tokens": "max_output_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "stop_sequences": "stop_sequences",
}
_INTERPRETED = {
    "model",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "stream",
    "cache_control",
    "anthropic_version",  # Claude on Vertex AI: the API version in the body
}
_FOREIGN_FIELDS = {
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "max_completion_tokens",
    "stop",
    "n",
    "response_format",
    "logprobs",
    "prompt_cache_key",
    "stream_options",
}
"""Other providers' fields: the Messages API rejects unknown fields, so sending these fails live."""
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
UNCACHEABLE_BLOCKS = frozenset({"thinking", "redacted_thinking"})
UNCACHEABLE_BLOCKS_RULE = (
    "cache_control on a thinking block: the API answers 400 `thinking.cache_control: Extra inputs are not "
    "permitted` (https://github.com/lbjlaq/Antigravity-Manager/issues/744, "
    "https://github.com/UKGovernmentBEIS/inspect_ai/pull/3967); a breakpoint goes on a text, tool_use or "
    "tool_result block"
)


@dataclass
class _Decoding:
    """State of one decode: what was found and what is wrong with it."""

    problems: list[str] = field(default_factory=list)
    empty_text: list[str] = field(default_factory=list)
    violations: list[tuple[str, str]] = field(default_factory=list)
    breakpoints: list[str] = field(default_factory=list)

    def block_list(self, content: Any, where: str) -> list[dict[str, Any]]:
        """Content as a list of blocks: a plain string is one text block."""
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if isinstance(content, list) and all(isinstance(b, dict) for b in content):
            for j, block in enumerate(content):
                if "cache_control" in block:
                    self.breakpoints.append(f"{where}.content[{j}]" if where != "system" else f"system[{j}]")
                    if block.get("type") in UNCACHEABLE_BLOCKS:
                        self.violations.append(
                            ("CACHE-02", f"{where}.content[{j}]: {UNCACHEABLE_BLOCKS_RULE}")
                        )
            return content
        self.problems.append(f"{where}: content is neither a string nor a list of blocks: {content!r:.80}")
        return []

    def text(self, block: dict[str, Any], where: str) -> str:
        text = block.get("text")
        if not isinstance(text, str):
            self.problems.append(f"{where}: text block without a string text")
            return ""
        if text == "":
            self.empty_text.append(f"{where}: empty text block (the API rejects them)")
        return text


def _tool_result_text(content: Any, decoding: _Decoding, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        # An empty result is "", [] or no content at all; an empty text block is rejected like any other.
        return "".join(decoding.text(b, f"{where}.content[{k}]") for k, b in enumerate(content))
    decoding.problems.append(f"{where}.content is neither a string nor a list of text blocks")
    return ""


def _decode_user(blocks: list[dict[str, Any]], where: str, d: _Decoding) -> list[Message]:
    messages: list[Message] = []
    seen_text = False
    for j, block in enumerate(blocks):
        at = f"{where}.content[{j}]"
        kind = block.get("type")
        if kind == "text":
            seen_text = True
            messages.append(UserMessage(content=d.text(block, at)))
        elif kind == "tool_result":
            if seen_text:
                d.violations.append(("MSG-04", f"{at}: tool_result after text; tool results must come first"))
            if not block.get("tool_use_id"):
                d.problems.append(f"{at}: tool_result without tool_use_id")
            messages.append(
                ToolMessage(
                    tool_call_id=str(block.get("tool_use_id", "")),
                    tool_name="",
                    content=_tool_result_text(block.get("content"), d, at),
                )
            )
        else:
            d.problems.append(f"{at}: unexpected block type {kind!r} in a user turn")
    return messages


def _decode_assistant(blocks: list[dict[str, Any]], where: str, d: _Decoding) -> AssistantMessage:
    texts: list[str] = []
    calls: list[ToolCallInfo] = []
    thinking: list[str] = []
    signature: str | None = None
    redacted: list[str] = []
    for j, block in enumerate(blocks):
        at = f"{where}.content[{j}]"
        kind = block.get("type")
        if kind == "text":
            texts.append(d.text(block, at))
        elif kind == "tool_use":
            arguments = block.get("input")
            if not isinstance(arguments, dict):
                d.problems.append(f"{at}.input must be a JSON object, not {type(arguments).__name__}")
                arguments = {"<not an object>": arguments}
            calls.append(
                ToolCallInfo(
                    id=str(block.get("id", "")), name=str(block.get("name", "")), arguments=arguments
                )
            )
        elif kind == "thinking":
            thinking.append(str(block.get("thinking", "")))
            signature = block.get("signature")
            if not signature:
                d.problems.append(f"{at}: thinking block without its signature (the API rejects it)")
        elif kind == "redacted_thinking":
            redacted.append(str(block.get("data", "")))
        else:
            d.problems.append(f"{at}: unexpected block type {kind!r} in an assistant turn")
    proof = ThinkingContent(content="".join(thinking), signature=signature, redacted=redacted)
    return AssistantMessage(
        content="".join(texts),
        tool_calls=calls or None,
        thinking=proof if thinking or redacted else None,
    )


def _decode_messages(raw_messages: list[Any], d: _Decoding) -> list[Message]:
    messages: list[Message] = []
    previous_role: str | None = None
    pending_tool_ids: list[str] = []
    for i, raw in enumerate(raw_messages):
        where = f"messages[{i}]"
        if not isinstance(raw, dict):
            d.problems.append(f"{where} is not an object")
            continue
        role = raw.get("role")
        if role not in ("user", "assistant"):
            hint = " (the system prompt goes in the top-level system field)" if role == "system" else ""
            d.problems.append(f"{where}: role {role!r} is not user or assistant{hint}")
            continue
        if previous_role is None and role != "user":
            d.violations.append(("MSG-05", f"{where}: the first turn must be a user turn"))
        blocks = d.block_list(raw.get("content"), where)
        if not blocks:
            d.empty_text.append(f"{where}: a turn with no content")
        if role == "user":
            decoded = _decode_user(blocks, where, d)
            answered = [m.tool_call_id for m in decoded if isinstance(m, ToolMessage)]
            missing = [t for t in pending_tool_ids if t not in answered]
            if missing:
                d.violations.append(
                    (
                        "MSG-04",
                        f"{where}: no tool_result for {missing}; every result belongs in this one turn",
                    )
                )
            stray = [t for t in answered if t not in pending_tool_ids]
            if stray:
                d.violations.append(
                    ("MSG-04", f"{where}: tool_result for {stray} answers no tool_use just before")
                )
            messages.extend(decoded)
            pending_tool_ids = []
        else:
            message = _decode_assistant(blocks, where, d)
            # A user turn resets it: consecutive assistant turns are combined, their calls answered together.
            pending_tool_ids = pending_tool_ids + [c.id for c in message.tool_calls or []]
            messages.append(message)
        previous_role = role
    return messages


def _decode_system(system: Any, d: _Decoding) -> list[Message]:
    if system is None:
        return []
    blocks = d.block_list(system, "system")
    messages: list[Message] = []
    for j, block in enumerate(blocks):
        if block.get("type") != "text":
            d.problems.append(f"system[{j}]: system blocks must be text blocks")
            continue
        messages.append(SystemMessage(content=d.text(block, f"system[{j}]")))
    return messages


AUTOMATIC_BREAKPOINT = "cache_control (top level: the last cacheable block)"
"""Automatic caching: a top-level ``cache_control`` "automatically applies a cache_control marker to the last
cacheable block in the request" (the ``anthropic`` SDK's ``MessageCreateParams.cache_control``; Anthropic's
prompt-caching guide, "Automatic caching"), which marks the last message (CACHE-02) and is a cache marker
(CACHE-01)."""


def _unmarked(data: dict[str, Any], breakpoints: list[str]) -> list[str]:
    """The CACHE-02 spots (system prompt, last tool, last message) that carry no breakpoint."""
    missing = []
    system = data.get("system")
    if system:
        last = f"system[{len(system) - 1}]" if isinstance(system, list) else "system (a plain string)"
        if last not in breakpoints:
            missing.append(f"system prompt ({last})")
    tools = data.get("tools")
    if isinstance(tools, list) and tools and f"tools[{len(tools) - 1}]" not in breakpoints:
        missing.append(f"last tool (tools[{len(tools) - 1}])")
    messages = data.get("messages")
    automatic = AUTOMATIC_BREAKPOINT in breakpoints
    if isinstance(messages, list) and messages and isinstance(messages[-1], dict) and not automatic:
        i = len(messages) - 1
        content = messages[-1].get("content")
        spot = f"messages[{i}].content[{len(content) - 1}]" if isinstance(content, list) and content else None
        if spot not in breakpoints:
            missing.append(f"last message ({spot or f'messages[{i}] has string content'})")
    return missing


def _without_unsigned_thinking(message: Message) -> Message:
    """An assistant turn as it can go back: thinking without its signature left out, redacted blocks kept."""
    thinking = message.thinking if isinstance(message, AssistantMessage) else None
    if thinking is None or thinking.signature:
        return message
    proof = ThinkingContent(content="", redacted=thinking.redacted) if thinking.redacted else None
    return message.model_copy(update={"thinking": proof})


class AnthropicMessagesProfile(WireProfile):
    name = "anthropic-messages"
    provider_key = "anthropic"
    default_base_url = "https://api.anthropic.com"
    secret_headers = ("x-api-key", "authorization", "anthropic-organization-id", "cookie")
    supported_config = frozenset({"max_output_tokens", "temperature", "top_p", "top_k", "stop_sequences"})
    required_config = frozenset({"max_output_tokens"})
    null_is_unset = False  # not nullable: `stop_sequences: SequenceNotStr[str]` in the SDK's params (nullable
    # fields are Optional there), and "#/temperature: expected type: Number, found: Null" (x3n0cr4735/celi#91)
    round_trips_thinking = ("content", "signature", "redacted")
    wire = WireRules("anthropic-messages", tail="/messages", servers=("vertex-anthropic",))
    """The Messages endpoint, or Claude on Vertex AI's ``…/publishers/anthropic/models/{m}:streamRawPredict``
    (the same body and stream: profiles/servers.py)."""

    def endpoint_url(self, model: str) -> str:
        return f"{self.default_base_url}/v1/messages"

    def expected_history(self, messages: Sequence[Message]) -> list[Message]:
        """Anthropic rejects empty text and empty turns: a conforming adapter leaves them out. Thinking without
        its signature cannot go back as a ``thinking`` block (400 ``thinking.signature: Field required``), so
        its text is left out too; redacted blocks beside it still go back."""
        kept: list[Message] = []
        for message in messages:
            m = _without_unsigned_thinking(message)
            empty = m.content == "" and not (isinstance(m, AssistantMessage) and (m.tool_calls or m.thinking))
            if not empty or isinstance(m, ToolMessage):
                kept.append(m)
        return kept

    def response_tool_call_id(self, neutral_id: str) -> str:
        return "toolu_01" + neutral_id.split("_", 1)[-1][:22]

    def request_header_problems(self, headers: Mapping[str, str], url: str = "") -> list[str]:
        """The API overview's required headers: x-api-key, anthropic-version, content-type (on Vertex AI the
        version is the body's ``anthropic_version`` and the key an OAuth bearer token)."""
        problems = json_content_type_problems(headers)
        if self.server_of(url) == "vertex-anthropic":
            if not headers.get("authorization"):
                problems.append("no Authorization bearer token (Vertex AI authenticates with OAuth)")
            return problems
        if not headers.get("anthropic-version"):
            problems.append("anthropic-version is missing (the API requires it, e.g. 2023-06-01)")
        if not headers.get("x-api-key") and not headers.get("authorization"):
            problems.append("no x-api-key header (nor an Authorization bearer token)")
        return problems

    # --- request side -------------------------------------------------------------------------------

    def decode_request(self, body: bytes, url: str = "") -> DecodedRequest:
        try:
            data = json.loads(body)
        except ValueError as exc:
            return DecodedRequest(None, [], None, False, {}, False, {}, {}, [f"body is not JSON: {exc}"])
        if not isinstance(data, dict):
            return DecodedRequest(None, [], None, False, {}, False, {}, {}, ["body is not a JSON object"])
        d = _Decoding()
        addressed = servers.addressed_by(self.name, urlsplit(url).path)
        on_vertex = addressed is not None and addressed[0] == "vertex-anthropic"
        if on_vertex and not isinstance(data.get("anthropic_version"), str):
            d.problems.append("anthropic_version is missing (Claude on Vertex AI takes it in the body)")
        if not isinstance(data.get("model"), str) and not on_vertex:
            d.problems.append("model is missing or not a string")
        if not isinstance(data.get("max_tokens"), int):
            d.problems.append("max_tokens is missing or not an integer (the Messages API requires it)")
        raw_messages = data.get("messages")
        if not isinstance(raw_messages, list) or not raw_messages:
            d.problems.append("messages must be a non-empty list")
            raw_messages = []
        messages = _decode_system(data.get("system"), d) + _decode_messages(raw_messages, d)
        if data.get("cache_control") is not None:
            d.breakpoints.append(AUTOMATIC_BREAKPOINT)
        tools = None
        if "tools" in data:
            tools = [self._decode_tool(raw, i, d) for i, raw in enumerate(data["tools"] or [])]
        # An explicit null is kept: the API takes none (CFG-01; AnthropicMessagesProfile.null_is_unset).
        config = {canonical: data[wire] for wire, canonical in _CONFIG_FIELDS.items() if wire in data}
        d.problems.extend(
            f"{name} is not a Messages API field (the API rejects unknown fields)"
            for name in sorted(_FOREIGN_FIELDS & data.keys())
        )
        cache = (
            {"breakpoints": d.breakpoints, "unmarked": _unmarked(data, d.breakpoints)}
            if d.breakpoints
            else {}
        )
        extra = {
            k: v
            for k, v in data.items()
            if k not in _INTERPRETED and k not in _CONFIG_FIELDS and k not in _FOREIGN_FIELDS
        }
        return DecodedRequest(
            model=addressed[1] if on_vertex and addressed else data.get("model"),
            messages=messages,
            tools=tools,
            tool_choice_present="tool_choice" in data,
            config=config,
            streaming=data.get("stream") is True,
            cache=cache,
            extra=extra,
            problems=d.problems,
            empty_text=d.empty_text,
            violations=d.violations,
            options=_options(data),
        )

    @staticmethod
    def _decode_tool(raw: Any, index: int, d: _Decoding) -> DecodedTool:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            d.problems.append(f"tools[{index}] is not {{name, description, input_schema}}")
            return DecodedTool(name="", description=None, parameters=None)
        if "cache_control" in raw:
            d.breakpoints.append(f"tools[{index}]")
        if "function" in raw or raw.get("type") == "function":
            d.problems.append(f"tools[{index}] uses the OpenAI function shape; the API wants input_schema")
        return DecodedTool(
            name=raw["name"],
            description=raw.get("description"),
            parameters=raw.get("input_schema"),
            strict=raw.get("strict"),
        )

    def all_required(self, tool: DecodedTool) -> bool:
        return False  # a strict tool keeps its `required` list (anthropic_strict.py)

    def inexpressible(self, tool: DecodedTool) -> Callable[[Any], Any] | None:
        return anthropic_strict.relaxed_for(tool.parameters) if tool.strict else None

    def tool_problems(self, tool: DecodedTool) -> list[str]:
        problems = []
        if not _TOOL_NAME.match(tool.name):
            problems.append(f"tool name {tool.name!r} does not match ^[a-zA-Z0-9_-]{{1,128}}$")
        schema = tool.parameters
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append(f"{tool.name}: input_schema must be an object schema ({{'type': 'object', ...}})")
        return problems

    # --- response side (authoring) ------------------------------------------------------------------

    def render_stream(self, response: Stream | StreamError, *, seed: str, model: str) -> bytes:
        return anthropic_stream.EventWriter(seed, model, self.response_tool_call_id).render(response)

    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        return anthropic_stream.error_response(error, seed=f"{error.status}:{error.kind}")

    def summarise_response(self, status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
        return anthropic_summary.summarise(status, headers, body)

    def carries_finish(self, event: bytes) -> bool:
        data = sse_event_json(event)
        return isinstance(data, dict) and data.get("type") == "message_delta"

    def is_terminator(self, event: bytes) -> bool:
        data = sse_event_json(event)
        return isinstance(data, dict) and data.get("type") == "message_stop"

    def validate_event(self, event: bytes) -> None:
        anthropic_stream.validate_event(event)


PROFILE = AnthropicMessagesProfile()


def _options(data: dict[str, Any]) -> frozenset[str]:
    """The request options that change what Anthropic sends (``scenarios/preconditions.OPTIONS``)."""
    options = set()
    thinking = data.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        options.add("thinking")  # thinking blocks come back only then
    tools = data["tools"] if isinstance(data.get("tools"), list) else []
    if data.get("mcp_servers") or any(
        isinstance(t, dict) and t.get("type") not in (None, "custom") for t in tools
    ):
        options.add("server_tools")  # server tool blocks: web search, web fetch, code execution, MCP
    choice = data.get("tool_choice")
    if isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True:
        options.add("parallel_tool_calls_off")
    return frozenset(options)
