"""The ``openai-chat`` wire profile: OpenAI Chat Completions (and the servers compatible with it)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..contract import AssistantMessage, Message, SystemMessage, ToolCallInfo, ToolMessage, UserMessage
from ..scenarios.model import HttpError, Stream, StreamError
from . import openai_chat_summary, servers
from .base import DecodedRequest, DecodedTool, WireProfile, json_content_type_problems, sse_event_json
from .openai_chat_stream import ChunkWriter, as_sdk_chunk, event_data
from .server_rejections import DEVELOPER_ROLE, EMPTY_CONTENT_BESIDE_TOOL_CALLS
from .summary import ResponseSummary
from .wire import WireRules

OFF_SPEC_FINISH_REASONS = frozenset({"eos_interrupted"})
"""Deliberately unknown finish reasons used by the ``stop_unknown`` scenario."""

_CONFIG_FIELDS = {
    "max_completion_tokens": "max_output_tokens",
    "max_tokens": "max_output_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "stop": "stop_sequences",
    "seed": "seed",
}
_INTERPRETED = {"model", "messages", "tools", "tool_choice", "stream", "stream_options", "prompt_cache_key"}
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_ERROR_BODIES: dict[int | str, tuple[str, str | None, str | None, str | None]] = {
    # status or kind: (message, type, param, code) — shapes as the live API sends them
    400: (
        "Invalid value for 'temperature': decimal above maximum value.",
        "invalid_request_error",
        "temperature",
        "decimal_above_max_value",
    ),
    401: (
        "Incorrect API key provided: sk-helix***0000. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        None,
        "invalid_api_key",
    ),
    403: (
        "Country, region, or territory not supported",
        "request_forbidden",
        None,
        "unsupported_country_region_territory",
    ),
    404: (
        "The model `gpt-4o-mini` does not exist or you do not have access to it.",
        "invalid_request_error",
        None,
        "model_not_found",
    ),
    408: ("Request timed out.", "timeout", None, None),
    413: (
        "Request too large for gpt-4o-mini. Please reduce your prompt.",
        "invalid_request_error",
        "messages",
        "request_too_large",
    ),
    422: ("Unprocessable Entity", "invalid_request_error", None, None),
    429: (
        "Rate limit reached for gpt-4o-mini in organization org-helix on requests per min (RPM): Limit 3, "
        "Used 3, Requested 1. Please try again in 20s.",
        "requests",
        "requests",
        "rate_limit_exceeded",
    ),
    500: (
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        None,
        None,
    ),
    502: ("Bad gateway.", "server_error", None, None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None, None),
    529: ("Overloaded", "overloaded_error", None, None),
    "insufficient_quota": (
        "You exceeded your current quota, please check your plan and billing details. For "
        "more information on this error, read the docs: https://platform.openai.com/docs/"
        "guides/error-codes/api-errors.",
        "insufficient_quota",
        None,
        "insufficient_quota",
    ),
    "invalid_tool_name": (
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string "
        "that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "invalid_request_error",
        "tools[0].function.name",
        "invalid_value",
    ),
}


def _text_of(content: Any, problems: list[str], where: str, *, assistant: bool = False) -> str:
    """Message content as text: a string, or a list of ``{"type":"text"}`` parts. An assistant's content may
    also be exactly one ``{"type":"refusal"}`` part (the ``openai`` SDK's ``ContentArrayOfContentPart``,
    generated from the API's OpenAPI spec): its refusal text is the turn's text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    if assistant and isinstance(content, list) and all(isinstance(p, dict) for p in content):
        refusals = [p for p in content if p.get("type") == "refusal"]
        if len(refusals) == 1 and len(content) == 1 and isinstance(refusals[0].get("refusal"), str):
            return str(refusals[0]["refusal"])
        problems.append(f"{where}: content parts must be text parts, or exactly one refusal part")
        return ""
    problems.append(f"{where}: content is neither a string nor a list of text parts: {content!r:.80}")
    return ""


ARGUMENTS_NOT_A_STRING = (
    "function.arguments is sent as a JSON object, not as the JSON string the API takes: OpenAI answers 400 "
    "\"Invalid type for 'messages[2].tool_calls[0].function.arguments': expected a string, but got an object "
    'instead" (https://github.com/aaif-goose/goose-mobile/pull/20)'
)


def _decode_message(
    raw: Any,
    index: int,
    problems: list[str],
    violations: list[tuple[str, str]],
    rejected: list[tuple[str, str]],
) -> Message | None:
    where = f"messages[{index}]"
    if not isinstance(raw, dict):
        problems.append(f"{where} is not an object")
        return None
    role = raw.get("role")
    if role == "developer":
        rejected.append((DEVELOPER_ROLE.id, where))
    if role in ("system", "developer"):
        return SystemMessage(content=_text_of(raw.get("content"), problems, where))
    if role == "user":
        return UserMessage(content=_text_of(raw.get("content"), problems, where))
    if role == "tool":
        if not raw.get("tool_call_id"):
            problems.append(f"{where}: tool message without tool_call_id")
        return ToolMessage(
            tool_call_id=str(raw.get("tool_call_id", "")),
            tool_name=str(raw.get("name", "")),
            content=_text_of(raw.get("content"), problems, where),
        )
    if role == "assistant":
        calls: list[ToolCallInfo] = []
        for j, tc in enumerate(raw.get("tool_calls") or []):
            fn = tc.get("function", {}) if isinstance(tc, dict) else {}
            arguments = fn.get("arguments")
            if isinstance(arguments, dict):  # MSG-03: the call's arguments do not reach the API as sent
                violations.append(("MSG-03", f"{where}.tool_calls[{j}].{ARGUMENTS_NOT_A_STRING}"))
                parsed: Any = arguments
            elif not isinstance(arguments, str):
                problems.append(f"{where}.tool_calls[{j}].function.arguments must be a JSON string")
                parsed = arguments
            else:
                try:
                    parsed = json.loads(arguments) if arguments.strip() else {}
                except ValueError:
                    problems.append(f"{where}.tool_calls[{j}].function.arguments is not valid JSON")
                    parsed = {}
            if isinstance(tc, dict) and tc.get("type") != "function":
                problems.append(f"{where}.tool_calls[{j}].type must be 'function'")
            calls.append(
                ToolCallInfo(
                    id=str(tc.get("id", "")) if isinstance(tc, dict) else "",
                    name=str(fn.get("name", "")),
                    arguments=parsed if isinstance(parsed, dict) else {"<not an object>": parsed},
                )
            )
        # content "" beside tool_calls is accepted ("Required unless tool_calls ... is specified"; the Vercel
        # AI SDK sends it): no MSG-06 breach of the profile; some servers refuse it (server_rejections.py).
        if calls and raw.get("content") == "":
            rejected.append((EMPTY_CONTENT_BESIDE_TOOL_CALLS.id, f"{where}.content"))
        return AssistantMessage(
            content=_text_of(raw.get("content"), problems, where, assistant=True), tool_calls=calls or None
        )
    if role == "function":
        # Deprecated but still in the API's schema (``ChatCompletionFunctionMessageParam``: content and name, no
        # tool_call_id): valid for MSG-09. Read as a tool result with no id, which MSG-04 then fails.
        if not isinstance(raw.get("name"), str):
            problems.append(f"{where}: function message without a name")
        return ToolMessage(
            tool_call_id="",
            tool_name=str(raw.get("name", "")),
            content=_text_of(raw.get("content"), problems, where),
        )
    problems.append(f"{where}: unknown role {role!r}")
    return None


class OpenAIChatProfile(WireProfile):
    name = "openai-chat"
    provider_key = "openai"
    default_base_url = "https://api.openai.com/v1"
    secret_headers = ("authorization", "api-key", "openai-organization", "openai-project", "cookie")
    supported_config = frozenset(
        {
            "max_output_tokens",
            "temperature",
            "top_p",
            "presence_penalty",
            "frequency_penalty",
            "stop_sequences",
            "seed",
        }
    )
    # API reference: temperature, top_p, seed, stop... are "number or null" with a default
    null_is_unset = True
    wire = WireRules("openai-chat", tail="/chat/completions")
    """Any base path (OpenRouter's, Azure's deployments): the path ends with the endpoint."""

    def endpoint_url(self, model: str) -> str:
        return f"{self.default_base_url}/chat/completions"

    def request_header_problems(self, headers: Mapping[str, str], url: str = "") -> list[str]:
        """API reference: ``Authorization: Bearer $OPENAI_API_KEY`` and ``Content-Type: application/json``;
        Azure OpenAI takes its key as ``api-key`` (REST reference, "Authentication")."""
        problems = []
        bearer = headers.get("authorization", "").lower().startswith("bearer ")
        if not bearer and not headers.get("api-key"):
            problems.append("no Authorization: Bearer <key> header (nor Azure's api-key)")
        return problems + json_content_type_problems(headers)

    # --- request side -------------------------------------------------------------------------------

    def decode_request(self, body: bytes, url: str = "") -> DecodedRequest:
        problems: list[str] = []
        try:
            data = json.loads(body)
        except ValueError as exc:
            return DecodedRequest(None, [], None, False, {}, False, {}, {}, [f"body is not JSON: {exc}"])
        if not isinstance(data, dict):
            return DecodedRequest(None, [], None, False, {}, False, {}, {}, ["body is not a JSON object"])
        deployment = _azure_deployment(url)
        if not isinstance(data.get("model"), str) and deployment is None:
            problems.append("model is missing or not a string")
        raw_messages = data.get("messages")
        if not isinstance(raw_messages, list) or not raw_messages:
            problems.append("messages must be a non-empty list")
            raw_messages = []
        violations: list[tuple[str, str]] = []
        rejected: list[tuple[str, str]] = []
        messages = [
            m
            for i, raw in enumerate(raw_messages)
            if (m := _decode_message(raw, i, problems, violations, rejected))
        ]
        tools = None
        if "tools" in data:
            tools = [self._decode_tool(raw, i, problems) for i, raw in enumerate(data["tools"] or [])]
        config: dict[str, Any] = {}
        for wire_name, canonical in _CONFIG_FIELDS.items():
            if wire_name in data:  # an explicit null is kept: CFG-01 decides what it means
                value = data[wire_name]
                config[canonical] = (
                    [value] if canonical == "stop_sequences" and isinstance(value, str) else value
                )
        cache = {"prompt_cache_key": data["prompt_cache_key"]} if "prompt_cache_key" in data else {}
        extra = {k: v for k, v in data.items() if k not in _INTERPRETED and k not in _CONFIG_FIELDS}
        return DecodedRequest(
            model=data.get("model") if isinstance(data.get("model"), str) else deployment,
            messages=messages,
            tools=tools,
            tool_choice_present="tool_choice" in data,
            config=config,
            streaming=data.get("stream") is True,
            cache=cache,
            extra=extra,
            problems=problems,
            options=_options(data),
            violations=violations,
            server_findings=rejected,
        )

    @staticmethod
    def _decode_tool(raw: Any, index: int, problems: list[str]) -> DecodedTool:
        if (
            not isinstance(raw, dict)
            or raw.get("type") != "function"
            or not isinstance(raw.get("function"), dict)
        ):
            problems.append(f"tools[{index}] is not {{type: 'function', function: {{...}}}}")
            return DecodedTool(name="", description=None, parameters=None)
        fn = raw["function"]
        return DecodedTool(
            name=str(fn.get("name", "")),
            description=fn.get("description"),
            parameters=fn.get("parameters"),
            strict=fn.get("strict"),
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
        return ChunkWriter(seed, model).render(response)

    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        message, type_, param, code = (
            _ERROR_BODIES.get(error.kind or error.status)
            or _ERROR_BODIES[500 if error.status >= 500 else 400]
        )
        headers = {"content-type": "application/json; charset=utf-8", "x-request-id": "req_helix_replay"}
        if error.retry_after_ms is not None:
            headers["retry-after-ms"] = str(error.retry_after_ms)
        if error.retry_after_s is not None:
            headers["retry-after"] = str(error.retry_after_s)
        body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
        return headers, (json.dumps(body, indent=2) + "\n").encode()

    def summarise_response(self, status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
        return openai_chat_summary.summarise(status, headers, body)

    def carries_finish(self, event: bytes) -> bool:
        """A chunk with a ``finish_reason``, or ``[DONE]``: it ends the stream complete even when no chunk
        carried a finish_reason (docs/contract.md STOP-01, ERR-04)."""
        if self.is_terminator(event):
            return True
        data = sse_event_json(event)
        choices = data.get("choices") if isinstance(data, dict) else None
        return any(isinstance(c, dict) and c.get("finish_reason") for c in choices or ())

    def is_terminator(self, event: bytes) -> bool:
        """``data: [DONE]`` in any SSE framing (CR line ends, ``id:``/``event:`` lines: ``compat_sse_framing``)."""
        try:
            return event_data(event) == "[DONE]"
        except ValueError:  # not SSE (UnicodeDecodeError included): no terminator
            return False

    def unknown_event(self) -> bytes:
        """A chunk of an object type Chat Completions does not send, with no choices (RES-12)."""
        return b'data: {"object":"x_helix.future_event","choices":[],"x_helix_future_field":{"nested":[1,2]}}\n\n'

    def validate_event(self, event: bytes) -> None:
        from openai.types.chat import ChatCompletionChunk

        payload = event_data(event)  # any SSE framing: lone CRs, a BOM, id:/event:/retry: lines, comments
        if payload is None or payload == "[DONE]":
            return
        data = json.loads(payload)
        if "error" in data and "choices" not in data:
            if set(data["error"]) != {"message", "type", "param", "code"}:
                raise ValueError(f"error event fields differ from the API's: {sorted(data['error'])}")
            return
        error = data.get("error")
        if error is not None and (not isinstance(error.get("code"), int) or "message" not in error):
            # OpenRouter sends `error` on a chunk (the SDK keeps it as an extra field), code numeric
            raise ValueError(f"OpenRouter error chunks carry a numeric code and a message: {error}")
        data = as_sdk_chunk(data)  # Azure's, Perplexity's, Mistral's and OpenRouter's shapes checked apart
        if data is None:
            return
        for choice in data.get("choices", []):
            # OpenAI-compatible servers send finish reasons the SDK's Literal does not list (STOP-01 "anything
            # else"); the rest of such a chunk must still be exact.
            if choice.get("finish_reason") in OFF_SPEC_FINISH_REASONS:
                choice["finish_reason"] = "stop"
            for position, call in enumerate((choice.get("delta") or {}).get("tool_calls") or []):
                call.setdefault("index", position)  # Mistral omits `index`, which the SDK requires
        ChatCompletionChunk.model_validate(data, strict=True)


_SUBSCHEMA = ("items", "additionalProperties", "not", "contains", "if", "then", "else")
STRICT_INEXPRESSIBLE = frozenset(
    {
        "minLength",
        "maxLength",
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
    }
)
"""Keywords OpenAI's strict mode does not support (structured outputs, "Supported schemas":
https://platform.openai.com/docs/guides/structured-outputs#supported-schemas; pydantic-ai's
``profiles/openai.py`` ``_STRICT_INCOMPATIBLE_KEYS`` moves the same ones into the description)."""
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""The string formats strict mode supports; another ``format`` cannot be expressed."""
_LOOKAROUNDS = ("(?=", "(?!", "(?<=", "(?<!")
_DATA_KEYS = frozenset({"const", "enum", "default", "examples"})


def without_strict_inexpressible(schema: Any) -> Any:
    """``schema`` less what OpenAI's strict mode cannot express: its unsupported keywords, a ``format`` it does
    not know, a ``pattern`` with a lookaround. TOOL-02 compares a strict tool on the rest (TOOL-03 wins)."""
    if isinstance(schema, list):
        return [without_strict_inexpressible(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in STRICT_INEXPRESSIBLE:
            continue
        if key == "format" and value not in STRICT_FORMATS:
            continue
        if key == "pattern" and isinstance(value, str) and any(t in value for t in _LOOKAROUNDS):
            continue
        out[key] = value if key in _DATA_KEYS else without_strict_inexpressible(value)
    return out


_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def _strict_schema_problems(schema: Any, where: str) -> list[str]:
    """OpenAI strict mode: every object has additionalProperties false and lists all properties as required.
    Only subschemas are walked: a property named ``properties`` and a ``default`` or ``enum`` holding objects
    are data, not schemas (found by random_tool_schemas)."""
    problems: list[str] = []
    if not isinstance(schema, dict):
        return problems
    if schema.get("type") == "object" or "properties" in schema:
        declared = schema.get("properties")
        props = set(declared) if isinstance(declared, dict) else set()
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: strict object without additionalProperties: false")
        missing = props - set(schema.get("required") or [])
        if missing:
            problems.append(f"{where}: strict object does not require {sorted(missing)}")
    for key in _SUBSCHEMA:
        problems.extend(_strict_schema_problems(schema.get(key), f"{where}.{key}"))
    for key in _SUBSCHEMA_MAPS:
        named = schema.get(key)
        for name, sub in named.items() if isinstance(named, dict) else ():
            problems.extend(_strict_schema_problems(sub, f"{where}.{key}.{name}"))
    for key in _SUBSCHEMA_LISTS:
        listed = schema.get(key)
        for i, sub in enumerate(listed if isinstance(listed, list) else ()):
            problems.extend(_strict_schema_problems(sub, f"{where}.{key}[{i}]"))
    return problems


PROFILE = OpenAIChatProfile()


def _options(data: dict[str, Any]) -> frozenset[str]:
    """The request options that change what the server sends (``scenarios/preconditions.OPTIONS``)."""
    options = set()
    stream_options = data.get("stream_options")
    if isinstance(stream_options, dict) and stream_options.get("include_usage") is True:
        options.add("include_usage")  # a last chunk with `choices: []` and the usage
    if data.get("parallel_tool_calls") is False:
        options.add("parallel_tool_calls_off")
    if isinstance(data.get("n"), int) and data["n"] > 1:
        options.add("several_choices")  # choices with index 1, 2, … beside 0
    return frozenset(options)


def _azure_deployment(url: str) -> str | None:
    """Azure OpenAI names the deployment in the URL (``/openai/deployments/{deployment}/chat/completions``), and
    the body needs no ``model`` (REST reference)."""
    addressed = servers.addressed_by("openai-chat", urlsplit(url).path)
    return addressed[1] if addressed else None
