"""A fake LLM provider on 127.0.0.1 for testing the recorder end to end without internet.

It speaks the three wire profiles (OpenAI Chat Completions, Anthropic Messages, Gemini SSE): it decodes each
request with the profile's own decoder, finds the scenario whose input it is, and streams that scenario's
script rendered by the profile, worded a little differently from the authored cassette (as a live model
would be) so the recorded expectations and the semantic diff have something to show. ``plant`` puts a
secret-looking string into every answer (the secret scan must refuse it); ``echo_key`` repeats the key the
request carried (the scrubber must remove it). ``refuse`` answers every request with that HTTP status and
the profile's own error body; ``error_event`` streams the scenario's words and then the profile's error event.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from helix_conformance.profiles import get_profile
from helix_conformance.profiles.base import WireProfile
from helix_conformance.scenarios import scenarios_for
from helix_conformance.scenarios.live import why_not_live
from helix_conformance.scenarios.model import HttpError, Scenario, Stream, StreamError, Text

LIVE_PREFIX = "Sure! "
"""What the 'live model' says before the authored words."""
KEY_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")


@dataclass
class FakeProvider:
    """The running server: its base URL per profile, what it received, and how it misbehaves."""

    port: int
    plant: str | None = None
    echo_key: bool = False
    refuse: int | None = None
    error_event: bool = False
    wording: str = LIVE_PREFIX
    current: str | None = None
    """The scenario being recorded, when the test knows it (``record_suite(on_start=...)``)."""
    received: list[dict[str, Any]] = field(default_factory=list)

    def base_url(self, profile: str) -> str:
        root = f"http://127.0.0.1:{self.port}"
        return f"{root}/v1" if profile == "openai-chat" else root

    def answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        profile = _profile_of(path)
        if profile is None:
            return 404, "application/json", b'{"error": {"message": "unknown endpoint"}}'
        if self.refuse is not None:
            headers_out, error_body = profile.error_response(HttpError(self.refuse))
            return self.refuse, headers_out.get("content-type", "application/json"), error_body
        url = f"http://127.0.0.1:{self.port}{path}"
        decoded = profile.decode_request(body, url)
        scenario = _scenario_for(profile, decoded, self.current)
        self.received.append({"profile": profile.name, "path": path, "scenario": scenario and scenario.id})
        if scenario is None:
            return 400, "application/json", b'{"error": {"message": "the fake provider knows no such input"}}'
        extra = self.wording
        if self.echo_key:
            extra += f"(you sent {_key_of(headers)}) "
        if self.plant:
            extra += f"(planted {self.plant}) "
        stream: Stream | StreamError = _reworded(scenario, extra)
        if self.error_event:
            stream = StreamError(stream.parts, "overloaded")
        return 200, profile.stream_content_type, profile.render_stream(stream, seed="fake-live", model="fake")


def _profile_of(path: str) -> WireProfile | None:
    if path.endswith("/chat/completions"):
        return get_profile("openai-chat")
    if path.endswith("/v1/messages"):
        return get_profile("anthropic-messages")
    if ":streamGenerateContent" in path:
        return get_profile("gemini")
    return None


def _key_of(headers: dict[str, str]) -> str:
    for name in KEY_HEADERS:
        if name in headers:
            return headers[name].removeprefix("Bearer ")
    return ""


def _said(messages: Any) -> list[tuple[str, str]]:
    """What the user, the system and the tools said: enough to tell scenarios apart, whatever a wire keeps."""
    return [(type(m).__name__, str(m.content)) for m in messages if type(m).__name__ != "AssistantMessage"]


def _scenario_for(profile: WireProfile, decoded: Any, current: str | None) -> Scenario | None:
    """The live-recordable scenario this request is the input of. Scenarios that differ only in their answer
    share an input; ``current`` (the scenario being recorded, set by the test) decides between them."""
    tools = sorted(t.name for t in decoded.tools or [])
    candidates = [
        s
        for s in scenarios_for(profile.name)
        if why_not_live(s) is None
        and _said(profile.expected_history(s.messages)) == _said(decoded.messages)
        and sorted(t.name for t in s.tools) == tools
    ]
    chosen = [s for s in candidates if s.id == current]
    if chosen:
        return chosen[0]
    exact = [s for s in candidates if all(decoded.config.get(k) == v for k, v in s.config.items())]
    # The scenario with the most config in common wins: stop_max_tokens over text_basic, say.
    exact.sort(key=lambda s: -len(s.config))
    return exact[0] if exact else None


def _reworded(scenario: Scenario, extra: str) -> Stream:
    stream = scenario.exchanges[-1].response
    assert isinstance(stream, Stream)
    parts = list(stream.parts)
    for i, part in enumerate(parts):
        if isinstance(part, Text):
            parts[i] = Text((extra, *part.chunks))
            break
    return replace(stream, parts=tuple(parts))


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, content_type, payload = self.server.fake.answer(self.path, headers, body)
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeProvider


def serve() -> Iterator[FakeProvider]:
    """Start the fake provider on a free port of 127.0.0.1; stopped when the generator is closed."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = FakeProvider(port=server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, name="fake-provider", daemon=True)
    thread.start()
    try:
        yield server.fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
