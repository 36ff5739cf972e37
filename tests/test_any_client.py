"""Adapters on HTTP clients other than httpx, run as users run them: the replay host serves any client at
``AdapterContext.base_url`` (replay/host.py). examples/aiohttp-adapter runs the whole suite in test_examples.py;
here a sync client in a thread (requests), which the link counts too (replay/link.py)."""

from __future__ import annotations

import pytest
from plugin_runs import assert_no_crash, output, run

REQUESTS_ADAPTER = '''
import asyncio, json

import requests

from helix_conformance.contract import AdapterSpec, ErrorStepResult, HelixError, TextStepResult, invoke_callback


class RequestsAdapter:
    """OpenAI Chat Completions, text only, read with requests in a thread; each line handed to the loop."""

    def __init__(self, ctx):
        self.ctx = ctx

    async def generate_step(self, input):
        loop = asyncio.get_running_loop()
        lines = asyncio.Queue()
        body = {"model": input.config.model, "stream": True,
                "messages": [{"role": m.role, "content": m.content} for m in input.messages]}

        def fetch():
            try:
                with requests.post(f"{self.ctx.base_url}/chat/completions", json=body, stream=True,
                                   headers={"Authorization": f"Bearer {self.ctx.api_key}"},
                                   timeout=self.ctx.timeout) as response:
                    response.raise_for_status()
                    for line in response.iter_lines():
                        loop.call_soon_threadsafe(lines.put_nowait, line)
            except requests.RequestException as exc:
                loop.call_soon_threadsafe(lines.put_nowait, exc)
            loop.call_soon_threadsafe(lines.put_nowait, None)

        reading = loop.run_in_executor(None, fetch)
        text, finish, failure = [], None, None
        while (line := await lines.get()) is not None:
            if isinstance(line, Exception):
                failure = line
                continue
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices", []):
                delta = (choice.get("delta") or {}).get("content")
                if delta:
                    text.append(delta)
                    if input.callbacks and input.callbacks.on_text_delta:
                        await invoke_callback(input.callbacks.on_text_delta, delta)
                finish = choice.get("finish_reason") or finish
        await reading
        if failure is not None or finish is None:
            error = HelixError(f"requests: {failure}", code="provider_error", retryable=True)
            if input.callbacks and input.callbacks.on_error:
                await invoke_callback(input.callbacks.on_error, error)
            return ErrorStepResult(error=error)
        return TextStepResult(content="".join(text), should_stop=True,
                              stop_reason={"stop": "end_turn", "length": "max_tokens"}.get(finish, "unknown"))


spec = AdapterSpec(name="requests-chat", factory=RequestsAdapter, wire_profile="openai-chat", model="gpt-4o-mini")
'''
TEXT_CLAUSES = (
    "RES-01 or RES-02 or STOP-01 or STR-01 or STR-02 or STR-07 or MSG-01 or MSG-02 or HARN-01 or HARN-02"
)


def test_a_sync_client_in_a_thread_is_served_and_judged_as_any_other(pytester: pytest.Pytester) -> None:
    pytest.importorskip("requests")
    pytester.makepyfile(requests_adapter=REQUESTS_ADAPTER)
    result = run(
        pytester,
        "--adapter=requests_adapter:spec",
        "-k",
        f"(openai-chat::text_basic:: or openai-chat::text_unicode::) and ({TEXT_CLAUSES})",
    )
    text = output(result)
    assert result.ret == pytest.ExitCode.OK, text[-4000:]
    assert_no_crash(result)
    assert "VERDICT: PASS" in text
    assert result.parseoutcomes()["passed"] >= 16  # STR-02 among them: each delta reported as it arrived


def test_a_sync_client_that_buffers_fails_str_02(pytester: pytest.Pytester) -> None:
    """The same client reporting every delta only once the body is read: STR-02 sees it, through a thread."""
    pytest.importorskip("requests")
    buffered = (
        REQUESTS_ADAPTER.replace("loop.call_soon_threadsafe(lines.put_nowait, line)", "later.append(line)")
        .replace(
            "            except requests.RequestException as exc:",
            "                for line in later:\n"
            "                    loop.call_soon_threadsafe(lines.put_nowait, line)\n"
            "            except requests.RequestException as exc:",
        )
        .replace("        def fetch():\n", "        later = []\n\n        def fetch():\n")
    )
    pytester.makepyfile(requests_adapter=buffered)
    result = run(pytester, "--adapter=requests_adapter:spec", "-k", "openai-chat::text_basic::STR-02")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)[-4000:]
    assert "FAILED helix-conformance::test_conformance[openai-chat::text_basic::STR-02]" in output(result)
