"""Bugs the harness missed until the harness-power measurement (``tools/harness_power.py``) looked for them.

A key that reaches an error's message (ERR-07): the provider echoes it and the adapter does not redact, the
adapter puts it in the URL (Gemini's ``?key=``) and the HTTP client's error carries the URL, or the adapter
copies the request headers into the message. A tool call's name that is not the provider's (RES-06, which
now judges a single call's name too): names concatenated across deltas, one name for every call. Schema
keywords a translator to Gemini's subset loses (TOOL-02): the translator's code no scenario ran. Reasoning
with nothing visible after it: all of it redacted (RES-08), or cut by the token limit (STR-03). Streamed
arguments that are numbers or booleans (RES-04).
"""

from __future__ import annotations

from typing import Any

import httpx

from helix_conformance.contract import (
    PROVIDER_ERROR,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    ParsedToolCall,
    StepResult,
    StopReason,
    ThinkingContent,
)
from reference_adapters._gemini_schema import gemini_schema
from reference_adapters._http import (
    SafeCallbacks,
    StreamGuard,
    classify_status,
    describe_error,
)
from reference_adapters.openai_chat import _repeats_whole_call, strict_schema

from ._anthropic_base import HookedAnthropicAdapter, HookedMessagesStream, broken_anthropic
from ._base import BrokenAdapter, HookedAdapter, HookedChatStream, broken
from ._gemini_base import HookedGeminiAdapter, HookedGeminiStream, broken_gemini

# --- ERR-07: the key in the error ------------------------------------------------------------------------


class UnredactedProviderMessage(HookedAdapter):
    """Puts the provider's error message in its own as it is, and never redacts."""

    async def _status_error(self, response: httpx.Response) -> HelixError:
        message, _ = describe_error(await response.aread())
        status = response.status_code
        code, retryable = classify_status(status)
        text = f"openai: HTTP {status}: {message}"  # Bug: the server's message may echo the key.
        cause = httpx.HTTPStatusError(text, request=response.request, response=response)
        return HelixError(text, code=code, retryable=retryable, status_code=status, cause=cause)

    def scrub(self, error: BaseException) -> None:
        """Bug: no redaction at all ("our own messages never contain the key")."""


class RequestHeadersInError(UnredactedProviderMessage):
    """Describes a failed request with its headers, for debugging: the Authorization header included."""

    async def _status_error(self, response: httpx.Response) -> HelixError:
        error = await super()._status_error(response)
        request = response.request
        error.message = f"{error.message} ({request.method} {request.url}, headers {dict(request.headers)})"
        error.args = (error.message,)
        return error


class KeyInQueryGemini(HookedGeminiAdapter):
    """Sends the key as Gemini's ``?key=`` parameter (documented) and surfaces ``raise_for_status()``'s
    error, whose text is the request URL: LiteLLM's Gemini handler did exactly this
    (https://github.com/BerriAI/litellm/issues/24902, https://github.com/HolmesGPT/holmesgpt/issues/2010)."""

    def url(self, model: str) -> str:
        return f"{super().url(model)}&key={self._api_key}"

    def build_headers(self, input: LLMGenerateInput) -> dict[str, str]:
        headers = super().build_headers(input)
        del headers["x-goog-api-key"]
        return headers

    async def _status_error(self, response: httpx.Response) -> tuple[HelixError, httpx.Headers]:
        await response.aread()
        status = response.status_code
        code, retryable = classify_status(status)
        try:
            response.raise_for_status()
            raise AssertionError("only called for an error status")
        except httpx.HTTPStatusError as exc:
            error = HelixError(
                f"gemini: {exc}", code=code, retryable=retryable, status_code=status, cause=exc
            )
        return error, httpx.Headers(response.headers)

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        """The reference's step without its redaction."""
        guard = StreamGuard(input.abort_signal, idle_timeout=self._timeout)
        emit = SafeCallbacks(input.callbacks, guard)
        try:
            result = await self._generate(input, guard, emit)
        except Exception as exc:
            error = HelixError(
                f"gemini: unexpected {type(exc).__name__}: {exc}", code=PROVIDER_ERROR, cause=exc
            )
            result = ErrorStepResult(error=error)
        if isinstance(result, ErrorStepResult):
            await emit.error(result.error)
        return result


# --- TOOL-02: schema keywords a dialect translator must carry over (the Gemini coverage gap) ----------------


class _RetranslatedGemini(HookedGeminiAdapter):
    """Sends every tool's parameters as ``gemini_schema(self.rewrite(schema))``: the reference's translator
    fed a schema the bug has already changed."""

    def rewrite(self, schema: dict[str, Any]) -> dict[str, Any]:
        return schema

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        tools = {tool.name: tool for tool in input.tools}
        for group in body.get("tools", []):
            for declaration in group.get("functionDeclarations", []):
                schema = tools[declaration["name"]].json_schema()
                declaration["parameters"] = gemini_schema(self.rewrite(schema))
        return body


class DropsAllOfGemini(_RetranslatedGemini):
    """Drops `allOf` because Gemini's subset has no such keyword, instead of merging its parts."""

    def rewrite(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in schema.items() if key != "allOf"}


def _inclusive(node: Any) -> Any:
    if isinstance(node, list):
        return [_inclusive(item) for item in node]
    if not isinstance(node, dict):
        return node
    renamed = {"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"}
    return {renamed.get(key, key): _inclusive(value) for key, value in node.items()}


class ExclusiveBoundsAsInclusiveGemini(_RetranslatedGemini):
    """Sends `exclusiveMinimum: 0` as `minimum: 0` (Gemini has no exclusive bounds): 0 becomes valid."""

    def rewrite(self, schema: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = _inclusive(schema)
        return result


class StrictWithoutDefinitions(HookedAdapter):
    """Closes the objects of a strict tool under pydantic's `$defs` but not under draft-07 `definitions`
    (zod-to-json-schema's default): OpenAI rejects the tool."""

    def build_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super().build_body(input)
        strict = {tool.name: tool for tool in input.tools if tool.strict}
        for entry in body.get("tools", []):
            function = entry["function"]
            if function["name"] in strict:
                schema = dict(strict[function["name"]].json_schema())
                definitions = schema.pop("definitions", None)
                function["parameters"] = strict_schema(schema)
                if definitions is not None:
                    function["parameters"]["definitions"] = definitions
        return body


# --- MSG-08, STR-03: reasoning with nothing visible after it ------------------------------------------------


class _VisibleThinkingOnlyStream(HookedMessagesStream):
    def text_result(self, text: str, thinking: ThinkingContent | None, stop: StopReason) -> StepResult:
        if thinking is not None and not thinking.content:
            thinking = None  # Bug: "no reasoning text, no thinking": the redacted blocks go with it.
        return super().text_result(text, thinking, stop)


class DropsRedactedOnlyThinking(HookedAnthropicAdapter):
    stream_class = _VisibleThinkingOnlyStream


class _ThinkingEndedByTextStream(HookedGeminiStream):
    async def result(self) -> StepResult:
        self._in_thinking = False  # Bug: a thought block is completed only when text follows it.
        return await super().result()


class ThinkingLeftOpenGemini(HookedGeminiAdapter):
    stream_class = _ThinkingEndedByTextStream


# --- RES-04: streamed arguments that are not strings ---------------------------------------------------------


class _StringPartialArgsStream(HookedGeminiStream):
    def _function_call(self, call: dict[str, Any]) -> None:
        pieces = call.get("partialArgs")
        if not call.get("name") and isinstance(pieces, list):
            # Bug: "partial arguments are string fragments": numberValue and boolValue pieces are dropped.
            call = {**call, "partialArgs": [p for p in pieces if isinstance(p, dict) and "stringValue" in p]}
        super()._function_call(call)


class StringPartialArgsGemini(HookedGeminiAdapter):
    stream_class = _StringPartialArgsStream


# --- RES-06: a call's name ---------------------------------------------------------------------------------


class _ConcatenatedNameStream(HookedChatStream):
    def _tool_delta(self, entry: dict[str, Any], position: int) -> None:
        call_id = entry.get("id") if isinstance(entry.get("id"), str) else ""
        buffer = self._slot(entry.get("index"), call_id or "", position)
        buffer.id = buffer.id or call_id or ""
        function = entry.get("function")
        if not isinstance(function, dict):
            return
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(name, str):
            buffer.name += name  # Bug: names "stream like arguments" (read_fileread_file, hermes-agent#8259)
        if isinstance(arguments, str) and not _repeats_whole_call(buffer, arguments):
            buffer.arguments.append(arguments)


class ConcatenatedToolName(HookedAdapter):
    stream_class = _ConcatenatedNameStream


class _LastNameStream(HookedChatStream):
    def parse_calls(self) -> list[ParsedToolCall]:
        # Bug: the name lives in one variable of the stream, overwritten by each call's head.
        last = next((b.name for b in reversed(self._calls) if b.name), "")
        calls = super().parse_calls()
        return [call.model_copy(update={"name": last}) for call in calls]


class OneNameForEveryCall(HookedAdapter):
    stream_class = _LastNameStream


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "unredacted_provider_message",
        UnredactedProviderMessage,
        "ERR-07",
        ("http_401_key_echoed",),
        "Copies the provider's error message into its own and redacts nothing: a server that echoes the key "
        "(the LiteLLM proxy's 401) puts it in the error.",
    ),
    broken(
        "request_headers_in_error",
        RequestHeadersInError,
        "ERR-07",
        ("http_400", "http_401", "http_500"),
        "Adds the failed request's headers to the error message: `Authorization: Bearer <key>` with them.",
    ),
    broken_gemini(
        "gemini_key_in_query_url",
        KeyInQueryGemini,
        "ERR-07",
        ("http_400", "http_404", "http_429"),
        "Sends the key as `?key=` and surfaces httpx's HTTPStatusError, whose message is the request URL.",
    ),
    broken_gemini(
        "gemini_drops_allof",
        DropsAllOfGemini,
        "TOOL-02",
        ("tool_schema_keywords",),
        "Drops `allOf` (not in Gemini's subset) instead of merging its parts: their properties and required "
        "names are lost.",
    ),
    broken_gemini(
        "gemini_exclusive_bounds_as_inclusive",
        ExclusiveBoundsAsInclusiveGemini,
        "TOOL-02",
        ("tool_schema_keywords",),
        "Renames `exclusiveMinimum`/`exclusiveMaximum` to `minimum`/`maximum` with the same value: the bound "
        "itself becomes valid.",
    ),
    broken(
        "strict_without_definitions",
        StrictWithoutDefinitions,
        "TOOL-03",
        ("tool_schema_keywords",),
        "Makes a strict tool's objects closed and fully required under `$defs` only: the objects under "
        "draft-07 `definitions` stay open.",
    ),
    broken_anthropic(
        "drops_redacted_only_thinking",
        DropsRedactedOnlyThinking,
        "RES-08",
        ("thinking_redacted_only",),
        "Returns thinking only when there is reasoning text: a response whose reasoning is all redacted "
        "loses the blocks the next request must send back.",
    ),
    broken_gemini(
        "gemini_thinking_left_open",
        ThinkingLeftOpenGemini,
        "STR-03",
        ("thinking_cut_by_max_tokens",),
        "Completes a thought block (on_thinking(_, True)) only when text follows: thinking cut by the token "
        "limit is never completed.",
    ),
    broken_gemini(
        "gemini_string_partial_args_only",
        StringPartialArgsGemini,
        "RES-04",
        ("tool_call_streamed_typed_arguments",),
        "Assembles Vertex's streamed `partialArgs` from their `stringValue` pieces only: numbers and booleans "
        "are lost.",
    ),
    broken(
        "concatenated_tool_name",
        ConcatenatedToolName,
        "RES-06",
        ("compat_repeated_whole_call",),
        "Appends every delta's `function.name` like an argument fragment: a server that repeats the name "
        "(MiniMax on NVIDIA NIM, a whole call sent again) gives `get_weatherget_weather`.",
    ),
    broken(
        "one_name_for_every_call",
        OneNameForEveryCall,
        "RES-06",
        ("tool_call_parallel_two_tools",),
        "Keeps the tool name in one variable of the stream: every call of the step gets the last call's name.",
    ),
]
