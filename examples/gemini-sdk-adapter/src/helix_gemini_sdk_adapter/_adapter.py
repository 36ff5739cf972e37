"""The adapter: one ``client.aio.models.generate_content_stream`` call per step, retried by us."""

from __future__ import annotations

import asyncio
import functools
import re
import ssl
from typing import Any

import httpx
from google import genai
from google.genai import errors, types

from helix_conformance.contract import (
    PROVIDER_INVALID_REQUEST,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    StepResult,
)

from ._abort import Aborted, until_aborted
from ._callbacks import SafeCallbacks
from ._errors import aborted, from_sdk, http_status
from ._request import contents, request_config
from ._retry import retry_delay
from ._stream import ChunkAccumulator

_TOOL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}")


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """One verified TLS context per process: the SDK otherwise loads the CA bundle for every client, twice
    (~90 ms), and the suite builds a client per scenario run."""
    return ssl.create_default_context()


def _http_error(exc: Exception) -> bool:
    return isinstance(exc, errors.APIError) and http_status(exc) is not None


class _StreamFailed(Exception):
    """A failure after the response stream was accepted: callbacks may have fired, so it is not retried."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class GeminiSDKAdapter:
    """Helix LLMAdapter over ``google.genai.Client(...).aio``: Gemini API, streamed."""

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout: float = 60.0) -> None:
        self._api_key = api_key
        self._timeout_ms = int(timeout * 1000)  # HttpOptions.timeout is in milliseconds
        tls = _tls_context()
        # Our own httpx clients: with aiohttp installed, the SDK's async calls silently switch to aiohttp,
        # another transport with other exceptions. Given clients (and `ssl` for its websocket context) also
        # keep it from loading the CA bundle again. No retry_options: the SDK then retries nothing (CFG-03).
        options = types.HttpOptions(
            base_url=base_url,
            timeout=self._timeout_ms,  # NT-04: a stalled read ends; the SDK's default is none at all
            httpx_client=httpx.Client(verify=tls, timeout=timeout),
            httpx_async_client=httpx.AsyncClient(verify=tls, timeout=timeout),
            async_client_args={"ssl": tls},
        )
        self._client = genai.Client(api_key=api_key, http_options=options)

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
            message = f"gemini: tool names must match ^[a-zA-Z_][a-zA-Z0-9_.-]{{0,63}}$: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        request = {
            "model": input.config.model,
            "contents": contents(input.messages),
            "config": request_config(input, self._timeout_ms),
        }
        max_retries = max(0, input.config.max_retries)
        for attempt in range(max_retries + 1):
            try:
                return await until_aborted(self._attempt(request, emit), signal)
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
                try:  # CFG-05: as long as the provider asks (bounded); the wait is abortable too
                    await until_aborted(asyncio.sleep(retry_delay(attempt, exc)), signal)
                except Aborted:
                    return ErrorStepResult(error=aborted(signal.reason if signal else None))
        raise AssertionError("unreachable")

    async def _attempt(self, request: dict[str, Any], emit: SafeCallbacks) -> StepResult:
        """One HTTP exchange. Errors before the first chunk may be retried; errors while reading may not.

        The stream is an async generator that sends the request on its first ``__anext__``: an HTTP error
        or a failed connection surfaces there, before any chunk, and may be retried. An error object in the
        200 stream is the provider's answer (ERR-03), not retried even when it comes first."""
        stream = await self._client.aio.models.generate_content_stream(**request)
        accumulator = ChunkAccumulator(emit)
        started = False
        try:
            async for chunk in stream:  # STR-02: each chunk handled as it arrives
                started = True
                await accumulator.add(chunk)
                if accumulator.done:  # NT-04: the finish chunk ends the step; the SDK would read on to EOF
                    break
            return await accumulator.result()
        except Exception as exc:  # SDK errors, and our HelixErrors for invalid or truncated streams
            if not started and (isinstance(exc, httpx.TransportError) or _http_error(exc)):
                raise
            raise _StreamFailed(exc) from exc
        finally:  # typed as an AsyncIterator, it is an async generator: closing it closes the response,
            close = getattr(stream, "aclose", None)  # however this ends (an abort's cancellation included)
            if close is not None:
                await close()
