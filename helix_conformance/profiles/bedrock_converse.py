"""The ``bedrock-converse`` wire profile: Amazon Bedrock's ``ConverseStream`` (``POST /model/{modelId}/converse-stream``).

The model is in the path (URL-encoded: ``anthropic.claude-3-5-sonnet-20240620-v1%3A0``), the body is the
Converse request (``messages`` of content blocks, ``system``, ``inferenceConfig``, ``toolConfig``,
``additionalModelRequestFields``) and the answer is an AWS event stream, not SSE (``eventstream``,
``bedrock_stream``). Requests are SigV4-signed or carry a Bedrock API key as a bearer token; the replay
accepts any signature.

The decoder reports what the canonical form cannot show, each with the service's own 400 as evidence:
roles that do not alternate or a first turn that is not the user's ("A conversation must alternate between
user and assistant roles", https://github.com/langchain-ai/langchain-aws/issues/130; MSG-05), toolUse ids left
without their toolResult in the next user turn ("Expected toolResult blocks at messages.2.content for the
following Ids", https://github.com/agno-agi/agno/issues/6698; MSG-04), blank text blocks ("The text field in
the ContentBlock object at messages.11.content.0 is blank", https://github.com/continuedev/continue/issues/9767;
MSG-06), ``cachePoint`` blocks (CACHE-01) and members ConverseStream does not have (MSG-09).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

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
from . import bedrock_stream, bedrock_summary, eventstream
from .base import DecodedRequest, DecodedTool, WireProfile, json_content_type_problems
from .gemini import tool_result_text
from .summary import ResponseSummary
from .wire import WireRules

_CONFIG_FIELDS = {
    "maxTokens": "max_output_tokens",
    "temperature": "temperature",
    "topP": "top_p",
    "stopSequences": "stop_sequences",
}
_MEMBERS = frozenset(
    {
        "modelId",
        "messages",
        "system",
        "inferenceConfig",
        "toolConfig",
        "guardrailConfig",
        "additionalModelRequestFields",
        "promptVariables",
        "additionalModelResponseFieldPaths",
        "requestMetadata",
        "performanceConfig",
        "serviceTier",
        "outputConfig",
        "projectIdentifier",
    }
)
"""The members of the ConverseStream request (botocore's bedrock-runtime service model, ConverseStreamRequest)."""
_INTERPRETED = frozenset({"modelId", "messages", "system", "inferenceConfig", "toolConfig"})
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""ToolName in the service model: 1 to 64 characters of ``[a-zA-Z0-9_-]+``."""
_PATH = re.compile(r"/model/(.+)/converse-stream$")
"""The model id may hold ``/`` (an inference-profile ARN) once the path is percent-decoded."""


@dataclass
class _Decoding:
    problems: list[str] = field(default_factory=list)
    empty_text: list[str] = field(default_factory=list)
    violations: list[tuple[str, str]] = field(default_factory=list)
    cache_points: list[str] = field(default_factory=list)
    system_tools: list[str] = field(default_factory=list)

    def blocks(self, content: Any, where: str) -> list[dict[str, Any]]:
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            self.problems.append(f"{where}: content must be a list of content blocks")
            return []
        kept = []
        for j, block in enumerate(content):
            if "cachePoint" in block:
                self.cache_points.append(f"{where}[{j}]")
            elif len(block) != 1:
                self.problems.append(
                    f"{where}[{j}]: a content block sets exactly one member, not {sorted(block)}"
                )
            else:
                kept.append(block)
        return kept

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            self.problems.append(f"{where}: text is not a string")
            return ""
        if not value.strip():
            self.empty_text.append(f"{where}: blank text block (the service rejects it)")
        return value


def _tool_result(block: dict[str, Any], where: str, d: _Decoding) -> ToolMessage:
    if not block.get("toolUseId"):
        d.problems.append(f"{where}: toolResult without toolUseId")
    pieces = []
    content = block.get("content")
    for k, item in enumerate(content if isinstance(content, list) else []):
        if isinstance(item, dict) and "text" in item:
            pieces.append(d.text(item["text"], f"{where}.content[{k}].text"))
        elif isinstance(item, dict) and "json" in item:  # a JSON result, compared by its value
            pieces.append(json.dumps(item["json"], ensure_ascii=False, sort_keys=True))
        else:
            d.problems.append(f"{where}.content[{k}]: neither text nor json")
    if not isinstance(content, list):
        d.problems.append(f"{where}.content must be a list of blocks")
    return ToolMessage(tool_call_id=str(block.get("toolUseId", "")), tool_name="", content="".join(pieces))


def _decode_user(blocks: list[dict[str, Any]], where: str, d: _Decoding) -> list[Message]:
    messages: list[Message] = []
    for j, block in enumerate(blocks):
        at = f"{where}.content[{j}]"
        if "text" in block:
            messages.append(UserMessage(content=d.text(block["text"], at)))
        elif "toolResult" in block and isinstance(block["toolResult"], dict):
            messages.append(_tool_result(block["toolResult"], at + ".toolResult", d))
        else:
            d.problems.append(f"{at}: unexpected block {next(iter(block))!r} in a user turn")
    return messages


def _decode_assistant(blocks: list[dict[str, Any]], where: str, d: _Decoding) -> AssistantMessage:
    texts: list[str] = []
    calls: list[ToolCallInfo] = []
    thinking: list[str] = []
    signature: str | None = None
    redacted: list[str] = []
    for j, block in enumerate(blocks):
        at = f"{where}.content[{j}]"
        if "text" in block:
            texts.append(d.text(block["text"], at))
        elif "toolUse" in block and isinstance(block["toolUse"], dict):
            use = block["toolUse"]
            arguments = use.get("input")
            if not isinstance(arguments, dict):
                d.problems.append(f"{at}.toolUse.input must be a JSON object, not {type(arguments).__name__}")
                arguments = {"<not an object>": arguments}
            call_id, name = str(use.get("toolUseId", "")), str(use.get("name", ""))
            calls.append(ToolCallInfo(id=call_id, name=name, arguments=arguments))
        elif "reasoningContent" in block and isinstance(block["reasoningContent"], dict):
            reasoning = block["reasoningContent"]
            text_block = reasoning.get("reasoningText")
            if isinstance(text_block, dict):
                thinking.append(str(text_block.get("text", "")))
                signature = text_block.get("signature") or signature
                if not text_block.get("signature"):
                    d.problems.append(f"{at}: reasoningText without its signature (the model rejects it)")
            elif isinstance(reasoning.get("redactedContent"), str):
                redacted.append(reasoning["redactedContent"])
            else:
                d.problems.append(f"{at}: reasoningContent is neither reasoningText nor redactedContent")
        else:
            d.problems.append(f"{at}: unexpected block {next(iter(block))!r} in an assistant turn")
    proof = ThinkingContent(content="".join(thinking), signature=signature, redacted=redacted)
    return AssistantMessage(
        content="".join(texts), tool_calls=calls or None, thinking=proof if thinking or redacted else None
    )


def _decode_messages(raw_messages: list[Any], d: _Decoding) -> list[Message]:
    messages: list[Message] = []
    previous: str | None = None
    pending: list[str] = []
    for i, raw in enumerate(raw_messages):
        where = f"messages[{i}]"
        if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
            d.problems.append(f"{where}: not a message with role user or assistant")
            continue
        role = raw["role"]
        if previous is None and role != "user":
            d.violations.append(("MSG-05", f"{where}: a conversation must start with a user message"))
        elif role == previous:
            d.violations.append(("MSG-05", f"{where}: two {role} turns in a row (roles must alternate)"))
        blocks = d.blocks(raw.get("content"), f"{where}.content")
        if not blocks:
            d.empty_text.append(f"{where}: a turn with no content")
        if role == "user":
            decoded = _decode_user(blocks, where, d)
            answered = [m.tool_call_id for m in decoded if isinstance(m, ToolMessage)]
            if missing := [t for t in pending if t not in answered]:
                d.violations.append(("MSG-04", f"{where}: expected toolResult blocks for the ids {missing}"))
            if stray := [t for t in answered if t not in pending]:
                d.violations.append(
                    ("MSG-04", f"{where}: toolResult for {stray} answers no toolUse just before")
                )
            messages.extend(decoded)
            pending = []
        else:
            message = _decode_assistant(blocks, where, d)
            pending = [c.id for c in message.tool_calls or []]
            messages.append(message)
        previous = role
    return messages


def _decode_system(system: Any, d: _Decoding) -> list[Message]:
    if system is None:
        return []
    return [
        SystemMessage(content=d.text(block["text"], f"system[{j}].text"))
        for j, block in enumerate(d.blocks(system, "system"))
        if "text" in block
    ]


def _decode_tool(raw: Any, index: int, d: _Decoding) -> DecodedTool | None:
    if isinstance(raw, dict) and "cachePoint" in raw:
        d.cache_points.append(f"toolConfig.tools[{index}]")
        return None
    if isinstance(raw, dict) and isinstance(raw.get("systemTool"), dict):
        d.system_tools.append(str(raw["systemTool"].get("name", "")))
        return (
            None  # a tool the service runs (Nova's nova_code_interpreter, nova_grounding), not the client's
        )
    spec = raw.get("toolSpec") if isinstance(raw, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        d.problems.append(
            f"toolConfig.tools[{index}] is not {{toolSpec: {{name, description, inputSchema}}}}"
        )
        return DecodedTool(name="", description=None, parameters=None)
    schema = spec.get("inputSchema")
    if not isinstance(schema, dict) or "json" not in schema:
        d.problems.append(f"toolConfig.tools[{index}].toolSpec.inputSchema must be {{json: <JSON Schema>}}")
    parameters = schema.get("json") if isinstance(schema, dict) else None
    strict = spec.get("strict") if isinstance(spec.get("strict"), bool) else None
    return DecodedTool(spec["name"], spec.get("description"), parameters, strict=strict)


_ALWAYS_REASONING = re.compile(r"(^|[.:/])openai\.gpt-oss-")
"""Models that stream ``reasoningContent`` whatever the request sets: gpt-oss on Bedrock
(cassettes/recorded/bedrock/test_bedrock_model_stream_empty_text_delta.yaml, a request with no reasoning field)."""


def _options(data: dict[str, Any], model: str | None, d: _Decoding) -> frozenset[str]:
    """The request options that change what Bedrock sends (``scenarios/preconditions.OPTIONS``)."""
    options = set()
    extra = data.get("additionalModelRequestFields")
    thinking = extra.get("thinking") if isinstance(extra, dict) else None
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        options.add("thinking")  # Claude on Bedrock: reasoningContent only then
    elif model is not None and _ALWAYS_REASONING.search(model):
        options.add("thinking")
    if d.system_tools:
        options.add("server_tools")  # toolUse of type server_tool_use and its toolResult come only then
    if isinstance(data.get("guardrailConfig"), dict):
        options.add("guardrail")  # stopReason guardrail_intervened comes only then
    return frozenset(options)


def model_of(url: str) -> str | None:
    """The model id a ConverseStream URL names, percent-decoded (``…v1%3A0`` is ``…v1:0``)."""
    match = _PATH.search(urlsplit(url).path)
    return unquote(match.group(1)) if match else None


class BedrockConverseProfile(WireProfile):
    name = "bedrock-converse"
    provider_key = "bedrock"
    default_base_url = "https://bedrock-runtime.us-east-1.amazonaws.com"
    secret_headers = ("authorization", "x-amz-security-token", "cookie")
    supported_config = frozenset(_CONFIG_FIELDS.values())
    null_is_unset = False
    round_trips_thinking = ("content", "signature", "redacted")
    stream_content_type = bedrock_stream.CONTENT_TYPE
    binary_stream = True
    checksummed = True
    wire = WireRules(
        "bedrock-converse", tail="/converse-stream", pattern=_PATH.pattern, framing="aws-eventstream"
    )
    """Any model id in the path, encoded or not: the model is the adapter's to choose (``spec.model``); the
    events are the stream's event-stream messages."""

    def endpoint_url(self, model: str) -> str:
        return f"{self.default_base_url}/model/{quote(model, safe='')}/converse-stream"

    def expected_history(self, messages: Sequence[Message]) -> list[Message]:
        """Blank text is rejected and a JSON tool result may go as a ``json`` block: empty messages are left
        out and tool results compare by their JSON value."""
        kept: list[Message] = []
        for m in messages:
            if isinstance(m, ToolMessage):
                kept.append(m.model_copy(update={"content": tool_result_text(m.content)}))
            elif m.content.strip() or (isinstance(m, AssistantMessage) and (m.tool_calls or m.thinking)):
                kept.append(m)
        return kept

    def response_tool_call_id(self, neutral_id: str) -> str:
        return bedrock_stream.tool_use_id(neutral_id)

    def request_header_problems(self, headers: Mapping[str, str], url: str = "") -> list[str]:
        """A JSON body, and credentials: a SigV4 ``Authorization`` (with its ``X-Amz-Date``) or a Bedrock API
        key as a bearer token. The replay checks no signature."""
        problems = json_content_type_problems(headers)
        authorization = headers.get("authorization", "")
        if not authorization:
            problems.append(
                "no Authorization header (SigV4 AWS4-HMAC-SHA256, or a Bedrock API key bearer token)"
            )
        elif authorization.startswith("AWS4-HMAC-SHA256") and not headers.get("x-amz-date"):
            problems.append("a SigV4 Authorization without the X-Amz-Date it signs")
        return problems

    # --- request side ---------------------------------------------------------------------------------

    def decode_request(self, body: bytes, url: str = "") -> DecodedRequest:
        model = model_of(url)
        streaming = model is not None
        try:
            data = json.loads(body)
        except ValueError as exc:
            return DecodedRequest(model, [], None, False, {}, streaming, {}, {}, [f"body is not JSON: {exc}"])
        if not isinstance(data, dict):
            return DecodedRequest(
                model, [], None, False, {}, streaming, {}, {}, ["body is not a JSON object"]
            )
        d = _Decoding()
        raw_messages = data.get("messages")
        if not isinstance(raw_messages, list) or not raw_messages:
            d.problems.append("messages must be a non-empty list")
            raw_messages = []
        messages = _decode_system(data.get("system"), d) + _decode_messages(raw_messages, d)
        tools, tool_choice = None, False
        tool_config = data.get("toolConfig")
        if isinstance(tool_config, dict):
            raw_tools = tool_config.get("tools")
            decoded = [
                _decode_tool(t, i, d) for i, t in enumerate(raw_tools if isinstance(raw_tools, list) else [])
            ]
            tools = [t for t in decoded if t is not None]
            tool_choice = "toolChoice" in tool_config
        elif tool_config is not None:
            d.problems.append("toolConfig is not an object")
        inference = data.get("inferenceConfig")
        config = (
            {canonical: inference[wire] for wire, canonical in _CONFIG_FIELDS.items() if wire in inference}
            if isinstance(inference, dict)
            else {}
        )
        d.problems.extend(
            f"{name} is not a ConverseStream request member" for name in sorted(data.keys() - _MEMBERS)
        )
        return DecodedRequest(
            model=model,
            messages=messages,
            tools=tools,
            tool_choice_present=tool_choice,
            config=config,
            streaming=streaming,
            cache={"cache_points": d.cache_points} if d.cache_points else {},
            extra={k: v for k, v in data.items() if k not in _INTERPRETED},
            problems=d.problems,
            empty_text=d.empty_text,
            violations=d.violations,
            options=_options(data, model, d),
        )

    def tool_problems(self, tool: DecodedTool) -> list[str]:
        problems = []
        if not _TOOL_NAME.match(tool.name):
            problems.append(f"tool name {tool.name!r} does not match [a-zA-Z0-9_-]{{1,64}}")
        schema = tool.parameters
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append(
                f"{tool.name}: inputSchema.json must be an object schema ({{'type': 'object', ...}})"
            )
        return problems

    # --- response side --------------------------------------------------------------------------------

    def render_stream(self, response: Stream | StreamError, *, seed: str, model: str) -> bytes:
        return bedrock_stream.MessageWriter(seed, self.response_tool_call_id).render(response)

    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        return bedrock_stream.error_response(error, seed=f"{error.status}:{error.kind}")

    def summarise_response(self, status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
        return bedrock_summary.summarise(status, headers, body)

    def validate_event(self, event: bytes) -> None:
        bedrock_stream.validate_event(event)

    # --- the fault corpus: event boundaries are message boundaries -------------------------------------

    def carries_finish(self, event: bytes) -> bool:
        message = eventstream.decode(event)
        return message is not None and message.event_type == "messageStop"

    def is_terminator(self, event: bytes) -> bool:
        """``metadata`` (usage, latency) comes after ``messageStop`` and ends every recorded stream."""
        message = eventstream.decode(event)
        return message is not None and message.event_type == "metadata"

    def unknown_event(self) -> bytes:
        return bedrock_stream.event_message(
            "x_helix_future_event", {"detail": {"nested": [1, 2]}, "p": "abc"}
        )

    def malformed_event(self, event: bytes) -> bytes:
        """The message with its JSON payload cut in half, framed again with right lengths and CRCs."""
        message = eventstream.decode(event)
        payload = message.payload if message is not None else b'{"x_helix": [1, 2]}'
        return eventstream.with_payload(event, payload[: max(1, len(payload) // 2)])

    def cut_points(self, event: bytes) -> list[tuple[str, int]]:
        return eventstream.cut_points(event)

    def corrupted_event(self, event: bytes) -> bytes | None:
        return eventstream.payload_flipped(event)

    def framing_cuts(self, body: bytes) -> list[tuple[str, tuple[int, ...]]]:
        """Inside every message's prelude (between its length fields and before its CRC) and inside every
        message CRC: a reader that expects whole messages per chunk breaks there."""
        starts, at = [], 0
        for message in eventstream.split_messages(body):
            starts.append(at)
            at += len(message)
        ends = [*starts[1:], len(body)]
        return [
            ("cut inside every message prelude", tuple(s + offset for s in starts for offset in (4, 10))),
            ("cut inside every message CRC", tuple(e - 2 for e in ends if e - 2 > 0)),
        ]


PROFILE = BedrockConverseProfile()
