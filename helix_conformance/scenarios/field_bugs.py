"""What adapters written elsewhere got wrong in the field (issue 32): inputs and wire shapes no scenario sent.

Each scenario comes from a class of bugs found in public trackers (vercel/ai, LiteLLM, LangChain, pydantic-ai,
openai-agents, llama_index, the official SDKs) and says in its description under which request the provider
sends its response (``preconditions``: ``scenarios/preconditions.Precondition``, with the evidence). The wire
evidence and the clause that judges each are in docs/contract.md.
"""

from __future__ import annotations

from ..contract import (
    AssistantMessage,
    SystemMessage,
    ThinkingContent,
    Tool,
    ToolCallInfo,
    ToolMessage,
    UserMessage,
)
from .failures import TYPED_STREAM_ERRORS
from .fixtures import (
    FINISH_LOOKALIKE,
    GET_TIME,
    GET_WEATHER,
    REDACTED,
    SEARCH_DOCS,
    SIGNATURES,
    WEATHER_QUESTION,
    call,
)
from .model import (
    Exchange,
    Expected,
    Finish,
    HttpError,
    Reuse,
    Scenario,
    Stream,
    StreamError,
    Text,
    Thinking,
    ToolCall,
)
from .preconditions import any_request, when
from .served import (
    ANY_STREAM,
    HTTP_ERROR,
    NOT_SENT,
    STOP_CONTENT_FILTER,
    STREAM_ERROR,
    TOOL_CALL,
)

ANTHROPIC = frozenset({"anthropic-messages"})
GEMINI = frozenset({"gemini"})
OPENAI_CHAT = frozenset({"openai-chat"})
RESPONSES = frozenset({"openai-responses"})
END = Finish("end_turn")
TOOL_USE = Finish("tool_use")
HELLO = ("Hello", "!", " How can", " I help", " you today?")
PARIS = {"city": "Paris"}


CANDIDATE_WITHOUT_CONTENT = any_request(
    "Gemini may end any stream with a candidate that carries only its finishReason",
    "https://github.com/symfony/ai/issues/1610",
    "https://github.com/Portkey-AI/gateway/issues/1705",
    "https://ai.google.dev/api/generate-content#candidate (content is optional)",
)
GEMINI_CALL_IDS = when(
    "tools",
    why="Gemini 3 returns its own id with every functionCall of a request that declares the tools",
    evidence=(
        'https://ai.google.dev/gemini-api/docs/function-calling ("Gemini 3 now always returns a unique id '
        'with every functionCall")',
    ),
)
SEVERAL_CHOICES = when(
    "several_choices",
    why="OpenAI streams several choices only to a request that asks for them with `n`",
)
REASONING_TEXT = any_request(
    "a server that streams reasoning as reasoning text does so for any request to a reasoning model",
    "the openai SDK's ResponseReasoningTextDeltaEvent (response.reasoning_text.delta)",
    "https://github.com/deepseek-ai/awesome-deepseek-integration/issues/738",
    "https://github.com/aaif-goose/goose/pull/7375",
)
RESPONSES_DONE_MARKER = when(
    why="OpenRouter's Responses API ends every stream with Chat Completions' `data: [DONE]`",
    evidence=("docs/contract.md (OpenAI Responses: `[DONE]`)",),
    servers=("openrouter",),
)


def _stream(
    *parts: Text | Thinking | ToolCall, finish: Finish = END, quirks: tuple[str, ...] = ()
) -> tuple[Exchange]:
    return (Exchange(Stream(parts=parts, finish=finish, quirks=frozenset(quirks))),)


def _weather_turn(call_id: str, thinking: ThinkingContent) -> tuple[AssistantMessage, ToolMessage]:
    """An assistant turn that called get_weather for Paris with ``thinking``, and the tool's result."""
    turn = AssistantMessage(
        content="",
        thinking=thinking,
        tool_calls=[ToolCallInfo(id=call_id, name="get_weather", arguments=PARIS)],
    )
    return turn, ToolMessage(tool_call_id=call_id, tool_name="get_weather", content="18°C, sunny")


# --- inputs the suite never sent ----------------------------------------------------------------------------

GET_WEATHER_DASHED = Tool(
    name="get-weather",
    description="Get the current weather for a city.",
    input_schema=GET_WEATHER.input_schema,
)
WEATHER_DOTTED = Tool(
    name="weather.current",
    description="Get the current weather for a city.",
    input_schema=GET_WEATHER.input_schema,
)

_UNSIGNED = _weather_turn(
    "call_Un5iG6nE7dT8hI9nK0iN1gAb", ThinkingContent(content="I should call get_weather.")
)
_REDACTED_ONLY = _weather_turn(
    "call_Rd7aC8tE9dO0nL1yT2hI3nKx", ThinkingContent(content="", redacted=[REDACTED[1]])
)

INPUTS: tuple[Scenario, ...] = (
    Scenario(
        id="empty_user_message",
        preconditions=(ANY_STREAM,),
        description="An empty user message before the real question (a message whose attachments were "
        'stripped, an empty composer): sent where the provider takes it (OpenAI `content: ""`), left out '
        "where an empty text block is a 400 (Anthropic, Gemini; MSG-06).",
        messages=(
            SystemMessage(content="You are terse."),
            UserMessage(content=""),
            UserMessage(content="Say hello."),
        ),
        exchanges=_stream(Text(HELLO)),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
        not_live="the request is what this scenario judges",
    ),
    Scenario(
        id="thinking_history_unsigned",
        preconditions=(ANY_STREAM,),
        description="A history whose tool-calling turn holds thinking without its signature (reasoning from "
        "a provider that signs nothing, or a stream cut before `signature_delta`): never sent as a `thinking` "
        "block, which Anthropic answers 400 `thinking.signature: Field required` (MSG-08). ",
        messages=(WEATHER_QUESTION, *_UNSIGNED),
        tools=(GET_WEATHER,),
        exchanges=_stream(Text(("It is 18°C", " and sunny."))),
        expect=Expected("text", "end_turn", content="It is 18°C and sunny."),
        requires=frozenset({"thinking"}),
        profiles=ANTHROPIC,
        not_live="the request is what this scenario judges",
    ),
    Scenario(
        id="thinking_history_redacted_only",
        preconditions=(ANY_STREAM,),
        description="A history whose tool-calling turn holds only redacted reasoning (no visible thinking, "
        "no signature): the `redacted_thinking` block goes back as it came (MSG-08).",
        messages=(WEATHER_QUESTION, *_REDACTED_ONLY),
        tools=(GET_WEATHER,),
        exchanges=_stream(Text(("It is 18°C", " and sunny."))),
        expect=Expected("text", "end_turn", content="It is 18°C and sunny."),
        requires=frozenset({"thinking"}),
        profiles=ANTHROPIC,
        not_live="the request is what this scenario judges",
    ),
    Scenario(
        id="tool_name_with_dash",
        preconditions=(TOOL_CALL,),
        description="A tool named with a dash (`get-weather`, as MCP servers name theirs): sent and returned "
        "under that very name, never sanitised to `get_weather` (TOOL-01, RES-06).",
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER_DASHED, GET_TIME),
        exchanges=_stream(
            ToolCall("call_Da5hE6dN7aM8eT9oO0lCa1lX", "get-weather", ('{"city": ', '"Paris"}')),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("call_Da5hE6dN7aM8eT9oO0lCa1lX", "get-weather", PARIS),),
        ),
        # Cohere takes A-Za-z0-9_ only ("tool names can only contain certain characters (A-Za-z0-9_)", its v2
        # chat error; cohere_stream.ERROR_BODIES): a dash is TOOL-05's there, refused before the request.
        profiles=frozenset(
            {"openai-chat", "anthropic-messages", "gemini", "openai-responses", "bedrock-converse"}
        ),
    ),
    Scenario(
        id="tool_name_with_dot",
        preconditions=(TOOL_CALL,),
        description="A tool named with a dot (`weather.current`), which Gemini's function names allow: sent and "
        "returned unchanged (TOOL-01, RES-06).",
        messages=(WEATHER_QUESTION,),
        tools=(WEATHER_DOTTED,),
        exchanges=_stream(ToolCall(None, "weather.current", ('{"city": "Paris"}',)), finish=TOOL_USE),
        expect=Expected("tool_calls", "tool_use", tool_calls=(call("", "weather.current", PARIS),)),
        profiles=GEMINI,
    ),
)
"""Inputs adapters mishandle: empty messages, reasoning without its proof, punctuated tool names."""


# --- wire shapes the suite never served ---------------------------------------------------------------------

WIRE: tuple[Scenario, ...] = (
    Scenario(
        id="finish_chunk_without_content",
        preconditions=(CANDIDATE_WITHOUT_CONTENT,),
        description="Gemini ends the stream with a candidate that has no `content` at all, only `finishReason` "
        "(symfony/ai#1610, Portkey-AI/gateway#1705: adapters that read `content.parts` crashed): the text "
        "before it is the answer.",
        messages=(WEATHER_QUESTION,),
        exchanges=_stream(Text(("Paris is", " sunny today.")), quirks=("finish_without_content",)),
        expect=Expected("text", "end_turn", content="Paris is sunny today."),
        tags=frozenset({"wire_quirk"}),
        profiles=GEMINI,
    ),
    Scenario(
        id="stop_safety_empty_content",
        preconditions=STOP_CONTENT_FILTER,
        description="A SAFETY stop whose candidate has `content: {}` and `safetyRatings` with `blocked: true` "
        "(recorded: ../shared/recordings/google/test_google_model_safety_settings.yaml): a content_filter "
        "text result, not a crash.",
        messages=(UserMessage(content="Write something hateful."),),
        exchanges=_stream(finish=Finish("content_filter"), quirks=("finish_empty_content",)),
        expect=Expected("text", "content_filter", content=""),
        tags=frozenset({"wire_quirk"}),
        profiles=GEMINI,
    ),
    Scenario(
        id="tool_call_gemini_ids",
        preconditions=(GEMINI_CALL_IDS,),
        description='Gemini 3 sends its own `functionCall.id` ("Gemini 3 now always returns a unique id with '
        'every functionCall", ai.google.dev/gemini-api/docs/function-calling): the adapter keeps it (RES-03), '
        "it does not mint another.",
        messages=(UserMessage(content="Weather in Paris and London?"),),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            ToolCall("k3xq9b2m", "get_weather", ('{"city": "Paris"}',)),
            ToolCall("p7vn4c8w", "get_weather", ('{"city": "London"}',)),
            finish=TOOL_USE,
            quirks=("call_ids",),
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call("k3xq9b2m", "get_weather", PARIS),
                call("p7vn4c8w", "get_weather", {"city": "London"}),
            ),
        ),
        requires=frozenset({"parallel_tool_calls"}),
        tags=frozenset({"wire_quirk"}),
        profiles=GEMINI,
    ),
    Scenario(
        id="compat_several_choices",
        preconditions=(SEVERAL_CHOICES,),
        description="Two choices stream side by side (index 0 and 1), as OpenAI answers a request with `n: 2`; "
        "only choice 0 is the step's answer, its text and its finish_reason (STR-01, STOP-01).",
        messages=(UserMessage(content="Say hello."),),
        config={"provider_options": {"openai": {"n": 2}}},
        exchanges=_stream(Text(HELLO), quirks=("two_choices",)),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="text_byte_order_mark_inside",
        preconditions=(ANY_STREAM,),
        description="Text holding U+FEFF (a zero-width no-break space copied from a document) mid-stream: kept "
        "wherever the bytes are cut, not taken for a byte-order mark at a chunk's start (STR-10).",
        messages=(UserMessage(content="Repeat: a\ufeffb"),),
        exchanges=_stream(Text(("a", "\ufeffb", " done."))),
        expect=Expected("text", "end_turn", content="a\ufeffb done."),
    ),
    Scenario(
        id="responses_reasoning_text",
        preconditions=(REASONING_TEXT,),
        description="Reasoning streamed as reasoning text (`response.reasoning_text.delta` in a `reasoning_text` "
        "part; the SDK's ResponseReasoningTextDeltaEvent), as gpt-oss servers, DeepSeek, LM Studio and "
        "OpenRouter send it, not as a summary: it is the step's thinking (RES-08, STR-03).",
        messages=(UserMessage(content="What is 17 * 3?"),),
        exchanges=_stream(
            Thinking(("17 times 3", " is 51.")), Text(("17 × 3", " = 51.")), quirks=("reasoning_text",)
        ),
        expect=Expected("text", "end_turn", content="17 × 3 = 51.", thinking="17 times 3 is 51."),
        requires=frozenset({"thinking"}),
        tags=frozenset({"wire_quirk"}),
        profiles=RESPONSES,
    ),
    Scenario(
        id="responses_done_marker",
        preconditions=(RESPONSES_DONE_MARKER,),
        description="A Responses stream that ends with Chat Completions' `data: [DONE]` after "
        "`response.completed` (OpenRouter's Responses API): an end marker, not malformed JSON (RES-12). ",
        messages=(UserMessage(content="Say hello."),),
        exchanges=_stream(Text(HELLO), quirks=("done_marker",)),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
        tags=frozenset({"wire_quirk", "unknown_wire"}),
        profiles=RESPONSES,
    ),
    Scenario(
        id="midstream_error_flat",
        preconditions=(STREAM_ERROR,),
        description="An in-stream `error` event with its fields flat (`code`, `message`, `param` at the top: "
        "the SDK's ResponseErrorEvent and the streaming-events reference), then `response.failed`: the code of "
        "its `code` (ERR-03).",
        messages=(UserMessage(content="Say hello."),),
        config={"max_retries": 0},
        exchanges=(
            Exchange(
                StreamError(
                    parts=(Text(("Hello", " the")),), kind="overloaded", quirks=frozenset({"flat_error"})
                )
            ),
        ),
        expect=Expected("error", "error", error_codes=("provider_overloaded",), retryable=True),
        tags=frozenset({"stream_error", "wire_quirk"}),
        profiles=RESPONSES,
    ),
)
"""Wire shapes real servers send that adapters broke on."""


# --- rules: retries after output, Retry-After in seconds --------------------------------------------------------

RETRIES: tuple[Scenario, ...] = (
    Scenario(
        id="retry_not_after_output",
        preconditions=(STREAM_ERROR,),
        description="An overload error arrives inside the 200 stream after text reached on_text_delta, with "
        "max_retries=2: the step returns the error and is not retried, or the user would see the text twice "
        "(CFG-03). A retry, if sent anyway, is answered.",
        messages=(UserMessage(content="Say hello."),),
        config={"max_retries": 2},
        exchanges=(
            Exchange(StreamError(parts=(Text(("Hello", " the")),), kind="overloaded")),
            Exchange(Reuse("text_basic"), optional=True),
        ),
        expect=Expected("error", "error", error_codes=("provider_overloaded",)),
        requires=frozenset({"retries"}),
        tags=frozenset({"retry", "output_streamed"}),
        profiles=TYPED_STREAM_ERRORS,  # a retryable in-stream error: Cohere's stream says only ERROR
    ),
    Scenario(
        id="retry_after_seconds",
        preconditions=(HTTP_ERROR,),
        description="A 429 whose only hint is `retry-after` in seconds (no `retry-after-ms`: Hugging Face, "
        "recorded in ../shared/recordings/huggingface/test_max_completion_tokens.yaml), then success: the retry "
        "waits that long (CFG-05).",
        messages=(UserMessage(content="Say hello."),),
        config={"max_retries": 2},
        exchanges=(Exchange(HttpError(429, retry_after_s=1)), Exchange(Reuse("text_basic"))),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
        requires=frozenset({"retries"}),
        tags=frozenset({"retry"}),
        profiles=frozenset({"openai-chat", "openai-responses"}),
    ),
)
"""Retries a user can see: after streamed output, and at the server's pace."""

# --- tools and caching the suite never sent ---------------------------------------------------------------------

GET_FORECAST = Tool(
    name="get_forecast",
    description="Get the forecast for a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
        "required": ["city"],
    },
)
LOG_NOTE = Tool(
    name="log_note",
    description="Attach a note, with any context, to the conversation.",
    # No top-level `type` (the root is an object by its properties) and a `true` subschema (any value), as
    # hand-written MCP tools and JSON Schema 2020-12 allow.
    input_schema={
        "properties": {"text": {"type": "string"}, "context": True},
        "required": ["text"],
    },
)
DANGLING_REF = Tool(
    name="lookup_item",
    description="Look up an item.",
    input_schema={
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item"}},
        "required": ["item"],
        "$defs": {"Itme": {"type": "string"}},
    },
)
_CACHED_TURN = _weather_turn(
    "call_Ca7cH8eD9tH0iN1kI2nG3aBc",
    ThinkingContent(content="I should call get_weather.", signature=SIGNATURES["thinking_history"]),
)

TOOLS: tuple[Scenario, ...] = (
    Scenario(
        id="caching_auto_long",
        preconditions=(ANY_STREAM,),
        description="caching='auto' over two system messages, five tools and a history whose tool-calling turn "
        "opens with signed thinking: at most 4 breakpoints, on the last system block, the last tool and the "
        "last message, never on a thinking block, which the API answers 400 (CACHE-02).",
        messages=(
            SystemMessage(content="You are a helpful assistant with a long, stable system prompt."),
            SystemMessage(content="Use metric units."),
            WEATHER_QUESTION,
            *_CACHED_TURN,
            AssistantMessage(content="It is 18°C and sunny in Paris."),
            UserMessage(content="And what time is it?"),
        ),
        tools=(GET_WEATHER, GET_TIME, SEARCH_DOCS, FINISH_LOOKALIKE, GET_FORECAST),
        config={"caching": "auto"},
        exchanges=_stream(Text(("It is", " noon UTC."))),
        expect=Expected("text", "end_turn", content="It is noon UTC."),
        requires=frozenset({"caching"}),
        not_live="the request is what this scenario judges",
    ),
    Scenario(
        id="tool_schema_untyped_any",
        preconditions=(TOOL_CALL,),
        description="A tool schema without a top-level `type` and with a `true` subschema (any value): Gemini's "
        "subset needs a type at the root and has no `true`, so a translator sends `type: object` and an "
        "unconstrained property, with the same meaning (TOOL-02, TOOL-03).",
        messages=(UserMessage(content="Note that Paris is sunny."),),
        tools=(LOG_NOTE,),
        exchanges=_stream(
            ToolCall(None, "log_note", ('{"text": "Paris is sunny", "context": {"city": "Paris"}}',)),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("", "log_note", {"text": "Paris is sunny", "context": {"city": "Paris"}}),),
        ),
        profiles=GEMINI,
    ),
    Scenario(
        id="tool_schema_dangling_ref",
        preconditions=(NOT_SENT,),
        description="A tool whose schema has a `$ref` that resolves to nothing (a typo in `$defs`): refused "
        "with provider_invalid_request before any request, or sent exactly as written for the server to judge "
        "(it answers 400 here), never sent weakened (TOOL-05).",
        messages=(UserMessage(content="Look up the umbrella."),),
        tools=(DANGLING_REF,),
        config={"max_retries": 0},
        exchanges=(Exchange(HttpError(400), optional=True),),
        expect=Expected("error", "error", error_codes=("provider_invalid_request",)),
        tags=frozenset({"invalid_tool", "sent_as_written_ok"}),
        profiles=GEMINI,
    ),
)
"""Tool schemas and prompt caching beyond the usual: untyped roots, `true`, a dangling `$ref`, many tools."""

SCENARIOS: tuple[Scenario, ...] = (*INPUTS, *WIRE, *RETRIES, *TOOLS)
