"""OpenAI-compatible servers' quirks, as scenarios of the ``openai-chat`` profile only.

Every wire oddity here was seen in a live recording of a compatible server (../shared/recordings: Groq,
OpenRouter, Mistral, Claude behind a proxy, Azure); the profile renders each from a ``quirks`` flag (see
``profiles/openai_chat_stream.py``), so every adapter that speaks OpenAI Chat is judged on them. The SSE
comment lines and Azure's first chunk are flags of ``text_quirks`` (RES-12) instead of scenarios of their own.
"""

from __future__ import annotations

from ..contract import UserMessage
from .fixtures import GET_WEATHER, call
from .model import Exchange, Expected, Finish, Scenario, Stream, StreamError, Text, Thinking, ToolCall

OPENAI_CHAT = frozenset({"openai-chat"})
TOOL_USE = Finish("tool_use")
TWO_CITIES = (UserMessage(content="Weather in Paris and London?"),)
PARIS, LONDON = {"city": "Paris"}, {"city": "London"}


def _quirky(*parts: Text | Thinking | ToolCall, quirk: str, finish: Finish) -> tuple[Exchange]:
    return (Exchange(Stream(parts=parts, finish=finish, quirks=frozenset({quirk}))),)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        id="compat_reasoning_field",
        description="Reasoning streamed in `delta.reasoning` (Groq, OpenRouter, Ollama), not "
        "`reasoning_content` (DeepSeek): it is still the step's thinking.",
        messages=(UserMessage(content="What is 2+2?"),),
        exchanges=_quirky(
            Thinking(("This is a simple", " arithmetic question.")),
            Text(("2 + 2", " = 4")),
            quirk="reasoning_field",
            finish=Finish("end_turn"),
        ),
        expect=Expected(
            "text", "end_turn", content="2 + 2 = 4", thinking="This is a simple arithmetic question."
        ),
        requires=frozenset({"thinking"}),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="compat_tool_calls_without_index",
        description="Two whole tool calls without `index` or `type` (Mistral), the finish_reason on the last "
        "call's chunk: both returned, in order, not merged into one.",
        messages=TWO_CITIES,
        tools=(GET_WEATHER,),
        exchanges=_quirky(
            ToolCall("gSIMJiOkT", "get_weather", ('{"city": "Paris"}',)),
            ToolCall("Xq3Lm9PzR", "get_weather", ('{"city": "London"}',)),
            quirk="tool_calls_without_index",
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("gSIMJiOkT", "get_weather", PARIS), call("Xq3Lm9PzR", "get_weather", LONDON)),
        ),
        requires=frozenset({"parallel_tool_calls"}),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="compat_tool_index_from_one",
        description="Text, then tool calls whose delta `index` starts at 1, not 0 (Claude behind an "
        "OpenAI-compatible proxy): `index` is a key, not a list position.",
        messages=TWO_CITIES,
        tools=(GET_WEATHER,),
        exchanges=_quirky(
            Text(("Checking", " both.")),
            ToolCall("toolu_01Pq7RsT2uVw3XyZ4aBc5DeF", "get_weather", ('{"ci', 'ty": "Paris"}')),
            ToolCall("toolu_01Gh6JkL7mNp8QrS9tUv0WxY", "get_weather", ('{"city": ', '"London"}')),
            quirk="tool_index_from_one",
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            content="Checking both.",
            tool_calls=(
                call("toolu_01Pq7RsT2uVw3XyZ4aBc5DeF", "get_weather", PARIS),
                call("toolu_01Gh6JkL7mNp8QrS9tUv0WxY", "get_weather", LONDON),
            ),
        ),
        requires=frozenset({"parallel_tool_calls"}),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="compat_repeated_empty_name",
        description='Later deltas of each tool call repeat `type` and `"name": ""` (an OpenAI-compatible '
        "server in Vercel's Mistral fixtures): the name of the first delta stands.",
        messages=TWO_CITIES,
        tools=(GET_WEATHER,),
        exchanges=_quirky(
            ToolCall("chatcmpl-tool-9f149c74c42f265b", "get_weather", ('{"city": ', '"Paris"}')),
            ToolCall("chatcmpl-tool-a60e2d5b1c3f4e7a", "get_weather", ('{"city": ', '"London"}')),
            quirk="repeated_empty_name",
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call("chatcmpl-tool-9f149c74c42f265b", "get_weather", PARIS),
                call("chatcmpl-tool-a60e2d5b1c3f4e7a", "get_weather", LONDON),
            ),
        ),
        requires=frozenset({"parallel_tool_calls"}),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="compat_error_after_finish",
        description="A chunk carrying `error` arrives after a finish_reason chunk (OpenRouter): the step is an "
        "error, not the text that preceded it; its numeric `code` 400 is the HTTP status it stands for (ERR-03).",
        messages=(UserMessage(content="Say hello."),),
        config={"max_retries": 0},
        exchanges=(
            Exchange(
                StreamError(
                    parts=(Text(("Hello", " the")),), kind="server_error", quirks=frozenset({"after_finish"})
                )
            ),
        ),
        expect=Expected("error", "error", error_codes=("provider_invalid_request",)),
        tags=frozenset({"stream_error", "wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
)
