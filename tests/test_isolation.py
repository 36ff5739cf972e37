"""Where the adapter runs outside ``pytest --adapter``: ``run_conformance`` and ``helix-conformance replay`` use
its worker (a gate) whenever it can be named, fall back in-process (marked "not a gate") when it cannot, and a
driver command (``cmd:``, ``DriverCommand``) runs an adapter of any language through protocol version 2."""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from plugin_runs import output, run

from helix_conformance.adapters import AdapterNotFound, DriverCommand, name_of, resolve_adapter
from helix_conformance.cli import main
from helix_conformance.pytest_suite import IN_PROCESS_NOTE as PYTEST_NOTE
from helix_conformance.standalone import IN_PROCESS_NOTE, ConformanceUsageError
from helix_conformance.testing import run_conformance
from reference_adapters.openai_chat import spec as openai_spec

FAKE = Path(__file__).with_name("fake_driver.py")
DRIVER = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} --adapter openai"
"""The Python fake driver (protocol v2) as a command, running the OpenAI reference adapter."""

EXITS = """
import dataclasses, os
from reference_adapters.openai_chat import OpenAIChatAdapter, spec as base


class Exits(OpenAIChatAdapter):
    async def generate_step(self, input):
        os._exit(0)  # in the caller's process this would end it, verdict and all


spec = dataclasses.replace(
    base, name="exits", factory=lambda ctx: Exits(api_key=ctx.api_key, base_url=ctx.base_url)
)


def builds_a_safe_one(ctx):
    return OpenAIChatAdapter(api_key=ctx.api_key, base_url=ctx.base_url)
"""

COMMANDS = f"""
from helix_conformance.adapters import DriverCommand

spec = DriverCommand([{sys.executable!r}, {str(FAKE)!r}], adapter="openai")


def empty():
    return DriverCommand([])
"""


def _one(report: dict[str, Any], clause: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["clause"] == clause)


@pytest.fixture
def exits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A module-level spec whose adapter ends its own process."""
    (tmp_path / "exits_adapter.py").write_text(EXITS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import exits_adapter

    yield exits_adapter
    sys.modules.pop("exits_adapter", None)


# --- run_conformance ------------------------------------------------------------------------------------


def test_the_in_process_wording_is_pytests() -> None:
    assert IN_PROCESS_NOTE == PYTEST_NOTE


def test_a_module_level_spec_is_named_and_runs_in_its_worker_as_a_gate() -> None:
    assert (
        name_of(openai_spec) == "openai"
    )  # the built-in name pointing at reference_adapters.openai_chat:spec
    report = run_conformance(openai_spec, scenarios=["text_basic"], clauses=["RES-01"])
    assert report["passed"] is True
    assert report["isolation"]["mode"] == "worker"
    assert report["isolation"]["gate"] is True
    assert report["verdict_text"] == "PASS"
    assert report["notes"][0].startswith("isolated: the adapter runs in a worker process of its own (python ")
    assert report["settings"]["helix_in_process"] == {"value": False, "source": "default"}
    assert _one(report, "RES-01")["reproduce"].startswith("pytest --adapter=openai -k")


def test_an_adapter_that_ends_its_process_fails_nt01_and_the_caller_survives(exits: Any) -> None:
    assert name_of(exits.spec) == "exits_adapter:spec"
    report = run_conformance(exits.spec, scenarios=["text_basic"], clauses=["NT-01"])
    assert report["isolation"]["mode"] == "worker"
    assert report["passed"] is False
    row = _one(report, "NT-01")
    assert row["outcome"] == "failed"
    assert "the adapter's process ended during generate_step (exit status 0)" in row["message"]


def test_names_run_in_the_worker_too() -> None:
    for name in ("openai", "reference_adapters.openai_chat:spec"):
        report = run_conformance(name, scenarios=["text_basic"], clauses=["RES-01"])
        assert (report["passed"], report["isolation"]["mode"]) == (True, "worker"), name
        assert report["adapter"]["requested"] == name


def test_a_spec_built_at_run_time_runs_in_process_and_says_it_is_not_a_gate() -> None:
    closure = dataclasses.replace(openai_spec, name="closure")
    assert name_of(closure) is None
    report = run_conformance(closure, scenarios=["text_basic"], clauses=["RES-01"])
    assert report["passed"] is True
    assert report["isolation"]["mode"] == "in-process"
    assert report["isolation"]["gate"] is False
    assert report["verdict_text"] == f"PASS ({IN_PROCESS_NOTE})"
    note = report["notes"][0]
    assert note.startswith(
        f"{IN_PROCESS_NOTE}: the adapter runs inside the calling process; its spec was built"
    )
    assert "adapter='pkg.module:attr'" in note  # what to do to get a gate
    assert report["settings"]["helix_in_process"]["value"] is True
    assert report["settings"]["helix_in_process"]["source"].startswith("fallback")


def test_in_process_true_runs_a_nameable_spec_here() -> None:
    report = run_conformance(openai_spec, scenarios=["text_basic"], clauses=["RES-01"], in_process=True)
    assert report["isolation"]["mode"] == "in-process"
    assert report["settings"]["helix_in_process"] == {"value": True, "source": "argument"}
    assert "asked for with in_process=True" in report["notes"][0]


def test_in_process_false_refuses_the_fallback() -> None:
    with pytest.raises(ConformanceUsageError, match=r"in_process=False.*built at run time.*adapter="):
        run_conformance(dataclasses.replace(openai_spec), in_process=False)


def test_adapter_names_a_spec_built_elsewhere_and_must_agree_with_it(exits: Any) -> None:
    same = dataclasses.replace(exits.spec)  # equal data, a new object: not found by identity
    report = run_conformance(same, adapter="exits_adapter:spec", scenarios=["text_basic"], clauses=["NT-01"])
    assert report["isolation"]["mode"] == "worker"
    assert _one(report, "NT-01")["outcome"] == "failed"
    other = dataclasses.replace(exits.spec, model="gpt-other")
    with pytest.raises(ConformanceUsageError, match=r"differs from the one passed \(model: 'gpt-other' here"):
        run_conformance(other, adapter="exits_adapter:spec")


def test_a_module_spec_changed_at_run_time_falls_back_and_says_why(
    exits: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    patched = dataclasses.replace(exits.spec, model="patched-model", factory=exits.builds_a_safe_one)
    monkeypatch.setattr(exits, "spec", patched)  # found by identity; a fresh import has the file's spec
    report = run_conformance(exits.spec, scenarios=["text_basic"], clauses=["RES-01"])
    assert report["isolation"]["mode"] == "in-process"
    assert "exits_adapter:spec differs in a fresh import (model: 'patched-model' here" in report["notes"][0]


def test_a_pooled_worker_is_not_reused_once_the_adapter_module_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "edited_adapter.py"
    module.write_text(EXITS.replace("os._exit(0)", "return await super().generate_step(input)"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import edited_adapter

    before = run_conformance(edited_adapter.spec, scenarios=["text_basic"], clauses=["NT-01"])
    assert (before["passed"], before["isolation"]["mode"]) == (True, "worker")
    module.write_text(EXITS)  # the author edits the adapter and reloads it, as in a notebook
    stat = module.stat()
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    edited = importlib.reload(edited_adapter)
    after = run_conformance(edited.spec, scenarios=["text_basic"], clauses=["NT-01"])
    assert after["isolation"]["mode"] == "worker"
    assert after["passed"] is False, "a worker with the old code was reused"
    sys.modules.pop("edited_adapter", None)


@pytest.mark.parametrize(
    ("subject", "options", "message"),
    [
        ("nope", {}, "run_conformance: --adapter=nope: unknown adapter. Available: "),
        ("no_such_pkg.mod:spec", {}, "cannot import 'no_such_pkg.mod'"),
        (42, {}, "expected an AdapterSpec or an adapter name (as for pytest --adapter), not int"),
        (
            "node:adapter.mjs",
            {"in_process": True},
            "runs in its driver process; in_process=True is for Python",
        ),
        ("cmd:", {}, "no command after 'cmd:'"),
    ],
)
def test_a_bad_name_is_a_one_line_usage_error(subject: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConformanceUsageError) as caught:
        run_conformance(subject, **options)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


# --- driver commands (protocol version 2, any language) -------------------------------------------------


def test_a_driver_command_runs_the_adapter_in_its_driver() -> None:
    report = run_conformance(DRIVER, scenarios=["text_basic"], clauses=["RES-01", "STR-01", "NT-03"])
    assert report["isolation"]["mode"] == "driver"
    assert report["notes"][0].startswith("isolated: the adapter runs in a driver process of its own (python ")
    assert _one(report, "RES-01")["outcome"] == "passed"
    assert _one(report, "STR-01")["outcome"] == "passed"
    # NT-03 through the step's signal, aborted by the driver at the host's cancel point (the reference adapter
    # declares 'abort' and settles at once)
    assert _one(report, "NT-03")["outcome"] == "passed"


def test_a_name_resolving_to_a_driver_command_is_run_by_that_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "commands.py").write_text(COMMANDS)
    monkeypatch.syspath_prepend(str(tmp_path))
    report = run_conformance("commands", scenarios=["text_basic"], clauses=["RES-01"])
    assert (report["passed"], report["isolation"]["mode"]) == (True, "driver")
    assert report["adapter"]["requested"] == "commands"
    with pytest.raises(ConformanceUsageError, match=r"DriverCommand.argv must be a non-empty list"):
        run_conformance("commands:empty")
    with pytest.raises(AdapterNotFound, match="names a driver command"):
        resolve_adapter("commands")  # importing it here would not run it: it runs in its driver
    sys.modules.pop("commands", None)


def test_driver_command_checks_its_argv() -> None:
    assert DriverCommand(["node", "drv.mjs"]).argv == ("node", "drv.mjs")
    for bad in ([], "node drv.mjs", [""]):
        with pytest.raises(ValueError, match=r"DriverCommand\.argv must be a non-empty list of strings"):
            DriverCommand(bad)  # type: ignore[arg-type]


# --- helix-conformance replay ---------------------------------------------------------------------------


def _replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["replay", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_replay_runs_in_the_worker_and_survives_an_adapter_that_exits(
    exits: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _replay(capsys, "--adapter", "exits_adapter:spec", "text_basic")
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("adapter exits_adapter:spec: isolated: the adapter runs in a worker process")
    assert "the adapter's process ended during generate_step (exit status 0)" in out
    assert "✗ NT-01 (MUST, failed)" in out


def test_replay_in_process_says_it_is_not_a_gate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _replay(capsys, "--adapter", "openai", "--in-process", "text_basic", "--no-judge")
    assert code == 0
    assert out.splitlines()[0] == (
        f"adapter openai: {IN_PROCESS_NOTE}: the adapter runs inside the calling process; "
        "asked for with --in-process"
    )


def test_replay_runs_a_driver_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _replay(capsys, "--adapter", DRIVER, "text_basic")
    assert code == 0, out
    assert "isolated: the adapter runs in a driver process of its own (python " in out.splitlines()[0]
    assert "callback         on_text_delta(" in out
    assert "via http" in out  # the adapter's HTTP went to the replay server
    held = re.search(r"clauses: (\d+) of (\d+) hold on this scenario", out)
    assert held, out
    assert held[1] == held[2], out  # every judged clause holds


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--adapter", "cmd:", "text_basic"), "no command after 'cmd:'"),
        (("--adapter", "cmd:'unclosed", "text_basic"), "cannot read the command (No closing quotation)"),
        (("--adapter", "cmd:/nonexistent/driver", "text_basic"), "cannot start '/nonexistent/driver'"),
        (("--adapter", "node:a.mjs", "--in-process", "text_basic"), "runs in its driver process"),
        (("--adapter", "nope", "--in-process", "text_basic"), "--adapter=nope: unknown adapter"),
    ],
)
def test_replay_usage_errors(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str) -> None:
    code, out, err = _replay(capsys, *args)
    assert code == 2
    assert message in err
    assert "Traceback" not in out + err


# --- pytest --adapter=cmd:... and a user's own tests ---------------------------------------------------


@pytest.mark.slow  # a cmd: driver end to end; tests/test_driver_protocol.py covers the protocol
def test_pytest_runs_a_driver_command(pytester: pytest.Pytester) -> None:
    report = pytester.path / "r.json"
    result = run(pytester, f"--adapter={DRIVER}", "-k", "text_basic", f"--helix-report={report}")
    assert result.ret == 0, output(result)  # (the driver's stderr is the adapter's: STR-11's logged raises)
    assert "INTERNALERROR" not in output(result)
    assert "VERDICT: PASS" in output(result)
    assert "(python 3." in output(result)  # the header names the driver's runtime
    bad = run(pytester, "--adapter=cmd:/nonexistent/driver")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "cannot start '/nonexistent/driver'" in output(bad)


def test_a_users_run_conformance_is_a_gate_for_a_module_spec_and_says_so_for_a_closure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(exits_adapter=EXITS)
    pytester.makepyfile(
        test_mine=textwrap.dedent(
            """
            import dataclasses
            from exits_adapter import spec
            from helix_conformance.testing import run_conformance


            def test_isolated():
                report = run_conformance(spec, scenarios=["text_basic"], clauses=["NT-01"])
                assert report["verdict_text"] == "FAIL"
                assert report["isolation"]["gate"]


            def test_closure_is_marked():
                from reference_adapters.openai_chat import spec as reference

                safe = dataclasses.replace(reference, name="closure")
                report = run_conformance(safe, scenarios=["text_basic"], clauses=["RES-01"])
                print(report["notes"][0])
                assert report["verdict_text"].endswith("(in-process: not a gate)")
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    assert result.ret == 0, output(result)
    result.assert_outcomes(passed=2)
    assert "in-process: not a gate: the adapter runs inside the calling process" in output(result)
