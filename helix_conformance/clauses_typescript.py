"""The clause catalogue as a TypeScript adapter author reads it: the wording of each clause field that names
Python (``should_stop``, ``json.loads``, ``asyncio``, the Python SDKs' exception classes) written again with the
seed's TypeScript names and the official JS SDKs' idioms. Fields not listed read the same in both languages
(``tests/test_clause_language.py`` checks that none of them names Python). ``clauses.get_clause(id, language)``
applies them."""

from __future__ import annotations

from typing import TypedDict


class Wording(TypedDict, total=False):
    """The fields of a clause that read differently in TypeScript."""

    text: str
    why: str
    common_mistakes: str


TYPESCRIPT: dict[str, Wording] = {
    "RES-01": {
        "why": (
            "The framework dispatches on the result's `type`; anything else (undefined, a plain object of "
            "another shape, the provider's response object, a hybrid of two result types) crashes or silently "
            "derails the agent loop."
        ),
        "common_mistakes": (
            "Returning the provider SDK's response object or an object without `type`, returning undefined on "
            "a rarely taken path, or filling fields of two result types (e.g. `toolCalls` on a text result)."
        ),
    },
    "RES-02": {
        "text": (
            "A text result has `shouldStop: true`; a tool-calls result has `shouldStop: false` and "
            "`stopReason: 'tool_use'`."
        ),
        "why": (
            "The agent loop uses `shouldStop` to decide whether to run tools and call the model again; a "
            "wrong value ends the run early or loops forever."
        ),
        "common_mistakes": (
            "Copying the provider's finish reason into a tool-calls result (`stopReason: 'end_turn'`), or "
            "leaving `shouldStop: false` on a text result because the provider reported `length`."
        ),
    },
    "RES-04": {
        "text": (
            "`arguments` are parsed JSON objects, never a JSON string; numbers and booleans keep their JSON "
            "types."
        ),
        "common_mistakes": (
            "Passing the accumulated `arguments` string through unparsed, calling `JSON.parse` on something "
            'already decoded, or coercing values through `String()` so `3` becomes `"3"` and `true` becomes '
            '`"true"`.'
        ),
    },
    "RES-05": {
        "common_mistakes": (
            "Calling `JSON.parse('')` and surfacing its SyntaxError, or returning undefined instead of `{}` for "
            'an Anthropic `input_json_delta` with `partial_json: ""`.'
        ),
    },
    "RES-07": {
        "common_mistakes": (
            "Returning only `toolCalls` when the response also had text deltas, or leaving `content` out "
            "whenever tool calls are present."
        ),
    },
    "RES-11": {
        "text": "`subAgentCalls` is an array (the framework handles sub-agents; empty is fine).",
        "why": "The framework iterates `subAgentCalls` on every tool-calls result; undefined breaks it.",
        "common_mistakes": (
            "Leaving `subAgentCalls` out, or trying to detect sub-agent calls in the adapter instead of leaving "
            "that to the framework."
        ),
    },
    "FIN-01": {
        "text": (
            "A call to `__finish__` yields a structured-output result (`type: 'structured_output'`) with "
            "`output` = the call's parsed arguments, `shouldStop: true`, `stopReason: 'tool_use'`."
        ),
    },
    "FIN-03": {
        "common_mistakes": (
            "Letting `JSON.parse`'s SyntaxError reject the step, or returning `output: {}` or the raw string as a "
            "structured result."
        ),
    },
    "FIN-04": {
        "common_mistakes": (
            "Building the structured-output result without `thinking`, or not streaming the accompanying text "
            "through `onTextDelta`."
        ),
    },
    "STOP-01": {
        "text": (
            "Provider finish reasons map as follows; no provider string ever appears as `stopReason`. OpenAI "
            "Chat: `stop` → end_turn (also when a stop sequence matched), `tool_calls` and `function_call` → "
            "tool_use, `length` → max_tokens, `content_filter` → content_filter, `refusal` content → refusal "
            "(SHOULD), anything else, or no finish_reason at all before `[DONE]`, → unknown. Anthropic "
            "Messages: `end_turn` → end_turn, `tool_use` → tool_use, `max_tokens` and "
            "`model_context_window_exceeded` → max_tokens, `refusal` → refusal, `stop_sequence` → "
            "stop_sequence, `pause_turn` → end_turn (SHOULD), others → unknown. Gemini: `STOP` → end_turn, or "
            "tool_use when the candidate has functionCall parts; `MAX_TOKENS` → max_tokens; `SAFETY`, "
            "`RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, `IMAGE_SAFETY`, `MODEL_ARMOR` and a "
            "blocked prompt (`promptFeedback.blockReason`, no candidates) → content_filter; `OTHER`, "
            "`MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL` and unknown values → unknown."
        ),
    },
    "STOP-02": {
        "common_mistakes": (
            "Hard-coding `stopReason: 'end_turn'` on every text result, or mapping only the tool-use case."
        ),
    },
    "STR-01": {
        "text": (
            "The concatenation of `onTextDelta` deltas equals the final text (`content` of the text or "
            "tool-calls result); no delta is empty."
        ),
    },
    "STR-02": {
        "text": (
            "Callbacks are invoked as data arrives, not buffered: for a response of two or more text events, "
            "the first `onTextDelta` happens before the last byte of the response is delivered."
        ),
        "common_mistakes": (
            "Reading the whole body (`await response.text()`, `response.json()`, a non-streaming request) "
            "before parsing, or collecting the events (an SDK stream collected with `finalMessage()`, an array "
            "of parts) and firing the callbacks at the end."
        ),
    },
    "STR-03": {
        "text": (
            "`onThinking(delta, false)` calls concatenate to `thinking.content`; each thinking block ends with "
            "exactly one `onThinking(_, true)` after its partial calls."
        ),
        "why": (
            "UIs show reasoning live and close the reasoning panel on `isComplete`; a missing or repeated "
            "completion leaves the UI stuck or flickering."
        ),
        "common_mistakes": (
            "Signalling `isComplete` once per response instead of once per block, signalling it twice (on "
            "`content_block_stop` and again at message end), or only sending the whole thinking text with "
            "`isComplete: true`."
        ),
    },
    "STR-05": {
        "text": (
            "`onToolCall` is invoked exactly once per returned tool call, with the same id, name and arguments, "
            "after that call's arguments are complete, in result order."
        ),
    },
    "STR-06": {
        "text": (
            "`onError` is invoked exactly once with the returned error when the result is an error result, and "
            "never on success."
        ),
        "common_mistakes": (
            "Calling `onError` in both an inner handler and an outer wrapper, calling it for a failed attempt "
            "that a retry then fixed, or forgetting it on the abort path."
        ),
    },
    "STR-07": {
        "text": "No callback is invoked after the promise `generateStep` returned has settled.",
        "common_mistakes": (
            "Calling a callback without awaiting it from a promise chain the step does not wait for (`void "
            "onTextDelta(...)`, `.then(...)` left running), or a background reader that keeps delivering events "
            "after the result was returned."
        ),
    },
    "STR-08": {
        "why": (
            "Async callbacks usually write to sockets or storage; overlapping or unawaited calls reorder output "
            "and lose their errors as unhandled rejections."
        ),
        "common_mistakes": (
            "Calling an async callback without `await`, running callbacks concurrently with `Promise.all`, or "
            "handing them to a `for await` loop that does not wait for them."
        ),
    },
    "STR-09": {
        "common_mistakes": (
            "Accumulating text only inside the `onTextDelta` branch, or taking a different (non-streaming) code "
            "path when `callbacks` is undefined."
        ),
    },
    "STR-11": {
        "text": (
            "A callback that throws or rejects does not make `generateStep` reject; the step still returns a "
            "valid StepResult."
        ),
        "common_mistakes": (
            "Awaiting callbacks outside a try/catch, so the callback's error aborts the stream and rejects "
            "`generateStep`'s promise."
        ),
    },
    "MSG-03": {
        "common_mistakes": (
            "Generating new ids, sending arguments as `String(object)` (`[object Object]`) instead of "
            "`JSON.stringify`, or double-encoding OpenAI `arguments`."
        ),
    },
    "MSG-04": {
        "common_mistakes": (
            "Sending each Anthropic `tool_result` in its own user message, omitting OpenAI's `tool_call_id` "
            "(the message's `toolCallId`), or giving Gemini's `functionResponse` the call id instead of the tool "
            "name."
        ),
    },
    "MSG-07": {
        "common_mistakes": (
            "Appending cache markers or converted tools to the caller's arrays, `delete`-ing keys from "
            "`providerOptions`, or editing message objects in place while merging turns."
        ),
    },
    "TOOL-02": {
        "common_mistakes": (
            "Converting `inputSchema` but dropping `$defs` so `$ref`s dangle, losing enums or the `anyOf` of "
            "optionals, flattening nested objects, or leaving Gemini's `parameters` out of a tool that has "
            "arguments."
        ),
    },
    "TOOL-05": {
        "common_mistakes": (
            "Sending names with spaces or dots to OpenAI unchecked, or letting the schema converter throw instead "
            "of returning an error result."
        ),
    },
    "CFG-01": {
        "text": (
            "Set generation parameters reach the provider's fields (`maxOutputTokens`, `temperature`, `topP`, "
            "`topK`, `presencePenalty`/`frequencyPenalty`, `stopSequences`, `seed`); unset ones are absent."
        ),
        "common_mistakes": (
            "Sending `temperature: null`, putting `maxOutputTokens` in the wrong field (`max_tokens` vs "
            "`max_completion_tokens`, Gemini `maxOutputTokens`), or forgetting `topK` and `seed`."
        ),
    },
    "CFG-02": {
        "text": (
            "`config.headers` are sent; `config.providerOptions[<provider>]` is merged into the request. The "
            "keys read: `openai` (openai-chat), `anthropic` (anthropic-messages), `gemini` or `google` (gemini; "
            "`google` is the Vercel AI SDK's key)."
        ),
        "why": (
            "Headers carry beta flags, organisation ids and gateway auth; `providerOptions` is the escape hatch "
            "for features the contract does not model."
        ),
        "common_mistakes": (
            "Ignoring `config.headers`, spreading the whole `providerOptions` object instead of the adapter's "
            "own provider key, or dropping it silently."
        ),
    },
    "CFG-03": {
        "text": (
            "`config.maxRetries` is honoured: a retryable failure (429, 5xx, 529, connect error) is retried at "
            "most `maxRetries` times, then surfaced; a non-retryable one (400, 401, 403) is never retried."
        ),
        "common_mistakes": (
            "Off-by-one counting (`maxRetries` attempts instead of 1 + `maxRetries`), retrying 400/401, not "
            "retrying 529 or connect errors, or stacking the SDK's own retries on top of the adapter's (openai "
            "and @anthropic-ai/sdk retry 408/409/429/5xx and connection errors twice by default: build the "
            "client with `maxRetries: 0` and retry `config.maxRetries` times yourself, or pass "
            "`config.maxRetries` to the SDK and do not retry again)."
        ),
    },
    "CFG-04": {
        "text": (
            "An error that survived the adapter's own retries is `retryable: false`; with `maxRetries: 0` a "
            "429/5xx surfaces `retryable: true`."
        ),
    },
    "ERR-02": {
        "text": (
            "The error is a HelixError with that code, `category: 'provider'`, `statusCode` = the HTTP status, "
            "`retryable` true for 408/429/5xx/529 and false for 4xx otherwise, and the underlying error on "
            "`cause`."
        ),
        "why": (
            "Retry logic and error reporting read `code`, `retryable`, `statusCode` and `cause`; a plain Error "
            "or a missing field breaks both."
        ),
        "common_mistakes": (
            "Returning the SDK's error directly (openai's `APIError` has `status`, not `statusCode`), leaving "
            "`statusCode` unset, not passing the underlying error as `cause`, or marking every error retryable."
        ),
    },
    "ERR-03": {
        "common_mistakes": (
            "Ignoring Anthropic `event: error`, treating an OpenAI chunk with an `error` key as an empty chunk, "
            "or failing to parse Gemini's raw JSON error body. With the official JS SDKs, classifying by HTTP "
            "status: a stream's error event has none. @anthropic-ai/sdk throws `event: error` as an `APIError` "
            "whose `status` is undefined (the code is `err.type`, e.g. `overloaded_error`; the body is "
            "`err.error`); openai throws an error chunk as an `APIError` with no `status` whose body is in "
            "`err.error` (`err.code`, `err.type`; OpenRouter's numeric `code` is the HTTP status it stands "
            "for). Mapping OpenRouter's `code` 429 or 400 to provider_error."
        ),
    },
    "ERR-04": {
        "common_mistakes": (
            "Returning whatever was accumulated when the stream ends without `message_stop`, `[DONE]` or a "
            "finish reason, or marking the error non-retryable. A body that drops mid-stream rejects the read "
            "with undici's `TypeError: terminated` (its `cause` a `SocketError`), not an SDK class, so a "
            "`catch` that only knows the SDK's errors lets it through or calls it non-retryable. Taking an "
            "OpenAI Chat stream that `[DONE]` ended for a dropped one because no chunk carried a finish_reason "
            "(Snowflake Cortex and Novita send none): `[DONE]` is that stream's terminal event."
        ),
    },
    "ERR-05": {
        "common_mistakes": (
            "Letting fetch's `TypeError: fetch failed` (a refused connection, its `cause` an `ECONNREFUSED` "
            "error) or an idle-timeout abort reject the step, mapping timeouts to `provider_error`, or letting "
            "`response.json()` throw its SyntaxError on an HTML 502 page. With the official JS SDKs: "
            "`APIConnectionError` and `APIConnectionTimeoutError` before the stream starts, undici's "
            "`TypeError: terminated` after; map timeouts to provider_timeout and the rest to provider_error, "
            "both retryable."
        ),
    },
    "ERR-06": {
        "text": "An error result has `shouldStop: true` and `stopReason: 'error'`.",
        "why": (
            "The framework stops on `shouldStop`; an error result that does not stop makes the loop call the "
            "model again blindly."
        ),
        "common_mistakes": (
            "Building the error result with `shouldStop: false`, or copying the provider's finish reason into "
            "`stopReason`."
        ),
    },
    "NT-01": {
        "text": (
            "`generateStep` never throws or rejects, and leaves no error unhandled: every failure (HTTP, "
            "transport, malformed or truncated body, invalid arguments, callback errors, unexpected shapes) "
            "comes back as an error result."
        ),
        "common_mistakes": (
            "Wrapping only the `fetch` call in try/catch, so parsing, argument decoding or callback errors "
            "reject the step; rethrowing after logging; or starting a promise nobody awaits or catches (a "
            "telemetry call, a `.then()` without `.catch()`): Node ends the process on an unhandled rejection "
            "by default, which the harness reports here. Ending the process (`process.exit`) is the worst "
            "case: the harness reports it here as AdapterProcessEnded."
        ),
    },
    "NT-03": {
        "text": (
            "Cancellation is not swallowed: a JavaScript step is cancelled by aborting its `abortSignal`; "
            "cancelled mid-stream, it settles promptly with an error result, without reading the rest of the "
            "response (judged for adapters that declare `abort`: without it nothing can cancel a step)."
        ),
        "why": (
            "A promise cannot be cancelled from outside: the signal is the only way a framework stops a step "
            "(a user pressing stop, a timeout of its own). A step that ignores it keeps billing tokens and holds "
            "the agent until the provider finishes."
        ),
        "common_mistakes": (
            "Catching the `AbortError` and retrying or reading on as if it were a network error, passing the "
            "signal to the first request only (not to a retry, or not to the body's reader), or rejecting with "
            "the `AbortError` instead of returning an error result (`request_aborted`)."
        ),
    },
    "NT-04": {
        "common_mistakes": (
            "Relying on `fetch` (which has no read timeout) or an official JS SDK's `timeout` (openai and "
            "@anthropic-ai/sdk clear it once the headers arrive) for a streamed body: a stalled stream then "
            "waits for undici's 300 s body timeout. Re-arm an idle timer on every chunk and abort the request "
            "when it fires."
        ),
    },
    "AB-03": {
        "text": (
            "An abort error is distinguishable and terminal: code `request_aborted`, `retryable: false`, never "
            "retried."
        ),
    },
    "CACHE-01": {"text": "With `caching` unset or `false`, no cache markers are sent."},
    "HARN-01": {
        "common_mistakes": (
            "Sending an extra request (a models-list or token-count call, an unplanned retry) or a different "
            "URL or body than the one recorded. The classic unplanned retry is the official SDK's own: openai "
            "and @anthropic-ai/sdk retry 408/409/429/5xx twice by default, so build the client with "
            "`maxRetries: 0` and honour `config.maxRetries` in the adapter, or hand `config.maxRetries` to the "
            "SDK (CFG-03). Sending to another host than `context.baseUrl`."
        ),
    },
    "HARN-04": {
        "text": (
            "No timer or immediate the adapter scheduled (`setTimeout`, `setInterval`, `setImmediate`, its "
            "SDK's included) is still pending after its step settled."
        ),
        "why": (
            "Leftover timers fire after the step: they call back late, retry what was over, keep the process "
            "alive and leak memory in a long-running agent."
        ),
        "common_mistakes": (
            "An idle or retry timer not cleared on every path (return, error, abort), a `setInterval` "
            "keep-alive, or an SDK's timeout left armed because the response body was never consumed or "
            "cancelled."
        ),
    },
}
"""Clause id -> field (``text``, ``why``, ``common_mistakes``) -> its TypeScript wording."""
