"""End to end: the plugin run the way users run it, ``pytest --adapter=NAME`` in a fresh directory.

Every test starts pytest in a subprocess (the plugin patches transport classes and runs threads) inside the
``pytester`` directory. Apart from the one full-suite run, the runs select a few clauses with ``-k``. All use
``--assert=plain``: with PYTHONDONTWRITEBYTECODE set (as in CI sandboxes) every pytest process otherwise
recompiles, with assertion rewriting, every module of every pytest11 distribution (hypothesis,
helix_conformance): 2.5-4 s per run. The conformance items do not use ``assert``, so nothing they check
changes.
"""

from __future__ import annotations

import gc
import json
import re
import shlex
from pathlib import Path

import pytest
from doc_regions import check_region, summary_block
from plugin_runs import OPTIONS, assert_no_crash, lines_starting, output, run

GROUP_TITLE = "Helix Agents adapter conformance:"  # the description of the `helix-conformance` option group
ID_RE = re.compile(
    r"helix-conformance::test_conformance\[openai-chat::([a-z0-9_]+|recorded/[\w.\-\[\]/]+)::[A-Z]+-\d\d\]"
)
"""An authored scenario's id, or a recorded one's (``recorded/<dir>/<name>``, ``[i]`` for interaction i)."""

ROOT = Path(__file__).resolve().parents[1]


# --- 1, 2: the plugin in projects -------------------------------------------------------------------------


def test_help_lists_the_group_and_every_option(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    assert result.ret == pytest.ExitCode.OK
    text = result.stdout.str()
    assert GROUP_TITLE in text
    group = text.split(GROUP_TITLE, 1)[1].split("\n\n", 1)[0]
    for option in OPTIONS:
        assert re.search(rf"^\s+{re.escape(option)}\b", group, re.MULTILINE), f"{option} not in the group"
    assert "HELIX_TIMEOUT" in group
    assert "helix_timeout" in group


def test_a_project_without_adapter_runs_its_own_tests_and_pays_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_own="""
        import sys

        def test_own_logic():
            assert 1 + 1 == 2

        def test_nothing_heavy_was_loaded():
            heavy = ("helix_conformance.", "reference_adapters", "pydantic", "httpx")
            light = ("helix_conformance.plugin", "helix_conformance.settings")
            loaded = [m for m in sys.modules if m.startswith(heavy) and m not in light]
            assert loaded == []
        """
    )
    result = run(pytester, "-v")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["plugins:*helix-conformance*"])  # installed and loaded, yet invisible
    text = output(result)
    assert "test_conformance" not in text
    assert not lines_starting(result, "helix-conformance ")
    assert "VERDICT" not in text
    assert "helix-conformance summary" not in text


def test_a_suite_run_inside_another_process_leaves_nothing_of_its_own_frozen(
    pytester: pytest.Pytester,
) -> None:
    """The suite freezes pytest's heap while its items run (less for the collector to scan); a session run
    inside another process (``pytest.main``, pytester's in-process runs) gives it back when it ends, or the
    host would keep every object of that session past its end. (CPython 3.12 starts with a few objects frozen:
    they may be given back too.)"""
    before = gc.get_freeze_count()
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--adapter=openai", "-k", "openai-chat::text_basic::RES-01"
    )
    result.assert_outcomes(passed=1)
    assert gc.get_freeze_count() <= before


@pytest.mark.parametrize(("option", "started"), [((), [1, 1]), (("--collect-only",), [1])])
def test_the_session_s_workers_start_together_unless_nothing_will_run(
    pytester: pytest.Pytester, option: tuple[str, ...], started: list[int]
) -> None:
    """Every worker of the session starts while pytest waits for the first to resolve the adapter (the CPU is
    free then), not on the first run that finds the first full; ``--collect-only`` runs nothing: one worker."""
    pytester.makeconftest(
        """
        import json

        def pytest_collection_finish(session):
            pool = session.config.pluginmanager.get_plugin("helix-conformance-suite").settings.submit.__self__
            with open("spawned.json", "w") as out:
                json.dump([s.worker.spawned for s in pool.slots], out)
        """
    )
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--adapter=openai", "--helix-workers=2", "-k", "text_basic::RES-01", *option
    )
    assert result.ret == pytest.ExitCode.OK, output(result)
    assert json.loads((pytester.path / "spawned.json").read_text()) == started


# --- 3, 4, 11: the built-in adapters pass ------------------------------------------------------------------


def test_openai_selection_header_table_and_verdict(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=openai", "-k", "text_basic or tool_call_parallel")
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(
        [
            "helix-conformance *: adapter 'openai' from reference_adapters.openai_chat:spec (built-in)",
            "  wire profile openai-chat, model gpt-4o-mini, capabilities: *",
            "  cassettes: *",
            "  settings: *helix-strict=False (default)*helix-timeout=10.0 (default)*",
            "helix-conformance summary for adapter 'openai'",
            "area * clauses * passed * failed *",
            "RES Results *",
            "STR Streaming callbacks *",
            "total *",
            "VERDICT: PASS*",
        ]
    )
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 0
    assert "failed" not in outcomes
    assert outcomes["deselected"] > 0


@pytest.mark.long
@pytest.mark.slow
def test_openai_full_suite_passes_and_writes_the_json_report(pytester: pytest.Pytester) -> None:
    """The main job of the product: the whole suite against the reference adapter, as CI runs it."""
    result = run(pytester, "--adapter=openai", "--helix-report=reports/helix.json")
    assert result.ret == pytest.ExitCode.OK, output(result)
    # README's sample summary is this run's (tests/doc_regions.py; HELIX_UPDATE_DOCS=1 rewrites it).
    check_region(ROOT / "README.md", "openai-summary", summary_block(result.stdout.str()))
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0, outcomes
    assert outcomes["passed"] > 0, outcomes
    assert_no_crash(result)
    result.stdout.fnmatch_lines(["total * 0 *", "VERDICT: PASS*"])
    # No Hypothesis example database, nor its cache of constants parsed from the user's modules (Hypothesis's
    # shared unicode tables may be cached there, as by any Hypothesis use).
    for kept in ("examples", "constants"):
        assert not (pytester.path / ".hypothesis" / kept).exists(), kept
    for area in ("RES Results", "STOP Stop reasons", "STR Streaming callbacks", "ERR Errors", "HARN Harness"):
        assert lines_starting(result, area), f"no {area!r} row in the summary"

    report = json.loads((pytester.path / "reports" / "helix.json").read_text(encoding="utf-8"))
    assert report["schema_version"] == 3
    assert report["adapter"]["name"] == "openai"
    assert report["adapter"]["wire_profile"] == "openai-chat"
    assert report["verdict"] == "pass"
    assert report["exit_status"] == 0
    assert report["settings"]["helix_report"] == {"value": "reports/helix.json", "source": "cli"}
    results = report["results"]
    ran = sum(outcomes.get(key, 0) for key in ("passed", "skipped", "xfailed"))
    assert len(results) == ran
    for entry in results:
        assert {"clause", "scenario", "outcome", "reproduce"} <= entry.keys()
        assert entry["outcome"] in ("passed", "skipped", "should_failed"), entry
    parallel = [r for r in results if (r["scenario"], r["clause"]) == ("tool_call_parallel", "RES-06")]
    assert len(parallel) == 1
    assert parallel[0]["outcome"] == "passed"
    assert parallel[0]["reproduce"] == 'pytest --adapter=openai -k "openai-chat::tool_call_parallel::RES-06"'


@pytest.mark.long
@pytest.mark.slow
def test_anthropic_full_suite_passes(pytester: pytest.Pytester) -> None:
    """The Anthropic reference adapter passes every applicable clause, the Anthropic-only ones included."""
    result = run(pytester, "--adapter=anthropic")
    assert result.ret == pytest.ExitCode.OK, output(result)
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0, outcomes
    assert_no_crash(result)
    result.stdout.fnmatch_lines(
        [
            "helix-conformance *: adapter 'anthropic' from reference_adapters.anthropic:spec (built-in)",
            "  wire profile anthropic-messages, *",
            "CACHE Prompt caching * 2 * 2 * 0 *",
            "not run (not applicable to this adapter's wire profile): STOP-03, ERR-08, CACHE-03, CACHE-04",
            "VERDICT: PASS*",
        ]
    )


@pytest.mark.long
@pytest.mark.slow
def test_gemini_full_suite_passes(pytester: pytest.Pytester) -> None:
    """The Gemini reference adapter passes every applicable clause, CACHE-04 and MSG-08 included."""
    result = run(pytester, "--adapter=gemini")
    assert result.ret == pytest.ExitCode.OK, output(result)
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0, outcomes
    assert_no_crash(result)
    result.stdout.fnmatch_lines(
        [
            "helix-conformance *: adapter 'gemini' from reference_adapters.gemini:spec (built-in)",
            "  wire profile gemini, *",
            "CACHE Prompt caching * 2 * 2 * 0 *",
            "not run (not applicable to this adapter's wire profile): RES-10, FIN-03, STOP-03, ERR-08, CACHE-02, "
            "CACHE-03",
            "VERDICT: PASS*",
        ]
    )


@pytest.mark.slow  # the mock adapter through every clause it answers: rarely changed
def test_mock_adapter_passes(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=mock")
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(
        [
            "helix-conformance *: adapter 'mock' from helix_conformance.testing:mock_spec (built-in)",
            "  wire profile scripted, *",
            "VERDICT: PASS*",
        ]
    )
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 0
    assert "failed" not in outcomes


# --- 5: ids and selection ---------------------------------------------------------------------------------


def test_collect_only_lists_contract_shaped_ids(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=openai", "--collect-only", "-q")
    ids = lines_starting(result, "helix-conformance::test_conformance[")
    assert ids
    bad = [i for i in ids if not ID_RE.fullmatch(i)]
    assert not bad, bad[:5]
    assert len(ids) == len(set(ids))
    assert "helix-conformance::test_conformance[openai-chat::tool_call_parallel::RES-06]" in ids
    result.stdout.fnmatch_lines([f"{len(ids)} tests collected*"])


def test_k_selects_one_clause(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=openai", "--collect-only", "-q", "-k", "RES-06")
    ids = lines_starting(result, "helix-conformance::test_conformance[")
    assert "helix-conformance::test_conformance[openai-chat::tool_call_parallel::RES-06]" in ids
    assert all(i.endswith("::RES-06]") for i in ids), ids


def test_collect_only_is_not_a_failed_gate(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=openai", "--collect-only", "-q", "-k", "text_basic and RES-01")
    assert "helix-conformance::test_conformance[openai-chat::text_basic::RES-01]" in result.outlines
    assert result.ret == pytest.ExitCode.OK
    assert "VERDICT" not in result.stdout.str()


# --- 6: adapter names that resolve to nothing usable ------------------------------------------------------


def test_unknown_adapter_is_a_usage_error_listing_what_exists(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--adapter=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--adapter=nope: unknown adapter" in err
    available = re.search(r"Available: ([^.]*)\.", err)
    assert available, err
    assert {"openai", "mock"} <= set(available.group(1).split(", "))
    assert "module" in err
    assert "mypkg.adapter:spec" in err
    assert "test_conformance" not in result.stdout.str()


def test_a_mistyped_adapter_gets_a_did_you_mean(pytester: pytest.Pytester) -> None:
    """A module on the path close to the name (``lumen`` for ``lumn``), an adapter name (``openai``), or a
    module beside the one a dotted name misses."""
    pytester.makepyfile(lumen="from reference_adapters.openai_chat import spec\n")
    for typed, meant in (
        ("lumn", "Did you mean 'lumen'?"),
        ("opnai", "Did you mean 'openai'"),
        ("reference_adapters.openai_chatt", "(did you mean 'reference_adapters.openai_chat'?)"),
    ):
        result = run(pytester, f"--adapter={typed}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR, typed
        assert meant in result.stderr.str(), (typed, result.stderr.str())


def test_module_without_spec_says_what_to_expose(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(helpers_without_spec="VALUE = 1\n")
    result = run(pytester, "--adapter=helpers_without_spec")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "module 'helpers_without_spec' has no `spec` attribute" in err
    assert "helpers_without_spec:ATTRIBUTE" in err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "my_adapter:not_a_spec",
            "my_adapter:not_a_spec is of type dict, not a helix_conformance.contract.AdapterSpec",
        ),
        ("my_adapter:missing_attr", "'my_adapter' has no attribute 'missing_attr'"),
        ("no_such_module_here:spec", "cannot import 'no_such_module_here'"),
    ],
)
def test_module_attr_that_is_not_a_spec_is_a_clear_usage_error(
    adapters: pytest.Pytester, target: str, message: str
) -> None:
    result = run(adapters, f"--adapter={target}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--adapter={target}: " in result.stderr.str()
    assert message in result.stderr.str()
    assert "INTERNALERROR" not in output(result)


@pytest.mark.parametrize("case", ["spec function raises", "module raises on import"])
def test_adapter_code_raising_while_loading_is_a_usage_error(adapters: pytest.Pytester, case: str) -> None:
    if case == "spec function raises":
        target, cause = "my_adapter:spec_function_raising", "cannot build the spec: the SDK is missing"
    else:
        adapters.makepyfile(broken_on_import="raise RuntimeError('the adapter module is broken')\n")
        target, cause = "broken_on_import", "the adapter module is broken"
    result = run(adapters, f"--adapter={target}")
    assert "INTERNALERROR" not in output(result)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--adapter={target}" in result.stderr.str()
    assert cause in result.stderr.str()


# --- 7: a third-party adapter -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "origin", "select"),
    [
        ("my_adapter:spec", "module:attr", "text_basic"),
        ("my_adapter", "module", "text_basic and RES-01"),
    ],
)
def test_third_party_adapter(adapters: pytest.Pytester, target: str, origin: str, select: str) -> None:
    result = run(adapters, f"--adapter={target}", "-k", select)
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.stdout.fnmatch_lines(
        [
            f"helix-conformance *: adapter 'thirdparty' from {target} ({origin})",
            "  wire profile openai-chat, model gpt-4o-mini, *",
            "helix-conformance summary for adapter 'thirdparty'",
            "VERDICT: PASS*",
        ]
    )
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 0
    assert "failed" not in outcomes


# --- 8: a broken adapter is caught, and the failure says how to fix and reproduce it ---------------------


def test_broken_adapter_fails_with_an_actionable_message(adapters: pytest.Pytester) -> None:
    result = run(
        adapters, "--adapter=my_adapter:wrong_stop", "-k", "stop_max_tokens", "--helix-report=r.json"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert_no_crash(result)
    result.stdout.fnmatch_lines(
        [
            "STOP-01 (MUST, *) failed on scenario stop_max_tokens ?openai-chat?",
            "  clause: *",
            "  expected: max_tokens",
            "  actual:   end_turn",
            "  hint: ?*",
            '  reproduce: pytest --adapter=* -k "openai-chat::stop_max_tokens::STOP-01"',
        ]
    )
    result.stdout.fnmatch_lines(["VERDICT: FAIL*STOP-01*"])
    result.stdout.fnmatch_lines(
        ["FAILED helix-conformance::test_conformance?openai-chat::stop_max_tokens::STOP-01?*"]
    )
    report = json.loads((adapters.path / "r.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "fail"
    assert report["exit_status"] == 1
    assert report["clauses"]["STOP-01"]["status"] == "failed"
    failed = [r for r in report["results"] if r["outcome"] == "failed"]
    assert ("stop_max_tokens", "STOP-01") in {(r["scenario"], r["clause"]) for r in failed}


@pytest.mark.slow  # a failing session, then its reproduce line run: rarely changed
def test_the_reproduce_command_reproduces_the_failure(adapters: pytest.Pytester) -> None:
    first = run(adapters, "--adapter=my_adapter:wrong_stop", "-k", "stop_max_tokens and STOP-01")
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    # The failure's own line (the summary's list of causes repeats it, further indented).
    reproduce = [
        line.split("reproduce:", 1)[1] for line in first.outlines if line.startswith("  reproduce: pytest")
    ]
    assert len(reproduce) == 1, first.outlines
    command = shlex.split(reproduce[0])
    assert command[0] == "pytest"
    again = run(adapters, *command[1:])
    assert again.ret == pytest.ExitCode.TESTS_FAILED, output(again)
    assert again.parseoutcomes().get("failed") == 1


# --- 9: SHOULD vs MUST ------------------------------------------------------------------------------------

SHOULD_ONLY = "(text_basic and HARN-04) or (http_429_insufficient_quota and ERR-08)"


def test_should_clauses_do_not_fail_the_gate_by_default(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=my_adapter:sloppy", "-k", SHOULD_ONLY)
    assert result.ret == pytest.ExitCode.OK, output(result)
    outcomes = result.parseoutcomes()
    assert outcomes.get("xfailed") == 2, outcomes
    assert "failed" not in outcomes, outcomes
    not_met = lines_starting(result, "SHOULD not met (not failing the gate): ")
    assert len(not_met) == 1
    assert "ERR-08" in not_met[0]
    assert "HARN-04" in not_met[0]
    assert "--helix-strict" not in not_met[0]
    result.stdout.fnmatch_lines(["VERDICT: PASS*"])


def test_helix_strict_makes_should_clauses_fail_the_gate(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=my_adapter:sloppy", "-k", SHOULD_ONLY, "--helix-strict")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert result.parseoutcomes().get("failed") == 2
    result.stdout.fnmatch_lines(["  settings: helix-strict=True (cli)*"])
    result.stdout.fnmatch_lines(["HARN-04 (SHOULD, *) failed on scenario text_basic*"])
    result.stdout.fnmatch_lines(["ERR-08 (SHOULD, *) failed on scenario http_429_insufficient_quota*"])
    verdict = lines_starting(result, "VERDICT: FAIL")
    assert len(verdict) == 1
    assert "ERR-08" in verdict[0]
    assert "HARN-04" in verdict[0]


# --- 10: settings and their sources -----------------------------------------------------------------------


@pytest.mark.parametrize("winner", ["cli", "ini"])
def test_timeout_precedence_cli_over_ini_over_env(
    adapters: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, winner: str
) -> None:
    """CLI beats ini beats env; each value shows its source in the header.

    The adapter hangs, so HARN-03's message proves which timeout was *used*, not only displayed. The env
    source on its own shows with HELIX_SEED; helix_examples shows ini beating env once more.
    """
    values = {"cli": "0.3", "ini": "0.4", "env": "0.5"}
    monkeypatch.setenv("HELIX_TIMEOUT", values["env"])
    monkeypatch.setenv("HELIX_EXAMPLES", "4")
    monkeypatch.setenv("HELIX_SEED", "7")
    adapters.makeini(f"[pytest]\nhelix_timeout = {values['ini']}\nhelix_examples = 2\n")
    args = ["--adapter=my_adapter:hangs", "-k", "text_basic and HARN-03"]
    if winner == "cli":
        args.append(f"--helix-timeout={values['cli']}")
    result = run(adapters, *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    settings = lines_starting(result, "  settings: ")
    assert len(settings) == 1
    assert f"helix-timeout={float(values[winner])!r} ({winner})" in settings[0]
    assert "helix-examples=2 (ini)" in settings[0]
    assert "helix-seed=7 (env)" in settings[0]
    result.stdout.fnmatch_lines([f"*generate_step did not return within {float(values[winner])} s*"])


@pytest.mark.parametrize("value", ["abc", "-1"])
def test_invalid_timeout_is_a_usage_error_naming_the_option(pytester: pytest.Pytester, value: str) -> None:
    result = run(pytester, "--adapter=openai", f"--helix-timeout={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--helix-timeout" in result.stderr.str()
    assert repr(value) in result.stderr.str()


@pytest.mark.parametrize(("name", "value"), [("ADAPTER", "postgres"), ("HELIX_TIMEOUT", "abc")])
def test_an_unrelated_environment_leaves_a_project_alone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    monkeypatch.setenv(name, value)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.assert_outcomes(passed=1)


# --- 12: a gate that checked nothing ----------------------------------------------------------------------


def test_deselecting_everything_fails_the_gate(pytester: pytest.Pytester) -> None:
    """pytest alone would exit 5 (no tests ran); HARN-05 turns that into a failed gate (exit 1)."""
    result = run(pytester, "--adapter=openai", "-k", "nothing_matches_this")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["HARN-05: no conformance clause was executed*", "VERDICT: FAIL*"])


# --- 13, 14: hostile adapters do not crash the harness ----------------------------------------------------


def test_adapter_raising_from_generate_step_fails_nt01_without_crashing(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=my_adapter:hostile", "-k", "text_basic")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    result.stdout.fnmatch_lines(
        [
            "NT-01 (MUST, *) failed on scenario text_basic ?openai-chat?",
            "*generate_step raised RuntimeError: hostile adapter: boom (failures must be returned as an *",
            "  expected: a StepResult*",
            "  actual:   RuntimeError: hostile adapter: boom",
        ]
    )
    result.stdout.fnmatch_lines(["VERDICT: FAIL*NT-01*"])


def test_adapter_factory_raising_is_reported_clearly(adapters: pytest.Pytester) -> None:
    result = run(adapters, "--adapter=my_adapter:factory_raises", "-k", "text_basic and (NT-01 or RES-01)")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output(result)
    assert_no_crash(result)
    result.stdout.fnmatch_lines(["*the adapter factory raised RuntimeError: no API key configured*"])
    result.stdout.fnmatch_lines(["VERDICT: FAIL*"])
