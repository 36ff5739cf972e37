"""The adapter: one ``client.chat.completions.create(stream=True)`` call per step, retried by us."""

from __future__ import annotations

import asyncio
import functools
import re
import ssl
from typing import Any

import openai

from helix_conformance.contract import (
    PROVIDER_INVALID_REQUEST,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    StepResult,
)

from ._abort import Aborted, until_aborted
from ._callbacks import SafeCallbacks
from ._done import saw_done, watch_for_done
from ._errors import aborted, from_sdk
from ._request import create_kwargs
from ._retry import retry_delay
from ._stream import ChunkAccumulator

_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """One verified TLS context per process. Each new SDK client otherwise loads the CA bundle again
    (~60 ms): noticeable per adapter instance, and the suite builds one per scenario run."""
    return ssl.create_default_context()


class _StreamFailed(Exception):
    """A failure after the response stream was accepted: callbacks may have fired, so it is not retried."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class OpenAISDKAdapter:
    """Helix LLMAdapter over ``openai.AsyncOpenAI``: Chat Completions, streamed."""

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout: float = 60.0) -> None:
        self._api_key = api_key
        # max_retries=0: the SDK would otherwise retry 429/5xx on its own, unseen, unabortable, and ignoring
        # config.max_retries (CFG-03). timeout: the SDK's default is 10 minutes per read (NT-04).
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=openai.DefaultAsyncHttpxClient(
                verify=_tls_context(), timeout=timeout, event_hooks={"response": [watch_for_done]}
            ),
        )

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        """Never raises an Exception (NT-01): every failure is an ErrorStepResult, reported once through
        ``on_error`` (STR-06). Cancellation (a BaseException) propagates (NT-03)."""
        emit = SafeCallbacks(input.callbacks, input.abort_signal)
        try:
            result = await self._generate(input, emit)
        except Exception as exc:  # the SDK, our parsing, anything: an error result (NT-01)
            result = ErrorStepResult(error=from_sdk(exc, self._api_key))
        if isinstance(result, ErrorStepResult):
            await emit.error(result.error)
        return result

    async def _generate(self, input: LLMGenerateInput, emit: SafeCallbacks) -> StepResult:
        signal = input.abort_signal
        if signal is not None and signal.aborted:  # AB-01: nothing is sent
            return ErrorStepResult(error=aborted(signal.reason))
        rejected = [tool.name for tool in input.tools if not _TOOL_NAME.fullmatch(tool.name)]
        if rejected:  # TOOL-05: refused before any request is sent
            message = f"openai: tool names must match ^[a-zA-Z0-9_-]{{1,64}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        kwargs = create_kwargs(input)
        max_retries = max(0, input.config.max_retries)
        for attempt in range(max_retries + 1):
            try:
                return await until_aborted(self._attempt(kwargs, emit), signal)
            except Aborted:  # AB-02, AB-03: terminal, never retried
                return ErrorStepResult(error=aborted(signal.reason if signal else None))
            except _StreamFailed as failed:  # ERR-04: output may have streamed already: not retried
                return ErrorStepResult(error=from_sdk(failed.error, self._api_key))
            except Exception as exc:  # nothing streamed yet: retry what is retryable (CFG-03)
                error = from_sdk(exc, self._api_key)
                if not error.retryable:
                    return ErrorStepResult(error=error)
                if attempt == max_retries:
                    error.retryable = max_retries == 0  # CFG-04: it survived our retries: final
                    return ErrorStepResult(error=error)
                try:  # CFG-05: as long as retry-after asks (bounded); the wait is abortable too
                    await until_aborted(asyncio.sleep(retry_delay(attempt, exc)), signal)
                except Aborted:
                    return ErrorStepResult(error=aborted(signal.reason if signal else None))
        raise AssertionError("unreachable")

    async def _attempt(self, kwargs: dict[str, Any], emit: SafeCallbacks) -> StepResult:
        """One HTTP exchange. Errors raised by ``create`` may be retried; errors while reading may not."""
        stream = await self._client.chat.completions.create(**kwargs)
        accumulator = ChunkAccumulator(emit)
        async with stream:  # closes the response however this ends, cancellation by an abort included
            try:
                async for chunk in stream:  # STR-02: each chunk handled as it arrives
                    await accumulator.add(chunk)
                return await accumulator.result(done=saw_done(stream.response))
            except Exception as exc:  # SDK errors, and our HelixErrors for invalid or truncated streams
                raise _StreamFailed(exc) from exc
