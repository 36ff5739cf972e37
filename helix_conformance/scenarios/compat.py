"""OpenAI-compatible servers' quirks, as scenarios of the ``openai-chat`` profile only.

Every wire oddity here was seen in a live recording of a compatible server (../shared/recordings: Groq,
OpenRouter, Mistral, Claude behind a proxy, Azure); the profile renders each from a ``quirks`` flag (see
``profiles/openai_chat_stream.py``), so every adapter that speaks OpenAI Chat is judged on them. The SSE
comment lines and Azure's first chunk are flags of ``text_quirks`` (RES-12) instead of scenarios of their own.
"""

from __future__ import annotations

from typing import Any

from ..contract import UserMessage
from .fixtures import GET_WEATHER, call
from .model import Exchange, Expected, Finish, Scenario, Stream, StreamError, Text, Thinking, ToolCall
from .preconditions import Precondition, when
from .served import RECORDINGS, USAGE_CONFIG

OPENAI_CHAT = frozenset({"openai-chat"})
TOOL_USE = Finish("tool_use")
TWO_CITIES = (UserMessage(content="Weather in Paris and London?"),)
PARIS, LONDON = {"city": "Paris"}, {"city": "London"}


PARALLEL = ("tools",)
"""What a quirk of several tool calls needs of the request (beside its servers): the tools declared and
parallel calls not forbidden (``quirk_of`` adds the latter for them)."""


def quirk_of(
    *servers: str, why: str, evidence: tuple[str, ...], needs: tuple[str, ...] = ()
) -> tuple[Precondition]:
    """The precondition of an OpenAI-compatible server's quirk: sent by these servers (the others, OpenAI
    included, do not), to a request with ``needs``."""
    return (
        when(
            *needs,
            forbids=("parallel_tool_calls_off",) if needs is PARALLEL else (),
            servers=servers,
            why=f"{why}: a quirk of {', '.join(servers)}, not of OpenAI",
            evidence=evidence,
        ),
    )


def _quirky(*parts: Text | Thinking | ToolCall, quirk: str | None, finish: Finish) -> tuple[Exchange]:
    quirks = frozenset({quirk}) if quirk else frozenset()
    return (Exchange(Stream(parts=parts, finish=finish, quirks=quirks)),)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        id="compat_reasoning_field",
        preconditions=quirk_of(
            "groq",
            "openrouter",
            "ollama",
            why="reasoning streamed in `delta.reasoning`",
            evidence=(
                f"{RECORDINGS}/groq",
                "https://openrouter.ai/docs/use-cases/reasoning-tokens",
                "https://github.com/ollama/ollama/blob/main/docs/openai.md",
            ),
        ),
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
        preconditions=quirk_of(
            "mistral",
            why="whole tool calls without `index` or `type`",
            evidence=(f"{RECORDINGS}/mistral", "cassettes/recorded/mistral/mistral-tool-call.chunks.yaml"),
            needs=PARALLEL,
        ),
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
        preconditions=quirk_of(
            "anthropic-openai",
            why="tool-call `index` starting at 1 after text",
            evidence=(f"{RECORDINGS}/anthropic-openai-compat/anthropic-fallback-tool-call.sse",),
            needs=PARALLEL,
        ),
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
        preconditions=quirk_of(
            "mistral",
            why="later deltas repeating `type` and an empty `name`",
            evidence=("cassettes/recorded/mistral/mistral-incremental-tool-call.chunks.yaml",),
            needs=PARALLEL,
        ),
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
        preconditions=quirk_of(
            "openrouter",
            why="an `error` chunk after a finish_reason chunk",
            evidence=(
                f"{RECORDINGS}/openrouter/test_openrouter_stream_error.yaml",
                "https://openrouter.ai/docs/api/reference/errors-and-debugging",
            ),
        ),
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
        expect=Expected("error", "error", error_codes=("provider_invalid_request",), retryable=False),
        tags=frozenset({"stream_error", "wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
)


# --- real-traffic shapes the reference adapter already handled but no scenario pinned (issue 18) ------------
# Each comes with the evidence in docs/contract.md (RES-06, RES-08, RES-12, STOP-01, ERR-04) and a broken
# adapter in tests/broken_adapters/stream_gaps.py that the scenario catches on its clause.

TEXT_ONLY = (UserMessage(content="Say hello."),)
HELLO = ("Hello", "!", " How can I help?")
THINK = ("The user greets me;", " a short answer will do.")
UNKNOWN_WIRE = frozenset({"wire_quirk", "unknown_wire"})
"""``unknown_wire``: RES-12 judges the outcome (shapes of the wire a conforming adapter ignores)."""


def _text(
    quirk: str, *, reason: str = "end_turn", tags: frozenset[str] = frozenset({"wire_quirk"})
) -> dict[str, Any]:
    """The common body of a text scenario whose stream carries one quirk."""
    return {
        "messages": TEXT_ONLY,
        "exchanges": _quirky(Text(HELLO), quirk=quirk, finish=Finish("end_turn")),
        "expect": Expected("text", reason, content="".join(HELLO)),  # type: ignore[arg-type]
        "tags": tags,
        "profiles": OPENAI_CHAT,
    }


def _two_calls(quirk: str | None, first: str, second: str) -> dict[str, Any]:
    """Two parallel get_weather calls (Paris, London) whose stream carries one quirk."""
    return {
        "messages": TWO_CITIES,
        "tools": (GET_WEATHER,),
        "exchanges": _quirky(
            ToolCall(first, "get_weather", ('{"ci', 'ty": "Pa', 'ris"}')),
            ToolCall(second, "get_weather", ('{"city', '": "Lon', 'don"}')),
            quirk=quirk,
            finish=TOOL_USE,
        ),
        "expect": Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(
                call(first if first != second else "", "get_weather", PARIS),
                call(second if first != second else "", "get_weather", LONDON),
            ),
        ),
        "requires": frozenset({"parallel_tool_calls"}),
        "tags": frozenset({"wire_quirk"}),
        "profiles": OPENAI_CHAT,
    }


SCENARIOS += (
    Scenario(
        id="compat_interleaved_tool_calls",
        preconditions=quirk_of(
            "chat-gateways",
            why="parallel calls' fragments interleaved, told apart by `index` only",
            evidence=(
                "https://github.com/mcowger/plexus/pull/694",
                "https://github.com/QwenLM/Qwen-Agent/pull/943",
                "https://github.com/continuedev/continue/issues/13223",
            ),
            needs=PARALLEL,
        ),
        description="Both calls' heads, then their argument fragments in turn (call 0, call 1, call 0...), told "
        "apart by `index` only (gateways turning the Responses API's parallel calls into chunks).",
        **_two_calls(
            "interleaved_tool_calls", "call_Il3aVe9dQ2xR7tY1uI4oP6aS", "call_Il8bWf0eR3yS8uZ2vJ5pQ7bT"
        ),
    ),
    Scenario(
        id="compat_tool_deltas_by_id",
        preconditions=quirk_of(
            "ollama",
            "gemini-openai",
            why="tool-call deltas without `index`, each repeating its call's id",
            evidence=(
                "https://github.com/ollama/ollama/issues/7881",
                "https://github.com/AstrBotDevs/AstrBot/pull/6692",
            ),
            needs=PARALLEL,
        ),
        description="Tool-call deltas without `index` whose every fragment repeats the call's id: the id "
        "continues its call (servers that omit `index`: Ollama, Gemini's OpenAI-compatible endpoint).",
        **_two_calls("tool_deltas_by_id", "call_Bi4dGh7jK0lM3nO6pQ9rS2tU", "call_Bi5eHi8kL1mN4oP7qR0sT3uV"),
    ),
    Scenario(
        id="compat_tool_calls_without_ids",
        preconditions=quirk_of(
            "gemini-openai",
            why='tool calls whose id is ""',
            evidence=(
                f"{RECORDINGS}/google-openai-compat/test_compatible_api_with_tool_calls_without_id.yaml",
            ),
            needs=PARALLEL,
        ),
        description='Two tool calls whose id is "" (Gemini\'s OpenAI-compatible endpoint): the adapter makes '
        "up ids, non-empty and unique in the step (RES-03).",
        **_two_calls(None, "", ""),
    ),
    Scenario(
        id="compat_duplicate_tool_ids",
        preconditions=quirk_of(
            "glm",
            "deepseek",
            "kimi",
            why="two parallel calls under one id",
            evidence=(
                "https://github.com/HKUDS/nanobot/pull/3943",
                "https://github.com/HKUDS/nanobot/issues/4473",
            ),
            needs=PARALLEL,
        ),
        description="Two tool calls carrying the same id (GLM, DeepSeek, Kimi reuse one): both returned, with "
        "ids unique in the step (RES-03).",
        **_two_calls(None, "call_00_dS1Dnxavoyj3671yVxnr4217", "call_00_dS1Dnxavoyj3671yVxnr4217"),
    ),
    Scenario(
        id="compat_repeated_whole_call",
        preconditions=quirk_of(
            "openrouter",
            "nvidia-nim",
            why="a call sent again whole after its fragments",
            evidence=(
                "https://github.com/decolua/9router/pull/2869",
                "https://github.com/NousResearch/hermes-agent/pull/35718",
                "https://github.com/NousResearch/hermes-agent/pull/11984",
            ),
            needs=("tools",),
        ),
        description="After its fragments, the call is sent again whole in one more delta (id, name, all the "
        "arguments): one call, its arguments once, not `{...}{...}`.",
        messages=(UserMessage(content="Weather in Paris?"),),
        tools=(GET_WEATHER,),
        exchanges=_quirky(
            ToolCall("call_Rw6hJk9lZ2xC5vB8nM1qW4eR", "get_weather", ('{"city": ', '"Paris"}')),
            quirk="repeated_whole_call",
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("call_Rw6hJk9lZ2xC5vB8nM1qW4eR", "get_weather", PARIS),),
        ),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="compat_typed_content_parts",
        preconditions=quirk_of(
            "mistral",
            why="reasoning as typed `thinking` content parts (magistral models)",
            evidence=(f"{RECORDINGS}/mistral/test_mistral_model_thinking_part_iter.yaml",),
        ),
        description='Reasoning as Mistral\'s typed content parts (`content: [{"type": "thinking", ...}]`, '
        "magistral), the answer as plain content: the parts are the step's thinking, not text.",
        messages=TEXT_ONLY,
        exchanges=_quirky(
            Thinking(THINK), Text(HELLO), quirk="typed_content_parts", finish=Finish("end_turn")
        ),
        expect=Expected("text", "end_turn", content="".join(HELLO), thinking="".join(THINK)),
        requires=frozenset({"thinking"}),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="compat_reasoning_details",
        preconditions=quirk_of(
            "openrouter",
            "snowflake",
            why="reasoning only in `delta.reasoning_details`",
            evidence=(
                f"{RECORDINGS}/openrouter/test_openrouter_streaming_reasoning.yaml",
                "https://openrouter.ai/docs/use-cases/reasoning-tokens",
            ),
        ),
        description="Reasoning only in `delta.reasoning_details` (`reasoning.text` entries, then an encrypted "
        "one), never `reasoning` (OpenRouter, Snowflake): still the step's thinking.",
        messages=TEXT_ONLY,
        exchanges=_quirky(Thinking(THINK), Text(HELLO), quirk="reasoning_details", finish=Finish("end_turn")),
        expect=Expected("text", "end_turn", content="".join(HELLO), thinking="".join(THINK)),
        requires=frozenset({"thinking"}),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="compat_done_without_finish_reason",
        preconditions=quirk_of(
            "snowflake",
            "novita",
            why="`[DONE]` with no finish_reason anywhere",
            evidence=("https://github.com/truera/trulens/pull/2240",),
        ),
        description="Text, then the usage chunk and `[DONE]`, no chunk with a finish_reason (Snowflake Cortex, "
        "Novita): `[DONE]` ends the stream, so it is a complete step whose stop reason is unknown.",
        **_text("no_finish_reason", reason="unknown"),
    ),
    Scenario(
        id="compat_tool_calls_done_without_finish_reason",
        preconditions=quirk_of(
            "snowflake",
            "novita",
            why="a tool call, then `[DONE]` with no finish_reason anywhere",
            evidence=("https://github.com/truera/trulens/pull/2240",),
            needs=("tools",),
        ),
        description="A tool call, then `[DONE]`, no finish_reason anywhere: a complete tool-calls step (RES-09).",
        messages=(UserMessage(content="Weather in Paris?"),),
        tools=(GET_WEATHER,),
        exchanges=_quirky(
            ToolCall("call_Nf2rT5yU8iO1pA4sD7fG0hJk", "get_weather", ('{"city', '": "Paris"}')),
            quirk="no_finish_reason",
            finish=TOOL_USE,
        ),
        expect=Expected(
            "tool_calls",
            "tool_use",
            tool_calls=(call("call_Nf2rT5yU8iO1pA4sD7fG0hJk", "get_weather", PARIS),),
        ),
        tags=frozenset({"wire_quirk"}),
        profiles=OPENAI_CHAT,
    ),
    Scenario(
        id="compat_annotation_after_finish",
        preconditions=quirk_of(
            "azure-openai",
            why="a content-filter annotation chunk after the finish chunk (the asynchronous filter)",
            evidence=("https://learn.microsoft.com/azure/foundry/openai/concepts/content-streaming",),
        ),
        description="After the finish chunk, a chunk whose choice has no `delta`, only content-filter results "
        "(Azure's asynchronous filter): ignored; the step ends as the finish chunk said.",
        **_text("annotation_after_finish", tags=UNKNOWN_WIRE),
    ),
    Scenario(
        id="compat_completion_done_object",
        preconditions=quirk_of(
            "perplexity",
            why="the finish_reason on a `chat.completion.done` chunk",
            evidence=(
                "https://docs.perplexity.ai/docs/sonar/pro-search/stream-mode",
                "cassettes/recorded/perplexity/perplexity-citations.chunks.yaml",
            ),
        ),
        description='The finish_reason rides on a chunk of `"object": "chat.completion.done"` with search '
        "results (Perplexity's concise stream mode): it still ends the step.",
        **_text("completion_done_object"),
    ),
    Scenario(
        id="compat_usage_resets_finish",
        profile_config=USAGE_CONFIG,
        preconditions=quirk_of(
            "openrouter",
            why="the usage chunk repeats the choice with `finish_reason: null`; it comes when the request asks for usage",
            evidence=(f"{RECORDINGS}/openrouter/test_openrouter_streaming_reasoning.yaml",),
            needs=("include_usage",),
        ),
        description="The usage chunk after the finish chunk repeats the choice with `finish_reason: null` "
        "(OpenRouter): the finish reason already given stands.",
        **_text("usage_resets_finish"),
    ),
    Scenario(
        id="compat_empty_refusal",
        preconditions=quirk_of(
            "snowflake",
            why='`"refusal": ""` on every delta',
            evidence=("docs/contract.md STOP-01 (reported for Snowflake Cortex)",),
        ),
        description='Every delta carries `"refusal": ""` (Snowflake): an empty refusal is no refusal.',
        **_text("empty_refusal"),
    ),
    Scenario(
        id="compat_sse_framing",
        preconditions=quirk_of(
            "sse-framing",
            why="SSE framing the standard allows and OpenAI never sends (a BOM, lone CRs, `id:`/`event:`/`retry:` "
            "lines, `data:` with no space)",
            evidence=(
                "https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation",
                "https://github.com/openai/openai-python/issues/498 (a proxy on Spring's SSE writer: `data:` "
                "with no space)",
                "https://github.com/davidmigloz/langchain_dart/issues/778 (LongCat streams `data:{...}`)",
            ),
        ),
        description="What the SSE standard allows and OpenAI never sends: a byte-order mark, lines ended by a lone "
        "CR, `id:` and `event: message` lines on every event, a `retry:` line, `data:` with no space before its "
        "value (RES-12).",
        **_text("sse_framing", tags=UNKNOWN_WIRE),
    ),
)
