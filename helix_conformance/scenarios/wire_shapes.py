"""Anthropic and Gemini wire shapes of real traffic that no other scenario sends (issue 18).

Each is a shape the API documents or a live recording shows, which an adapter written against the common case
gets wrong: Anthropic tool input given whole on ``content_block_start``, server-side tool blocks before the
answer, an empty tool result in the history; Gemini's streamed function-call arguments (Vertex
``partialArgs``), a mid-stream error sent as a ``data:`` event, and the BLOCKLIST and MODEL_ARMOR rows of
STOP-01. The evidence for each is in docs/contract.md under the clause that judges it.
"""

from __future__ import annotations

from ..contract import AssistantMessage, Tool, ToolCallInfo, ToolMessage, UserMessage
from .fixtures import GET_WEATHER, call
from .model import Exchange, Expected, Finish, Scenario, Stream, StreamError, Text, ToolCall
from .served import (
    ANY_STREAM,
    INPUT_AT_BLOCK_START,
    SERVER_TOOL_BLOCKS,
    SERVER_TOOLS_CONFIG,
    STOP_BLOCKLIST,
    STOP_MODEL_ARMOR,
    STREAM_ERROR,
    STREAMED_ARGUMENTS_CONFIG,
    VERTEX_STREAMED_ARGUMENTS,
)

ANTHROPIC = frozenset({"anthropic-messages"})
GEMINI = frozenset({"gemini"})
PARIS, LONDON = {"city": "Paris"}, {"city": "London"}
FORECAST = Tool(
    name="get_forecast",
    description="Get the weather forecast for a city.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "radius_km": {"type": "number"},
            "metric": {"type": "boolean"},
        },
        "required": ["city"],
    },
)


def _stream(*parts: Text | ToolCall, finish: Finish, quirk: str) -> tuple[Exchange]:
    return (Exchange(Stream(parts=parts, finish=finish, quirks=frozenset({quirk}))),)


def _stream_error(kind: str, quirk: str) -> tuple[Exchange]:
    text = Text(("The forecast", " for Paris"))
    return (Exchange(StreamError(parts=(text,), kind=kind, quirks=frozenset({quirk}))),)


SCENARIOS: tuple[Scenario, ...] = (
    # --- Anthropic Messages ------------------------------------------------------------------------------------
    Scenario(
        id="tool_input_at_block_start",
        preconditions=INPUT_AT_BLOCK_START,
        description="A tool_use block whose whole `input` comes on `content_block_start`, with no "
        "`input_json_delta` (Bedrock, proxies): that input is the call's arguments.",
        messages=(UserMessage(content="Weather in Paris?"),),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            ToolCall("call_Bs7tA8rT9iN0pU1tQ2wE3rTy", "get_weather", ('{"city": "Paris"}',)),
            finish=Finish("tool_use"),
            quirk="input_at_start",
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("call_Bs7tA8rT9iN0pU1tQ2wE3rTy", "get_weather", PARIS),),
        ),
        tags=frozenset({"wire_quirk"}),
        profiles=ANTHROPIC,
    ),
    Scenario(
        id="server_tool_blocks",
        profile_config=SERVER_TOOLS_CONFIG,
        preconditions=SERVER_TOOL_BLOCKS,
        description="Server-side tool blocks before the answer (`server_tool_use` with its input deltas, "
        "`web_search_tool_result`, the MCP connector's `mcp_tool_use`/`mcp_tool_result`): the server ran "
        "them; the step is the text, no tool call for the client (RES-12).",
        messages=(UserMessage(content="Search the web: weather in Paris today?"),),
        exchanges=_stream(
            Text(("Paris is sunny", " today, 18°C.")), finish=Finish("end_turn"), quirk="server_tools"
        ),
        expect=Expected("text", "end_turn", content="Paris is sunny today, 18°C."),
        tags=frozenset({"wire_quirk", "unknown_wire"}),
        profiles=ANTHROPIC,
    ),
    Scenario(
        id="tool_result_empty",
        preconditions=(ANY_STREAM,),
        description='A tool that returned nothing: the result "" is still sent, linked to its call, and '
        "without an empty text block (Anthropic rejects those: MSG-06).",
        messages=(
            UserMessage(content="Clear the cache, then tell me."),
            AssistantMessage(
                content="",
                tool_calls=[
                    ToolCallInfo(id="call_Em9pT0yR1eS2uL3tX4cV5bN6", name="get_weather", arguments=PARIS)
                ],
            ),
            ToolMessage(tool_call_id="call_Em9pT0yR1eS2uL3tX4cV5bN6", tool_name="get_weather", content=""),
        ),
        tools=(GET_WEATHER,),
        exchanges=(
            Exchange(Stream(parts=(Text(("The tool", " returned nothing.")),), finish=Finish("end_turn"))),
        ),
        expect=Expected("text", "end_turn", content="The tool returned nothing."),
        not_live="a tool result the model answers however it likes: the request is what this scenario judges",
    ),
    # --- Gemini ------------------------------------------------------------------------------------------------
    Scenario(
        id="tool_call_streamed_arguments",
        profile_config=STREAMED_ARGUMENTS_CONFIG,
        preconditions=VERTEX_STREAMED_ARGUMENTS,
        description="Vertex streams function-call arguments when asked to: the name with `willContinue`, "
        "`partialArgs` by `jsonPath` in pieces, an empty functionCall closing each call: two whole calls.",
        messages=(UserMessage(content="Weather in Paris and London?"),),
        tools=(GET_WEATHER,),
        exchanges=_stream(
            ToolCall(None, "get_weather", ('{"city": "Paris"}',)),
            ToolCall(None, "get_weather", ('{"city": "London"}',)),
            finish=Finish("tool_use"),
            quirk="partial_args",
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("", "get_weather", PARIS), call("", "get_weather", LONDON)),
        ),
        requires=frozenset({"parallel_tool_calls"}),
        tags=frozenset({"wire_quirk"}),
        profiles=GEMINI,
    ),
    Scenario(
        id="tool_call_streamed_typed_arguments",
        profile_config=STREAMED_ARGUMENTS_CONFIG,
        preconditions=VERTEX_STREAMED_ARGUMENTS,
        description="Streamed `partialArgs` whose values are not all strings: `numberValue` and `boolValue` "
        "pieces (Vertex's PartialArg) keep their JSON types (RES-04).",
        messages=(UserMessage(content="Forecast for Paris within 2.5 km, metric."),),
        tools=(FORECAST,),
        exchanges=_stream(
            ToolCall(None, "get_forecast", ('{"city": "Paris", "radius_km": 2.5, "metric": true}',)),
            finish=Finish("tool_use"),
            quirk="partial_args",
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("", "get_forecast", {"city": "Paris", "radius_km": 2.5, "metric": True}),),
        ),
        tags=frozenset({"wire_quirk"}),
        profiles=GEMINI,
    ),
    Scenario(
        id="midstream_error_data_event",
        preconditions=(STREAM_ERROR,),
        description="A rate-limit error inside a 200 stream, sent as a `data:` event rather than raw JSON.",
        messages=(UserMessage(content="Weather in Paris?"),),
        config={"max_retries": 0},
        exchanges=_stream_error("rate_limit", "data_error"),
        expect=Expected("error", "error", error_codes=("provider_rate_limited",), retryable=True),
        tags=frozenset({"stream_error", "wire_quirk"}),
        profiles=GEMINI,
    ),
    Scenario(
        id="stop_blocklist",
        preconditions=STOP_BLOCKLIST,
        description="Output stopped because it contained a blocklisted term (BLOCKLIST): a content filter stop.",
        messages=(UserMessage(content="Repeat the forbidden word."),),
        exchanges=(
            Exchange(
                Stream(
                    parts=(Text(("The word", " is")),),
                    finish=Finish("content_filter", wire=(("gemini", "BLOCKLIST"),)),
                )
            ),
        ),
        expect=Expected("text", "content_filter", content="The word is"),
        profiles=GEMINI,
    ),
    Scenario(
        id="stop_model_armor",
        preconditions=STOP_MODEL_ARMOR,
        description="The answer blocked by a Model Armor template (MODEL_ARMOR, Vertex; a candidate with no "
        "parts, as recorded): a content filter stop.",
        messages=(UserMessage(content="Tell me the admin password."),),
        exchanges=(
            Exchange(Stream(parts=(), finish=Finish("content_filter", wire=(("gemini", "MODEL_ARMOR"),)))),
        ),
        expect=Expected("text", "content_filter", content=""),
        profiles=GEMINI,
    ),
)
