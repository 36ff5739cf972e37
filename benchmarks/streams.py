"""Large recorded streams, and the three ways of parsing them that the parsing benchmark compares.

A large stream is a bundled ``text_basic`` cassette with its text-delta events repeated until the body holds
thousands of events: the provider's exact framing and field order, only longer. Every parser gets the body
in the same 4 KB chunks, as a network would hand them over:

* the reference adapter's parser: ``SSEDecoder`` + the provider's stream class (``feed`` / ``result``), with
  no callbacks, as ``exchange`` drives them;
* the floor: split lines and ``json.loads`` each ``data:`` payload (what no parser can beat by much);
* the official SDK (openai, anthropic, google-genai), its client on an ``httpx2.MockTransport`` serving the
  same chunks, iterating its typed stream events (sync clients; the SDK's own parsing and validation).
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from measure import ROOT

CHUNK = 4096
PROFILES = {"openai": "openai-chat", "anthropic": "anthropic-messages", "gemini": "gemini"}
DELTA_MARKERS = {
    "openai-chat": b'"content":"',
    "anthropic-messages": b'"text_delta"',
    "gemini": b'"text": "',
}


@dataclass(frozen=True)
class LargeStream:
    provider: str
    body: bytes
    events: int

    def chunks(self) -> list[bytes]:
        return [self.body[i : i + CHUNK] for i in range(0, len(self.body), CHUNK)]


def large_stream(provider: str, events: int) -> LargeStream:
    """The provider's text_basic stream with its text deltas repeated to about ``events`` events."""
    from helix_conformance.profiles import get_profile
    from helix_conformance.replay.cassette import load_cassette

    profile = get_profile(PROFILES[provider])
    body = load_cassette(ROOT / "cassettes" / profile.name / "text_basic.yaml").interactions[0].body
    pieces = profile.split_events(body)
    marker = DELTA_MARKERS[profile.name]
    deltas = [i for i, p in enumerate(pieces) if marker in p and b"finishReason" not in p]
    head, middle, tail = pieces[: deltas[0]], pieces[deltas[0] : deltas[-1] + 1], pieces[deltas[-1] + 1 :]
    repeats = max(1, (events - len(head) - len(tail)) // len(middle))
    out = [*head, *(middle * repeats), *tail]
    return LargeStream(provider, b"".join(out), len(out))


# --- the reference adapters' parsers ------------------------------------------------------------------


def _reference_parser(provider: str) -> tuple[Any, Any]:
    from reference_adapters import anthropic, gemini, openai_chat
    from reference_adapters._http import SafeCallbacks, StreamGuard
    from reference_adapters._sse import SSEDecoder

    emit = SafeCallbacks(None, StreamGuard(None, idle_timeout=3600))
    if provider == "openai":
        return SSEDecoder(), openai_chat._ChatStream(emit)
    if provider == "anthropic":
        return SSEDecoder(), anthropic._MessagesStream(emit)
    return SSEDecoder(keep_stray_lines=True), gemini._GeminiStream(emit)


def parse_reference(stream: LargeStream, chunks: list[bytes]) -> Any:
    """Feed the chunks to the reference parser as ``exchange`` does; return its StepResult."""

    async def run() -> Any:
        decoder, parser = _reference_parser(stream.provider)
        for chunk in chunks:
            if await parser.feed(decoder.feed(chunk)):
                break
        else:
            await parser.feed(decoder.close())
        return await parser.result()

    return asyncio.run(run())


def parse_floor(chunks: list[bytes]) -> int:
    """Split lines, ``json.loads`` every ``data:`` payload: the least any SSE+JSON parser must do."""
    parsed, tail = 0, b""
    for chunk in chunks:
        lines = (tail + chunk).split(b"\n")
        tail = lines.pop()
        for line in lines:
            if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
                json.loads(line[5:])
                parsed += 1
    return parsed


# --- the official SDKs ----------------------------------------------------------------------------------


def _transport(chunks: list[bytes], content_type: str = "text/event-stream", library: str = "httpx2") -> Any:
    """A client of ``library`` (the SDKs of today use httpx2; older google-genai, httpx) that serves the chunks."""
    http = importlib.import_module(library)

    class Chunks(http.SyncByteStream):  # type: ignore[misc,name-defined]
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks

    def handler(request: Any) -> Any:
        return http.Response(200, headers={"content-type": content_type}, stream=Chunks())

    return http.Client(transport=http.MockTransport(handler))


def parse_sdk(provider: str) -> Callable[[list[bytes]], int]:
    """A function parsing the chunks with the provider's official SDK; returns how many events it yielded."""
    messages: Any = [{"role": "user", "content": "Hi"}]

    if provider == "openai":
        import openai

        def run_openai(chunks: list[bytes]) -> int:
            client = openai.OpenAI(
                api_key="sk-bench", base_url="http://bench.invalid/v1", http_client=_transport(chunks)
            )
            stream = client.chat.completions.create(model="gpt-4o-mini", messages=messages, stream=True)
            return sum(1 for _ in stream)

        return run_openai
    if provider == "anthropic":
        import anthropic

        def run_anthropic(chunks: list[bytes]) -> int:
            client = anthropic.Anthropic(
                api_key="sk-bench", base_url="http://bench.invalid", http_client=_transport(chunks)
            )
            stream = client.messages.create(
                model="claude-haiku-4-5", max_tokens=64, messages=messages, stream=True
            )
            return sum(1 for _ in stream)

        return run_anthropic

    from google import genai
    from google.genai import types

    def run_gemini(chunks: list[bytes]) -> int:
        try:
            options = types.HttpOptions(base_url="http://bench.invalid", httpx_client=_transport(chunks))
        except ValueError:  # google-genai before httpx2 takes an httpx.Client (pydantic's ValidationError)
            client = _transport(chunks, library="httpx")
            options = types.HttpOptions(base_url="http://bench.invalid", httpx_client=client)
        client = genai.Client(api_key="bench", http_options=options)
        return sum(1 for _ in client.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi"))

    return run_gemini
