"""The conformance suite inside pytest: collection without test files, one item per clause x scenario."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from . import __version__
from .adapters import ResolvedAdapter, language_of
from .baseline import BaselineError, load_baseline
from .checks.context import HarnessSettings
from .checks.registry import Failure
from .gate import Gate, session_errors
from .plain_imports import plain_imports
from .profiles.servers import declared_servers, unknown_servers
from .quick import QUICK_HINT, QUICK_NOTE, QUICK_PROPERTY, quick_plan
from .reporting.format import failure_line, format_failure, verdict_text
from .reporting.outcomes import (
    CAUSE_PROPERTY,
    HAPPENING_PROPERTY,
    REASON_PROPERTY,
    STATUS_PROPERTY,
    STOP_PROPERTY,
    TIME_PROPERTY,
    OutcomeLog,
)
from .reporting.safety import protect_env, safe_text, shown_setting
from .reporting.writers import FORMATS, format_of
from .settings import check_cassette_dir, check_writable, spelled
from .sharding import Shard, assign, parse_shard
from .suite import (
    PlannedCheck,
    SuiteRunner,
    bundled_cassettes,
    missing_cassettes_problem,
    plan_suite,
    profile_for,
)

SUITE_PREFIX = "helix-conformance"
IN_PROCESS_NOTE = "in-process: not a gate"


@dataclass(frozen=True)
class CrashLine:
    """The one line pytest's short summary and JUnit's message attribute show for a failure."""

    path: str
    lineno: int
    message: str


@dataclass(frozen=True)
class FailureRepr:
    """A clause failure as pytest shows it: the full text in the failures section, one line in the summary
    (a plain string would be repeated whole in the short summary on CI)."""

    text: str
    reprcrash: CrashLine

    def toterminal(self, tw: Any) -> None:
        for line in self.text.splitlines():
            tw.line(line)

    def __str__(self) -> str:
        return self.text


class ConformanceFailed(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class ConformanceItem(pytest.Item):
    """One clause checked on one scenario: ``test_conformance[openai-chat::tool_call_parallel::RES-06]``."""

    planned: PlannedCheck
    runner: SuiteRunner
    gate: Gate
    adapter_name: str

    def runtest(self) -> None:
        totals = self.runner.settings.totals
        before = (totals.runs, totals.skipped_s, totals.real_wait_s)
        outcome = self.runner.run(self.planned)
        if totals.runs != before[0]:  # the runs this item caused, summed by the controller (xdist)
            self.user_properties.append(
                (
                    TIME_PROPERTY,
                    f"{totals.runs - before[0]},{totals.skipped_s - before[1]:.4f},"
                    f"{totals.real_wait_s - before[2]:.4f}",
                )
            )
        verdict = self.gate.judge(self.planned, outcome)
        if verdict.status:
            self.user_properties.append((STATUS_PROPERTY, verdict.status))
            self.user_properties.append((REASON_PROPERTY, verdict.baseline_reason))
        if verdict.matrix and verdict.matrix != self.planned.servers:
            # a request shape servers reject, found in the run: the matrix's rows are theirs (the last value is read)
            self.user_properties.append(("servers", ",".join(sorted(verdict.matrix))))
        if verdict.action == "skip":
            pytest.skip(verdict_text(verdict, self.planned.level, self.adapter_name))
        if verdict.action == "xfail":
            pytest.xfail(verdict_text(verdict, self.planned.level, self.adapter_name))
        stop = self.runner.stop_reason()
        if stop and not self.session.shouldstop:
            self.session.shouldstop = stop
            self.user_properties.append((STOP_PROPERTY, stop))
        if verdict.action == "fail" and verdict.failure is not None:
            self.user_properties.append((CAUSE_PROPERTY, safe_text(verdict.failure.message)))
            if verdict.failure.happening:
                self.user_properties.append((HAPPENING_PROPERTY, safe_text(verdict.failure.happening)))
            raise ConformanceFailed(verdict.failure)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ConformanceFailed):
            failure = excinfo.value.failure
            text = format_failure(failure, self.planned.level, self.adapter_name)
            return FailureRepr(text, CrashLine(str(self.path), 0, failure_line(failure)))
        if isinstance(excinfo.value, pytest.xfail.Exception):
            # A known failure or an unmet SHOULD: its reason is what reports show (``wasxfail``). pytest's own
            # traceback, which parses the source of every frame, cost 0.2 s for each of them.
            reason = str(excinfo.value)
            return FailureRepr(reason, CrashLine(str(self.path), 0, reason.splitlines()[0] if reason else ""))
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.planned.level} {self.name}"


def shown_path(path: Path, base: Path) -> str:
    """``path`` as a command to paste in ``base`` names it: relative when it lies under ``base``."""
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


def report_paths(value: str | None, source: str = "cli") -> list[Path]:
    """The --helix-report paths; an extension we cannot write is a usage error before anything runs."""
    paths = [Path(part.strip()) for part in (value or "").split(",") if part.strip()]
    for path in paths:
        if format_of(path) is None:
            raise pytest.UsageError(
                f"{spelled('helix_report', source, value)}: cannot tell the format of {str(path)!r} from its "
                "extension; "
                f"use one of {', '.join(sorted(FORMATS))}"
            )
    return paths


class ConformancePlugin:
    """Registered by plugin.py only when --adapter is given; owns collection, summary and reports."""

    def __init__(
        self, config: pytest.Config, resolved: ResolvedAdapter, options: dict[str, tuple[Any, str]]
    ) -> None:
        self.config = config
        self.resolved = resolved
        self.options = options
        config.add_cleanup(gc.unfreeze)  # pytest_runtestloop froze the heap
        try:
            profile = profile_for(resolved.spec)
        except KeyError as exc:
            raise pytest.UsageError(f"--adapter={resolved.requested}: {exc.args[0]}") from None
        unknown = unknown_servers(profile.name, resolved.spec.servers)
        if unknown:
            raise pytest.UsageError(f"--adapter={resolved.requested}: {unknown}")
        protect_env(resolved.spec.api_key_env)
        recording = options["helix_record_mode"][0] != "none"
        cassette_dir, cassette_source = options["helix_cassette_dir"]
        self.cassette_root = check_cassette_dir(cassette_dir, recording=recording, source=cassette_source)
        self.record = self._record_settings(config)
        where = spelled("helix_cassette_dir", cassette_source, cassette_dir)
        problem = None if self.record else missing_cassettes_problem(resolved.spec, self.cassette_root, where)
        if problem:
            raise pytest.UsageError(problem)
        self.strict = bool(options["helix_strict"][0])
        self.gate = Gate(self.strict, None, bool(options["helix_write_baseline"][0]))
        self.shard: Shard | None = (
            parse_shard(options["helix_shard"][0]) if options["helix_shard"][0] else None
        )
        if self.shard is not None and self.gate.write_baseline:
            raise pytest.UsageError(
                f"{spelled('helix_shard', options['helix_shard'][1], self.shard)} with --helix-write-baseline: a "
                "shard sees part of the suite; write the baseline from a run without --helix-shard"
            )
        self.quick = bool(options["helix_quick"][0])
        if self.quick and self.gate.write_baseline:
            raise pytest.UsageError(
                f"{spelled('helix_quick', options['helix_quick'][1], True)} with --helix-write-baseline: a quick "
                "check judges part of the suite; write the baseline from a run without --helix-quick"
            )
        self.shard_line = ""
        self.quick_line = ""
        self.last_failed = False
        """Whether --lf narrowed the run to what failed last time (pytest's cache plugin): then not a gate."""
        baseline = options["helix_baseline"][0]
        baseline_warning = None
        if baseline and not (self.gate.write_baseline and not Path(baseline).exists()):
            from .scenarios import SCENARIOS

            try:
                self.gate.baseline = load_baseline(Path(baseline), (s.id for s in SCENARIOS))
            except BaselineError as exc:
                raise pytest.UsageError(str(exc)) from None
            error, warning = self.gate.baseline.mismatch(resolved.requested, profile_for(resolved.spec).name)
            if error:
                raise pytest.UsageError(f"--helix-baseline: {error}")
            baseline_warning = warning
        self.settings = HarnessSettings(
            timeout=float(options["helix_timeout"][0]),
            examples=int(options["helix_examples"][0]),
            seed=options["helix_seed"][0],
            real_time=bool(options["helix_real_time"][0]),
            language=language_of(resolved.requested),
        )
        self.log = OutcomeLog()
        if baseline_warning:
            self.log.notes.append(baseline_warning)
        if options["helix_in_process"][0]:
            self.log.notes.append(
                f"{IN_PROCESS_NOTE}: the adapter ran inside pytest's process (--helix-in-process)"
            )
        self.report_paths = report_paths(options["helix_report"][0], options["helix_report"][1])
        check_writable(self._output_paths(config))
        self.deselected = 0
        self.stop_adapter: Callable[[], None] | None = None
        """Ends the adapter's processes (plugin.py sets it): called before anything is written, so nothing
        the adapter started can change a report, a badge or a baseline afterwards."""

    def _output_paths(self, config: pytest.Config) -> list[tuple[str, Path]]:
        """What the run writes at its end (reports, badge, baseline), to be checked before it starts."""
        from .gate import baseline_path

        options = self.options
        outputs = [(spelled("helix_report", options["helix_report"][1], p), p) for p in self.report_paths]
        if options["helix_badge"][0]:
            badge = Path(options["helix_badge"][0])
            outputs.append((spelled("helix_badge", options["helix_badge"][1], badge), badge))
        if self.gate.write_baseline:
            where = baseline_path(options["helix_baseline"][0], config.invocation_params.dir)
            outputs.append((spelled("helix_write_baseline", options["helix_write_baseline"][1], True), where))
        return outputs

    def _record_settings(self, config: pytest.Config) -> Any:
        """Recording is checked before anything runs: no key, nowhere to write or xdist is a usage error."""
        mode = str(self.options["helix_record_mode"][0])
        if mode == "none":
            return None
        from .recording.setup import RecordingUsageError, record_settings

        parallel = bool(getattr(config.option, "numprocesses", None)) or hasattr(config, "workerinput")
        try:
            return record_settings(
                self.resolved.spec,
                profile_for(self.resolved.spec),
                mode,
                self.cassette_root,
                base_url=self.options["helix_record_base_url"][0],
                timeout=float(self.options["helix_timeout"][0]),
                parallel=parallel,
            )
        except RecordingUsageError as exc:
            raise pytest.UsageError(str(exc)) from None

    def _record(self, session: pytest.Session, chosen: set[str]) -> None:
        """Record the selected scenarios live before any item runs, so the suite replays what was just
        recorded (``-k`` picks what to re-record)."""
        from .recording.recorder import record_suite
        from .recording.setup import scenarios_to_record, summary_line

        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        echo = reporter.write_line if reporter is not None else (lambda line: None)
        profile = profile_for(self.resolved.spec)
        echo(
            f"helix-conformance: recording {profile.name} into {self.record.root / profile.name} "
            f"(mode {self.record.mode})"
        )
        scenarios = [s for s in scenarios_to_record(profile) if s.id in chosen]
        outcomes = record_suite(self.resolved.spec, profile, scenarios, self.record, echo)
        self.log.notes.append(summary_line(outcomes))
        for outcome in outcomes:
            if outcome.is_problem:
                self.log.gate_errors.append(
                    f"recording {outcome.action}: {outcome.scenario}: {outcome.message}"
                )

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        """Replay runs without the provider keys in the environment (recording, before, needs them), with
        what exists before the first run left out of garbage collection."""
        from .replay.hidden_keys import hide, restore

        hide((self.resolved.spec.api_key_env,))
        # What start-up and collection built lives until the end: out of the collector's full passes, which
        # scanned it over and over (1.4 s of an openai suite's 10 s in this process; 0.6 s frozen). Given back
        # to the collector by a cleanup registered in __init__, which runs after pytest's own final collections,
        # so a session run inside another process leaves nothing behind.
        gc.freeze()
        try:
            yield
        finally:
            restore()

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)

    # --- header -------------------------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        spec = self.resolved.spec
        caps = ", ".join(sorted(spec.capabilities)) or "none"
        lines = [
            f"helix-conformance {__version__}: adapter {spec.name!r} from {self.resolved.target} "
            f"({self.resolved.origin})",
            f"  wire profile {spec.wire_profile}, model {spec.model}, capabilities: {caps}"
            + (
                f", servers: {', '.join(sorted(servers))}"
                if (servers := declared_servers(spec, spec.wire_profile))
                else ""
            ),
            f"  cassettes: {self._cassettes_shown()}",
        ]
        shown = ", ".join(
            f"{dest.replace('_', '-')}={shown_setting(value)!r} ({source})"
            for dest, (value, source) in self.options.items()
            if dest != "adapter"
        )
        lines.append(f"  settings: {shown}")
        if self.options["helix_in_process"][0]:
            lines.append(
                f"  {IN_PROCESS_NOTE}: the adapter runs inside pytest's process (--helix-in-process)"
            )
        if self.quick:
            lines.append(f"  {QUICK_NOTE}: --helix-quick judges part of the suite ({QUICK_HINT})")
        return lines

    def _cassettes_shown(self) -> str:
        if self.cassette_root is not None:
            return f"{self.cassette_root} (then the bundled ones: {bundled_cassettes()})"
        return str(self.resolved.spec.cassette_dir or bundled_cassettes())

    # --- collection ---------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool:
        hook = session.config.hook
        hook.pytest_collectstart(collector=session)
        with plain_imports():  # what planning imports (the recorded scenarios' reader) is not rewritten
            planned = plan_suite(self.resolved.spec, self.cassette_root, dict(self.resolved.not_applicable))
        self.gate.check_entries_exist(planned, profile_for(self.resolved.spec).name)
        runner = SuiteRunner(self.resolved.spec, self.settings, self.cassette_root)
        runner.expect(planned)
        kept = self._quick(planned) if self.quick else planned
        items: list[pytest.Item] = []
        for check in kept:
            name = f"test_conformance[{check.test_id}]"
            # The "helix-conformance::" prefix is what pytest shows where a test file would be.
            item = ConformanceItem.from_parent(session, name=name, nodeid=f"{SUITE_PREFIX}::{name}")
            item.planned, item.runner, item.gate = check, runner, self.gate
            item.adapter_name = self.resolved.requested
            item.user_properties.extend(
                [
                    ("clause", check.clause),
                    ("scenario", check.scenario.id),
                    ("profile", check.profile),
                    ("level", check.level),
                    ("requires", ",".join(sorted(check.scenario.requires | check.check.requires))),
                    ("servers", ",".join(sorted(check.servers))),
                ]
            )
            if self.quick:  # in the JUnit XML of every test case: nobody reads a quick run as the gate
                item.user_properties.append((QUICK_PROPERTY, QUICK_NOTE))
            item.add_marker(pytest.mark.helix_conformance)
            items.append(item)
        if self.shard is not None:
            items = self._in_shard(self.shard, kept, items)
        selected = self._select_by_arguments(session.config, items)
        self.deselected += len(items) - len(selected)  # naming checks by id selects, like -k
        items = selected
        report = pytest.CollectReport("", "passed", None, list[pytest.Item | pytest.Collector](items))
        hook.pytest_collectreport(report=report)
        session.items = list(items)  # the hook narrows it in place (-k, -m, --lf)
        hook.pytest_collection_modifyitems(session=session, config=session.config, items=session.items)
        self.last_failed = _narrowed_by_last_failed(session.config, items, session.items)
        runner.select([item.planned for item in session.items if isinstance(item, ConformanceItem)])
        runner.look_ahead = not hasattr(session.config, "workerinput")
        if self.record is not None and not session.config.option.collectonly:
            chosen = {item.planned.scenario.id for item in session.items if isinstance(item, ConformanceItem)}
            self._record(session, chosen)
        hook.pytest_collection_finish(session=session)
        session.testscollected = len(session.items)
        return True

    def _in_shard(
        self, shard: Shard, planned: list[PlannedCheck], items: list[pytest.Item]
    ) -> list[pytest.Item]:
        """The items of the scenarios of ``shard``, assigned over the full plan (sharding.py); the others are
        not collected here (another shard's, not deselected: they do not narrow the run)."""
        weights = Counter(p.scenario.id for p in planned if p.skip_reason is None)
        scenarios = list(dict.fromkeys(p.scenario.id for p in planned))
        shard_of = assign(((sid, weights[sid]) for sid in scenarios), shard.count)
        mine = [item for item in items if shard_of[item.planned.scenario.id] == shard.index]  # type: ignore[attr-defined]
        here = sum(1 for sid in scenarios if shard_of[sid] == shard.index)
        self.shard_line = (
            f"helix-conformance shard {shard}: {here} of {len(scenarios)} scenarios, {len(mine)} of "
            f"{len(items)} checks (join the shards' JSON reports with helix-conformance report merge)"
        )
        return mine

    def _quick(self, planned: list[PlannedCheck]) -> list[PlannedCheck]:
        """The checks ``--helix-quick`` keeps (quick.py), and the line that says what it left out."""
        chosen = quick_plan(planned, profile_for(self.resolved.spec))
        scenarios = len({p.scenario.id for p in planned})
        self.quick_line = (
            f"{QUICK_NOTE}: {len(chosen)} of {len(planned)} checks, on "
            f"{len({p.scenario.id for p in chosen})} of {scenarios} scenarios ({QUICK_HINT})"
        )
        return chosen

    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str] | None:
        return [line for line in (self.quick_line, self.shard_line) if line] or None

    def selection(self) -> dict[str, Any]:
        """What this run judged, for the summary and the report (``json_report.report_data``)."""
        return {
            "shard": self.shard.as_data() if self.shard is not None else None,
            "narrowed": bool(self.deselected),
            "last_failed": self.last_failed,
            "quick": self.quick,
        }

    def _judge_harn_05(self, session: pytest.Session, exitstatus: int) -> None:
        """HARN-05: a gate that checked nothing, or never exercised a declared capability, must not pass. A
        shard is not judged here: the merge judges the shards' outcomes joined (``reporting/merge.py``)."""
        errors = self.log.gate_errors
        if self.shard is not None:
            if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:  # a shard -k left empty: the merge judges
                session.exitstatus = pytest.ExitCode.OK
            return
        errors.extend(
            session_errors(
                self.log,
                self.resolved.spec.capabilities,
                everything_selected=not self.deselected and not session.shouldstop and not self.quick,
            )
        )
        if errors and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _stopped(self, config: pytest.Config) -> bool:
        """Whether the run stopped early on a common root cause (the controller learns it from the log)."""
        return any(error.startswith("helix-conformance stopped early") for error in self.log.gate_errors)

    @staticmethod
    def _select_by_arguments(config: pytest.Config, items: list[pytest.Item]) -> list[pytest.Item]:
        """Positional arguments may name checks by id; anything else (a path) is a usage error, not ignored."""
        explicit = getattr(config, "args_source", None) == pytest.Config.ArgsSource.ARGS
        if not explicit or not config.args:
            return items
        by_id = {item.name: item for item in items}
        chosen: list[pytest.Item] = []
        for arg in config.args:
            name = arg.removeprefix(f"{SUITE_PREFIX}::")
            if name not in by_id:
                raise pytest.UsageError(
                    f"with --adapter, pytest runs the conformance suite only; {arg!r} is not one of its test ids. "
                    "Select checks with -k (e.g. -k RES-06) or by id (see --collect-only -q)."
                )
            chosen.append(by_id[name])
        return chosen

    # --- outcomes, summary, report ------------------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.log.add(report)

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if config.option.collectonly or exitstatus == pytest.ExitCode.USAGE_ERROR:
            return  # a usage error (a bad -k expression) is reported by pytest; nothing ran to sum up
        with plain_imports():
            from .reporting.summary import render_summary

        for line in render_summary(
            self.log,
            strict=self.strict,
            adapter=self.resolved.spec.name,
            deselected=bool(self.deselected),
            requested=self.resolved.requested,
            stopped=bool(self._stopped(terminalreporter.config)),
            profile=self.resolved.spec.wire_profile,
            servers=declared_servers(self.resolved.spec, self.resolved.spec.wire_profile),
            selection=self.selection(),
        ):
            in_process = line.startswith("VERDICT") and self.options["helix_in_process"][0]
            terminalreporter.write_line(f"{line} ({IN_PROCESS_NOTE})" if in_process else line)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.stop_adapter is not None:  # every run is over: end the adapter before any file is written
            self.stop_adapter()
        if hasattr(session.config, "workerinput"):
            return  # xdist worker: the controller reports
        if session.config.option.collectonly or exitstatus == pytest.ExitCode.USAGE_ERROR:
            return  # listing the suite is not a gate; a usage error stops before it
        if self._stopped(session.config):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a failed gate, not an interruption
        self._judge_harn_05(session, exitstatus)
        if self.gate.write_baseline:
            self._write_baseline(session)
        elif unmatched := self.gate.unmatched_errors():
            self.log.gate_errors.extend(unmatched)
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.report_paths or self.options["helix_badge"][0]:
            from .reporting.json_report import build_report
            from .reporting.writers import write_badge, write_reports

            data = build_report(
                self.log,
                self.resolved,
                self.options,
                strict=self.strict,
                exitstatus=int(session.exitstatus),
                baseline=self.gate.baseline,
                selection=self.selection(),
            )
            write_reports(self.report_paths, data)
            if self.options["helix_badge"][0]:
                write_badge(Path(self.options["helix_badge"][0]), data)

    def _write_baseline(self, session: pytest.Session) -> None:
        from .baseline import write_baseline
        from .gate import baseline_path, entries_to_write

        invocation = session.config.invocation_params.dir
        path = baseline_path(self.options["helix_baseline"][0], invocation)
        outcomes = [
            (o.profile, o.scenario, o.clause, o.status, o.baseline_reason) for o in self.log.items.values()
        ]
        ran = {(o.profile, o.scenario, o.clause) for o in self.log.items.values() if o.executed}
        entries = entries_to_write(self.gate, outcomes, ran)
        count = write_baseline(path, entries, self.resolved.requested, profile_for(self.resolved.spec).name)
        shown = shown_path(path, invocation)
        self.log.notes.append(
            f"baseline written: {shown} ({count} known failure{'s' if count != 1 else ''}); edit each reason, "
            f"commit it, and gate with --helix-baseline={shown}"
        )


def _narrowed_by_last_failed(
    config: pytest.Config, before: list[pytest.Item], after: list[pytest.Item]
) -> bool:
    """Whether pytest's ``--lf`` (the cache plugin) left out checks that passed last time: the ids are stable
    (``SUITE_PREFIX::test_conformance[profile::scenario::clause]``), so it reruns exactly what failed."""
    plugin = config.pluginmanager.get_plugin("lfplugin")
    if plugin is None or not config.getoption("lf", False):
        return False
    failed = getattr(plugin, "lastfailed", {})
    return len(after) < len(before) and any(
        getattr(item, "id", item.nodeid) in failed or item.nodeid in failed  # pytest 9 keys by NodeId
        for item in before
    )
