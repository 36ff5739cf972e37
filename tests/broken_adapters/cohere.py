"""Broken Cohere v2 chat adapters: the traps of its typed stream and of its request shape.

Each is ``reference_adapters.cohere`` with one part changed: the tool plan dropped (as the Vercel AI SDK
does), an ``ERROR`` finish taken for a finish, tool calls keyed by name, the finish-reason table, thinking
shown as text, ``message-end`` as the proof the stream is complete, and OpenAI's names in the request.
"""

from __future__ import annotations

from typing import Any

from helix_conformance.contract import LLMGenerateInput, StepResult
from reference_adapters._sse import SSEEvent

from ._base import BrokenAdapter
from ._cohere_base import HookedChatStream, HookedCohereAdapter, broken_cohere


class _PlanDropped(HookedChatStream):
    async def _event(self, event: SSEEvent) -> bool:
        if event.event == "tool-plan-delta":
            return False  # Bug: "the plan is no content" (the Vercel AI SDK drops it): RES-07's text is lost
        return await super()._event(event)


class ToolPlanDropped(HookedCohereAdapter):
    stream_class = _PlanDropped


class _ErrorFinishIsFinish(HookedChatStream):
    def _message_end(self, delta: dict[str, Any]) -> bool:
        if delta.get("finish_reason") == "ERROR":
            self._finish = "COMPLETE"  # Bug: "message-end means done": the failed generation is a success
            return True
        return super()._message_end(delta)


class ErrorFinishIsFinish(HookedCohereAdapter):
    stream_class = _ErrorFinishIsFinish


class _CallsByName(HookedChatStream):
    def _call_piece(self, index: int, call: Any) -> None:
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str) and name:
            self._names = {**getattr(self, "_names", {}), index: name}
        names: dict[int, str] = getattr(self, "_names", {})
        first = min((i for i, n in names.items() if n == names.get(index)), default=index)
        super()._call_piece(first, call)  # Bug: calls keyed by tool name, so two calls of one tool merge


class CallsKeyedByName(HookedCohereAdapter):
    stream_class = _CallsByName


class _MaxTokensAsEndTurn(HookedChatStream):
    async def result(self) -> StepResult:
        if self._finish == "MAX_TOKENS":
            self._finish = "COMPLETE"  # Bug: "the model finished writing"
        return await super().result()


class MaxTokensAsEndTurn(HookedCohereAdapter):
    stream_class = _MaxTokensAsEndTurn


class _ThinkingAsText(HookedChatStream):
    async def _thinking_delta(self, piece: Any) -> None:
        await self._text_delta(piece)  # Bug: every content-delta is text, "thinking" or not


class ThinkingAsText(HookedCohereAdapter):
    stream_class = _ThinkingAsText


class _NoMessageEndNeeded(HookedChatStream):
    async def result(self) -> StepResult:
        if self._finish is None and self._error is None:
            self._finish = "COMPLETE"  # Bug: "the body ended, so the answer is complete"
        return await super().result()


class NoMessageEndNeeded(HookedCohereAdapter):
    stream_class = _NoMessageEndNeeded


class OpenAINames(HookedCohereAdapter):
    def _request_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._request_body(input)
        if "p" in body:
            body["top_p"] = body.pop("p")  # Bug: an OpenAI port keeps OpenAI's field names
        return body


class ToolResultsAsUserText(HookedCohereAdapter):
    def _request_body(self, input: LLMGenerateInput) -> dict[str, Any]:
        body = super()._request_body(input)
        for message in body["messages"]:
            if message["role"] == "tool":  # Bug: "v1 had no tool role": results sent as user text
                message["role"] = "user"
                message["content"] = "".join(b["text"] for b in message.pop("content"))
                message.pop("tool_call_id")
        return body


ADAPTERS: tuple[BrokenAdapter, ...] = (
    broken_cohere(
        "cohere_tool_plan_dropped",
        ToolPlanDropped,
        "RES-07",
        ("text_and_tool_call",),
        "Ignores tool-plan-delta: the text that accompanies the tool calls is discarded.",
    ),
    broken_cohere(
        "cohere_error_finish_is_finish",
        ErrorFinishIsFinish,
        "ERR-03",
        ("midstream_error",),
        'Takes a message-end with finish_reason "ERROR" for a finish: the failed generation passes as text.',
    ),
    broken_cohere(
        "cohere_calls_keyed_by_name",
        CallsKeyedByName,
        "RES-06",
        ("tool_call_parallel",),
        "Keys tool calls by name instead of index: two calls of one tool merge into one.",
    ),
    broken_cohere(
        "cohere_max_tokens_as_end_turn",
        MaxTokensAsEndTurn,
        "STOP-01",
        ("stop_max_tokens",),
        "Maps finish_reason MAX_TOKENS to end_turn: a cut answer passes as complete.",
    ),
    broken_cohere(
        "cohere_thinking_as_text",
        ThinkingAsText,
        "RES-08",
        ("thinking_text",),
        "Streams thinking content-deltas as text: the reasoning ends up in the answer.",
    ),
    broken_cohere(
        "cohere_no_message_end_needed",
        NoMessageEndNeeded,
        "ERR-04",
        ("truncated_stream",),
        "Accepts a stream that ends without message-end as a complete answer.",
    ),
    broken_cohere(
        "cohere_openai_names",
        OpenAINames,
        "CFG-01",
        ("config_passthrough",),
        "Sends top_p (OpenAI's name) where v2 chat reads p: the parameter never reaches the model.",
    ),
    broken_cohere(
        "cohere_tool_results_as_user_text",
        ToolResultsAsUserText,
        "MSG-04",
        ("tool_result_roundtrip",),
        "Sends tool results as user messages without tool_call_id: they are not linked to their calls.",
    ),
)
