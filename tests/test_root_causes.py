"""One root cause, one failure: a run with no result, no request or no response is judged once, on the clause
that owns it; the summary groups failures by cause; a run where every scenario fails the same way stops early;
selections and usage errors never fail the gate on their own."""

from __future__ import annotations

import pytest
from plugin_runs import adapter_module, assert_no_crash, clear_helix_environment, output, run

from helix_conformance.checks.root import FAIL_FAST_AFTER, RootCause, common_cause
from helix_conformance.contract import AdapterSpec
from helix_conformance.reporting.causes import group_causes, render_causes
from helix_conformance.reporting.outcomes import ItemOutcome, OutcomeLog
from helix_conformance.testing import run_conformance

ADAPTERS = '''
from helix_conformance.contract import AdapterSpec, ErrorStepResult, HelixError
from reference_adapters.openai_chat import OpenAIChatAdapter, spec as reference

CAPABILITIES = reference.capabilities


class MissingDependency:
    """An adapter whose provider library is not installed: it raises on every step."""

    async def generate_step(self, input):
        import a_provider_sdk_that_is_not_installed  # noqa: F401


class RefusesBeforeSending:
    """Turns the missing library into an ErrorStepResult, so it never sends a request."""

    async def generate_step(self, input):
        try:
            import a_provider_sdk_that_is_not_installed  # noqa: F401
        except ImportError as exc:
            error = HelixError(f"cannot start: {exc}", code="provider_error", cause=exc)
            if input.callbacks is not None and input.callbacks.on_error is not None:
                await input.callbacks.on_error(error)
            return ErrorStepResult(error=error)


class ImportsItsSdkOnFirstUse(OpenAIChatAdapter):
    """Imports a slow SDK inside generate_step: its first run spends seconds importing."""

    async def generate_step(self, input):
        import slow_sdk_for_the_test  # noqa: F401

        return await super().generate_step(input)


def _spec(name, factory, profile="openai-chat"):
    return AdapterSpec(name=name, factory=factory, wire_profile=profile, model="m", capabilities=CAPABILITIES)


missing_dependency = _spec("missing-dependency", lambda ctx: MissingDependency())
refuses = _spec("refuses", lambda ctx: RefusesBeforeSending())
# An OpenAI Chat adapter declared with the Anthropic profile: its requests match no Anthropic recording.
wrong_profile = _spec("wrong-profile", reference.factory, profile="anthropic-messages")
typo = _spec("typo", reference.factory, profile="openai-chatt")
slow_import = _spec("slow-import", lambda ctx: ImportsItsSdkOnFirstUse(api_key=ctx.api_key, base_url=ctx.base_url))
'''


@pytest.fixture
def adapters(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    return adapter_module(pytester, monkeypatch, "root_cause_adapters", ADAPTERS)


def test_a_missing_dependency_is_one_cause_and_stops_the_run_early(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=root_cause_adapters:missing_dependency", "--helix-report=r.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == FAIL_FAST_AFTER, outcomes  # one failure per scenario run, on NT-01 only
    result.stdout.fnmatch_lines(
        [
            "1 cause behind 3 failed checks, most widespread first:",
            "  1. NT-01 on 3 checks (*)",
            "     generate_step raised ModuleNotFoundError: No module named 'a_provider_sdk_that_is_not_installed'*",
            '     reproduce: pytest --adapter=root_cause_adapters:missing_dependency -k "openai-chat::*::NT-01"',
            "helix-conformance stopped early: the first 3 scenarios all failed the same way*",
            "VERDICT: FAIL*NT-01*",
        ]
    )
    text = output(result)
    # No false statement about a request or a stream that never existed.
    assert "did not ask for a streamed response" not in text
    assert "stalls after event" not in text
    assert "not applicable to this adapter's wire profile" not in text
    report = (adapters.path / "r.json").read_text()
    assert "stopped early" in report


def test_a_wrong_wire_profile_is_named_as_the_likely_cause(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=root_cause_adapters:wrong_profile")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    assert result.parseoutcomes()["failed"] == FAIL_FAST_AFTER
    result.stdout.fnmatch_lines(
        [
            "  1. HARN-01 on 3 checks *",
            "     no request matched a recording of wire profile 'anthropic-messages': the adapter sent POST "
            "/chat/completions; the recordings answer POST /v1/messages*The requests look like wire profile "
            "'openai-chat': is AdapterSpec.wire_profile right?",
        ]
    )
    # HARN-02 (every recording unused) is the same cause seen from the other side: not a second failure.
    assert "HARN-02 (MUST" not in output(result)


def _openai_chat_spec(name: str, adapter: type) -> AdapterSpec:
    """An in-process test adapter declared like the OpenAI Chat reference (its capabilities)."""
    from reference_adapters.openai_chat import spec as reference

    return AdapterSpec(
        name=name,
        factory=lambda ctx: adapter(),
        wire_profile="openai-chat",
        model="m",
        capabilities=reference.capabilities,
    )


def test_a_step_that_never_sends_a_request_is_judged_only_where_that_means_something() -> None:
    from helix_conformance.contract import ErrorStepResult, HelixError

    class RefusesBeforeSending:
        async def generate_step(self, input):  # type: ignore[no-untyped-def]
            error = HelixError("cannot start: the SDK is missing", code="provider_error")
            if input.callbacks is not None and input.callbacks.on_error is not None:
                await input.callbacks.on_error(error)
            return ErrorStepResult(error=error)

    report = run_conformance(_openai_chat_spec("refuses", RefusesBeforeSending), scenarios=["tool_call"])
    checks = {c["clause"]: c for c in report["results"]}
    assert report["causes"][0]["clause"] == "HARN-02"
    assert checks["HARN-02"]["outcome"] == "failed"
    assert "the step ended before any request was sent" in checks["HARN-02"]["message"]
    for clause in ("MSG-10", "RES-06", "TOOL-01", "STR-02"):
        if clause in checks:
            assert checks[clause]["outcome"] == "skipped", checks[clause]
            assert "not judged on this run" in checks[clause]["message"]
            assert "reported once, on HARN-02" in checks[clause]["message"]
    # What can be judged without a request still is: on_error was called once with the returned error.
    assert checks["STR-06"]["outcome"] == "passed"


def test_no_attempt_on_a_refused_connection_says_where_attempts_are_counted() -> None:
    """connect_error's request never reaches the replay (its connection is refused): HARN-02 says how attempts are
    seen, so that an adapter on a client the harness cannot see is not told it sent nothing without a why."""
    from helix_conformance.contract import ErrorStepResult, HelixError

    class GivesUpWithoutTrying:
        async def generate_step(self, input):  # type: ignore[no-untyped-def]
            return ErrorStepResult(error=HelixError("offline", code="provider_error", retryable=True))

    report = run_conformance(_openai_chat_spec("gives-up", GivesUpWithoutTrying), scenarios=["connect_error"])
    cause = report["causes"][0]
    assert cause["clause"] == "HARN-02", cause
    assert "refuses the connection (connect_error)" in str(cause), cause
    assert "Python's sockets connect" in str(cause), cause


def test_a_timeout_spent_importing_says_so(adapters: pytest.Pytester) -> None:
    """HARN-03's usual suspects (backoff sleeps, a stream that never ends) would contradict what happened: the
    first run spent its time importing the adapter's SDK."""
    adapters.makepyfile(slow_sdk_for_the_test="import time\ntime.sleep(4)\n")
    result = run(
        adapters,
        "--adapter=root_cause_adapters:slow_import",
        "--helix-timeout=1",
        "-k",
        "text_basic and HARN-03",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    result.stdout.fnmatch_lines(
        [
            "  generate_step did not return within 1.0 s: * s of it went to importing * modules the adapter had "
            "not loaded before this run*",  # then the worker's hang note: its processes' memory
            "  hint: The time went to imports, not to the adapter's waits*",
        ]
    )
    assert "Real sleeps in backoff" not in output(result)


def test_a_wire_profile_typo_is_a_usage_error(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=root_cause_adapters:typo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in output(result)
    assert "unknown wire profile 'openai-chatt' (did you mean 'openai-chat'?)" in result.stderr.str()


def test_selecting_one_check_by_id_does_not_fail_the_session_half_of_harn_05(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_helix_environment(monkeypatch)
    result = run(
        pytester, "--adapter=openai", "helix-conformance::test_conformance[openai-chat::text_basic::RES-01]"
    )
    assert result.ret == pytest.ExitCode.OK, output(result)
    text = output(result)
    assert "declared capabilities exercised by no executed clause" not in text
    assert "not applicable to this adapter's wire profile" not in text
    result.stdout.fnmatch_lines(["*clauses not run (deselected*", "VERDICT: PASS*"])


def test_a_k_usage_error_is_only_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_helix_environment(monkeypatch)
    result = run(pytester, "--adapter=openai", "-k", "RES-06 and (")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = output(result)
    assert "Wrong expression passed to '-k'" in text
    assert "HARN-05" not in text
    assert "VERDICT" not in text


def _root(clause: str = "NT-01", message: str = "generate_step raised KeyError: 'x'") -> RootCause:
    return RootCause(clause, message, "no_result")


def test_the_run_stops_only_when_every_scenario_so_far_shares_the_cause() -> None:
    assert common_cause([_root()] * (FAIL_FAST_AFTER - 1)) is None  # too few to say
    assert common_cause([_root()] * FAIL_FAST_AFTER) == _root()
    assert common_cause([_root(), None, _root()]) is None  # one scenario could be judged
    assert common_cause([_root(), _root(message="another"), _root()]) is None
    assert common_cause([None] * FAIL_FAST_AFTER) is None


def _failed(scenario: str, clause: str, cause: str) -> ItemOutcome:
    return ItemOutcome(
        f"helix-conformance::test_conformance[openai-chat::{scenario}::{clause}]",
        clause,
        scenario,
        "openai-chat",
        "MUST",
        "failed",
        f"{clause} (MUST, seed) failed on scenario {scenario} [openai-chat]\n  clause: ...\n  {cause}",
        0.0,
        cause=cause,
    )


def test_failures_are_grouped_by_cause_up_to_the_values_that_vary() -> None:
    log = OutcomeLog()
    for scenario, count in (("tool_call", 1), ("tool_call_parallel", 2), ("tool_call_three", 3)):
        log.record(
            _failed(scenario, "RES-06", f"{count} parallel tool calls expected, in the provider's order")
        )
    log.record(_failed("text_basic", "STR-01", "the final text is not the provider's text"))
    causes = group_causes(log)
    assert [(c.clause, len(c.scenarios)) for c in causes] == [("RES-06", 3), ("STR-01", 1)]
    lines = render_causes(log, "mypkg")
    assert lines[1] == "2 causes behind 4 failed checks, most widespread first:"
    assert lines[2].startswith("  1. RES-06 on 3 checks (tool_call, tool_call_parallel, tool_call_three)")
    assert lines[4] == '     reproduce: pytest --adapter=mypkg -k "openai-chat::tool_call::RES-06"'


def test_a_passing_run_has_no_cause_block() -> None:
    log = OutcomeLog()
    assert render_causes(log, "mypkg") == []
