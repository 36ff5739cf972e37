"""Amazon Bedrock (ConverseStream) and Cohere (v2 chat) wire shapes that no neutral scenario sends.

Each is a shape the provider documents or a live recording shows: Bedrock's ``guardrail_intervened`` stop, a
server-side tool (Nova's code interpreter) streamed before the client's call, and the two exception events
whose codes the neutral error kinds do not name (``modelStreamErrorException``, ``validationException``).
The evidence for each is in docs/contract.md under the clause that judges it.

Their request preconditions (``served.py``): a guardrail stop needs a ``guardrailConfig`` and Nova's code
interpreter the ``nova_code_interpreter`` system tool, which each input asks for through provider_options
(CFG-02); the exception events can end any stream.
"""

from __future__ import annotations

from ..contract import UserMessage
from .fixtures import GET_WEATHER, WEATHER_QUESTION, call
from .model import Exchange, Expected, Finish, Scenario, Stream, StreamError, Text, ToolCall
from .served import (
    BEDROCK_STREAM_EXCEPTION,
    GUARDRAIL_CONFIG,
    NOVA_CODE_INTERPRETER,
    STOP_GUARDRAIL_INTERVENED,
)

BEDROCK = frozenset({"bedrock-converse"})
CODE_INTERPRETER_CONFIG = (
    (
        "bedrock-converse",
        {
            "provider_options": {
                "bedrock": {
                    "toolConfig": {
                        "tools": [
                            {
                                "toolSpec": {
                                    "name": GET_WEATHER.name,
                                    "description": GET_WEATHER.description,
                                    "inputSchema": {"json": GET_WEATHER.json_schema()},
                                }
                            },
                            {"systemTool": {"name": "nova_code_interpreter"}},
                        ]
                    }
                }
            }
        },
    ),
)
"""The whole ``toolConfig`` of a request offering Nova's code interpreter beside the scenario's tool: the system
tool sits in the list the adapter writes its own tools to, so a request field merged over the adapter's
(CFG-02) has to carry both, as the recorded pydantic-ai request does
(cassettes/recorded/bedrock/test_bedrock_model_code_execution_tool_stream.yaml)."""

SCENARIOS: tuple[Scenario, ...] = (
    # --- Amazon Bedrock ConverseStream --------------------------------------------------------------------------
    Scenario(
        id="stop_guardrail_intervened",
        not_live="a guardrail stop needs a guardrail configured on the account",
        profile_config=GUARDRAIL_CONFIG,
        preconditions=STOP_GUARDRAIL_INTERVENED,
        description="A Bedrock guardrail stopped the output (stopReason guardrail_intervened): a text result "
        "with stop reason content_filter, the text so far kept (STOP-01, STOP-02).",
        messages=(UserMessage(content="Tell me something."),),
        exchanges=(
            Exchange(
                Stream(
                    parts=(Text(("I was", " going to")),),
                    finish=Finish("content_filter", wire=(("bedrock-converse", "guardrail_intervened"),)),
                )
            ),
        ),
        expect=Expected("text", "content_filter", content="I was going to"),
        profiles=BEDROCK,
    ),
    Scenario(
        id="server_tool_then_call",
        not_live="the code interpreter runs only on Nova models with the system tool enabled",
        profile_config=CODE_INTERPRETER_CONFIG,
        preconditions=NOVA_CODE_INTERPRETER,
        description="Nova's code interpreter streams a toolUse of type server_tool_use and its toolResult "
        "block before the client's own call (as recorded): the service ran that tool, so the step has one "
        "tool call, the client's (RES-06, RES-12).",
        messages=(WEATHER_QUESTION,),
        tools=(GET_WEATHER,),
        exchanges=(
            Exchange(
                Stream(
                    parts=(
                        ToolCall("call_Sv7rT8oO9lU0sE1cA2lL3xY", "get_weather", ('{"city":', ' "Paris"}')),
                    ),
                    finish=Finish("tool_use"),
                    quirks=frozenset({"server_tools"}),
                )
            ),
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("call_Sv7rT8oO9lU0sE1cA2lL3xY", "get_weather", {"city": "Paris"}),),
        ),
        profiles=BEDROCK,
    ),
    Scenario(
        id="midstream_model_stream_error",
        preconditions=BEDROCK_STREAM_EXCEPTION,
        description='A modelStreamErrorException inside the 200 stream after some text ("A streaming error '
        'occurred. Retry your request."): provider_error (ERR-03), never the partial text as a success.',
        messages=(UserMessage(content="Say hello."),),
        config={"max_retries": 0},
        exchanges=(Exchange(StreamError(parts=(Text(("Hello", " the")),), kind="model_stream_error")),),
        expect=Expected("error", "error", error_codes=("provider_error",)),
        tags=frozenset({"stream_error"}),
        profiles=BEDROCK,
    ),
    Scenario(
        id="midstream_validation_error",
        preconditions=BEDROCK_STREAM_EXCEPTION,
        description="A validationException inside the 200 stream (documented with HTTP 400): an error, "
        "provider_invalid_request by its status or provider_error as ERR-03's default.",
        messages=(UserMessage(content="Say hello."),),
        config={"max_retries": 0},
        exchanges=(Exchange(StreamError(parts=(Text(("Hello",)),), kind="validation")),),
        expect=Expected("error", "error", error_codes=("provider_invalid_request", "provider_error")),
        tags=frozenset({"stream_error"}),
        profiles=BEDROCK,
    ),
)
