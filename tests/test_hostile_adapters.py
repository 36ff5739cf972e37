"""Hostile adapters run through pytest as users run it: the run reports each on its clause, never crashes,
never stops early and never hangs past --helix-timeout. (tests/broken_adapters/hostile.py checks the clauses.)"""

from __future__ import annotations

import re
import time

import pytest
from plugin_runs import assert_no_crash, output, run

# slow: hostile adapters, each in a pytest run of its own: rarely changed, seconds each
pytestmark = pytest.mark.slow

HOSTILE = """
import asyncio, dataclasses
from my_adapter import spec as base
from reference_adapters.openai_chat import OpenAIChatAdapter

class Boom(BaseException):
    pass

class Hostile(OpenAIChatAdapter):
    what = None
    async def generate_step(self, input):
        if self.what == "hang":
            await asyncio.Event().wait()
        if self.what == "block":
            import time; time.sleep(3)
        raise {"exit": SystemExit(3), "interrupt": KeyboardInterrupt(), "base": Boom("boom")}[self.what]

def _spec(what):
    cls = type(f"Hostile_{what}", (Hostile,), {"what": what})
    return dataclasses.replace(base, name=what, factory=lambda ctx: cls(api_key=ctx.api_key, base_url=ctx.base_url))

exits, interrupts, base_exc, hangs, blocks = (_spec(w) for w in ("exit", "interrupt", "base", "hang", "block"))
"""
SELECT = ("-k", "text_basic or tool_call_parallel and not two_tools")


@pytest.mark.parametrize(
    ("name", "raised"),
    [("exits", "SystemExit: 3"), ("interrupts", "KeyboardInterrupt: "), ("base_exc", "Boom: boom")],
)
def test_base_exceptions_fail_nt01_and_the_run_goes_on(
    adapters: pytest.Pytester, name: str, raised: str
) -> None:
    adapters.makepyfile(hostile=HOSTILE)
    result = run(
        adapters,
        f"--adapter=hostile:{name}",
        *SELECT,
        "-W",
        "error::pytest.PytestUnhandledThreadExceptionWarning",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)  # not INTERRUPTED (2), not a crash
    assert_no_crash(result)
    outcomes = result.parseoutcomes()
    # Every item ran: one root failure per scenario (NT-01), the clauses that need a result not judged.
    assert outcomes["failed"] == 2, outcomes
    assert sum(outcomes.get(k, 0) for k in ("failed", "passed", "skipped", "xfailed")) > 40, outcomes
    result.stdout.fnmatch_lines([f"  actual:   {raised}*"])
    assert "FAILED helix-conformance::test_conformance[openai-chat::tool_call_parallel::NT-01]" in output(
        result
    )


@pytest.mark.parametrize("name", ["hangs", "blocks"])
def test_a_hanging_adapter_is_cut_off_at_the_timeout(adapters: pytest.Pytester, name: str) -> None:
    """``hangs`` awaits forever; ``blocks`` blocks its event loop with time.sleep, which no await can cancel."""
    adapters.makepyfile(hostile=HOSTILE)
    started = time.monotonic()
    result = run(
        adapters,
        f"--adapter=hostile:{name}",
        "-k",
        "text_basic and (HARN-03 or RES-01)",
        "--helix-timeout=0.5",
    )
    assert time.monotonic() - started < 60
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    result.stdout.fnmatch_lines(["*generate_step did not return within 0.5 s*"])


ODD = r"""
import asyncio, dataclasses, sys, threading, time
from my_adapter import spec as base
from reference_adapters.openai_chat import OpenAIChatAdapter


class ExitsInALoopCallback(OpenAIChatAdapter):
    async def generate_step(self, input):
        asyncio.get_running_loop().call_soon(sys.exit, 3)
        await asyncio.sleep(0.01)
        return await super().generate_step(input)


class LateDeltaFromAThread(OpenAIChatAdapter):
    async def generate_step(self, input):
        result = await super().generate_step(input)
        if input.callbacks is None:
            return result
        on_text = input.callbacks.on_text_delta

        def later():
            time.sleep(0.02)
            on_text("late")

        threading.Thread(target=later).start()
        return result


def _spec(name, cls=OpenAIChatAdapter):
    return dataclasses.replace(base, name=name, factory=lambda ctx: cls(api_key=ctx.api_key, base_url=ctx.base_url))


surrogate_name = _spec("odd\udc80name")  # a name decoded with surrogateescape
exits_in_a_loop_callback = _spec("exits", ExitsInALoopCallback)
late_delta_from_a_thread = _spec("late", LateDeltaFromAThread)
"""


def test_an_adapter_name_with_a_lone_surrogate_gets_every_report(adapters: pytest.Pytester) -> None:
    """An honest adapter whose name holds a lone surrogate: every report is written, the name escaped (a
    UnicodeEncodeError traceback from _files.write_atomic and no Markdown or HTML report before)."""
    adapters.makepyfile(odd=ODD)
    result = run(adapters, "--adapter=odd:surrogate_name", "--helix-report=r.json,r.md,r.html", *SELECT)
    assert result.ret == pytest.ExitCode.OK, output(result)
    assert_no_crash(result)
    for name in ("r.json", "r.md", "r.html"):
        text = (adapters.path / name).read_text(encoding="utf-8")
        assert "odd" in text
        assert "\\udc80" in text, name


def test_sys_exit_in_a_loop_callback_is_reported_as_itself_on_nt01(adapters: pytest.Pytester) -> None:
    """SystemExit raised in a call_soon callback stops the adapter's event loop: NT-01 names it (it said
    `CancelledError:` with an empty message before, the step's cancellation by the loop's teardown)."""
    adapters.makepyfile(odd=ODD)
    result = run(adapters, "--adapter=odd:exits_in_a_loop_callback", "-k", "openai-chat::text_basic::")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    result.stdout.fnmatch_lines(["  actual:   SystemExit: 3"])
    assert "CancelledError" not in output(result)


def test_a_callback_from_a_thread_after_return_fails_str07_alone(adapters: pytest.Pytester) -> None:
    """Only STR-07 judges a callback made after the return (STR-01 and STR-10 counted it too before)."""
    adapters.makepyfile(odd=ODD)
    result = run(adapters, "--adapter=odd:late_delta_from_a_thread", "-k", "openai-chat::text_basic::")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    # pytest appends " - <reason>" to a FAILED line only when the terminal is wide enough
    failed = [line.split(" - ")[0] for line in result.outlines if line.startswith("FAILED")]
    assert failed == ["FAILED helix-conformance::test_conformance[openai-chat::text_basic::STR-07]"], failed


# --- forged evidence (issue 31): what the adapter's process says about a run is judged against its host -------

FORGERS = """
import json, os, sys
from helix_conformance.contract import LLMGenerateInput, TextStepResult
from helix_conformance.replay.runner import REPLAY_API_KEY, RunOptions, ScenarioRun
from helix_conformance.replay.trace import SentRequest, Trace
from helix_conformance.scenarios import get_scenario
from helix_conformance.worker import child
from helix_conformance.worker.protocol import encode_answer, header
from helix_conformance.worker.runs import encode_run
from my_adapter import spec as base
from reference_adapters.openai_chat import OpenAIChatAdapter, build_request_body
import dataclasses

HELLO = ["Hello", "!", " How can", " I help", " you today?"]


def perfect_run():
    # What a conforming run of text_basic looked like when the adapter's process sent the whole trace: the
    # request it would have sent, the nine chunks, a callback as each text chunk arrived. No request is sent.
    scenario = get_scenario("text_basic")
    step = LLMGenerateInput(messages=list(scenario.messages), config=scenario.llm_config(base.model),
                            agent_id="a", agent_type="t")
    body = json.dumps(build_request_body(step)).encode()
    headers = {"authorization": f"Bearer {REPLAY_API_KEY}", "content-type": "application/json"}
    trace = Trace()
    trace.add_request(SentRequest("POST", "https://api.openai.com/v1/chat/completions", "/v1/chat/completions",
                                  headers, body, 0, 0.0, "httpx"))
    trace.add_chunk(b"", 0, 0, False)
    for i, piece in enumerate(HELLO, start=1):
        trace.add_chunk(b"", 0, i, False)
        trace.add("callback", name="on_text_delta", args=(piece,))
        trace.add("callback_done", name="on_text_delta", args=(piece,))
    trace.add_chunk(b"", 0, 6, False)
    trace.add_chunk(b"", 0, 7, False)
    trace.add_chunk(b"", 0, 8, True)
    trace.add("response_closed", interaction=0)
    trace.add("returned", name="TextStepResult")
    run = ScenarioRun(options=RunOptions(), trace=trace)
    run.results = [TextStepResult(content="".join(HELLO), should_stop=True, stop_reason="end_turn")]
    return encode_run(run)


def run_id():
    # The worker's main thread serves the run: its `message` names it.
    for frame in sys._current_frames().values():
        while frame is not None:
            message = frame.f_locals.get("message")
            if isinstance(message, dict) and message.get("type") == "run":
                return message["id"]
            frame = frame.f_back
    raise RuntimeError("no run being served")


class Forger(OpenAIChatAdapter):
    async def generate_step(self, input):
        # Written on the worker's answer channel for the run being served, before the worker's own answer.
        out = int(sys.argv[sys.argv.index("--fds") + 1].split(",")[1])
        os.write(out, encode_answer(header("result", id=run_id(), run=perfect_run())))
        return TextStepResult(content="".join(HELLO), should_stop=True, stop_reason="end_turn")


def _patch(what):
    def run(self, message, payload):  # the worker's run function, replaced: no adapter runs at all
        self.send(header("started", id=message.get("id")))
        if what == "failed":
            self.send(header("failed", id=message.get("id"), message="harness bug (not the adapter)"))
        else:
            self.send(header("result", id=message.get("id"), run=perfect_run()))

    child.Worker.run = run


def _spec(name):
    return dataclasses.replace(base, name=name, factory=lambda ctx: Forger(api_key=ctx.api_key, base_url=ctx.base_url))


frames, patches, failures = _spec("frames"), _spec("patches"), _spec("failures")
if os.environ.get("HELIX_TEST_FORGE") in ("patch", "failed") and "helix_conformance.worker.child" in sys.modules:
    _patch(os.environ["HELIX_TEST_FORGE"])
"""
MAIN_RUN_CLAUSES = (
    "-k",
    "openai-chat::text_basic:: and (RES-01 or RES-02 or STOP-01 or STR-01 or STR-02 or STR-04 or MSG-01 "
    "or MSG-09 or NT-01 or HARN-01 or HARN-02)",
)
"""Clauses judged on the main run alone: a forged perfect run of text_basic passed every one of them while the
adapter's process produced the trace."""


@pytest.mark.parametrize("name", ["frames", "patches"])
def test_a_forged_run_is_judged_against_what_the_host_delivered(
    adapters: pytest.Pytester, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result frame written on the worker's answer channel, or the worker's run function replaced, claiming a
    perfect run that never sent a request: the trace is now the host's, and it saw no request at all."""
    adapters.makepyfile(forgers=FORGERS)
    monkeypatch.setenv("HELIX_TEST_FORGE", "patch" if name == "patches" else "")
    result = run(adapters, f"--adapter=forgers:{name}", *MAIN_RUN_CLAUSES)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert "VERDICT: PASS" not in output(result)
    failed = set(re.findall(r"^FAILED \S+::text_basic::([A-Z]+-\d+)\]", output(result), re.MULTILINE))
    # The forged trace does not fit what the link reported (no request, no chunk, no callback reached the host).
    assert failed == {"NT-01"}, output(result)
    result.stdout.fnmatch_lines(["*its events do not match its link's reports*"])


def test_a_forged_failed_frame_is_the_adapters_not_a_harness_bug(
    adapters: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapters.makepyfile(forgers=FORGERS)
    monkeypatch.setenv("HELIX_TEST_FORGE", "failed")
    result = run(adapters, "--adapter=forgers:failures", "-k", "openai-chat::text_basic::NT-01")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    wanted = (
        "*the adapter's process reported that the harness code running in it failed (harness bug (not the "
    )
    result.stdout.fnmatch_lines([wanted + "adapter))*judged as the adapter's*"])
