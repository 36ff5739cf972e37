"""The ``openai-responses`` wire profile: OpenAI's Responses API (``POST /v1/responses``, streamed).

The request decoder reads a Responses request back as canonical messages: ``instructions`` and
``system``/``developer`` messages are the system slot (MSG-01); ``message`` items carry text as a string or as
``input_text``/``output_text`` parts; a run of assistant-side items (``reasoning``, an assistant ``message``,
``function_call``) is one assistant turn; ``function_call_output`` answers a ``function_call`` by ``call_id``
(MSG-04 reports an output that answers no earlier call, and a call left without its output); a ``reasoning``
item's ``encrypted_content`` is the thinking's signature (MSG-08). Tools are flat function tools
(``{"type": "function", "name", "parameters", "strict"}``); the Chat Completions shape nested under
``function`` is an MSG-09 problem. The response side is in ``openai_responses_stream``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
from . import openai_responses_stream, openai_responses_summary
from .base import DecodedRequest, DecodedTool, WireProfile, sse_event_json
from .openai_chat import _strict_schema_problems, without_strict_inexpressible
from .summary import ResponseSummary
from .wire import WireRules

_CONFIG_FIELDS = {"max_output_tokens": "max_output_tokens", "temperature": "temperature", "top_p": "top_p"}
_INTERPRETED = {"model", "input", "instructions", "tools", "tool_choice", "stream", "prompt_cache_key"}
_FOREIGN_FIELDS = {
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "stream_options",
    "response_format",
    "n",
    "top_k",
    "system",
}
"""Other APIs' fields (Chat Completions, Anthropic): the Responses API has no such parameter."""
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TEXT_PARTS = frozenset({"input_text", "output_text"})
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


@dataclass
class _Decoding:
    """State of one decode: problems, violations, and the assistant turn being gathered."""

    problems: list[str] = field(default_factory=list)
    violations: list[tuple[str, str]] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    texts: list[str] | None = None
    calls: list[ToolCallInfo] = field(default_factory=list)
    thinking: ThinkingContent | None = None
    called: dict[str, str] = field(default_factory=dict)
    """call_id -> where the function_call is, for calls not yet answered."""
    answered: set[str] = field(default_factory=set)

    def open_turn(self) -> bool:
        return self.texts is not None or bool(self.calls) or self.thinking is not None

    def close_turn(self) -> None:
        if self.open_turn():
            self.messages.append(
                AssistantMessage(
                    content="".join(self.texts or []), tool_calls=self.calls or None, thinking=self.thinking
                )
            )
        self.texts, self.calls, self.thinking = None, [], None

    def text_of(self, content: Any, where: str) -> str:
        """Message content as text: a string, or a list of ``input_text``/``output_text`` parts."""
        if isinstance(content, str):
            return content
        if isinstance(content, list) and all(
            isinstance(p, dict) and p.get("type") in _TEXT_PARTS and isinstance(p.get("text"), str)
            for p in content
        ):
            return "".join(p["text"] for p in content)
        self.problems.append(
            f"{where}.content is neither a string nor a list of input_text/output_text parts: {content!r:.80}"
        )
        return ""


def _arguments(raw: Any, where: str, d: _Decoding) -> dict[str, Any]:
    if isinstance(
        raw, dict
    ):  # MSG-03: `arguments` is "A JSON string of the arguments" (FunctionToolCallParam)
        d.violations.append(
            ("MSG-03", f"{where}.arguments is sent as a JSON object, not as the JSON string the API takes")
        )
        return raw
    if not isinstance(raw, str):
        d.problems.append(f"{where}.arguments must be a JSON string")
        return {"<not an object>": raw}
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError:
        d.problems.append(f"{where}.arguments is not valid JSON")
        return {}
    return parsed if isinstance(parsed, dict) else {"<not an object>": parsed}


def _message(item: dict[str, Any], where: str, d: _Decoding) -> None:
    role = item.get("role")
    if role == "assistant":
        if d.calls:  # text after this turn's calls starts a new assistant turn
            d.close_turn()
        d.texts = [*(d.texts or []), d.text_of(item.get("content"), where)]
        return
    d.close_turn()
    if role in ("system", "developer"):
        d.messages.append(SystemMessage(content=d.text_of(item.get("content"), where)))
    elif role == "user":
        _unanswered(d, where)
        d.messages.append(UserMessage(content=d.text_of(item.get("content"), where)))
    else:
        d.problems.append(f"{where}: unknown role {role!r} (user, assistant, system or developer)")


def _unanswered(d: _Decoding, where: str) -> None:
    """A turn that moves on while calls are unanswered: the API wants each call's output first (MSG-04)."""
    for call_id, at in d.called.items():
        d.violations.append(
            ("MSG-04", f"{at}: function_call {call_id!r} has no function_call_output before {where}")
        )
    d.called.clear()


def _function_call(item: dict[str, Any], where: str, d: _Decoding) -> None:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        d.problems.append(f"{where}: function_call without call_id")
        call_id = ""
    if not isinstance(item.get("name"), str):
        d.problems.append(f"{where}: function_call without a name")
    d.calls.append(
        ToolCallInfo(
            id=call_id, name=str(item.get("name", "")), arguments=_arguments(item.get("arguments"), where, d)
        )
    )
    d.called[call_id] = where


def _function_call_output(item: dict[str, Any], where: str, d: _Decoding) -> None:
    d.close_turn()
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        d.problems.append(f"{where}: function_call_output without call_id")
        call_id = ""
    if call_id not in d.called:
        d.violations.append(
            ("MSG-04", f"{where}: function_call_output {call_id!r} answers no function_call before it")
        )
    d.called.pop(call_id, None)
    output = item.get("output")
    content = output if isinstance(output, str) else d.text_of(output, where)
    d.messages.append(ToolMessage(tool_call_id=call_id, tool_name="", content=content))


def _reasoning(item: dict[str, Any], where: str, d: _Decoding) -> None:
    if d.texts is not None or d.calls or d.thinking is not None:
        d.close_turn()  # reasoning opens an assistant turn
    if not isinstance(item.get("id"), str) or not item.get("id"):
        d.problems.append(f"{where}: reasoning item without its id (the API requires it)")
    summary = item.get("summary")
    if not isinstance(summary, list):
        d.problems.append(f"{where}: reasoning item without a summary list (the API requires it, [] is fine)")
        summary = []
    texts = [
        str(s.get("text", "")) for s in summary if isinstance(s, dict) and s.get("type") == "summary_text"
    ]
    encrypted = item.get("encrypted_content")
    d.thinking = ThinkingContent(
        content="\n\n".join(texts), signature=encrypted if isinstance(encrypted, str) else None
    )


def _decode_input(raw: Any, d: _Decoding) -> None:
    if isinstance(raw, str):
        d.messages.append(UserMessage(content=raw))
        return
    if not isinstance(raw, list) or not raw:
        d.problems.append("input must be a string or a non-empty list of items")
        return
    for i, item in enumerate(raw):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            d.problems.append(f"{where} is not an object")
            continue
        kind = item.get("type", "message")
        if kind == "message":
            _message(item, where, d)
        elif kind == "function_call":
            _function_call(item, where, d)
        elif kind == "function_call_output":
            _function_call_output(item, where, d)
        elif kind == "reasoning":
            _reasoning(item, where, d)
        elif kind == "item_reference":
            d.problems.append(f"{where}: item_reference needs stored items; history must be sent whole")
        else:
            d.problems.append(f"{where}: unexpected item type {kind!r}")
    d.close_turn()
    _unanswered(d, "the end of input")


class OpenAIResponsesProfile(WireProfile):
    name = "openai-responses"
    provider_key = "openai"
    default_base_url = "https://api.openai.com/v1"
    secret_headers = ("authorization", "api-key", "openai-organization", "openai-project", "cookie")
    supported_config = frozenset({"max_output_tokens", "temperature", "top_p"})
    round_trips_thinking = ("signature",)
    wire = WireRules("openai-responses", tail="/responses")

    def endpoint_url(self, model: str) -> str:
        return f"{self.default_base_url}/responses"

    # --- request side -------------------------------------------------------------------------------

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
        instructions = data.get("instructions")
        if isinstance(instructions, str):
            d.messages.append(SystemMessage(content=instructions))
        elif instructions is not None:
            d.problems.append("instructions must be a string")
        _decode_input(data.get("input"), d)
        tools = None
        if "tools" in data:
            tools = [self._decode_tool(raw, i, d) for i, raw in enumerate(data["tools"] or [])]
        config = {
            canonical: data[wire] for wire, canonical in _CONFIG_FIELDS.items() if data.get(wire) is not None
        }
        d.problems.extend(
            f"{name} is not a Responses API parameter" for name in sorted(_FOREIGN_FIELDS & data.keys())
        )
        include = data.get("include")
        if include is not None and not (
            isinstance(include, list) and all(isinstance(x, str) for x in include)
        ):
            d.problems.append("include must be a list of strings, e.g. ['reasoning.encrypted_content']")
        cache = {"prompt_cache_key": data["prompt_cache_key"]} if "prompt_cache_key" in data else {}
        extra = {
            k: v
            for k, v in data.items()
            if k not in _INTERPRETED and k not in _CONFIG_FIELDS and k not in _FOREIGN_FIELDS
        }
        return DecodedRequest(
            model=data.get("model"),
            messages=d.messages,
            tools=tools,
            tool_choice_present="tool_choice" in data,
            config=config,
            streaming=data.get("stream") is True,
            cache=cache,
            extra=extra,
            problems=d.problems,
            violations=d.violations,
            options=_options(data),
        )

    @staticmethod
    def _decode_tool(raw: Any, index: int, d: _Decoding) -> DecodedTool:
        if isinstance(raw, dict) and isinstance(raw.get("function"), dict):
            d.problems.append(
                f"tools[{index}] nests the function under 'function' (Chat Completions); the Responses API "
                "wants {type: 'function', name, description, parameters, strict} flat"
            )
            return DecodedTool(name="", description=None, parameters=None)
        if not isinstance(raw, dict) or raw.get("type") != "function" or not isinstance(raw.get("name"), str):
            d.problems.append(f"tools[{index}] is not {{type: 'function', name, parameters, ...}}")
            return DecodedTool(name="", description=None, parameters=None)
        return DecodedTool(
            name=raw["name"],
            description=raw.get("description"),
            parameters=raw.get("parameters"),
            strict=raw.get("strict"),
        )

    def inexpressible(self, tool: DecodedTool) -> Callable[[Any], Any] | None:
        return without_strict_inexpressible if tool.strict else None

    def tool_problems(self, tool: DecodedTool) -> list[str]:
        problems = []
        if not _TOOL_NAME.match(tool.name):
            problems.append(f"tool name {tool.name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")
        if tool.strict and tool.parameters is not None:
            problems.extend(_strict_schema_problems(tool.parameters, "parameters"))
        return problems

    # --- response side (authoring) ------------------------------------------------------------------

    def render_stream(self, response: Stream | StreamError, *, seed: str, model: str) -> bytes:
        return openai_responses_stream.EventWriter(seed, model).render(response)

    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        return openai_responses_stream.error_response(error)

    def summarise_response(self, status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
        return openai_responses_summary.summarise(status, headers, body)

    def carries_finish(self, event: bytes) -> bool:
        data = sse_event_json(event)
        return isinstance(data, dict) and data.get("type") in TERMINAL_EVENTS

    def is_terminator(self, event: bytes) -> bool:
        return self.carries_finish(event)

    def validate_event(self, event: bytes) -> None:
        openai_responses_stream.validate_event(event)


PROFILE = OpenAIResponsesProfile()


def _options(data: dict[str, Any]) -> frozenset[str]:
    """The request options that change what the Responses API sends (``scenarios/preconditions.OPTIONS``)."""
    options = set()
    reasoning = data.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("summary") not in (None, "none"):
        options.add("thinking")  # reasoning summary parts and their text deltas come back only then
    include = data.get("include")
    if isinstance(include, list) and "reasoning.encrypted_content" in include:
        options.add("reasoning_encrypted")
    if data.get("parallel_tool_calls") is False:
        options.add("parallel_tool_calls_off")
    return frozenset(options)
