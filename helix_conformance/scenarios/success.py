"""Scenarios where the provider answers normally: text, tools, finish tool, thinking, stop reasons, config."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..contract import (
    AssistantMessage,
    SystemMessage,
    ThinkingContent,
    Tool,
    ToolCallInfo,
    ToolMessage,
    UserMessage,
)
from .fixtures import (
    FINISH,
    FINISH_LOOKALIKE,
    GET_TIME,
    GET_WEATHER,
    LOOKUP_ORDER_STRICT,
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
    RedactedThinking,
    Refusal,
    Scenario,
    Stream,
    Text,
    Thinking,
    ToolCall,
)
from .served import (
    ANY_STREAM,
    PARALLEL_CALLS,
    SERVER_TOOLS_CONFIG,
    STOP_CONTENT_FILTER,
    STOP_CONTEXT_WINDOW,
    STOP_FUNCTION_CALL,
    STOP_MALFORMED_FUNCTION_CALL,
    STOP_PAUSE_TURN,
    STOP_PROMPT_BLOCKED,
    STOP_RECITATION,
    STOP_REFUSAL,
    STOP_REFUSAL_NO_CONTENT,
    STOP_SEQUENCE,
    STOP_UNKNOWN,
    TEXT_QUIRKS,
    THINKING_CONFIG,
    TOOL_CALL,
    USAGE_CHUNK,
    USAGE_CONFIG,
    thinking,
)

END = Finish("end_turn")
TOOL_USE = Finish("tool_use")


def _stream(
    *parts: Text | Thinking | RedactedThinking | Refusal | ToolCall, finish: Finish = END, **kw: object
) -> tuple[Exchange]:
    return (Exchange(Stream(parts=parts, finish=finish, **kw)),)  # type: ignore[arg-type]


HELLO = ("Hello", "!", " How can", " I help", " you today?")


# --- What real adapters get wrong (issue 18): schemas as tools arrive, two system prompts, a clean cut -----


class LineItem(BaseModel):
    sku: str
    quantity: int = Field(ge=1)


class Address(BaseModel):
    street: str
    city: str
    postcode: str | None


class CreateOrder(BaseModel):
    """A strict tool with nested objects, an array of objects and ``$defs`` (pydantic writes them so)."""

    customer_id: str
    items: list[LineItem]
    shipping: Address


EDIT_FILE_MCP = Tool(
    name="edit_file",
    description="Make line-based edits to a text file. Returns a git-style diff showing the changes made.",
    # As an MCP server lists it: modelcontextprotocol/servers, src/filesystem, EditFileArgsSchema through
    # zod-to-json-schema (draft-07 `$schema`, every object closed with `additionalProperties: false`).
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": "Text to search for - must match exactly",
                        },
                        "newText": {"type": "string", "description": "Text to replace with"},
                    },
                    "required": ["oldText", "newText"],
                    "additionalProperties": False,
                },
            },
            "dryRun": {
                "type": "boolean",
                "default": False,
                "description": "Preview changes using git-style diff format",
            },
        },
        "required": ["path", "edits"],
        "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#",
    },
)
CREATE_ORDER_STRICT = Tool(
    name="create_order",
    description="Create an order for a customer.",
    input_schema=CreateOrder,
    strict=True,
)

BOOK_TABLE = Tool(
    name="book_table",
    description="Book a table at a restaurant.",
    # JSON Schema keywords a translator to another dialect (Gemini's OpenAPI subset) must carry over with their
    # meaning: `allOf` parts, a `$ref` with a sibling, integer exclusive bounds, `const`, type lists with and
    # without null, formats, `uniqueItems: false` (as zod-to-json-schema and hand-written MCP tools write them).
    input_schema={
        "type": "object",
        "allOf": [
            {
                "properties": {"restaurant": {"$ref": "#/$defs/Name", "description": "Where to book."}},
                "required": ["restaurant"],
            },
            {"properties": {"when": {"type": "string", "format": "date-time"}}},
        ],
        "properties": {
            "party": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 21},
            "kind": {"const": "dinner"},
            "note": {"type": ["string", "null"], "maxLength": 200},
            "budget": {"type": "number", "format": "float", "minimum": 0},
            "table": {"type": ["string", "integer"], "minLength": 1, "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": False},
        },
        "required": ["party"],
        "$defs": {"Name": {"type": "string", "minLength": 1}},
    },
)

LOG_EVENT_STRICT = Tool(
    name="log_event",
    description="Record an event.",
    # zod-to-json-schema's output: draft-07 `definitions` (its default definitionPath), not pydantic's `$defs`;
    # a strict tool, so every object reachable through them must be closed and fully required (TOOL-03).
    input_schema={
        "type": "object",
        "properties": {"event": {"$ref": "#/definitions/Event"}},
        "required": ["event"],
        "additionalProperties": False,
        "definitions": {
            "Event": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "level": {"type": "string", "enum": ["info", "warn"]},
                },
                "required": ["name", "level"],
            }
        },
        "$schema": "http://json-schema.org/draft-07/schema#",
    },
    strict=True,
)

FROM_THE_FIELD: tuple[Scenario, ...] = (
    Scenario(
        id="tool_schema_keywords",
        preconditions=(TOOL_CALL,),
        description="A tool schema with `allOf`, a `$ref` beside a description, integer exclusive bounds, "
        "`const`, type lists (with and without null) and formats: sent with the same meaning (TOOL-02); beside "
        "it a strict tool whose objects sit in draft-07 `definitions` (TOOL-03).",
        messages=(UserMessage(content="A table for four at Chez Nous, please."),),
        tools=(BOOK_TABLE, LOG_EVENT_STRICT),
        exchanges=_stream(
            ToolCall(
                "call_Bk7tA2bL9eK4wQ1xZ8cV5nM3",
                "book_table",
                ('{"restaurant": "Chez Nous", ', '"party": 4, "kind": "dinner"}'),
            ),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call(
                    "call_Bk7tA2bL9eK4wQ1xZ8cV5nM3",
                    "book_table",
                    {"restaurant": "Chez Nous", "party": 4, "kind": "dinner"},
                ),
            ),
        ),
    ),
    Scenario(
        id="tool_schemas_in_the_wild",
        preconditions=(TOOL_CALL,),
        description="Tool schemas as they arrive: an MCP server's (zod-to-json-schema: `$schema`, closed "
        "objects, an array of objects) and a strict tool with nested objects, arrays of objects and `$defs`.",
        messages=(UserMessage(content="Rename foo to bar in notes.txt."),),
        tools=(EDIT_FILE_MCP, CREATE_ORDER_STRICT),
        exchanges=_stream(
            ToolCall(
                "call_Ed1tF2iL3eM4cP5sC6hE7mA8",
                "edit_file",
                ('{"path": "notes.txt", "edits": [{"oldText": "foo", ', '"newText": "bar"}]}'),
            ),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call(
                    "call_Ed1tF2iL3eM4cP5sC6hE7mA8",
                    "edit_file",
                    {"path": "notes.txt", "edits": [{"oldText": "foo", "newText": "bar"}]},
                ),
            ),
        ),
    ),
    Scenario(
        id="system_two_messages",
        preconditions=(ANY_STREAM,),
        description="Two system messages (a system prompt and injected instructions): both reach the system "
        "slot, in order, neither merged away (MSG-01).",
        messages=(
            SystemMessage(content="You are terse."),
            SystemMessage(content="Answer in English."),
            UserMessage(content="Say hello."),
        ),
        exchanges=_stream(Text(HELLO)),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
    ),
    Scenario(
        id="tool_call_cut_off_valid_json",
        preconditions=(TOOL_CALL,),
        not_live="where max_tokens cuts a tool call depends on the model's tokenizer",
        description="A tool call cut off by the token limit whose arguments happen to parse: still not an "
        "executable call (RES-10); a parser's verdict is no proof the call is complete.",
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        config={"max_output_tokens": 9},
        exchanges=_stream(
            ToolCall("call_Cv1aL2iD3jS4oN5cU6tO7fF8", "get_weather", ('{"city": "Pa', 'ris"}')),
            finish=Finish("max_tokens"),
        ),
        expect=Expected("text", "max_tokens"),
        tags=frozenset({"cut_off"}),
        profiles=frozenset(
            {"openai-chat", "anthropic-messages", "bedrock-converse", "cohere-chat"}
        ),  # Gemini never streams partial arguments
    ),
)
"""Inputs and answers real adapters got wrong though the suite passed them (issue 18)."""
PARIS_ARGS = ('{"ci', 'ty": "Pa', 'ris", "unit"', ': "celsius"}')
LONDON_ARGS = ('{"city', '": "London"', "}")

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        id="text_basic",
        preconditions=(ANY_STREAM,),
        description="A plain text answer streamed in several deltas.",
        messages=(UserMessage(content="Say hello."),),
        exchanges=_stream(Text(HELLO)),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
        tags=frozenset({"baseline"}),
    ),
    Scenario(
        id="text_unicode",
        preconditions=(ANY_STREAM,),
        description="Unicode and whitespace survive both ways: emoji, CJK, combining marks, tabs, newlines.",
        messages=(UserMessage(content="Répète:\tnaïve café — 日本語 🎉\n  (two spaces)  "),),
        exchanges=_stream(Text(("Ré", "pète: naïve ", "café — 日本", "語 🎉", "\n  e\u0301 ok"))),
        expect=Expected("text", "end_turn", content="Répète: naïve café — 日本語 🎉\n  e\u0301 ok"),
    ),
    Scenario(
        id="text_quirks",
        preconditions=TEXT_QUIRKS,
        description="Events the adapter has never seen: an empty first chunk, unknown fields and event types; "
        "on OpenAI Chat also SSE comment lines (OpenRouter) and Azure's prompt-filter first chunk (RES-12).",
        messages=(UserMessage(content="Say ok."),),
        exchanges=_stream(
            Text(("O", "k.")),
            quirks=frozenset(
                {"empty_chunk_first", "unknown_fields", "unknown_events", "sse_comments", "azure_first_chunk"}
            ),
        ),
        expect=Expected("text", "end_turn", content="Ok."),
    ),
    Scenario(
        id="text_usage_chunk",
        preconditions=(USAGE_CHUNK,),
        profile_config=USAGE_CONFIG,
        description="The request asked for usage (`stream_options.include_usage`): every chunk carries "
        '`"usage": null`, and after the finish chunk comes one more with `choices: []` and the usage, then '
        "`[DONE]`. It holds no content: the step is the text before it.",
        messages=(UserMessage(content="Say hello."),),
        exchanges=_stream(Text(HELLO), quirks=frozenset({"usage_chunk"})),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
        profiles=frozenset({"openai-chat"}),
    ),
    Scenario(
        id="system_multiturn",
        preconditions=(ANY_STREAM,),
        description="A system prompt and a multi-turn history, including an empty assistant turn.",
        messages=(
            SystemMessage(content="You are terse.\nAnswer in one word."),
            UserMessage(content="Capital of France?"),
            AssistantMessage(content="Paris."),
            UserMessage(content="And of Italy?"),
            AssistantMessage(content=""),
            UserMessage(content="Please answer."),
        ),
        exchanges=_stream(Text(("Ro", "me."))),
        expect=Expected("text", "end_turn", content="Rome."),
    ),
    Scenario(
        id="tool_call",
        preconditions=(TOOL_CALL,),
        description="One tool call whose JSON arguments arrive split mid-token.",
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            ToolCall("call_7hPq2LmX9vRt4KsW1nYb3ZcD", "get_weather", PARIS_ARGS), finish=TOOL_USE
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call("call_7hPq2LmX9vRt4KsW1nYb3ZcD", "get_weather", {"city": "Paris", "unit": "celsius"}),
            ),
        ),
    ),
    Scenario(
        id="tool_call_parallel",
        preconditions=(PARALLEL_CALLS,),
        description="Two tool calls in one response, told apart only by their delta index; none may be merged.",
        messages=(UserMessage(content="Weather in Paris and London?"),),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            ToolCall("call_Xc81NfQzB0aWm5TgR2yVhJ4k", "get_weather", PARIS_ARGS),
            ToolCall("call_q9DkE3sLpA6uZw0HnC7xYt1M", "get_weather", LONDON_ARGS),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call("call_Xc81NfQzB0aWm5TgR2yVhJ4k", "get_weather", {"city": "Paris", "unit": "celsius"}),
                call("call_q9DkE3sLpA6uZw0HnC7xYt1M", "get_weather", {"city": "London"}),
            ),
        ),
        requires=frozenset({"parallel_tool_calls"}),
        tags=frozenset({"parallel"}),
    ),
    Scenario(
        id="tool_call_parallel_two_tools",
        preconditions=(PARALLEL_CALLS,),
        description="Two parallel calls of two different tools: each call keeps its own name (RES-06), never "
        "the other's or the last one seen.",
        messages=(UserMessage(content="Weather in Paris, and what time is it?"),),
        tools=(GET_WEATHER, GET_TIME),
        exchanges=_stream(
            ToolCall("call_Tw2nA7qLx4Rb9CzE1vK6sJ3m", "get_weather", ('{"city', '": "Paris"}')),
            ToolCall("call_Tw5pD8rMy0Sc3FaG2wL7tH9n", "get_time", ("{}",)),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call("call_Tw2nA7qLx4Rb9CzE1vK6sJ3m", "get_weather", {"city": "Paris"}),
                call("call_Tw5pD8rMy0Sc3FaG2wL7tH9n", "get_time", {}),
            ),
        ),
        requires=frozenset({"parallel_tool_calls"}),
        tags=frozenset({"parallel"}),
    ),
    Scenario(
        id="text_and_tool_call",
        preconditions=(TOOL_CALL,),
        description="Text that precedes a tool call must be kept and streamed first.",
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            Text(("Let me", " check the", " weather.")),
            ToolCall("call_Lr5tG8wNq2ZkP0vB6mJcX3sY", "get_weather", ('{"city":"Paris"}',)),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            content="Let me check the weather.",
            tool_calls=(call("call_Lr5tG8wNq2ZkP0vB6mJcX3sY", "get_weather", {"city": "Paris"}),),
        ),
    ),
    Scenario(
        id="tool_call_typed_arguments",
        preconditions=(TOOL_CALL,),
        description="Numbers, booleans, null, nested objects and arrays keep their JSON types.",
        messages=(UserMessage(content="Search the docs for the refund policy."),),
        tools=(SEARCH_DOCS,),
        exchanges=_stream(
            ToolCall(
                "call_Vb4nK7pQ1sW9eR2tY6uI0oPa",
                "search_docs",
                (
                    '{"query": "refund policy", "limit": ',
                    "5",
                    ', "exact": fal',
                    'se, "score": 0.7',
                    '5, "filters": {"tags": ["billing", "eu"]}, "cursor": null}',
                ),
            ),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call(
                    "call_Vb4nK7pQ1sW9eR2tY6uI0oPa",
                    "search_docs",
                    {
                        "query": "refund policy",
                        "limit": 5,
                        "exact": False,
                        "score": 0.75,
                        "filters": {"tags": ["billing", "eu"]},
                        "cursor": None,
                    },
                ),
            ),
        ),
    ),
    Scenario(
        id="tool_call_no_arguments",
        preconditions=(TOOL_CALL,),
        description='A tool without arguments: the provider streams an empty argument string "".',
        messages=(UserMessage(content="What time is it?"),),
        tools=(GET_TIME,),
        exchanges=_stream(ToolCall("call_Hs2dF5gJ8kL1zX4cV7bN0mQw", "get_time", ()), finish=TOOL_USE),
        expect=Expected(
            "tool_calls", "tool_use", tool_calls=(call("call_Hs2dF5gJ8kL1zX4cV7bN0mQw", "get_time", {}),)
        ),
    ),
    Scenario(
        id="tool_call_empty_object",
        preconditions=(TOOL_CALL,),
        description='A tool call whose arguments are the empty object "{}".',
        messages=(UserMessage(content="What time is it?"),),
        tools=(GET_TIME,),
        exchanges=_stream(ToolCall("call_Pq3wE6rT9yU2iO5pA8sD1fGh", "get_time", ("{", "}")), finish=TOOL_USE),
        expect=Expected(
            "tool_calls", "tool_use", tool_calls=(call("call_Pq3wE6rT9yU2iO5pA8sD1fGh", "get_time", {}),)
        ),
    ),
    Scenario(
        id="tool_call_finish_stop",
        preconditions=(TOOL_CALL,),
        not_live="finish_reason 'stop' with tool calls is what some OpenAI-compatible servers send; the provider itself sends 'tool_calls'",
        description='Tool calls reported with the natural-end finish reason ("stop" with tool calls happens).',
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            ToolCall("call_Zx9cV8bN7mA6sD5fG4hJ3kL2", "get_weather", PARIS_ARGS), finish=Finish("end_turn")
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call("call_Zx9cV8bN7mA6sD5fG4hJ3kL2", "get_weather", {"city": "Paris", "unit": "celsius"}),
            ),
        ),
    ),
    Scenario(
        id="tool_result_roundtrip",
        preconditions=(ANY_STREAM,),
        description="History with an assistant turn of two tool calls and their two results, then a text answer.",
        messages=(
            UserMessage(content="Weather in Paris and London? Quote the station codes."),
            AssistantMessage(
                content="",
                tool_calls=[
                    ToolCallInfo(
                        id="call_Xc81NfQzB0aWm5TgR2yVhJ4k", name="get_weather", arguments={"city": "Paris"}
                    ),
                    ToolCallInfo(
                        id="call_q9DkE3sLpA6uZw0HnC7xYt1M", name="get_weather", arguments={"city": "London"}
                    ),
                ],
            ),
            ToolMessage(
                tool_call_id="call_Xc81NfQzB0aWm5TgR2yVhJ4k",
                tool_name="get_weather",
                content="18°C, sunny (station PX-4471)",
            ),
            ToolMessage(
                tool_call_id="call_q9DkE3sLpA6uZw0HnC7xYt1M", tool_name="get_weather", content="12°C, rain"
            ),
        ),
        tools=(GET_WEATHER,),
        exchanges=_stream(Text(("Paris: 18°C and sunny (PX-4471).", " London: 12°C with rain."))),
        expect=Expected(
            "text", "end_turn", content="Paris: 18°C and sunny (PX-4471). London: 12°C with rain."
        ),
        live_token="PX-4471",
    ),
    Scenario(
        id="tool_result_then_user",
        preconditions=(ANY_STREAM,),
        description="A tool result followed by a new user message: one user turn where alternation is strict.",
        messages=(
            WEATHER_QUESTION,
            AssistantMessage(
                content="Let me check.",
                tool_calls=[
                    ToolCallInfo(
                        id="call_Tr5uS6eR7tH8eN9uS0eR1aBc", name="get_weather", arguments={"city": "Paris"}
                    )
                ],
            ),
            ToolMessage(
                tool_call_id="call_Tr5uS6eR7tH8eN9uS0eR1aBc", tool_name="get_weather", content="18°C"
            ),
            UserMessage(content="And in Fahrenheit?"),
        ),
        tools=(GET_WEATHER,),
        exchanges=_stream(Text(("That is", " about 64°F."))),
        expect=Expected("text", "end_turn", content="That is about 64°F."),
    ),
    Scenario(
        id="tool_schemas",
        preconditions=(TOOL_CALL,),
        description="Nested pydantic models, enums, optionals, arrays, $defs, a no-argument and a strict tool.",
        messages=(UserMessage(content="Find my last order."),),
        tools=(SEARCH_DOCS, GET_WEATHER, GET_TIME, LOOKUP_ORDER_STRICT),
        exchanges=_stream(
            ToolCall("call_Mn1bV2cX3zL4kJ5hG6fD7sA8", "lookup_order", ('{"order_id": "ord_1', '42"}')),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("call_Mn1bV2cX3zL4kJ5hG6fD7sA8", "lookup_order", {"order_id": "ord_142"}),),
        ),
    ),
    Scenario(
        id="finish_tool",
        preconditions=(TOOL_CALL,),
        description="The model calls the framework's __finish__ tool: a structured output result.",
        messages=(UserMessage(content="Capital of France? Answer with the schema."),),
        tools=(GET_WEATHER, FINISH),
        exchanges=_stream(
            ToolCall(
                "call_Fn0aB1cD2eF3gH4iJ5kL6mN7", "__finish__", ('{"answer": "Pa', 'ris", "confidence": 0.98}')
            ),
            finish=TOOL_USE,
        ),
        expect=Expected("structured_output", "tool_use", output={"answer": "Paris", "confidence": 0.98}),
    ),
    Scenario(
        id="finish_tool_with_sibling",
        preconditions=(PARALLEL_CALLS,),
        description="__finish__ beside an ordinary tool call in the same step: __finish__ wins.",
        messages=(UserMessage(content="Capital of France? Answer with the schema."),),
        tools=(GET_WEATHER, FINISH),
        exchanges=_stream(
            Text(("Done.",)),
            ToolCall("call_Sb1cD2eF3gH4iJ5kL6mN7oP8", "get_weather", ('{"city": "Paris"}',)),
            ToolCall(
                "call_Fn9zY8xW7vU6tS5rQ4pO3nM2", "__finish__", ('{"answer": "Paris", "confidence": 1}',)
            ),
            finish=TOOL_USE,
        ),
        expect=Expected("structured_output", "tool_use", output={"answer": "Paris", "confidence": 1}),
        requires=frozenset({"parallel_tool_calls"}),
    ),
    Scenario(
        id="finish_tool_lookalike",
        preconditions=(TOOL_CALL,),
        description='A tool merely named like the finish tool ("finish") is an ordinary tool call.',
        messages=(UserMessage(content="Close task 7."),),
        tools=(FINISH_LOOKALIKE, FINISH),
        exchanges=_stream(
            ToolCall("call_Lk2jH3gF4dS5aP6oI7uY8tR9", "finish", ('{"task_id": "7"}',)), finish=TOOL_USE
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("call_Lk2jH3gF4dS5aP6oI7uY8tR9", "finish", {"task_id": "7"}),),
        ),
    ),
    Scenario(
        id="thinking_text",
        profile_config=THINKING_CONFIG,
        preconditions=thinking(),
        description="Reasoning streamed before the answer: returned in `thinking`, streamed via on_thinking.",
        messages=(UserMessage(content="What is 17 * 3?"),),
        exchanges=_stream(
            Thinking(("The user wants", " 17 times 3.", " 17*3 = 51."), SIGNATURES["thinking_text"]),
            Text(("17 × 3", " = 51.")),
        ),
        expect=Expected(
            "text", "end_turn", content="17 × 3 = 51.", thinking="The user wants 17 times 3. 17*3 = 51."
        ),
        requires=frozenset({"thinking"}),
    ),
    Scenario(
        id="thinking_tool_call",
        profile_config=THINKING_CONFIG,
        preconditions=thinking(tools=True),
        description="Reasoning, then a tool call: thinking is kept on the tool-calls result.",
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            Thinking(("I should", " call get_weather."), SIGNATURES["thinking_tool_call"]),
            ToolCall("call_Th1nK2iN3gT4oO5lC6aL7lX", "get_weather", ('{"city": "Paris"}',)),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            thinking="I should call get_weather.",
            tool_calls=(call("call_Th1nK2iN3gT4oO5lC6aL7lX", "get_weather", {"city": "Paris"}),),
        ),
        requires=frozenset({"thinking"}),
    ),
    Scenario(
        id="thinking_finish_tool",
        profile_config=THINKING_CONFIG,
        preconditions=thinking(tools=True),
        description="Reasoning, then __finish__: thinking is kept on the structured result (RES-08, FIN-04).",
        messages=(UserMessage(content="Capital of France? Answer with the schema."),),
        tools=(FINISH,),
        exchanges=_stream(
            Thinking(("Paris is", " the capital."), SIGNATURES["thinking_finish_tool"]),
            ToolCall(
                "call_Fn5tH6iN7kI8nG9aB0cD1eF", "__finish__", ('{"answer": "Paris", "confidence": 0.9}',)
            ),
            finish=TOOL_USE,
        ),
        expect=Expected(
            "structured_output",
            "tool_use",
            thinking="Paris is the capital.",
            output={"answer": "Paris", "confidence": 0.9},
        ),
        requires=frozenset({"thinking"}),
    ),
    Scenario(
        id="thinking_redacted",
        profile_config=THINKING_CONFIG,
        preconditions=thinking(),
        not_live="the provider alone decides when reasoning comes back redacted",
        description="Encrypted reasoning (redacted_thinking) beside visible thinking: kept, never shown as text.",
        messages=(UserMessage(content="What is 6 * 7?"),),
        exchanges=_stream(
            RedactedThinking(REDACTED[0]),
            Thinking(("Six times seven", " is 42."), SIGNATURES["thinking_redacted"]),
            Text(("42.",)),
        ),
        expect=Expected("text", "end_turn", content="42.", thinking="Six times seven is 42."),
        requires=frozenset({"thinking"}),
        profiles=frozenset({"anthropic-messages", "bedrock-converse"}),
    ),
    Scenario(
        id="thinking_redacted_only",
        profile_config=THINKING_CONFIG,
        preconditions=thinking(),
        not_live="the provider alone decides when reasoning comes back redacted",
        description="All of the reasoning comes back encrypted (redacted_thinking, no visible thinking): the "
        "block is still kept on the result, to be sent back (MSG-08).",
        messages=(UserMessage(content="What is 6 * 7?"),),
        exchanges=_stream(RedactedThinking(REDACTED[0]), Text(("42.",))),
        expect=Expected("text", "end_turn", content="42."),
        requires=frozenset({"thinking"}),
        profiles=frozenset({"anthropic-messages", "bedrock-converse"}),
    ),
    Scenario(
        id="thinking_cut_by_max_tokens",
        profile_config=THINKING_CONFIG,
        preconditions=thinking(signed=False),
        not_live="where the token limit cuts the reasoning depends on the model",
        description="The thinking used up the output budget (Gemini counts thought tokens against "
        "maxOutputTokens): thoughts, then MAX_TOKENS, no text. A text result with max_tokens, the thinking kept "
        "and its block completed (STR-03).",
        messages=(UserMessage(content="Summarise the attached report."),),
        config={"max_output_tokens": 64},
        exchanges=_stream(
            Thinking(("The report has", " three parts;", " first")), finish=Finish("max_tokens")
        ),
        expect=Expected("text", "max_tokens", content="", thinking="The report has three parts; first"),
        requires=frozenset({"thinking"}),
        profiles=frozenset({"gemini"}),
    ),
    Scenario(
        id="thinking_history",
        preconditions=(ANY_STREAM,),
        description="A history whose tool-calling turn carries signed and redacted reasoning: sent back unchanged.",
        messages=(
            WEATHER_QUESTION,
            AssistantMessage(
                content="Let me look that up.",
                thinking=ThinkingContent(
                    content="I should call get_weather for Paris.",
                    signature=SIGNATURES["thinking_history"],
                    redacted=[REDACTED[1]],
                ),
                tool_calls=[
                    ToolCallInfo(
                        id="call_Hi5sT6oR7yT8hI9nK0iN1gAb", name="get_weather", arguments={"city": "Paris"}
                    )
                ],
            ),
            ToolMessage(
                tool_call_id="call_Hi5sT6oR7yT8hI9nK0iN1gAb", tool_name="get_weather", content="18°C, sunny"
            ),
        ),
        tools=(GET_WEATHER,),
        exchanges=_stream(Text(("It is 18°C", " and sunny in Paris."))),
        expect=Expected("text", "end_turn", content="It is 18°C and sunny in Paris."),
        requires=frozenset({"thinking"}),
        profiles=frozenset({"anthropic-messages", "gemini", "openai-responses", "bedrock-converse"}),
    ),
    Scenario(
        id="stop_max_tokens",
        preconditions=(ANY_STREAM,),
        description="Text cut off by the token limit: a text result with stop_reason max_tokens.",
        messages=(UserMessage(content="Write a long poem."),),
        config={"max_output_tokens": 8},
        exchanges=_stream(Text(("Roses are", " red, violets")), finish=Finish("max_tokens")),
        expect=Expected("text", "max_tokens", content="Roses are red, violets"),
    ),
    Scenario(
        id="stop_content_filter",
        preconditions=STOP_CONTENT_FILTER,
        description="Output stopped by the provider's content filter.",
        messages=(UserMessage(content="Tell me something."),),
        exchanges=_stream(Text(("I was", " going to")), finish=Finish("content_filter")),
        expect=Expected("text", "content_filter", content="I was going to"),
        # Anthropic has no content-filter stop (STOP-01)
        profiles=frozenset({"openai-chat", "gemini", "openai-responses", "bedrock-converse"}),
    ),
    Scenario(
        id="stop_refusal",
        preconditions=STOP_REFUSAL,
        description="The model refuses (a refusal message instead of content).",
        messages=(UserMessage(content="Help me do something harmful."),),
        exchanges=_stream(Refusal(("I can't help", " with that.")), finish=END),
        expect=Expected("text", "refusal"),
        should=frozenset({"STOP-01", "STOP-02"}),
        profiles=frozenset({"openai-chat", "openai-responses"}),
    ),
    Scenario(
        id="stop_refusal_no_content",
        preconditions=STOP_REFUSAL_NO_CONTENT,
        description="The model refuses with stop_reason refusal and not a single content block.",
        messages=(UserMessage(content="Help me do something harmful."),),
        exchanges=_stream(finish=Finish("refusal")),
        expect=Expected("text", "refusal"),
        profiles=frozenset({"anthropic-messages"}),
    ),
    Scenario(
        id="stop_context_window",
        preconditions=STOP_CONTEXT_WINDOW,
        not_live="filling the context window live costs a whole window of tokens",
        description="Output stopped because the context window filled up: max_tokens, like the token limit.",
        messages=(UserMessage(content="Keep going."),),
        exchanges=_stream(
            Text(("And so", " it continued")),
            finish=Finish(
                "max_tokens",
                wire=(
                    ("anthropic-messages", "model_context_window_exceeded"),
                    ("bedrock-converse", "model_context_window_exceeded"),
                ),
            ),
        ),
        expect=Expected("text", "max_tokens", content="And so it continued"),
        profiles=frozenset({"anthropic-messages", "bedrock-converse"}),
    ),
    Scenario(
        id="stop_pause_turn",
        profile_config=SERVER_TOOLS_CONFIG,
        preconditions=STOP_PAUSE_TURN,
        not_live="pause_turn comes only from long-running server tools",
        description="A long server-side turn paused by the provider (pause_turn) is a natural end.",
        messages=(UserMessage(content="Research this thoroughly."),),
        exchanges=_stream(
            Text(("Searching",)), finish=Finish("end_turn", wire=(("anthropic-messages", "pause_turn"),))
        ),
        expect=Expected("text", "end_turn", content="Searching"),
        should=frozenset({"STOP-01"}),
        profiles=frozenset({"anthropic-messages"}),
    ),
    Scenario(
        id="stop_prompt_blocked",
        preconditions=STOP_PROMPT_BLOCKED,
        description="The prompt itself is blocked: no candidates at all, only promptFeedback.blockReason.",
        messages=(UserMessage(content="Tell me something forbidden."),),
        exchanges=_stream(finish=Finish("content_filter", wire=(("gemini", "PROMPT_BLOCKED"),))),
        expect=Expected("text", "content_filter"),
        profiles=frozenset({"gemini"}),
    ),
    Scenario(
        id="stop_recitation",
        preconditions=STOP_RECITATION,
        description="Output stopped because it recited training data (RECITATION): a content filter stop.",
        messages=(UserMessage(content="Quote the whole book."),),
        exchanges=_stream(
            Text(("It was the best", " of times")),
            finish=Finish("content_filter", wire=(("gemini", "RECITATION"),)),
        ),
        expect=Expected("text", "content_filter", content="It was the best of times"),
        profiles=frozenset({"gemini"}),
    ),
    Scenario(
        id="stop_malformed_function_call",
        preconditions=STOP_MALFORMED_FUNCTION_CALL,
        description="The model produced a function call the API could not parse: no call, stop reason unknown.",
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        exchanges=_stream(finish=Finish("unknown", wire=(("gemini", "MALFORMED_FUNCTION_CALL"),))),
        expect=Expected("text", "unknown"),
        profiles=frozenset({"gemini"}),
    ),
    Scenario(
        id="stop_sequence",
        preconditions=(STOP_SEQUENCE,),
        description="Generation ended on a configured stop sequence.",
        messages=(UserMessage(content="Count to ten."),),
        config={"stop_sequences": ["5"]},
        exchanges=_stream(Text(("1, 2,", " 3, 4, ")), finish=Finish("stop_sequence", sequence="5")),
        expect=Expected(
            "text",
            "stop_sequence",
            content="1, 2, 3, 4, ",
            stop_by_profile=(("openai-chat", "end_turn"), ("gemini", "end_turn")),
        ),
        # The Responses API has no stop sequences (no `stop` parameter): it cannot end on one.
        profiles=frozenset(
            {"openai-chat", "anthropic-messages", "gemini", "bedrock-converse", "cohere-chat"}
        ),
    ),
    Scenario(
        id="stop_function_call",
        preconditions=STOP_FUNCTION_CALL,
        not_live="the legacy 'function_call' finish reason comes only from old models",
        description='The legacy finish reason "function_call" with a tool call.',
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            ToolCall("call_Fc1aB2cD3eF4gH5iJ6kL7mN8", "get_weather", ('{"city": "Paris"}',)),
            finish=Finish("tool_use", wire=(("openai-chat", "function_call"),)),
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("call_Fc1aB2cD3eF4gH5iJ6kL7mN8", "get_weather", {"city": "Paris"}),),
        ),
        profiles=frozenset({"openai-chat"}),
    ),
    Scenario(
        id="stop_unknown",
        preconditions=STOP_UNKNOWN,
        description="A finish reason the adapter has never seen maps to unknown; the string never leaks.",
        messages=(UserMessage(content="Say hi."),),
        exchanges=_stream(
            Text(("Hi",)),
            finish=Finish(
                "unknown",
                wire=(
                    ("openai-chat", "eos_interrupted"),
                    # a future value: the beta API's `compaction` comes only to requests that enable compaction,
                    # and a beta client knows it (found on the zoo's pydantic-ai Anthropic shim)
                    ("anthropic-messages", "x_helix_future_reason"),
                    ("gemini", "LANGUAGE"),
                    ("openai-responses", "x_helix_future_reason"),  # an incomplete_details.reason
                    ("bedrock-converse", "malformed_model_output"),  # documented; no canonical reason
                    ("cohere-chat", "x_helix_future_reason"),  # ChatFinishReason is open (Literal | Any)
                ),
            ),
        ),
        expect=Expected("text", "unknown", content="Hi"),
    ),
    Scenario(
        id="tool_call_cut_off",
        preconditions=(TOOL_CALL,),
        not_live="where max_tokens cuts a tool call depends on the model's tokenizer",
        description="A tool call cut off by the token limit is not returned as an executable call (RES-10).",
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        config={"max_output_tokens": 5},
        exchanges=_stream(
            ToolCall("call_Ct1oF2fA3rG4sX5yZ6wV7uT8", "get_weather", ('{"city": "Pa',)),
            finish=Finish("max_tokens"),
        ),
        expect=Expected("text", "max_tokens"),
        tags=frozenset({"cut_off"}),
        # Gemini never streams partial arguments
        profiles=frozenset(
            {"openai-chat", "anthropic-messages", "openai-responses", "bedrock-converse", "cohere-chat"}
        ),
    ),
    Scenario(
        id="config_passthrough",
        preconditions=(ANY_STREAM,),
        description="Every generation parameter, extra headers and provider options reach the request.",
        messages=(UserMessage(content="Say hello."),),
        config={
            "max_output_tokens": 256,
            "temperature": 0.3,
            "top_p": 0.9,
            "top_k": 40,
            "presence_penalty": 0.1,
            "frequency_penalty": 0.2,
            "stop_sequences": ["END", "STOP"],
            "seed": 7,
            "headers": {"X-Helix-Test": "config-passthrough"},
            "provider_options": {
                "openai": {"user": "helix-conformance"},
                "anthropic": {"metadata": {"user_id": "helix-conformance"}},
                "gemini": {"labels": {"suite": "helix-conformance"}},
                "google": {"labels": {"suite": "helix-conformance"}},  # the Vercel AI SDK's key for Gemini
                "bedrock": {"requestMetadata": {"suite": "helix-conformance"}},  # a ConverseStream member
                "cohere": {"safety_mode": "CONTEXTUAL"},  # a v2 chat field
            },
        },
        exchanges=_stream(Text(HELLO)),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
    ),
    Scenario(
        id="caching_auto",
        preconditions=(ANY_STREAM,),
        description="caching='auto' over a multi-turn history and two tools: the profile's cache markers are "
        "sent where they belong, stable across steps of a session.",
        messages=(
            SystemMessage(content="You are a helpful assistant with a long, stable system prompt."),
            UserMessage(content="Hi."),
            AssistantMessage(content="Hi! What can I do for you?"),
            UserMessage(content="Say hello."),
        ),
        tools=(GET_WEATHER, GET_TIME),
        config={"caching": "auto"},
        exchanges=_stream(Text(HELLO)),
        expect=Expected("text", "end_turn", content="".join(HELLO)),
        requires=frozenset({"caching"}),
    ),
    *FROM_THE_FIELD,
)
