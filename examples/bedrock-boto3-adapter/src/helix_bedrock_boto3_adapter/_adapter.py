"""The adapter: boto3's ``converse_stream`` in a worker thread, its events handed to the step's event loop.

boto3 is synchronous, so the call and the reading of its event stream run in ``asyncio.to_thread``; each parsed
event crosses to the loop, which fires the callbacks as it arrives (STR-02). The loop keeps the read-idle timer
and the abort: either shuts the connection's socket down, which ends the thread's blocked read at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config

from helix_conformance.contract import (
    PROVIDER_INVALID_REQUEST,
    PROVIDER_TIMEOUT,
    AbortSignal,
    ErrorStepResult,
    HelixError,
    LLMGenerateInput,
    LLMStreamCallbacks,
    StepResult,
    invoke_callback,
)

from ._errors import aborted, for_exception, redact
from ._request import converse_arguments
from ._stream import ConverseStream, Emitters

logger = logging.getLogger(__name__)
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # ToolSpecification.name in the service model
_SESSION = boto3.session.Session()
"""One boto3 session for the process: it loads the service model once (a client then costs a few ms)."""
_SESSION_LOCK = threading.Lock()


class BedrockBoto3Adapter:
    """Helix LLMAdapter for Amazon Bedrock's ConverseStream through boto3's ``bedrock-runtime`` client."""

    def __init__(
        self,
        *,
        region: str = "us-east-1",
        endpoint_url: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        self._region = region
        self._endpoint_url = endpoint_url
        self._credentials = {
            "aws_access_key_id": aws_access_key_id,
            "aws_secret_access_key": aws_secret_access_key,
            "aws_session_token": aws_session_token,
        }
        self._secret = aws_secret_access_key or ""  # ERR-07
        self._timeout = timeout  # read-idle: a stalled stream ends here (NT-04)

    async def generate_step(self, input: LLMGenerateInput) -> StepResult:
        """Never raises an Exception (NT-01); errors are redacted (ERR-07) and reported once (STR-06);
        cancellation propagates (NT-03)."""
        callbacks = _Callbacks(input.callbacks, input.abort_signal)
        try:
            result = await self._generate(input, callbacks)
        except Exception as exc:
            result = ErrorStepResult(error=for_exception(exc, self._secret))
        if isinstance(result, ErrorStepResult) and isinstance(result.error, HelixError):
            result.error.message = redact(result.error.message, self._secret)
            result.error.args = (result.error.message,)
            await callbacks.error(result.error)
        return result

    async def _generate(self, input: LLMGenerateInput, callbacks: _Callbacks) -> StepResult:
        signal = input.abort_signal
        if signal is not None and signal.aborted:  # AB-01: nothing is sent
            return ErrorStepResult(error=aborted(signal.reason))
        rejected = [tool.name for tool in input.tools if not _TOOL_NAME.fullmatch(tool.name)]
        if rejected:  # TOOL-05: refused before any request
            message = f"bedrock: tool names must match [a-zA-Z0-9_-]{{1,64}}: {rejected}"
            return ErrorStepResult(error=HelixError(message, code=PROVIDER_INVALID_REQUEST))
        client = self._client(max(0, input.config.max_retries), dict(input.config.headers or {}))
        emit = Emitters(callbacks.text, callbacks.thinking, callbacks.tool_call)
        call = _Call(client, converse_arguments(input), asyncio.get_running_loop())
        return await call.run(ConverseStream(emit, _required_members(client)), signal, self._timeout)

    def _client(self, retries: int, headers: dict[str, str]) -> Any:
        config = Config(  # botocore retries what failed before the stream began (ERR-05, CFG-03)
            retries={"total_max_attempts": retries + 1, "mode": "standard"},
            connect_timeout=self._timeout,
            read_timeout=self._timeout,
        )
        with _SESSION_LOCK:
            client = _SESSION.client(
                "bedrock-runtime",
                region_name=self._region,
                endpoint_url=self._endpoint_url,
                config=config,
                **self._credentials,
            )
        if headers:  # CFG-02: the caller's headers, added before boto3 signs the request

            def add_headers(request: Any, **_: Any) -> None:
                for name, value in headers.items():
                    request.headers[name] = value

            client.meta.events.register("before-sign.bedrock-runtime.ConverseStream", add_headers)
        return client


def _required_members(client: Any) -> dict[str, list[str]]:
    """Each ConverseStream event type's required members, as boto3's service model declares them."""
    union = client.meta.service_model.shape_for("ConverseStreamOutput")
    return {name: list(getattr(shape, "required_members", [])) for name, shape in union.members.items()}


@dataclass
class _Call:
    """One ``converse_stream`` call: the thread that reads it, the queue its events cross by, its shutdown."""

    client: Any
    arguments: dict[str, Any]
    loop: asyncio.AbstractEventLoop
    events: asyncio.Queue[tuple[str, Any]] = field(default_factory=asyncio.Queue)
    stream: Any = None
    stopped: bool = False

    async def run(self, completion: ConverseStream, signal: AbortSignal | None, idle_s: float) -> StepResult:
        reader = asyncio.ensure_future(asyncio.to_thread(self._read))
        try:
            while True:
                kind, value = await self._next(signal, idle_s)
                if kind == "aborted":  # AB-02, AB-03: terminal, never retried
                    return ErrorStepResult(error=aborted(signal.reason if signal is not None else None))
                if kind == "idle":  # NT-04: the stream went silent for longer than the read timeout
                    message = f"bedrock: no data received for {idle_s:g} s"
                    return ErrorStepResult(error=HelixError(message, code=PROVIDER_TIMEOUT, retryable=True))
                if kind == "error":
                    raise value
                if kind == "end" or await completion.feed(value):
                    return await completion.result()  # after metadata nothing more is read (NT-04)
        except HelixError as error:
            return ErrorStepResult(error=error)
        finally:
            self._stop()
            with contextlib.suppress(BaseException):  # the thread's read ends at the shutdown
                await asyncio.shield(reader)

    async def _next(self, signal: AbortSignal | None, idle_s: float) -> tuple[str, Any]:
        """The next item from the thread, or ("aborted", None), or ("idle", None) after ``idle_s`` of silence."""
        getting = asyncio.ensure_future(self.events.get())
        waiting = {getting} if signal is None else {getting, asyncio.ensure_future(signal.wait())}
        try:
            done, _ = await asyncio.wait(waiting, timeout=idle_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waiting:
                task.cancel()
        if signal is not None and signal.aborted:
            return "aborted", None
        if getting in done:
            return getting.result()
        return "idle", None

    def _read(self) -> None:
        """In the worker thread: the call (boto3 retries inside it), then every event as it is parsed."""
        try:
            response = self.client.converse_stream(**self.arguments)
            self.stream = response["stream"]
            if self.stopped:
                return
            for event in self.stream:
                self.loop.call_soon_threadsafe(self.events.put_nowait, ("event", event))
                if self.stopped:
                    return
        except BaseException as exc:  # handed to the loop, which maps it (a thread has no one else to tell)
            if not self.stopped:
                self.loop.call_soon_threadsafe(self.events.put_nowait, ("error", exc))
            return
        finally:
            if self.stream is not None:
                self.stream.close()
        self.loop.call_soon_threadsafe(self.events.put_nowait, ("end", None))

    def _stop(self) -> None:
        """Ends the thread's blocked read by shutting the connection's socket down (closing it does not wake a
        ``recv`` in another thread, and boto3 has no cancel). botocore's urllib3 response has released its
        connection object, so the socket is reached through http.client's socket file under it."""
        self.stopped = True
        raw = getattr(
            self.stream, "_raw_stream", None
        )  # botocore's EventStream keeps urllib3's response here
        fp = getattr(getattr(raw, "_fp", None), "fp", None)  # http.client's buffered reader of the socket
        sock = getattr(getattr(fp, "raw", None), "_sock", None)  # socket.SocketIO's socket
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _Callbacks:
    """The caller's callbacks: awaited in turn (STR-08), never breaking the step (STR-11), silent once the
    signal fired (AB-02) but for ``error``, which reports the abort itself (STR-06)."""

    def __init__(self, callbacks: LLMStreamCallbacks | None, signal: AbortSignal | None) -> None:
        self._callbacks = callbacks or LLMStreamCallbacks()
        self._signal = signal

    async def text(self, delta: str) -> None:
        await self._call(self._callbacks.on_text_delta, delta)

    async def thinking(self, delta: str, complete: bool) -> None:
        await self._call(self._callbacks.on_thinking, delta, complete)

    async def tool_call(self, call: Any) -> None:
        await self._call(self._callbacks.on_tool_call, call)

    async def error(self, error: Exception) -> None:
        await self._call(self._callbacks.on_error, error, always=True)

    async def _call(self, callback: Any, *args: Any, always: bool = False) -> None:
        if callback is None or (self._signal is not None and self._signal.aborted and not always):
            return
        try:
            await invoke_callback(callback, *args)
        except Exception:
            logger.warning("stream callback %r raised; ignored", callback, exc_info=True)
