"""The ``gemini`` wire profile: Google's Generative Language API (``:streamGenerateContent?alt=sse``).

The decoder reads a ``generateContent`` request back to canonical meaning. Gemini links tool results to calls
by name (and by id only when the provider issued one), so canonical tool-call ids are not compared: the
decoder checks the linking itself and reports breaches as MSG-04 violations, like strict ``user``/``model``
alternation (MSG-05), which one pair of turns is exempt from: a ``user`` turn of functionResponse parts followed
by a ``user`` text turn, which Gemini answers (a live recording; see docs/contract.md, MSG-05). The body is proto3 JSON, so snake_case field names (LiteLLM, google-genai's
``parameters_json_schema``) mean what their lowerCamelCase names mean (``proto_json``). Tool schemas are either
Gemini's OpenAPI subset (``parameters``: translated back to JSON Schema for TOOL-02, judged as sent for TOOL-03)
or JSON Schema (``parametersJsonSchema``); a declaration with neither takes no arguments. The response side is
in ``gemini_stream``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

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
from . import gemini_stream, gemini_summary
from .base import DecodedRequest, DecodedTool, WireProfile, json_content_type_problems, sse_event_json
from .proto_json import bytes_value, camel, camel_keys
from .summary import ResponseSummary
from .wire import WireRules

_CONFIG_FIELDS = {
    "maxOutputTokens": "max_output_tokens",
    "temperature": "temperature",
    "topP": "top_p",
    "topK": "top_k",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
    "stopSequences": "stop_sequences",
    "seed": "seed",
}
_INTERPRETED = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "cachedContent"}
_TOOL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$")
"""FunctionDeclaration.name: "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
underscores, dots, colons and dashes, with a maximum length of 128" (google-genai 3.x)."""
SCHEMA_KEYWORDS = frozenset(
    {
        "type", "format", "description", "nullable", "enum", "items", "properties", "required", "anyOf",
        "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "title", "default",
        "propertyOrdering", "minProperties", "maxProperties", "example",
    }
)  # fmt: skip
"""The OpenAPI subset Gemini accepts in ``parameters`` (TOOL-03)."""
_NESTED_ONE = ("items",)
_NESTED_MANY = ("properties",)
NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
"""What a declaration without ``parameters`` means: "For function with no parameters, this can be left unset"
(FunctionDeclaration reference); the model then calls it with ``{}`` only."""


@dataclass
class GeminiTool(DecodedTool):
    """A decoded function declaration, with the field its schema came in (TOOL-03 judges each by its rules)."""

    fields: tuple[str, ...] = ()
    """``parameters`` (the OpenAPI subset), ``parametersJsonSchema`` (JSON Schema), both, or none."""


def schema_problems(schema: Any, where: str = "parameters") -> list[str]:
    """Keywords Gemini rejects (``$ref``, ``$defs``, ``additionalProperties``…), anywhere in the schema."""
    if not isinstance(schema, dict):
        return [] if isinstance(schema, bool) else [f"{where}: not a schema object"]
    problems = [
        f"{where}.{key}: not in Gemini's schema subset" for key in schema if key not in SCHEMA_KEYWORDS
    ]
    for key in _NESTED_ONE:
        if key in schema:
            problems += schema_problems(schema[key], f"{where}.{key}")
    for key in _NESTED_MANY:
        for name, sub in (schema.get(key) or {}).items():
            problems += schema_problems(sub, f"{where}.{key}.{name}")
    for i, sub in enumerate(schema.get("anyOf") or []):
        problems += schema_problems(sub, f"{where}.anyOf[{i}]")
    return problems


def to_json_schema(schema: Any) -> Any:
    """Gemini's dialect back to JSON Schema: lower-case types, ``nullable`` as a null alternative."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in ("nullable", "propertyOrdering", "example")}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
    for key in _NESTED_ONE:
        if key in out:
            out[key] = to_json_schema(out[key])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: to_json_schema(sub) for name, sub in out["properties"].items()}
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [to_json_schema(sub) for sub in out["anyOf"]]
    if schema.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


@dataclass
class _Decoding:
    problems: list[str] = field(default_factory=list)
    empty_text: list[str] = field(default_factory=list)
    violations: list[tuple[str, str]] = field(default_factory=list)


def _parts(raw: Any, where: str, d: _Decoding) -> list[dict[str, Any]]:
    parts = raw.get("parts") if isinstance(raw, dict) else None
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        d.problems.append(f"{where}.parts must be a list of part objects")
        return []
    if not parts:
        d.empty_text.append(f"{where}: a turn with no parts")
    return parts


def _text(part: dict[str, Any], where: str, d: _Decoding) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        d.problems.append(f"{where}.text is not a string")
        return ""
    if text == "":
        d.empty_text.append(f"{where}: empty text part")
    return text


def _response_text(response: Any, name: str) -> str:
    """A functionResponse's ``response`` object as the canonical tool-result text (``tool_result_text``).
    ``response`` is a free-form object ("Use 'output' key to specify function output", API reference,
    FunctionResponse): the text may sit under any one key, or beside the function's own name as the Vercel
    AI SDK sends it (``{name, content}``: @ai-sdk/google, convert-to-google-generative-ai-messages.ts)."""
    if isinstance(response, dict) and response.get("name") == name and set(response) == {"name", "content"}:
        response = {"content": response["content"]}
    if isinstance(response, dict) and len(response) == 1:
        (value,) = response.values()
        if isinstance(value, str):
            return tool_result_text(value)
    return json.dumps(response, ensure_ascii=False, sort_keys=True)


def tool_result_text(text: str) -> str:
    """A tool result as compared on Gemini: a JSON object's text by its value. ``functionResponse.response`` is
    "The function response in JSON object format" (API reference, FunctionResponse), so an adapter may send a
    result that is a JSON object as that object (langchain-google-genai parses it: ``chat_models.py:1086``)
    rather than wrapped as a string; either way the model gets the same data. Any other text stays exact."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, dict) else text


def _decode_model(parts: list[dict[str, Any]], where: str, d: _Decoding) -> AssistantMessage:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCallInfo] = []
    signature: str | None = None
    for j, part in enumerate(parts):
        at = f"{where}.parts[{j}]"
        signature = signature or part.get("thoughtSignature")
        if "thoughtSignature" in part and bytes_value(part["thoughtSignature"]) is None:
            d.problems.append(f"{at}.thoughtSignature is not base64 (the API reads it as bytes)")
        if "functionCall" in part:
            call = part["functionCall"] if isinstance(part["functionCall"], dict) else {}
            args = call.get("args", {})
            if not isinstance(args, dict):
                d.problems.append(f"{at}.functionCall.args must be an object")
                args = {"<not an object>": args}
            calls.append(ToolCallInfo(id="", name=str(call.get("name", "")), arguments=args))
        elif "text" in part:
            (thoughts if part.get("thought") else texts).append(_text(part, at, d))
        elif "thoughtSignature" not in part:
            d.problems.append(f"{at}: unexpected part {sorted(part)} in a model turn")
    signed = [j for j, part in enumerate(parts) if part.get("thoughtSignature")]
    first_call = next((j for j, part in enumerate(parts) if "functionCall" in part), None)
    if signed and first_call is not None and signed[0] != first_call:
        d.violations.append(
            (
                "MSG-08",
                f"{where}.parts[{signed[0]}] carries the thoughtSignature; Gemini expects it on the first "
                f"functionCall part (parts[{first_call}])",
            )
        )
    thinking = (
        ThinkingContent(content="".join(thoughts), signature=signature) if signature or thoughts else None
    )
    return AssistantMessage(content="".join(texts), tool_calls=calls or None, thinking=thinking)


def _call_ids(parts: list[dict[str, Any]]) -> list[Any]:
    return [p["functionCall"].get("id") for p in parts if isinstance(p.get("functionCall"), dict)]


def _decode_user(
    parts: list[dict[str, Any]], where: str, d: _Decoding, pending: list[str], pending_ids: list[Any]
) -> list[Message]:
    messages: list[Message] = []
    answered: list[str] = []
    answered_ids: list[Any] = []
    for j, part in enumerate(parts):
        at = f"{where}.parts[{j}]"
        if "functionResponse" in part:
            response = part["functionResponse"] if isinstance(part["functionResponse"], dict) else {}
            name = str(response.get("name", ""))
            if not isinstance(response.get("response"), dict):
                d.problems.append(f"{at}.functionResponse.response must be an object")
            answered.append(name)
            answered_ids.append(response.get("id"))
            messages.append(
                ToolMessage(
                    tool_call_id="", tool_name=name, content=_response_text(response.get("response"), name)
                )
            )
        elif "text" in part:
            messages.append(UserMessage(content=_text(part, at, d)))
        else:
            d.problems.append(f"{at}: unexpected part {sorted(part)} in a user turn")
    if answered != pending and (answered or pending):
        d.violations.append(
            (
                "MSG-04",
                f"{where}: functionResponse names {answered} do not answer the calls {pending} of the model "
                "turn before, in order and all together",
            )
        )
    mismatched = [
        (call_id, response_id)
        for call_id, response_id in zip(pending_ids, answered_ids)
        if call_id and response_id and call_id != response_id
    ]
    if mismatched:
        d.violations.append(
            ("MSG-04", f"{where}: functionResponse ids do not match the call ids: {mismatched}")
        )
    return messages


class GeminiProfile(WireProfile):
    name = "gemini"
    provider_key = "gemini"
    provider_keys = ("gemini", "google")  # `google`: the Vercel AI SDK's key (providerOptions.google)
    default_base_url = "https://generativelanguage.googleapis.com"
    secret_headers = ("x-goog-api-key", "authorization", "cookie")
    supported_config = frozenset(_CONFIG_FIELDS.values())
    round_trips_thinking = ("signature",)
    null_is_unset = True  # proto3 JSON: "null is an accepted value for all field types and treated as the
    # default value of the corresponding field type" (protobuf.dev/programming-guides/json)
    signatures_are_bytes = True  # Part.thoughtSignature is `bytes`: google-genai re-encodes it URL-safe
    wire = WireRules("gemini", tail=":streamGenerateContent")
    """Any API version and model: the path ends with the method."""

    def endpoint_url(self, model: str) -> str:
        return f"{self.default_base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse"

    def expected_history(self, messages: Sequence[Message]) -> list[Message]:
        """No empty turns, and tool-call ids are Gemini's to give: canonical ids are not sent back; a tool
        result that is a JSON object compares by its value (``tool_result_text``)."""
        kept: list[Message] = []
        for m in messages:
            if isinstance(m, ToolMessage):
                kept.append(m.model_copy(update={"tool_call_id": "", "content": tool_result_text(m.content)}))
            elif isinstance(m, AssistantMessage) and (m.content or m.tool_calls or m.thinking):
                calls = [c.model_copy(update={"id": ""}) for c in m.tool_calls or []]
                kept.append(m.model_copy(update={"tool_calls": calls or None}))
            elif not isinstance(m, AssistantMessage) and m.content:
                kept.append(m)
        return kept

    def response_tool_call_id(self, neutral_id: str) -> str:
        return ""  # Gemini sends function calls without ids: the adapter must make up unique, stable ones

    # --- request side -------------------------------------------------------------------------------

    def decode_request(self, body: bytes, url: str = "") -> DecodedRequest:
        parsed = urlsplit(url)
        model_match = re.search(r"/models/([^/:]+):", unquote(parsed.path))
        streaming = parsed.path.endswith(":streamGenerateContent") and parse_qs(parsed.query).get("alt") == [
            "sse"
        ]
        model = model_match.group(1) if model_match else None
        try:
            data = json.loads(body)
        except ValueError as exc:
            return DecodedRequest(model, [], None, False, {}, streaming, {}, {}, [f"body is not JSON: {exc}"])
        if not isinstance(data, dict):
            return DecodedRequest(
                model, [], None, False, {}, streaming, {}, {}, ["body is not a JSON object"]
            )
        d = _Decoding()
        sent, data = data, camel_keys(data, d.problems)
        messages: list[Message] = []
        if "systemInstruction" in data:
            for j, part in enumerate(_parts(data["systemInstruction"], "systemInstruction", d)):
                messages.append(SystemMessage(content=_text(part, f"systemInstruction.parts[{j}]", d)))
        contents = data.get("contents")
        if not isinstance(contents, list) or not contents:
            d.problems.append("contents must be a non-empty list")
            contents = []
        previous: str | None = None
        answered_only = False  # the previous turn held only functionResponse parts: user text may follow it
        pending: list[str] = []
        pending_ids: list[Any] = []
        for i, turn in enumerate(contents):
            where = f"contents[{i}]"
            role = turn.get("role") if isinstance(turn, dict) else None
            if isinstance(turn, dict) and not role:
                role = "user"  # "can be left blank or unset" (Content.role): LiteLLM's functionResponse turns
            if role not in ("user", "model"):
                d.problems.append(f"{where}: role {role!r} is not user or model")
                continue
            parts = _parts(turn, where, d)
            responses = ["functionResponse" in part for part in parts]
            if role == previous and not (role == "user" and answered_only and not any(responses)):
                d.violations.append(("MSG-05", f"contents[{i - 1}] and {where} are both {role} turns"))
            answered_only = bool(parts) and all(responses)
            if role == "model":
                message = _decode_model(parts, where, d)
                pending = [c.name for c in message.tool_calls or []]
                pending_ids = _call_ids(parts)
                messages.append(message)
            else:
                messages.extend(_decode_user(parts, where, d, pending, pending_ids))
                pending, pending_ids = [], []
            previous = role
        tools = None
        if "tools" in data:
            tools = [t for i, raw in enumerate(data["tools"] or []) for t in self._decode_tools(raw, i, d)]
        generation = data.get("generationConfig") or {}
        # An explicit null is kept: CFG-01 decides what it means (GeminiProfile.null_is_unset).
        config = {
            canonical: generation[wire] for wire, canonical in _CONFIG_FIELDS.items() if wire in generation
        }
        cache = {"cachedContent": data["cachedContent"]} if "cachedContent" in data else {}
        extra = {k: v for k, v in sent.items() if camel(k) not in _INTERPRETED}  # as sent, for CFG-02
        return DecodedRequest(
            model=model,
            messages=messages,
            tools=tools,
            tool_choice_present="toolConfig" in data,
            config=config,
            streaming=streaming,
            cache=cache,
            extra=extra,
            problems=d.problems,
            empty_text=d.empty_text,
            violations=d.violations,
            options=_options(data),
        )

    @staticmethod
    def _decode_tools(raw: Any, index: int, d: _Decoding) -> list[DecodedTool]:
        declarations = raw.get("functionDeclarations") if isinstance(raw, dict) else None
        if not isinstance(declarations, list):
            d.problems.append(f"tools[{index}] has no functionDeclarations list")
            return []
        decoded: list[DecodedTool] = []
        for fn in declarations:
            if not isinstance(fn, dict):
                d.problems.append(f"tools[{index}].functionDeclarations has a non-object entry")
                continue
            fields = tuple(f for f in ("parameters", "parametersJsonSchema") if fn.get(f) is not None)
            if "parameters" in fields:
                sent, parameters = fn["parameters"], to_json_schema(fn["parameters"])
            elif fields:
                sent = parameters = fn["parametersJsonSchema"]
            else:
                sent, parameters = None, dict(NO_PARAMETERS)
            decoded.append(
                GeminiTool(
                    name=str(fn.get("name", "")),
                    description=fn.get("description"),
                    parameters=parameters,
                    sent=sent,
                    fields=fields,
                )
            )
        return decoded

    def request_header_problems(self, headers: Mapping[str, str], url: str = "") -> list[str]:
        """The key as the ``x-goog-api-key`` header or the ``key`` query parameter (API keys guide), or an
        OAuth ``Authorization: Bearer`` token (OAuth quickstart); the body as ``Content-Type: application/json``."""
        problems = []
        keyed = "key" in parse_qs(urlsplit(url).query)
        if not headers.get("x-goog-api-key") and not keyed and not headers.get("authorization"):
            problems.append(
                "no x-goog-api-key header (nor a ?key= parameter or an Authorization bearer token)"
            )
        return problems + json_content_type_problems(headers)

    def closes_objects(self, tool: DecodedTool) -> bool:
        """``parameters`` cannot: "additionalProperties is only supported in [Vertex AI] mode, not in Gemini
        Developer API mode" (google-genai ``_transformers._raise_for_unsupported_mldev_properties``);
        ``parametersJsonSchema`` is JSON Schema and can."""
        return not isinstance(tool, GeminiTool) or "parametersJsonSchema" in tool.fields

    def tool_problems(self, tool: DecodedTool) -> list[str]:
        problems = []
        if not _TOOL_NAME.match(tool.name):
            problems.append(f"tool name {tool.name!r} does not match {_TOOL_NAME.pattern}")
        fields = tool.fields if isinstance(tool, GeminiTool) else ("parameters",)
        if len(fields) == 2:
            problems.append(f"{tool.name}: parameters and parametersJsonSchema are mutually exclusive")
        if tool.sent is None:
            return problems
        if fields[:1] == ("parameters",):
            problems += [f"{tool.name}: {p}" for p in schema_problems(tool.sent)]
        elif not isinstance(tool.sent, dict) or tool.sent.get("type", "object") != "object":
            # JSON Schema, full keyword set: "The schema must describe an object" is its one hard rule.
            problems.append(f"{tool.name}: parametersJsonSchema must describe an object")
        return problems

    # --- response side (authoring) ------------------------------------------------------------------

    def render_stream(self, response: Stream | StreamError, *, seed: str, model: str) -> bytes:
        return gemini_stream.ChunkWriter(seed, model).render(response)

    def error_response(self, error: HttpError) -> tuple[dict[str, str], bytes]:
        return gemini_stream.error_response(error)

    def summarise_response(self, status: int, headers: Mapping[str, str], body: bytes) -> ResponseSummary:
        return gemini_summary.summarise(status, headers, body)

    def carries_finish(self, event: bytes) -> bool:
        data = camel_keys(sse_event_json(event))
        if not isinstance(data, dict):
            return False
        blocked = isinstance(data.get("promptFeedback"), dict) and data["promptFeedback"].get("blockReason")
        candidates = data.get("candidates")
        return bool(blocked) or any(isinstance(c, dict) and c.get("finishReason") for c in candidates or ())

    def is_terminator(self, event: bytes) -> bool:
        """Gemini sends nothing after its finish chunk: that chunk is the terminator."""
        return self.carries_finish(event)

    def unknown_event(self) -> bytes:
        """A chunk whose only part is of a type the API does not send yet (RES-12: unknown content)."""
        part = '{"x_helix_future_part": {"nested": [1,2]}}'
        return f'data: {{"candidates": [{{"content": {{"parts": [{part}],"role": "model"}},"index": 0}}]}}\r\n\r\n'.encode()

    def validate_event(self, event: bytes) -> None:
        gemini_stream.validate_event(event)


PROFILE = GeminiProfile()


def _options(data: dict[str, Any]) -> frozenset[str]:
    """The request options that change what Gemini sends (``scenarios/preconditions.OPTIONS``), from the body
    with its keys in lowerCamelCase."""
    options = set()
    thinking = _field(data, "generationConfig", "thinkingConfig")
    if thinking.get("includeThoughts") is True:
        options.add("thinking")  # thought summaries (parts with `thought: true`) come back only then
    if _field(data, "toolConfig", "functionCallingConfig").get("streamFunctionCallArguments") is True:
        options.add("stream_function_call_arguments")  # Vertex AI only: partialArgs / willContinue
    return frozenset(options)


def _field(data: dict[str, Any], *path: str) -> dict[str, Any]:
    """The object at ``path`` in the body, or an empty one."""
    for name in path:
        value = data.get(name) if isinstance(data, dict) else None
        data = value if isinstance(value, dict) else {}
    return data
