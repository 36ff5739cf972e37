"""The clause catalogue of the LLMAdapter contract, as typed data.

Every check of the harness names one of these clauses, so that a failure says which rule it breaks, why the
rule exists and what adapters usually get wrong there. The catalogue follows the product specification
clause for clause (ids, levels and sources); ``docs/contract.md`` is the same catalogue written for users.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from .clauses_typescript import TYPESCRIPT
from .language import Language

__all__ = ["ADDED_SINCE_SPECIFICATION", "AREAS", "CLAUSES", "RETRY_AFTER_BOUND_S", "Clause", "get_clause"]


@dataclass(frozen=True)
class Clause:
    """One clause of the contract.

    ``source`` says where the rule comes from: ``seed`` (the Helix adapter documents the product was
    specified from), ``helix-later`` (later Helix releases), ``wire`` (provider API behaviour) or
    ``harness`` (a rule this product adds because real adapters break there).
    """

    id: str
    area: str
    level: Literal["MUST", "SHOULD"]
    source: Literal["seed", "helix-later", "wire", "harness"]
    text: str
    why: str
    common_mistakes: str

    @property
    def is_must(self) -> bool:
        """True for MUST clauses, which fail the gate; SHOULD clauses fail it only under --helix-strict."""
        return self.level == "MUST"


RETRY_AFTER_BOUND_S = 120.0
"""CFG-05's bound: the longest wait between two attempts the contract allows, whatever the retry hint says
(the official openai SDK's ``MAX_RETRY_AFTER_DELAY = 2 * 60``: "Honor server-directed delays up to two
minutes"). A scenario whose hint is longer gives the step this much more time than ``--helix-timeout``."""


AREAS: dict[str, str] = {
    "RES": "Results",
    "FIN": "Finish tool",
    "STOP": "Stop reasons",
    "STR": "Streaming callbacks",
    "MSG": "Message conversion",
    "TOOL": "Tool schemas",
    "CFG": "Configuration",
    "ERR": "Errors",
    "NT": "Never throw",
    "AB": "Abort",
    "CACHE": "Prompt caching",
    "HARN": "Harness integrity",
}

CLAUSES: dict[str, Clause] = {
    "RES-01": Clause(
        id="RES-01",
        area="RES",
        level="MUST",
        source="seed",
        text="The return value is a valid StepResult of exactly one of the four types.",
        why=(
            "The framework dispatches on the result's `type`; anything else (None, a dict, the provider's "
            "response object, a hybrid of two result types) crashes or silently derails the agent loop."
        ),
        common_mistakes=(
            "Returning a dict or the provider SDK's response object, returning None on a rarely taken path, "
            "or filling fields of two result types (e.g. `tool_calls` on a text result)."
        ),
    ),
    "RES-02": Clause(
        id="RES-02",
        area="RES",
        level="MUST",
        source="seed",
        text=(
            "A text result has `should_stop=True`; a tool-calls result has `should_stop=False` and "
            "`stop_reason='tool_use'`."
        ),
        why=(
            "The agent loop uses `should_stop` to decide whether to run tools and call the model again; a "
            "wrong value ends the run early or loops forever."
        ),
        common_mistakes=(
            "Copying the provider's finish reason into a tool-calls result (`stop_reason='end_turn'`), or "
            "leaving `should_stop=False` on a text result because the provider reported `length`."
        ),
    ),
    "RES-03": Clause(
        id="RES-03",
        area="RES",
        level="MUST",
        source="seed",
        text=(
            "`tool_calls` is non-empty; every call has a non-empty id, unique in the step, the provider's id "
            "where the provider sent one."
        ),
        why=(
            "Tool results are linked back to their calls by id; a missing, duplicated or invented id makes "
            "the next request reference the wrong call, and the provider rejects it."
        ),
        common_mistakes=(
            "Returning a ToolCallsStepResult with an empty list, generating fresh UUIDs instead of keeping "
            "the provider's `call_...`/`toolu_...` id, or taking the empty id of a later OpenAI delta chunk."
        ),
    ),
    "RES-04": Clause(
        id="RES-04",
        area="RES",
        level="MUST",
        source="seed",
        text=(
            "`arguments` are parsed JSON objects (dict), never a JSON string; numbers and booleans keep "
            "their JSON types."
        ),
        why=(
            "Tools are invoked with arguments validated against their schema; a JSON string or stringified "
            "numbers fail validation or call the tool with the wrong types."
        ),
        common_mistakes=(
            "Passing the accumulated `arguments` string through unparsed, calling `json.loads` on something "
            'already decoded, or coercing values through `str` so `3` becomes `"3"` and `true` becomes '
            '`"True"`.'
        ),
    ),
    "RES-05": Clause(
        id="RES-05",
        area="RES",
        level="MUST",
        source="harness",
        text='An absent or empty argument string (`""`, Anthropic `partial_json:""`) parses to `{}`.',
        why=(
            "Providers send no argument text for tools without parameters; treating that as invalid JSON "
            "turns a valid tool call into an error."
        ),
        common_mistakes=(
            'Calling `json.loads("")` and surfacing the JSONDecodeError, or returning None instead of `{}` '
            'for an Anthropic `input_json_delta` with `partial_json: ""`.'
        ),
    ),
    "RES-06": Clause(
        id="RES-06",
        area="RES",
        level="MUST",
        source="seed",
        text=(
            "Parallel tool calls are all returned, in the provider's order, none merged (e.g. OpenAI deltas "
            "keyed by `index`)."
        ),
        why=(
            "The model expects a result for every call it made; a merged or dropped call corrupts arguments "
            "and leaves a call unanswered, which the provider rejects on the next turn."
        ),
        common_mistakes=(
            "Merging OpenAI tool_call deltas by `id` (sent only on a call's first chunk) instead of by "
            "`index`, keying Anthropic blocks by tool name, or sorting the calls."
        ),
    ),
    "RES-07": Clause(
        id="RES-07",
        area="RES",
        level="MUST",
        source="seed",
        text='Text that accompanies tool calls is kept in `content` ("don\'t discard").',
        why=(
            "The text is part of the assistant turn that users see and that goes back into the history; "
            "discarding it loses the model's explanation and changes later context."
        ),
        common_mistakes=(
            "Returning only `tool_calls` when the response also had text deltas, or setting `content=None` "
            "whenever tool calls are present."
        ),
    ),
    "RES-08": Clause(
        id="RES-08",
        area="RES",
        level="MUST",
        source="seed",
        text=(
            "Reasoning/thinking content is returned in `thinking` on text, tool-calls and structured results, "
            "redacted reasoning blocks included (`thinking.redacted`, as streamed)."
        ),
        why=(
            "Reasoning is shown to users and, for Anthropic and Gemini, must go back into the history; "
            "losing it on tool-call steps breaks multi-step reasoning."
        ),
        common_mistakes=(
            "Attaching thinking only to text results, dropping Anthropic `thinking_delta` content when a "
            "tool_use block follows, or ignoring the `reasoning_content`/`reasoning` fields of "
            "OpenAI-compatible providers."
        ),
    ),
    "RES-09": Clause(
        id="RES-09",
        area="RES",
        level="MUST",
        source="harness",
        text=(
            "If the response carries tool calls, the result is tool_calls (or structured output) whatever "
            "finish reason the provider reported (`stop` with tool calls happens)."
        ),
        why=(
            "Several providers and proxies report `stop` (Gemini `STOP`) together with tool calls; deciding "
            "by the finish reason alone silently turns requested tool calls into a final answer."
        ),
        common_mistakes=(
            'Branching on `finish_reason == "tool_calls"` instead of on whether tool calls were accumulated.'
        ),
    ),
    "RES-10": Clause(
        id="RES-10",
        area="RES",
        level="SHOULD",
        source="harness",
        text="Tool calls cut off by a token limit are not returned as executable calls.",
        why=(
            "A call cut off at the token limit has incomplete arguments; executing it runs a tool with wrong "
            "or partial input."
        ),
        common_mistakes=(
            "Returning the partial call in a ToolCallsStepResult after `length`/`max_tokens`, or "
            '"repairing" the truncated JSON by closing its braces.'
        ),
    ),
    "RES-11": Clause(
        id="RES-11",
        area="RES",
        level="MUST",
        source="seed",
        text="`sub_agent_calls` is a list (the framework handles sub-agents; empty is fine).",
        why="The framework iterates `sub_agent_calls` on every tool-calls result; None breaks it.",
        common_mistakes=(
            "Passing `sub_agent_calls=None`, or trying to detect sub-agent calls in the adapter instead of "
            "leaving that to the framework."
        ),
    ),
    "RES-12": Clause(
        id="RES-12",
        area="RES",
        level="SHOULD",
        source="harness",
        text=(
            "Unknown event types, unknown content-block types and unknown fields in the response are "
            "ignored, not errors."
        ),
        why=(
            "Providers add event types, content-block types and fields without notice; an adapter that fails "
            "on them breaks in production on the day of a provider release."
        ),
        common_mistakes=(
            "Raising on an unmatched SSE event name (Anthropic `ping`, a new delta type such as "
            "`signature_delta`), parsing responses with `extra='forbid'` models, or an exhaustive match "
            "whose default is an error."
        ),
    ),
    "FIN-01": Clause(
        id="FIN-01",
        area="FIN",
        level="MUST",
        source="seed",
        text=(
            "A call to `__finish__` yields StructuredOutputStepResult with `output` = the call's parsed "
            "arguments, `should_stop=True`, `stop_reason='tool_use'`."
        ),
        why=(
            "The framework returns `output` as the agent's structured result; a `__finish__` returned as an "
            "ordinary tool call makes the agent try to execute a tool that does not exist."
        ),
        common_mistakes=(
            "Returning `__finish__` in a ToolCallsStepResult (the later-Helix behaviour) under the seed "
            "profile, or putting the raw argument string in `output`."
        ),
    ),
    "FIN-02": Clause(
        id="FIN-02",
        area="FIN",
        level="MUST",
        source="seed",
        text="`__finish__` wins when it appears beside other tool calls in the same step.",
        why=(
            "Once the model has finished, the other calls of that step must not run; otherwise side effects "
            "happen after the agent declared its answer."
        ),
        common_mistakes=(
            "Checking only the first tool call for `__finish__`, or returning a ToolCallsStepResult that "
            "lists `__finish__` among the other calls."
        ),
    ),
    "FIN-03": Clause(
        id="FIN-03",
        area="FIN",
        level="MUST",
        source="harness",
        text=(
            "`__finish__` arguments that are not valid JSON give an ErrorStepResult, not an exception and "
            "not a structured result."
        ),
        why=(
            "Garbage would otherwise be passed on as the agent's structured answer, and an exception would "
            "crash the run."
        ),
        common_mistakes=(
            "Letting `json.JSONDecodeError` escape, or returning `output={}` or the raw string as a "
            "structured result."
        ),
    ),
    "FIN-04": Clause(
        id="FIN-04",
        area="FIN",
        level="SHOULD",
        source="seed",
        text=(
            "Thinking and accompanying text of the finishing step are not lost (thinking kept on the "
            "structured result)."
        ),
        why=(
            "The reasoning behind the final answer is shown to users and logged; losing it on the last step "
            "hides the step that matters most."
        ),
        common_mistakes=(
            "Building the StructuredOutputStepResult without `thinking`, or not streaming the accompanying "
            "text through `on_text_delta`."
        ),
    ),
    "FIN-05": Clause(
        id="FIN-05",
        area="FIN",
        level="MUST",
        source="seed",
        text=(
            "A tool that is merely named like the finish tool (`finish`, `__finish`) is an ordinary tool "
            "call."
        ),
        why=(
            "Users may well have a tool called `finish`; treating it as the finish tool ends the agent with "
            "the wrong output."
        ),
        common_mistakes=(
            'Matching with `"finish" in name`, `name.strip("_")` or `startswith` instead of equality '
            "with `FINISH_TOOL_NAME`."
        ),
    ),
    "STOP-01": Clause(
        id="STOP-01",
        area="STOP",
        level="MUST",
        source="seed",
        text=(
            "Provider finish reasons map as follows; no provider string ever appears as `stop_reason`. "
            "OpenAI Chat: `stop` → end_turn (also when a stop sequence matched), `tool_calls` and "
            "`function_call` → tool_use, `length` → max_tokens, `content_filter` → content_filter, `refusal` "
            "content → refusal (SHOULD), anything else, or no finish_reason at all before `[DONE]`, → "
            "unknown. Anthropic Messages: `end_turn` → end_turn, "
            "`tool_use` → tool_use, `max_tokens` and `model_context_window_exceeded` → max_tokens, `refusal` "
            "→ refusal, `stop_sequence` → stop_sequence, `pause_turn` → end_turn (SHOULD), others → unknown. "
            "Gemini: `STOP` → end_turn, or tool_use when the candidate has functionCall parts; `MAX_TOKENS` "
            "→ max_tokens; `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, "
            "`IMAGE_SAFETY`, `MODEL_ARMOR` and a blocked prompt (`promptFeedback.blockReason`, no "
            "candidates) → content_filter; `OTHER`, `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL` and "
            "unknown values → unknown."
        ),
        why=(
            "The framework decides on success, truncation, filtering and refusal from the normalised stop "
            "reason; a raw provider string fails validation or is misread."
        ),
        common_mistakes=(
            'Passing the provider value through (`"stop"`, `"length"`), mapping Gemini `SAFETY` to '
            "end_turn, or forgetting `model_context_window_exceeded` and prompt-blocked Gemini responses "
            "that have no candidates."
        ),
    ),
    "STOP-02": Clause(
        id="STOP-02",
        area="STOP",
        level="MUST",
        source="seed",
        text=(
            "A truncated, filtered or refused text step is still a TextStepResult carrying that stop reason "
            "(the framework fails the agent), never `end_turn`."
        ),
        why=(
            "The framework fails the agent on max_tokens, content_filter or refusal; reporting end_turn "
            "passes a cut-off or censored answer off as complete."
        ),
        common_mistakes=(
            "Hard-coding `stop_reason='end_turn'` on every text result, or mapping only the tool-use case."
        ),
    ),
    "STOP-03": Clause(
        id="STOP-03",
        area="STOP",
        level="MUST",
        source="harness",
        text=(
            "The same recorded content gives the same stop reason whether streamed or not (where the adapter "
            "offers both)."
        ),
        why=(
            "Users switch between streaming and non-streaming; a different stop reason for the same content "
            "makes agent behaviour depend on a transport choice."
        ),
        common_mistakes=(
            "Mapping finish reasons in two code paths that drift apart, e.g. only the streaming path "
            "handling `content_filter`."
        ),
    ),
    "STR-01": Clause(
        id="STR-01",
        area="STR",
        level="MUST",
        source="seed",
        text=(
            "The concatenation of `on_text_delta` deltas equals the final text (`content` of the text or "
            "tool-calls result); no delta is empty."
        ),
        why=(
            "UIs render the streamed text and then store the final content; if they differ, the user sees "
            "one answer and the history holds another."
        ),
        common_mistakes=(
            "Stripping whitespace from the final content but not from the deltas, emitting empty deltas for "
            "role-only or usage chunks, or re-emitting the whole text as a last delta."
        ),
    ),
    "STR-02": Clause(
        id="STR-02",
        area="STR",
        level="MUST",
        source="seed",
        text=(
            "Callbacks are invoked as data arrives, not buffered: for a response of two or more text events, "
            "the first `on_text_delta` happens before the last byte of the response is delivered."
        ),
        why=(
            "Streaming exists so users see progress; a buffering adapter looks frozen for the whole "
            "generation."
        ),
        common_mistakes=(
            "Reading the whole body (`response.read()`, `await response.aread()`, a non-streaming request) "
            "before parsing, or collecting events and firing the callbacks at the end."
        ),
    ),
    "STR-03": Clause(
        id="STR-03",
        area="STR",
        level="MUST",
        source="seed",
        text=(
            "`on_thinking(delta, False)` calls concatenate to `thinking.content`; each thinking block ends "
            "with exactly one `on_thinking(_, True)` after its partial calls."
        ),
        why=(
            "UIs show reasoning live and close the reasoning panel on `is_complete`; a missing or repeated "
            "completion leaves the UI stuck or flickering."
        ),
        common_mistakes=(
            "Signalling `is_complete` once per response instead of once per block, signalling it twice (on "
            "`content_block_stop` and again at message end), or only sending the whole thinking text with "
            "`is_complete=True`."
        ),
    ),
    "STR-04": Clause(
        id="STR-04",
        area="STR",
        level="MUST",
        source="harness",
        text=(
            "Callbacks follow the provider's event order (thinking block before the text that follows it; a "
            "tool call after the text that precedes it)."
        ),
        why=(
            "UIs render callbacks in arrival order; reordering shows text before the reasoning that led to "
            "it, or tool calls out of context."
        ),
        common_mistakes=(
            "Firing callbacks from the finished result (all text, then all thinking, then all tool calls) "
            "instead of from the events as they come."
        ),
    ),
    "STR-05": Clause(
        id="STR-05",
        area="STR",
        level="MUST",
        source="seed",
        text=(
            "`on_tool_call` is invoked exactly once per returned tool call, with the same id, name and "
            "arguments, after that call's arguments are complete, in result order."
        ),
        why=(
            "Frameworks show or start tool calls from this callback; duplicated or partial calls run tools "
            "twice or with partial arguments."
        ),
        common_mistakes=(
            "Firing on every arguments delta or before the arguments are complete, firing again while "
            "building the result, or passing a different id than the one returned."
        ),
    ),
    "STR-06": Clause(
        id="STR-06",
        area="STR",
        level="MUST",
        source="seed",
        text=(
            "`on_error` is invoked exactly once with the returned error when the result is an "
            "ErrorStepResult, and never on success."
        ),
        why=(
            "Error callbacks drive user-facing error display and telemetry; missing or duplicate calls "
            "misreport failures."
        ),
        common_mistakes=(
            "Calling `on_error` in both an inner handler and an outer wrapper, calling it for a failed "
            "attempt that a retry then fixed, or forgetting it on the abort path."
        ),
    ),
    "STR-07": Clause(
        id="STR-07",
        area="STR",
        level="MUST",
        source="harness",
        text="No callback is invoked after `generate_step` has returned.",
        why="Late callbacks write into a finished step's UI or state and race with the next step.",
        common_mistakes=(
            "Fire-and-forget `asyncio.create_task(callback(...))`, or a background reader task that keeps "
            "delivering events after the result was returned."
        ),
    ),
    "STR-08": Clause(
        id="STR-08",
        area="STR",
        level="MUST",
        source="harness",
        text=(
            "Coroutine callbacks are awaited before the next callback and before return (no overlap, none "
            "left pending)."
        ),
        why=(
            "Async callbacks usually write to sockets or storage; overlapping or unawaited calls reorder "
            'output and leak "coroutine was never awaited" warnings.'
        ),
        common_mistakes=(
            "Calling an async callback without awaiting it, running callbacks concurrently with "
            "`asyncio.gather`, or scheduling them with `create_task`."
        ),
    ),
    "STR-09": Clause(
        id="STR-09",
        area="STR",
        level="MUST",
        source="harness",
        text=(
            'The result is the same with callbacks absent, present, sync or async. ("The same" everywhere '
            "in this catalogue compares tool calls by position, name and arguments, and by id only where the "
            "provider sent the id: an adapter may mint random ids where the provider sends none.)"
        ),
        why=(
            "Callbacks are an observation channel; if their presence changes the result, streaming UIs and "
            "batch runs get different answers."
        ),
        common_mistakes=(
            "Accumulating text only inside the `on_text_delta` branch, or taking a different (non-streaming) "
            "code path when `callbacks` is None."
        ),
    ),
    "STR-10": Clause(
        id="STR-10",
        area="STR",
        level="MUST",
        source="harness",
        text=(
            "The result and the callback sequence are the same however the response bytes are split into "
            "chunks (inside a line, a `\\r\\n`, a JSON value, a multi-byte UTF-8 character)."
        ),
        why=(
            "Networks, proxies and HTTP/2 split bytes arbitrarily; a parser that assumes whole lines or "
            "whole characters per chunk fails at random in production."
        ),
        common_mistakes=(
            "Decoding each chunk separately with `.decode()` (breaking multi-byte UTF-8), splitting each "
            "chunk on `\\n` without carrying the remainder over, or mishandling a `\\r\\n` split across two "
            "chunks."
        ),
    ),
    "STR-11": Clause(
        id="STR-11",
        area="STR",
        level="MUST",
        source="harness",
        text=(
            "A callback that raises does not make `generate_step` raise; the step still returns a valid "
            "StepResult (an `on_error` that raises: still the ErrorStepResult)."
        ),
        why="A bug in the user's UI code must not crash the agent run; the step's result is still valid.",
        common_mistakes=(
            "Invoking callbacks without a try/except, so the callback's exception aborts the stream and "
            "escapes `generate_step`."
        ),
    ),
    "MSG-01": Clause(
        id="MSG-01",
        area="MSG",
        level="MUST",
        source="seed",
        text=(
            "System messages reach the provider's system slot (OpenAI `system`/`developer` role; Anthropic "
            "top-level `system`; Gemini `systemInstruction`), content exact."
        ),
        why=(
            "Instructions sent as a user message are weaker or ignored, and some providers reject a `system` "
            "role inside the message list."
        ),
        common_mistakes=(
            "Sending an Anthropic system prompt as a `role: system` message, keeping only the first of "
            "several system messages, or trimming the content."
        ),
    ),
    "MSG-02": Clause(
        id="MSG-02",
        area="MSG",
        level="MUST",
        source="seed",
        text="User and assistant text is sent exactly (unicode, whitespace, empty strings where allowed).",
        why="The model must see what was written; altered text changes answers and defeats prompt caching.",
        common_mistakes=(
            "Stripping whitespace, normalising unicode, escaping twice, or dropping messages whose content "
            "is an empty string."
        ),
    ),
    "MSG-03": Clause(
        id="MSG-03",
        area="MSG",
        level="MUST",
        source="seed",
        text=(
            "Assistant tool calls in history are sent with the same ids, names and JSON-equal arguments, in the "
            "form the provider takes them (OpenAI's `arguments` is a JSON string, never an object)."
        ),
        why=(
            "Providers match tool results to calls by id and the model reasons over its earlier arguments; "
            "changed ids are rejected and changed arguments mislead the model."
        ),
        common_mistakes=(
            "Generating new ids, sending arguments as Python `str(dict)` instead of JSON, or double-encoding "
            "OpenAI `arguments`."
        ),
    ),
    "MSG-04": Clause(
        id="MSG-04",
        area="MSG",
        level="MUST",
        source="seed",
        text=(
            "Tool messages are sent as the provider's tool results, linked by id (OpenAI `role:tool` + "
            "`tool_call_id`; Anthropic `tool_result` blocks, consecutive results in one user message; Gemini "
            "`functionResponse` with the tool name)."
        ),
        why=(
            "Providers reject tool results that do not follow their calls with the matching id, so the next "
            "turn's request fails."
        ),
        common_mistakes=(
            "Sending each Anthropic `tool_result` in its own user message, omitting `tool_call_id`, or "
            "giving Gemini's `functionResponse` the call id instead of the tool name."
        ),
    ),
    "MSG-05": Clause(
        id="MSG-05",
        area="MSG",
        level="MUST",
        source="seed",
        text=(
            "Order is preserved; nothing is dropped or duplicated; consecutive same-role turns are merged "
            "where the provider rejects them (Gemini `user`/`model`; a user text turn after a user turn of "
            "functionResponse parts is answered, so it may stay a turn of its own). Anthropic's Messages API "
            "combines consecutive same-role turns itself, so there merging is allowed, not required."
        ),
        why=(
            'Conversation order is meaning. Gemini answers consecutive turns of one role with 400 "Please '
            'ensure that multiturn requests alternate between user and model." (as gateways that merge turns '
            "for it report, e.g. Portkey), but answers a user text turn after a functionResponse turn (a live "
            "Vertex recording from pydantic-ai, test_multimodal_tool_return_matrix; LiteLLM and "
            'langchain-google-genai send that shape); the Messages API reference says "Consecutive user or '
            'assistant turns in your request will be combined into a single turn".'
        ),
        common_mistakes=(
            "Grouping messages by role, dropping a consecutive user message instead of merging it (or keeping "
            "only the last turn while merging), or duplicating a tool result while merging."
        ),
    ),
    "MSG-06": Clause(
        id="MSG-06",
        area="MSG",
        level="MUST",
        source="wire",
        text=(
            "No empty text blocks are sent where the provider rejects them (an assistant turn with only tool "
            "calls, an empty user message)."
        ),
        why=(
            "Anthropic rejects empty text content blocks and turns with no content, and Gemini a turn with no "
            'parts; OpenAI Chat accepts `content: ""` beside `tool_calls`, so there it is no breach.'
        ),
        common_mistakes=(
            'Always emitting a text block with `content or ""` for an assistant turn that only has tool '
            "calls (Anthropic, Gemini), or a Gemini turn with no parts."
        ),
    ),
    "MSG-07": Clause(
        id="MSG-07",
        area="MSG",
        level="MUST",
        source="harness",
        text="The input (messages, tools, config) is not mutated.",
        why=(
            "The framework reuses messages, tools and config across steps; a mutation leaks one step's "
            "changes into the next request."
        ),
        common_mistakes=(
            "Appending cache markers or converted tools to the caller's lists, popping keys from "
            "`provider_options`, or editing message objects in place while merging turns."
        ),
    ),
    "MSG-08": Clause(
        id="MSG-08",
        area="MSG",
        level="SHOULD",
        source="wire",
        text=(
            "Thinking in history round-trips where the provider needs it (Anthropic signature, Gemini "
            "thought signature). A Gemini `thoughtSignature` is proto `bytes`: any base64 of the same bytes "
            "(standard or URL-safe, padded or not) is the same signature."
        ),
        why=(
            "Anthropic requires signed thinking blocks before tool_use in history when thinking is enabled, "
            "and Gemini needs thought signatures to keep its reasoning context. Proto3 JSON parsers accept "
            '"either standard or URL-safe base64 encoding with/without paddings" for bytes, and google-genai '
            "sends the signature URL-safe."
        ),
        common_mistakes=(
            "Dropping thinking from assistant history, keeping the thinking text but dropping the "
            "`signature` / `thoughtSignature`, or base64-encoding the signature's text once more."
        ),
    ),
    "MSG-09": Clause(
        id="MSG-09",
        area="MSG",
        level="SHOULD",
        source="wire",
        text="The request body validates against the provider's published request schema.",
        why=(
            "Invalid requests come back as 400s at runtime, often only for some message combinations, so "
            "they slip past a happy-path test."
        ),
        common_mistakes=(
            "Sending `null` for optional fields, the wrong field spelling (`max_tokens` vs "
            "`maxOutputTokens`), or fields the schema does not have."
        ),
    ),
    "MSG-10": Clause(
        id="MSG-10",
        area="MSG",
        level="MUST",
        source="seed",
        text=(
            "Streaming is requested (`stream: true`, `:streamGenerateContent?alt=sse`) so callbacks can be "
            "incremental."
        ),
        why="Without a streaming request the callbacks cannot be incremental (STR-02).",
        common_mistakes=(
            "Forgetting `stream: true`, or calling Gemini's `:generateContent` instead of "
            "`:streamGenerateContent?alt=sse`."
        ),
    ),
    "TOOL-01": Clause(
        id="TOOL-01",
        area="TOOL",
        level="MUST",
        source="seed",
        text="Every tool is sent with its name and description unchanged, `__finish__` included.",
        why=(
            "The model picks tools by name and description; renamed tools produce calls the framework cannot "
            "route, and without `__finish__` the agent can never return its structured output."
        ),
        common_mistakes=(
            "Filtering `__finish__` out as internal, sanitising tool names (`get-weather` sent as `get_weather`, "
            "Gemini's `weather.current` as `weather_current`), or truncating descriptions."
        ),
    ),
    "TOOL-02": Clause(
        id="TOOL-02",
        area="TOOL",
        level="MUST",
        source="seed",
        text=(
            "The parameters schema is equivalent to the tool's input schema: the same instances are valid "
            "and invalid under both (checked on generated instances), nested models, enums, optionals, "
            "arrays and `$defs` included. Gemini takes the schema as `parameters` (its OpenAPI subset) or "
            "`parametersJsonSchema` (JSON Schema); a declaration with neither takes no arguments, which is "
            "equivalent only for a tool whose schema has no properties."
        ),
        why=(
            "The model generates arguments from the schema it was sent; a lossy conversion yields arguments "
            "that fail the tool's own validation. Gemini's FunctionDeclaration: \"For function with no "
            'parameters, this can be left unset".'
        ),
        common_mistakes=(
            "Taking `model_json_schema()` but dropping `$defs` so `$ref`s dangle, losing enums or the "
            "`anyOf` of optionals, flattening nested models, or leaving Gemini's `parameters` out of a tool "
            "that has arguments."
        ),
    ),
    "TOOL-03": Clause(
        id="TOOL-03",
        area="TOOL",
        level="MUST",
        source="wire",
        text=(
            "Provider restrictions hold: Anthropic `input_schema` is an object schema; Gemini parameters "
            "have no `$ref`/`$defs` (inlined) and only its supported keywords; OpenAI `strict` tools have "
            "`additionalProperties:false` and every property required."
        ),
        why="Providers reject schemas outside their subset with a 400 for the whole request.",
        common_mistakes=(
            "Sending `$ref`/`$defs` or unsupported keywords to Gemini, a non-object root schema to "
            "Anthropic, or OpenAI `strict` tools with optional properties missing from `required`."
        ),
    ),
    "TOOL-04": Clause(
        id="TOOL-04",
        area="TOOL",
        level="MUST",
        source="seed",
        text="No tools → no tools field and no tool choice in the request.",
        why="Several providers reject an empty `tools` array or a tool choice without tools.",
        common_mistakes='Always sending `tools: []` and `tool_choice: "auto"`.',
    ),
    "TOOL-05": Clause(
        id="TOOL-05",
        area="TOOL",
        level="SHOULD",
        source="harness",
        text=(
            "A tool the provider cannot accept (name pattern, unsupported schema) gives an ErrorStepResult "
            "with `provider_invalid_request` before any request is sent."
        ),
        why=(
            "Failing locally gives a clear error instead of a provider 400 after a network round trip and "
            "possibly retries."
        ),
        common_mistakes=(
            "Sending names with spaces or dots to OpenAI unchecked, or letting the schema converter raise "
            "instead of returning an ErrorStepResult."
        ),
    ),
    "CFG-01": Clause(
        id="CFG-01",
        area="CFG",
        level="MUST",
        source="seed",
        text=(
            "Set generation parameters reach the provider's fields (max_output_tokens, temperature, top_p, "
            "top_k, presence/frequency penalty, stop_sequences, seed); unset ones are absent."
        ),
        why=(
            "Users set temperature, limits and stop sequences deliberately; dropped parameters silently "
            "change model behaviour, and sending values for unset ones overrides the provider's defaults."
        ),
        common_mistakes=(
            "Sending `temperature: null`, putting max_output_tokens in the wrong field (`max_tokens` vs "
            "`max_completion_tokens`, Gemini `maxOutputTokens`), or forgetting `top_k` and `seed`. With an "
            "official SDK, passing a parameter its typed `create()` no longer accepts (recent anthropic SDKs "
            "have no `temperature`/`top_p`/`top_k` keywords: send them in `extra_body`); the TypeError is "
            "raised before any request is sent."
        ),
    ),
    "CFG-02": Clause(
        id="CFG-02",
        area="CFG",
        level="MUST",
        source="seed",
        text=(
            "`config.headers` are sent; `provider_options[<provider>]` is merged into the request. The keys "
            "read: `openai` (openai-chat), `anthropic` (anthropic-messages), `gemini` or `google` (gemini; "
            "`google` is the Vercel AI SDK's key)."
        ),
        why=(
            "Headers carry beta flags, organisation ids and gateway auth; `provider_options` is the escape "
            "hatch for features the contract does not model."
        ),
        common_mistakes=(
            "Ignoring `config.headers`, merging the whole `provider_options` dict instead of the adapter's "
            "own provider key, or dropping it silently."
        ),
    ),
    "CFG-03": Clause(
        id="CFG-03",
        area="CFG",
        level="MUST",
        source="seed",
        text=(
            "`max_retries` is honoured: a retryable failure (429, 5xx, 529, connect error) is retried at "
            "most `max_retries` times, then surfaced; a non-retryable one (400, 401, 403) is never retried, and "
            "neither is a failure after output reached the callbacks (the user would see it twice)."
        ),
        why=(
            "Unbounded retries multiply cost and latency, and retrying auth or validation errors hammers the "
            "API without any hope of success."
        ),
        common_mistakes=(
            "Off-by-one counting (`max_retries` attempts instead of 1 + `max_retries`), retrying 400/401, "
            "not retrying 529 or connect errors, or stacking the SDK's own retries on top of the adapter's "
            "(the openai and anthropic SDKs retry 408/409/429/5xx and connection errors twice by default: "
            "build the client with `max_retries=0` and retry `config.max_retries` times yourself)."
        ),
    ),
    "CFG-04": Clause(
        id="CFG-04",
        area="CFG",
        level="SHOULD",
        source="helix-later",
        text=(
            "An error that survived the adapter's own retries is `retryable=False`; with `max_retries=0` a "
            "429/5xx surfaces `retryable=True`."
        ),
        why="If the adapter already retried, the framework must not retry again and multiply the attempts.",
        common_mistakes=(
            "Setting `retryable` from the status code alone, even after the adapter's retries were used up."
        ),
    ),
    "CFG-05": Clause(
        id="CFG-05",
        area="CFG",
        level="SHOULD",
        source="wire",
        text=(
            "`Retry-After` / `retry-after-ms` / Gemini `RetryInfo` is honoured between retries (bounded): a "
            "hint of at most two minutes is waited for in full; no wait between two attempts exceeds two "
            "minutes, whatever the hint (cap it, fall back to the adapter's own backoff, or surface the error)."
        ),
        why=(
            "Ignoring the server's hint gets the retry rate-limited again, while an unbounded wait hangs the "
            "agent. Two minutes is the official openai SDK's bound (`MAX_RETRY_AFTER_DELAY`)."
        ),
        common_mistakes=(
            "Using a fixed backoff, parsing only integer seconds (not `retry-after-ms` or an HTTP date), or "
            "sleeping for whatever the header says without a cap."
        ),
    ),
    "ERR-01": Clause(
        id="ERR-01",
        area="ERR",
        level="MUST",
        source="seed",
        text=(
            "HTTP status maps to code: 401, 403 → `provider_auth_error`; 429 → `provider_rate_limited`; 408 "
            "→ `provider_timeout`; 400, 404, 413, 422 → `provider_invalid_request`; 503, 529 → "
            "`provider_overloaded`; other 5xx → `provider_error`."
        ),
        why=(
            "Frameworks and users branch on the code (re-authenticate, back off, fix the request); a wrong "
            "code triggers the wrong remedy."
        ),
        common_mistakes=(
            "Mapping 503/529 or 408 to `provider_error`, or 404/413/422 to `provider_error` instead of "
            "`provider_invalid_request`."
        ),
    ),
    "ERR-02": Clause(
        id="ERR-02",
        area="ERR",
        level="MUST",
        source="seed",
        text=(
            "The error is a HelixError with that code, `category='provider'`, `status_code` = the HTTP "
            "status, `retryable` true for 408/429/5xx/529 and false for 4xx otherwise, and the underlying "
            "exception on `cause`."
        ),
        why=(
            "Retry logic and error reporting read `code`, `retryable`, `status_code` and `cause`; a plain "
            "exception or a missing field breaks both."
        ),
        common_mistakes=(
            "Returning the SDK's exception directly, leaving `status_code` unset, not chaining the "
            "underlying exception as `cause`, or marking every error retryable."
        ),
    ),
    "ERR-03": Clause(
        id="ERR-03",
        area="ERR",
        level="MUST",
        source="wire",
        text=(
            "An error delivered inside a 200 stream (Anthropic `event: error` e.g. `overloaded_error`; "
            "OpenAI/OpenRouter/Groq error chunk; Gemini raw JSON error) gives an ErrorStepResult with the "
            "code of its type (`overloaded_error` → provider_overloaded, `rate_limit_error` → "
            "provider_rate_limited, others → provider_error). An error with no type and a numeric `code` "
            "(OpenRouter) has the code of that HTTP status by ERR-01's table (429 → provider_rate_limited, "
            "400 → provider_invalid_request, 502 → provider_error...): OpenRouter documents `error.code` as "
            "the HTTP status the error stands for, sent in the stream once the 200 is under way "
            "(openrouter.ai/docs/api/reference/errors-and-debugging). Its `retryable` is that of the HTTP "
            "status its type stands for (ERR-02): overloaded, rate limit and server errors true, a request "
            "error false."
        ),
        why=(
            "Providers report overloads inside an HTTP 200 stream; treating that stream as a success returns "
            "empty or truncated output as a normal answer."
        ),
        common_mistakes=(
            "Ignoring Anthropic `event: error`, treating an OpenAI chunk with an `error` key as an empty "
            "chunk, or failing to parse Gemini's raw JSON error body. With the official SDKs, classifying "
            "by HTTP status: the anthropic SDK raises an `event: error` as an `APIStatusError` whose "
            "`status_code` is the stream's 200 (take the code from `error.type`), the openai SDK an "
            "`APIError` with no status (take it from `.type`/`.code`; OpenRouter's numeric code reaches "
            "`.code` as a string, `.body['code']` keeps the number). Mapping OpenRouter's `code` 429 or 400 to "
            "provider_error."
        ),
    ),
    "ERR-04": Clause(
        id="ERR-04",
        area="ERR",
        level="MUST",
        source="helix-later",
        text=(
            "A connection drop or a stream that ends without its terminal event after output started gives "
            "`provider_error`, retryable; the partial text is not returned as a successful step."
        ),
        why=(
            "A cut-off stream is a transport failure; returning the partial text as a successful step gives "
            "the user half an answer."
        ),
        common_mistakes=(
            "Returning whatever was accumulated when the stream ends without `message_stop`, `[DONE]` or a "
            "finish reason, or marking the error non-retryable. With the anthropic SDK, a dropped stream "
            "raises a bare `httpx2.ReadError`/`httpx2.ReadTimeout` (not an SDK class) that a catch-all "
            "turns into a non-retryable error. Taking an OpenAI Chat stream that `[DONE]` ended for a "
            "dropped one because no chunk carried a finish_reason (Snowflake Cortex and Novita send none): "
            "`[DONE]` is that stream's terminal event."
        ),
    ),
    "ERR-05": Clause(
        id="ERR-05",
        area="ERR",
        level="MUST",
        source="harness",
        text=(
            "Connect failures → `provider_error` (retryable); read/connect timeouts → `provider_timeout` "
            "(retryable); a body that is not the provider's format (HTML error page, invalid JSON, "
            "`text/plain`) → `provider_error`."
        ),
        why=(
            "Proxies and gateways return HTML or plain-text error pages and connections fail; these must "
            "become clear, correctly classified errors rather than parse crashes."
        ),
        common_mistakes=(
            "Letting `httpx.ConnectError`/`ReadTimeout` escape, mapping timeouts to `provider_error`, or "
            "raising `JSONDecodeError` on an HTML 502 page. With an official SDK, catching only its own "
            "classes: the openai SDK wraps transport failures as `APITimeoutError`/`APIConnectionError`, but "
            "the anthropic SDK lets `httpx2.ReadTimeout`/`httpx2.ReadError` escape from a stream that has "
            "started, so also map `httpx2.TimeoutException` (provider_timeout) and `httpx2.TransportError` "
            "(provider_error), both retryable."
        ),
    ),
    "ERR-06": Clause(
        id="ERR-06",
        area="ERR",
        level="MUST",
        source="harness",
        text="An ErrorStepResult has `should_stop=True` and `stop_reason='error'`.",
        why=(
            "The framework stops on `should_stop`; an error result that does not stop makes the loop call "
            "the model again blindly."
        ),
        common_mistakes=(
            "Constructing ErrorStepResult with `should_stop=False`, or copying the provider's finish reason "
            "into `stop_reason`."
        ),
    ),
    "ERR-07": Clause(
        id="ERR-07",
        area="ERR",
        level="MUST",
        source="harness",
        text="No API key appears in an error's message or in `str(error)`.",
        why="Error messages end up in logs, traces and UIs; a leaked key is a security incident.",
        common_mistakes=(
            "Including request headers or the full URL with Gemini's `?key=` in the message, or the `str()` "
            "of an SDK exception that embeds the request."
        ),
    ),
    "ERR-08": Clause(
        id="ERR-08",
        area="ERR",
        level="SHOULD",
        source="wire",
        text="OpenAI 429 `insufficient_quota` is not retryable (quota, not rate).",
        why=(
            "Quota exhaustion does not clear by waiting; retrying wastes time and hides a billing problem "
            "behind a rate-limit error."
        ),
        common_mistakes=(
            "Treating every 429 as a rate limit without looking at the error body's `code`/`type`."
        ),
    ),
    "NT-01": Clause(
        id="NT-01",
        area="NT",
        level="MUST",
        source="seed",
        text=(
            "`generate_step` never raises an Exception: every failure (HTTP, transport, malformed or "
            "truncated body, invalid arguments, callback errors, unexpected shapes) comes back as an "
            "ErrorStepResult."
        ),
        why=(
            "The framework expects every failure as an ErrorStepResult; an exception bypasses its error "
            "handling and crashes the agent run."
        ),
        common_mistakes=(
            "Wrapping only the HTTP call in try/except, so parsing, argument decoding or callback errors "
            "escape, or logging an exception and re-raising it. Ending the process (`sys.exit`, `os._exit`, "
            "a crash in a C extension) is the worst case: the harness reports it here as AdapterProcessEnded."
        ),
    ),
    "NT-02": Clause(
        id="NT-02",
        area="NT",
        level="MUST",
        source="harness",
        text=(
            "Under random truncation and corruption of recorded streams, the adapter still returns a valid "
            "StepResult within the time limit."
        ),
        why="Real streams arrive truncated and garbled; a crash or a hang on bad input takes the agent down.",
        common_mistakes=(
            "Indexing untrusted fields with `[...]`, assuming `choices[0]` exists, or waiting forever for a "
            "terminal event that never comes."
        ),
    ),
    "NT-03": Clause(
        id="NT-03",
        area="NT",
        level="MUST",
        source="harness",
        text=(
            "Task cancellation is not swallowed: cancelling the task running `generate_step` ends it "
            "promptly with `asyncio.CancelledError` (a BaseException, not an error result)."
        ),
        why=(
            "asyncio relies on CancelledError to cancel tasks and enforce timeouts; swallowing it makes "
            "cancellation and `asyncio.timeout` hang or misbehave."
        ),
        common_mistakes=(
            "`except BaseException` or a bare `except:` that turns CancelledError into an ErrorStepResult."
        ),
    ),
    "NT-04": Clause(
        id="NT-04",
        area="NT",
        level="MUST",
        source="harness",
        text=(
            "A stream that stalls or never ends does not hang the step past the configured timeout (the "
            "adapter's own timeout or abort)."
        ),
        why="A provider stream can stall indefinitely; without a timeout the agent hangs forever.",
        common_mistakes=(
            "Using `timeout=None` on the HTTP client, or only a connect timeout with no read timeout on the "
            "streaming response; reading on after the terminal event with no read timeout, so a connection "
            "held open after it is waited for forever."
        ),
    ),
    "NT-05": Clause(
        id="NT-05",
        area="NT",
        level="SHOULD",
        source="harness",
        text=(
            "The step returns on the stream's terminal event (`[DONE]`, `message_stop`, Gemini's finish chunk) "
            "or on an error event, without waiting for the connection to close."
        ),
        why=(
            "The answer is complete at the terminal event. Providers close the connection right after it, but "
            "a gateway that holds it open makes an adapter that reads the body to its end wait for its read "
            "timeout, then report a timeout for a finished answer. SHOULD, not MUST: the official anthropic and "
            "google-genai SDKs read to the end of the body themselves, and the wait is bounded by the read "
            "timeout (a wait nothing bounds is NT-04's)."
        ),
        common_mistakes=(
            "Iterating the SDK's stream until it is exhausted instead of returning on `message_stop`, `[DONE]` "
            "or the finish chunk; returning on the terminal event but reading on after an `error` event."
        ),
    ),
    "AB-01": Clause(
        id="AB-01",
        area="AB",
        level="MUST",
        source="seed",
        text="An already-aborted signal gives an ErrorStepResult without sending any request.",
        why="The user already cancelled; sending the request anyway costs money and may have side effects.",
        common_mistakes="Checking the signal only inside the stream loop, after the request has gone out.",
    ),
    "AB-02": Clause(
        id="AB-02",
        area="AB",
        level="MUST",
        source="seed",
        text=(
            "An abort during streaming returns promptly (before the rest of the response is delivered), "
            "closes the response, and no callback follows the abort."
        ),
        why=(
            "Users press stop expecting output to stop now; a late abort keeps billing tokens and updating "
            "the UI."
        ),
        common_mistakes=(
            "Checking `signal.aborted` only between events (so a stalled stream never notices), not closing "
            "the response, or firing callbacks for events already buffered."
        ),
    ),
    "AB-03": Clause(
        id="AB-03",
        area="AB",
        level="MUST",
        source="harness",
        text=(
            "An abort error is distinguishable and terminal: code `request_aborted`, `retryable=False`, "
            "never retried."
        ),
        why="The framework must neither retry an abort nor report it as a provider failure.",
        common_mistakes=(
            "Returning `provider_error` for an abort, marking it retryable, or letting the retry loop start "
            "another attempt after the abort."
        ),
    ),
    "CACHE-01": Clause(
        id="CACHE-01",
        area="CACHE",
        level="MUST",
        source="seed",
        text="With `caching` unset or False, no cache markers are sent.",
        why="Cache writes cost extra on Anthropic; users who did not opt in must not pay for them.",
        common_mistakes="Always adding `cache_control`, or treating an unset `caching` as `'auto'`.",
    ),
    "CACHE-02": Clause(
        id="CACHE-02",
        area="CACHE",
        level="MUST",
        source="seed",
        text=(
            "Anthropic: with `'auto'`, `cache_control` breakpoints are placed on the system prompt, the last "
            "tool and the conversation boundary (last message), never more than 4 and never on a thinking block."
        ),
        why=(
            "Breakpoints in these places make long conversations cheap; more than 4 is rejected by the API "
            "with a 400."
        ),
        common_mistakes=(
            "Marking every message, exceeding 4 breakpoints when the system prompt has several blocks, or "
            "marking the first message instead of the last."
        ),
    ),
    "CACHE-03": Clause(
        id="CACHE-03",
        area="CACHE",
        level="MUST",
        source="seed",
        text=(
            "OpenAI: with `'auto'`, a `prompt_cache_key` derived from the session (agent id) is sent, stable "
            "across steps of the same session."
        ),
        why=(
            "The key routes a session's requests to the same cache; a key that changes between steps loses "
            "the cache hits."
        ),
        common_mistakes=(
            "Deriving the key from a hash of the messages or a random value per request, or from the model "
            "name only."
        ),
    ),
    "CACHE-04": Clause(
        id="CACHE-04",
        area="CACHE",
        level="MUST",
        source="seed",
        text="Gemini: `'auto'` changes nothing in the request.",
        why=(
            "Gemini caches implicitly and explicit cached contents need a separate API, so `'auto'` must not "
            "add fields Gemini does not accept."
        ),
        common_mistakes=(
            "Sending Anthropic-style `cache_control` fields, or a `cachedContent` reference that was never "
            "created."
        ),
    ),
    "HARN-01": Clause(
        id="HARN-01",
        area="HARN",
        level="MUST",
        source="harness",
        text=(
            "Every request the adapter made matched a recorded interaction; an unexpected request fails the "
            "scenario even when the adapter swallowed the replay error into an ErrorStepResult."
        ),
        why=(
            "An unmatched request means the adapter sent something the recording does not cover, so the "
            "scenario proved nothing; adapters that swallow errors would otherwise pass."
        ),
        common_mistakes=(
            "Sending an extra request (a models-list or token-count call, an unplanned retry) or a different "
            "URL or body than the one recorded. The classic unplanned retry is the official SDK's own: "
            "`AsyncOpenAI`/`AsyncAnthropic` retry 408/409/429/5xx twice by default, so build the client with "
            "`max_retries=0` and honour `config.max_retries` in the adapter (CFG-03)."
        ),
    ),
    "HARN-02": Clause(
        id="HARN-02",
        area="HARN",
        level="MUST",
        source="harness",
        text="Every recorded interaction was used (no skipped retries or requests).",
        why="Unused interactions mean the adapter skipped retries or requests that the scenario expects.",
        common_mistakes=(
            "Not retrying where the recording contains a retry, or giving up after the first 5xx."
        ),
    ),
    "HARN-03": Clause(
        id="HARN-03",
        area="HARN",
        level="MUST",
        source="harness",
        text="The adapter returned within the per-scenario timeout.",
        why=(
            "A step that does not return in time is a hang, and a hanging adapter would stall the whole "
            "suite."
        ),
        common_mistakes=(
            "Real sleeps in backoff instead of bounded waits, or waiting on a stream that never ends."
        ),
    ),
    "HARN-04": Clause(
        id="HARN-04",
        area="HARN",
        level="SHOULD",
        source="harness",
        text="No asyncio task started by the adapter is still pending after it returned.",
        why="Leftover tasks leak connections and memory and can fire callbacks late.",
        common_mistakes=(
            "`asyncio.create_task` for stream readers or keep-alives that are never awaited or cancelled."
        ),
    ),
    "HARN-05": Clause(
        id="HARN-05",
        area="HARN",
        level="MUST",
        source="harness",
        text=(
            "A declared capability is exercised by at least one clause; a run that executed zero clauses "
            "fails (proof the gate ran)."
        ),
        why=(
            "A green run that executed no clause proves nothing, and a declared capability without a check "
            "is untested."
        ),
        common_mistakes=(
            "A selection that excludes everything (`-k` typo, wrong `--adapter` name) or declaring "
            "capabilities that no clause covers."
        ),
    ),
}

ADDED_SINCE_SPECIFICATION: dict[str, str] = {
    "NT-05": (
        "issue 29: returning on the terminal event was judged under NT-04 (MUST); the evidence shows gateways "
        "holding a stream open after it, not providers, and the official SDKs reading to the end of the body "
        "and returning at their read timeout, so it is a SHOULD of its own (docs/contract.md#nt-05)"
    ),
}
"""Clauses the living contract added to the product specification (``../shared/CONTRACT.md``), each with
why; the specification's own clauses keep their ids, levels and sources."""


def get_clause(clause_id: str, language: Language = "python") -> Clause:
    """The clause with this id (e.g. ``"RES-06"``) as an adapter author in ``language`` reads it (the
    TypeScript wording of ``clauses_typescript.py``); KeyError naming the known area prefixes if unknown."""
    try:
        clause = CLAUSES[clause_id]
    except KeyError:
        areas = ", ".join(f"{prefix} ({name})" for prefix, name in AREAS.items())
        raise KeyError(
            f"unknown contract clause {clause_id!r}: clause ids look like 'RES-01', "
            f"with one of the area prefixes {areas}; see docs/contract.md"
        ) from None
    if language == "typescript":
        return replace(clause, **TYPESCRIPT.get(clause_id, {}))
    return clause


REQUEST_SIDE = ("MSG-", "TOOL-", "CFG-01", "CFG-02", "CACHE-")
"""The clauses that judge the adapter's request against the scenario's input, never the response: a recorded
scenario (whose input is unknown) does not plan them, and a scenario whose response the provider would not
send to the adapter's request still judges them (the request was made before any answer came)."""


JUDGED_WITHOUT_EXCHANGE = frozenset(
    {
        "RES-01",  # the return value is a StepResult whatever happened
        "ERR-06",  # an error result stops
        "ERR-07",  # no key in the error
        "STR-06",  # on_error once with the returned error
        "STR-07",  # nothing after return
        "STR-08",  # coroutine callbacks awaited
        "STR-11",  # raising callbacks do not make the step raise
        "MSG-07",  # the input is not mutated
        "NT-01",
        "HARN-01",
        "HARN-02",
        "HARN-03",
        "HARN-04",
        "HARN-05",
    }
)
"""Clauses that judge a run on its own terms, with no request or response needed: still judged when the
run sent no request or got no response."""


def judges_request(clause_id: str) -> bool:
    """Whether the clause judges the request only (``REQUEST_SIDE``)."""
    return clause_id.startswith(REQUEST_SIDE)
