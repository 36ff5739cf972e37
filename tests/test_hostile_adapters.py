"""Hostile adapters run through pytest as users run it: the run reports each on its clause, never crashes,
never stops early and never hangs past --helix-timeout. (tests/broken_adapters/hostile.py checks the clauses.)"""

from __future__ import annotations

import time

import pytest
from plugin_runs import assert_no_crash, output, run

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
