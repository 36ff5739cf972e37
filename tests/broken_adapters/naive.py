"""Naive adapters written from scratch, the way a first attempt at an OpenAI adapter often looks.

They reuse the reference request body (the request side is not the point here) and get the streaming wrong
in three classic ways: the whole body is read before any callback fires (STR-02), SSE is split on network
chunk boundaries instead of lines (STR-10), and HTTP errors escape as exceptions (NT-01).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from helix_conformance.contract import (
    PROVIDER_ERROR,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    LLMStreamCallbacks,
    ParsedToolCall,
    StepResult,
    StopReason,
    TextStepResult,
    ToolCallsStepResult,
    invoke_callback,
)
from reference_adapters.openai_chat import build_request_body

from ._base import BrokenAdapter, broken

_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


async def _notify(callbacks: LLMStreamCallbacks | None, name: str, *args: Any) -> None:
    """Call one callback if present; a failing callback is ignored (these adapters get STR-11 right)."""
    callback = getattr(callbacks, name, None) if callbacks is not None else None
    with contextlib.suppress(Exception):
        await invoke_callback(callback, *args)


class _Completion:
    """What the chunks of one completion add up to: text, tool calls by index, the finish reason."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None

    def add(self, payload: dict[str, Any]) -> str | None:
        """Apply one chunk; return the text delta it carried, if any."""
        piece: str | None = None
        for choice in payload.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                piece = delta["content"]
                self.text.append(delta["content"])
            for entry in delta.get("tool_calls") or []:
                call = self.calls.setdefault(entry.get("index", 0), {"id": "", "name": "", "arguments": ""})
                function = entry.get("function") or {}
                call["id"] = call["id"] or entry.get("id") or ""
                call["name"] = call["name"] or function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
            self.finish = choice.get("finish_reason") or self.finish
        return piece

    def result(self) -> StepResult:
        text = "".join(self.text)
        if self.calls:
            calls = [
                ParsedToolCall(id=c["id"], name=c["name"], arguments=json.loads(c["arguments"] or "{}"))
                for _, c in sorted(self.calls.items())
            ]
            return ToolCallsStepResult(tool_calls=calls, content=text or None)
        return TextStepResult(
            content=text, should_stop=True, stop_reason=_STOP.get(self.finish or "", "unknown")
        )


class _NaiveAdapter:
    """The skeleton the naive adapters share: one POST, one result, every exception an error result."""

    def __init__(
        self, *, api_key: str, base_url: str = "https://api.openai.com/v1", timeout: float = 30.0
    ) -> None:
        self._api_key = api_key
        self._url = f"{base_url.rstrip('/')}/chat/completions"
        self._timeout = timeout

    def _headers(self, input: LLMGenerateInput) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}", **(input.config.headers or {})}

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        try:
            result = await self._step(input)
        except Exception as exc:
            error = HelixError(f"openai: {type(exc).__name__}", code=PROVIDER_ERROR, cause=exc)
            result = ErrorStepResult(error=error)
        if isinstance(result, ErrorStepResult):
            await _notify(input.callbacks, "on_error", result.error)
        return result

    async def _step(self, input: LLMGenerateInput) -> StepResult:
        raise NotImplementedError


class BuffersWholeBody(_NaiveAdapter):
    """Reads the whole body with ``client.post()``, then replays it through the callbacks."""

    async def _step(self, input: LLMGenerateInput) -> StepResult:
        async with httpx.AsyncClient(timeout=self._timeout) as client:
            response = await client.post(
                self._url, json=build_request_body(input), headers=self._headers(input)
            )
        if response.status_code >= 400:
            error = HelixError(f"openai: HTTP {response.status_code}", code=PROVIDER_ERROR)
            return ErrorStepResult(error=error)
        completion = _Completion()
        for line in response.text.splitlines():
            if line.startswith("data: ") and line[6:].strip() != "[DONE]":
                piece = completion.add(json.loads(line[6:]))
                if piece:
                    await _notify(input.callbacks, "on_text_delta", piece)  # Bug: only after the last byte
        return completion.result()


class SplitsSseOnChunks(_NaiveAdapter):
    """Streams, but treats every network chunk as a whole number of lines."""

    async def _step(self, input: LLMGenerateInput) -> StepResult:
        completion = _Completion()
        async with (
            httpx.AsyncClient(timeout=self._timeout) as client,
            client.stream(
                "POST", self._url, json=build_request_body(input), headers=self._headers(input)
            ) as response,
        ):
            if response.status_code >= 400:
                return ErrorStepResult(error=HelixError(f"HTTP {response.status_code}", code=PROVIDER_ERROR))
            async for data in _data_lines(response.aiter_bytes()):
                try:
                    payload = json.loads(data)
                except json.JSONDecodeError:
                    continue  # "a keep-alive or a partial line; the next chunk will have the rest"
                piece = completion.add(payload)
                if piece:
                    await _notify(input.callbacks, "on_text_delta", piece)
        return completion.result()


async def _data_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    async for chunk in chunks:
        for line in chunk.decode("utf-8", errors="replace").split("\n"):  # Bug: per chunk, not per line
            if line.startswith("data: ") and line[6:].strip() != "[DONE]":
                yield line[6:]


class HappyPathOnly(_NaiveAdapter):
    """Written for the happy path: ``raise_for_status()`` and no error handling around it."""

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        return await self._step(input)  # Bug: nothing turns exceptions into an ErrorStepResult

    async def _step(self, input: LLMGenerateInput) -> StepResult:
        completion = _Completion()
        async with (
            httpx.AsyncClient(timeout=self._timeout) as client,
            client.stream(
                "POST", self._url, json=build_request_body(input), headers=self._headers(input)
            ) as response,
        ):
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line[6:].strip() != "[DONE]":
                    piece = completion.add(json.loads(line[6:]))
                    if piece:
                        await _notify(input.callbacks, "on_text_delta", piece)
        return completion.result()


ADAPTERS: list[BrokenAdapter] = [
    broken(
        "buffers_whole_body",
        BuffersWholeBody,
        "STR-02",
        ["text_basic", "text_unicode"],
        "Reads the whole response with client.post() and only then fires the callbacks.",
    ),
    broken(
        "splits_sse_on_chunks",
        SplitsSseOnChunks,
        "STR-10",
        ["text_basic", "text_unicode", "tool_call"],
        "Splits each network chunk on newlines, dropping lines and characters cut across chunks.",
    ),
    broken(
        "happy_path_only",
        HappyPathOnly,
        "NT-01",
        ["http_401", "http_500", "connection_reset"],
        "raise_for_status() with no error handling: HTTP and transport errors escape generate_step.",
    ),
]
