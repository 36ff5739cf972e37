"""Scenarios where something goes wrong: HTTP errors, errors inside the stream, transport faults, bad bodies,
retries, aborts and invalid tools. Every one must come back as an ErrorStepResult, never as an exception."""

from __future__ import annotations

import json

from ..clauses import CLAUSES
from ..contract import Tool, UserMessage
from .fixtures import GET_WEATHER
from .model import (
    AbortPlan,
    Exchange,
    Expected,
    Fault,
    Finish,
    HttpError,
    Raw,
    Reuse,
    Scenario,
    Stream,
    StreamError,
    Text,
    ToolCall,
)
from .served import (
    ANY_STREAM,
    FOREIGN_BODY,
    HTTP_ERROR,
    KEY_ECHOED,
    NETWORK,
    NOT_SENT,
    STREAM_ERROR,
    TOOL_CALL,
)

HELLO_Q = (UserMessage(content="Say hello."),)

REPLAYED_KEY = "sk-helix-replay-0000000000000000000000000000"
"""The key every adapter is handed in replay (``replay.runner.REPLAY_API_KEY``; a test pins the two equal):
``http_401_key_echoed`` answers with it, as a server that echoes the key it received does."""

_KEY_ECHO_BODY = json.dumps(
    {
        "error": {
            "message": "Authentication Error, Invalid proxy server token passed. "
            f"key={REPLAYED_KEY}, not found in db. Create key via `/key/generate` call.",
            "type": "token_not_found_in_db",
            "param": "key",
            "code": "401",
        }
    }
)
"""The LiteLLM proxy's 401 (an OpenAI-compatible server): it echoes the key it was sent when it does not
hash it (``key=1234567890 not found in db``: https://github.com/aliasrobotics/cai/issues/281)."""

# ERR-01/ERR-02: status -> (code, retryable). max_retries=0 so every adapter sends exactly one request.
HTTP_STATUS_TABLE: tuple[tuple[int, str, bool], ...] = (
    (400, "provider_invalid_request", False),
    (401, "provider_auth_error", False),
    (403, "provider_auth_error", False),
    (404, "provider_invalid_request", False),
    (408, "provider_timeout", True),
    (413, "provider_invalid_request", False),
    (422, "provider_invalid_request", False),
    (429, "provider_rate_limited", True),
    (500, "provider_error", True),
    (502, "provider_error", True),
    (503, "provider_overloaded", True),
    (529, "provider_overloaded", True),
)


def _http_scenario(
    status: int, code: str, retryable: bool, profiles: frozenset[str] | None = None
) -> Scenario:
    return Scenario(
        id=f"http_{status}",
        preconditions=(HTTP_ERROR,),
        description=f"HTTP {status} with the provider's error body maps to {code} (retryable={retryable}).",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(HttpError(status)),),
        expect=Expected("error", "error", error_codes=(code,), retryable=retryable, status_code=status),
        tags=frozenset({"http_error"}),
        profiles=profiles,
    )


# --- What real adapters get wrong (issue 18): waits nothing ends, statuses and retries the table missed ----

DOCUMENTED_504: tuple[tuple[int, str, bool], ...] = ((504, "provider_error", True),)
"""A 504 is "other 5xx" (ERR-01): Anthropic documents it as ``timeout_error``, Gemini as ``DEADLINE_EXCEEDED``,
Cohere as ``GatewayTimeout`` (its OpenAPI spec, ``/v2/chat``); OpenAI and Bedrock's ConverseStream document no
504, so ``http_504`` exists for those three profiles only."""

WAITS: tuple[Scenario, ...] = (
    Scenario(
        id="stall_read_timeout",
        preconditions=(NETWORK,),
        description="The stream stalls forever after some text and nothing aborts the step: the adapter's own "
        "read timeout (AdapterContext.timeout) must end it (NT-04), as provider_timeout.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Reuse("text_basic"), fault=Fault("stall", after_events=2)),),
        expect=Expected("error", "error", error_codes=("provider_timeout", "provider_error")),
        tags=frozenset({"stall"}),
    ),
    Scenario(
        id="retry_after_too_long",
        preconditions=(HTTP_ERROR,),
        description="A 429 whose retry hint asks for an hour, then success: no wait between attempts exceeds "
        "two minutes (CFG-05's bound, judged on the loop's clock: a hint capped at 30 s or 120 s passes, the "
        "step's limit is --helix-timeout plus those 120 s). Surfacing the 429 without retrying is allowed too "
        "(CFG-03 says 'at most'; the openai SDK declines a hint over 120 s), so every clause is judged as "
        "SHOULD here.",
        messages=HELLO_Q,
        config={"max_retries": 2},
        exchanges=(Exchange(HttpError(429, retry_after_ms=3_600_000)), Exchange(Reuse("text_basic"))),
        expect=Expected("text", "end_turn", content="Hello! How can I help you today?"),
        requires=frozenset({"retries"}),
        tags=frozenset({"retry", "retry_after_bound"}),
        should=frozenset(CLAUSES),
    ),
    Scenario(
        id="retry_529_then_success",
        preconditions=(HTTP_ERROR,),
        description="Anthropic's 529 overloaded_error, then success: retried like any overload (CFG-03).",
        messages=HELLO_Q,
        config={"max_retries": 2},
        exchanges=(Exchange(HttpError(529)), Exchange(Reuse("text_basic"))),
        expect=Expected("text", "end_turn", content="Hello! How can I help you today?"),
        requires=frozenset({"retries"}),
        tags=frozenset({"retry"}),
        profiles=frozenset({"anthropic-messages"}),
    ),
)
"""Stalls no abort rescues, an unbounded retry hint, and 529 retried (issue 18)."""

LONG_TEXT = tuple(f"word{i} " for i in range(12))

TYPED_STREAM_ERRORS = frozenset(
    {"openai-chat", "anthropic-messages", "gemini", "openai-responses", "bedrock-converse"}
)
"""The profiles whose in-stream errors say rate limit or overload. Cohere's stream ends an error with
``finish_reason: "ERROR"`` and a message, nothing more (``ChatMessageEndEvent`` in its OpenAPI spec)."""

_STREAMED_PARTIAL = Stream(parts=(Text(("Hello", ", this", " is", " partial")),), finish=None)

SCENARIOS: tuple[Scenario, ...] = (
    *(_http_scenario(*row) for row in HTTP_STATUS_TABLE),
    Scenario(
        id="http_429_insufficient_quota",
        preconditions=(HTTP_ERROR,),
        description="OpenAI's 429 insufficient_quota is a quota problem, not a rate limit: not retryable.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(HttpError(429, kind="insufficient_quota")),),
        expect=Expected(
            "error",
            "error",
            error_codes=("provider_rate_limited",),
            retryable=False,
            status_code=429,
            retryable_is_should=True,
        ),
        profiles=frozenset({"openai-chat", "openai-responses"}),
        tags=frozenset({"http_error"}),
    ),
    Scenario(
        id="http_401_key_echoed",
        preconditions=KEY_ECHOED,
        description="A 401 whose message echoes, in full, the key the server received (the LiteLLM proxy): "
        "the error keeps the status and the message, never the key (ERR-07).",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Raw(401, "application/json", _KEY_ECHO_BODY)),),
        expect=Expected(
            "error", "error", error_codes=("provider_auth_error",), retryable=False, status_code=401
        ),
        profiles=frozenset({"openai-chat"}),
        tags=frozenset({"http_error", "key_echo"}),
    ),
    Scenario(
        id="midstream_error",
        preconditions=(STREAM_ERROR,),
        description="A server error event inside an HTTP 200 stream, after some text.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(StreamError(parts=(Text(("Hello", " the")),), kind="server_error")),),
        expect=Expected("error", "error", error_codes=("provider_error",), retryable=True),
        tags=frozenset({"stream_error"}),
    ),
    Scenario(
        id="midstream_rate_limit",
        preconditions=(STREAM_ERROR,),
        description="A rate-limit error event inside an HTTP 200 stream.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(StreamError(parts=(), kind="rate_limit")),),
        expect=Expected("error", "error", error_codes=("provider_rate_limited",), retryable=True),
        tags=frozenset({"stream_error"}),
        profiles=TYPED_STREAM_ERRORS,
    ),
    Scenario(
        id="midstream_overloaded",
        preconditions=(STREAM_ERROR,),
        description="An overloaded error event inside an HTTP 200 stream.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(StreamError(parts=(Text(("Hi",)),), kind="overloaded")),),
        expect=Expected("error", "error", error_codes=("provider_overloaded",), retryable=True),
        tags=frozenset({"stream_error"}),
        profiles=TYPED_STREAM_ERRORS,
    ),
    Scenario(
        id="connect_error",
        preconditions=(NETWORK,),
        description="The connection cannot be established.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Reuse("text_basic"), fault=Fault("connect_error")),),
        expect=Expected("error", "error", error_codes=("provider_error",), retryable=True),
        tags=frozenset({"transport"}),
    ),
    Scenario(
        id="connect_timeout",
        preconditions=(NETWORK,),
        description="Connecting times out.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Reuse("text_basic"), fault=Fault("connect_timeout")),),
        expect=Expected("error", "error", error_codes=("provider_timeout",), retryable=True),
        tags=frozenset({"transport"}),
    ),
    Scenario(
        id="read_timeout",
        preconditions=(NETWORK,),
        description="The response headers arrive, then reading the body times out before any event.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Reuse("text_basic"), fault=Fault("read_timeout", after_events=0)),),
        expect=Expected("error", "error", error_codes=("provider_timeout",), retryable=True),
        tags=frozenset({"transport"}),
    ),
    Scenario(
        id="read_timeout_midstream",
        preconditions=(NETWORK,),
        description="Reading times out after output started: an error, never the partial text as success.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Reuse("text_basic"), fault=Fault("read_timeout", after_events=3)),),
        expect=Expected("error", "error", error_codes=("provider_timeout", "provider_error"), retryable=True),
        tags=frozenset({"transport", "partial"}),
    ),
    Scenario(
        id="connection_reset",
        preconditions=(NETWORK,),
        description="The connection drops after output started (ERR-04).",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Reuse("text_basic"), fault=Fault("reset", after_events=3)),),
        expect=Expected("error", "error", error_codes=("provider_error",), retryable=True),
        tags=frozenset({"transport", "partial"}),
    ),
    Scenario(
        id="truncated_stream",
        preconditions=(NETWORK,),
        description="The stream ends cleanly but without its finish and terminator events (ERR-04).",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(_STREAMED_PARTIAL),),
        expect=Expected("error", "error", error_codes=("provider_error",), retryable=True),
        tags=frozenset({"partial"}),
    ),
    Scenario(
        id="html_error_page",
        preconditions=(FOREIGN_BODY,),
        description="A proxy's HTML error page with status 502.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(
            Exchange(
                Raw(
                    502,
                    "text/html",
                    "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
                )
            ),
        ),
        expect=Expected("error", "error", error_codes=("provider_error",), status_code=502, retryable=True),
        tags=frozenset({"bad_body"}),
    ),
    Scenario(
        id="plain_text_200",
        preconditions=(FOREIGN_BODY,),
        description="A 200 response that is not the provider's format at all (text/plain).",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Raw(200, "text/plain", "Hello from a demo endpoint, not an LLM provider.")),),
        expect=Expected("error", "error", error_codes=("provider_error",)),
        tags=frozenset({"bad_body"}),
    ),
    Scenario(
        id="invalid_json_event",
        preconditions=(FOREIGN_BODY,),
        description="An event whose data is not valid JSON, in the middle of the stream.",
        messages=HELLO_Q,
        config={"max_retries": 0},
        exchanges=(Exchange(Raw(200, "text/event-stream", 'data: {"id": "x", "choices": [{"ind\n\n')),),
        expect=Expected("error", "error", error_codes=("provider_error",)),
        tags=frozenset({"bad_body"}),
    ),
    Scenario(
        id="finish_tool_invalid_json",
        preconditions=(TOOL_CALL,),
        description="__finish__ called with arguments that are not valid JSON: an error result (FIN-03).",
        messages=(UserMessage(content="Capital of France? Answer with the schema."),),
        tools=(
            Tool(
                name="__finish__",
                description="Return the final answer.",
                input_schema={"type": "object", "properties": {"answer": {"type": "string"}}},
            ),
        ),
        config={"max_retries": 0},
        exchanges=(
            Exchange(
                Stream(
                    parts=(
                        ToolCall("call_Bj1sO2nE3rR4oR5aB6cD7eF8", "__finish__", ('{"answer": "Par', "is}")),
                    ),
                    finish=Finish("tool_use"),
                )
            ),
        ),
        expect=Expected("error", "error"),
        tags=frozenset({"finish"}),
        # Gemini sends parsed args objects only
        profiles=frozenset(
            {"openai-chat", "anthropic-messages", "openai-responses", "bedrock-converse", "cohere-chat"}
        ),
    ),
    Scenario(
        id="retry_429_then_success",
        preconditions=(HTTP_ERROR,),
        description="A 429 with retry-after-ms, then success: retried once, after the advertised delay.",
        messages=HELLO_Q,
        config={"max_retries": 2},
        exchanges=(
            Exchange(HttpError(429, retry_after_ms=1000)),
            Exchange(Reuse("text_basic")),
        ),
        expect=Expected("text", "end_turn", content="Hello! How can I help you today?"),
        requires=frozenset({"retries"}),
        tags=frozenset({"retry"}),
    ),
    Scenario(
        id="retry_exhausted",
        preconditions=(HTTP_ERROR,),
        description="503 on every attempt: max_retries retries, then the error surfaces, no longer retryable.",
        messages=HELLO_Q,
        config={"max_retries": 2},
        exchanges=(Exchange(HttpError(503)), Exchange(HttpError(503)), Exchange(HttpError(503))),
        expect=Expected(
            "error",
            "error",
            error_codes=("provider_overloaded",),
            retryable=False,
            status_code=503,
            retryable_is_should=True,
        ),
        requires=frozenset({"retries"}),
        tags=frozenset({"retry"}),
    ),
    Scenario(
        id="no_retry_401",
        preconditions=(HTTP_ERROR,),
        description="401 is never retried, whatever max_retries says.",
        messages=HELLO_Q,
        config={"max_retries": 3},
        exchanges=(Exchange(HttpError(401)),),
        expect=Expected(
            "error", "error", error_codes=("provider_auth_error",), retryable=False, status_code=401
        ),
        tags=frozenset({"retry"}),
    ),
    Scenario(
        id="abort_before",
        preconditions=(NOT_SENT,),
        description="The abort signal is already aborted: an error result and no request at all.",
        messages=HELLO_Q,
        exchanges=(),
        expect=Expected("error", "error", error_codes=("request_aborted",), retryable=False),
        requires=frozenset({"abort"}),
        abort=AbortPlan(before=True),
        tags=frozenset({"abort"}),
    ),
    Scenario(
        id="abort_midstream",
        preconditions=(ANY_STREAM,),
        description="The signal is aborted while text streams: prompt return, response closed, no more callbacks.",
        messages=HELLO_Q,
        exchanges=(Exchange(Stream(parts=(Text(LONG_TEXT),), finish=Finish("end_turn"))),),
        expect=Expected("error", "error", error_codes=("request_aborted",), retryable=False),
        requires=frozenset({"abort"}),
        abort=AbortPlan(after_events=3),
        tags=frozenset({"abort"}),
    ),
    Scenario(
        id="stall_midstream",
        preconditions=(NETWORK,),
        description="The stream stalls forever after some text; the step is aborted and must end promptly.",
        messages=HELLO_Q,
        exchanges=(Exchange(Reuse("text_basic"), fault=Fault("stall", after_events=2)),),
        expect=Expected("error", "error", error_codes=("request_aborted", "provider_timeout")),
        requires=frozenset({"abort"}),
        abort=AbortPlan(after_events=2),
        tags=frozenset({"abort", "stall"}),
    ),
    Scenario(
        id="invalid_tool_name",
        preconditions=(NOT_SENT,),
        description="A tool name the provider rejects: an error result before any request (TOOL-05).",
        messages=HELLO_Q,
        tools=(
            Tool(
                name="get weather!",
                description="A tool whose name breaks the provider's name pattern.",
                input_schema=GET_WEATHER.input_schema,
            ),
        ),
        config={"max_retries": 0},
        exchanges=(Exchange(HttpError(400, kind="invalid_tool_name"), optional=True),),
        expect=Expected("error", "error", error_codes=("provider_invalid_request",)),
        tags=frozenset({"invalid_tool"}),
    ),
    *(
        _http_scenario(*row, profiles=frozenset({"anthropic-messages", "gemini", "cohere-chat"}))
        for row in DOCUMENTED_504
    ),
    *WAITS,
)
