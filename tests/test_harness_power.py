"""The harness-power tool (``tools/harness_power.py``) on small inputs: the mutants it makes, how it decides
a mutant is not covered, which checks it selects, how it reads a suite's verdict, and its triage file.

No conformance suite runs here: a mutant's suite run is replaced by a recording stand-in.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from hpower import equivalents, field, mutation_run, targets  # noqa: E402 (the tool's package, from tools/)
from hpower.cli import main, parser  # noqa: E402
from hpower.coverage_run import EVERYWHERE, AdapterCoverage, FileCoverage, scenario_of  # noqa: E402
from hpower.equivalents import Equivalent, EquivalentsError  # noqa: E402
from hpower.mutation_run import (  # noqa: E402
    CRASHED,
    KILLED,
    NOT_COVERED,
    SURVIVED,
    Outcome,
    _verdict,
    check_shadowing,
    judge,
    sample,
)
from hpower.mutator import Mutant, mutants_of  # noqa: E402
from hpower.report import PoolResult, mutation_lines  # noqa: E402
from hpower.targets import ToolError, discover, pools  # noqa: E402

SAMPLE = textwrap.dedent(
    '''\
    """A module docstring is not mutated."""
    import logging

    logger = logging.getLogger(__name__)


    def pick(x: int, items: list[int]) -> int | None:
        """Nor is a function's."""
        if x > 0 and items:
            logger.warning("picked %s", x)
            return items[x - 1]
        raise ValueError("x must be positive")


    def largest(values: list[int]) -> int:
        found = max(
            values,
            default=0,
        )
        return found


    SPEC = dict(name="x", description="shown in listings")
    '''
)


def _mutants() -> list[Mutant]:
    return mutants_of(SAMPLE, "sample.py")


def test_the_mutator_makes_the_expected_first_order_mutants() -> None:
    made = [(m.line, m.operator, m.mutation) for m in _mutants()]
    assert made == [
        (9, "negate", "`x > 0 and items` -> `not (x > 0 and items)`"),
        (9, "boolean", "`x > 0 and items` -> `x > 0 or items`"),
        (9, "compare", "`x > 0` -> `x >= 0`"),
        (9, "compare", "`x > 0` -> `x <= 0`"),
        (9, "constant", "`0` -> `1`"),
        (10, "delete", "delete `logger.warning('picked %s', x)`"),
        (11, "return", "`return items[x - 1]` -> `return None`"),
        (11, "arithmetic", "`x - 1` -> `x + 1`"),
        (11, "constant", "`1` -> `0`"),
        (12, "delete", "delete `raise ValueError('x must be positive')`"),
        (16, "call", "`max(values, default=0)` -> `min(values, default=0)`"),
        (18, "constant", "`0` -> `1`"),
        (20, "return", "`return found` -> `return None`"),
        (23, "constant", "`'x'` -> `''`"),
    ]


def test_docstrings_annotations_descriptions_log_and_exception_messages_are_left_alone() -> None:
    mutated = "\n".join(m.mutation for m in _mutants())
    for untouched in (
        "docstring",
        "Nor is",
        "'picked %s'` ->",
        "'x must be positive'` ->",
        "int | None",
        "listings'` ->",
    ):
        assert untouched not in mutated


def test_a_mutant_changes_only_its_span_and_keeps_every_line_number() -> None:
    for mutant in _mutants():
        before, after = SAMPLE.splitlines(), mutant.mutated_source.splitlines()
        assert len(after) == len(before), mutant.mutation
        changed = [n for n, (a, b) in enumerate(zip(before, after), 1) if a != b]
        assert set(changed) <= set(range(mutant.line, mutant.end_line + 1)), mutant.mutation
        ast.parse(mutant.mutated_source)


def test_a_mutant_behaves_differently() -> None:
    off_by_one = next(m for m in _mutants() if m.mutation == "`x - 1` -> `x + 1`")
    original: dict[str, object] = {}
    mutated: dict[str, object] = {}
    exec(compile(SAMPLE, "sample.py", "exec"), original)
    exec(compile(off_by_one.mutated_source, "sample.py", "exec"), mutated)
    assert original["pick"](1, [7, 8, 9]) == 7  # type: ignore[operator]
    assert mutated["pick"](1, [7, 8, 9]) == 9  # type: ignore[operator]


def test_a_multi_line_statement_is_reached_through_any_of_its_lines() -> None:
    default = next(m for m in _mutants() if m.line == 18)
    assert list(default.reach_lines) == [16, 17, 18, 19]
    negated_if = next(m for m in _mutants() if m.mutation.startswith("`x > 0 and items` ->"))
    assert list(negated_if.reach_lines) == [9], "an if is reached through its header, not its body"


def _coverage(lines: dict[int, frozenset[str]]) -> AdapterCoverage:
    file = FileCoverage(
        "sample.py", statements=[9, 10, 11, 12, 16, 20], missing=[10, 11], scenarios_by_line=lines
    )
    ids = [f"helix-conformance::test_conformance[p::{s}::RES-01]" for s in ("a", "b", "c")]
    return AdapterCoverage("openai", 2, {"sample.py": file}, ids, 1.0, True, "")


def _recording_runner(calls: list[list[str] | None], status: str = SURVIVED):  # type: ignore[no-untyped-def]
    def run(mutant: Mutant, coverage: AdapterCoverage, ids: list[str] | None, timeout: float) -> Outcome:
        calls.append(ids)
        return Outcome(mutant, status, coverage.adapter, "", None, 0.5)

    return run


def test_a_mutant_on_a_line_no_check_runs_is_not_covered_and_not_run() -> None:
    calls: list[list[str] | None] = []
    coverage = _coverage({9: frozenset({"a"}), 12: frozenset({"a", "b"})})
    uncovered = next(m for m in _mutants() if m.line == 11)
    outcome = judge(uncovered, [coverage], timeout=5, run=_recording_runner(calls))
    assert outcome.status == NOT_COVERED
    assert calls == []


def test_a_covered_mutant_runs_only_the_checks_of_the_scenarios_that_reach_it() -> None:
    calls: list[list[str] | None] = []
    coverage = _coverage({9: frozenset({"a"}), 12: frozenset({"a", "b"}), 20: frozenset({EVERYWHERE})})
    raised = next(m for m in _mutants() if m.line == 12)
    assert judge(raised, [coverage], timeout=5, run=_recording_runner(calls)).status == SURVIVED
    assert calls == [[f"helix-conformance::test_conformance[p::{s}::RES-01]" for s in ("a", "b")]]
    at_import = next(m for m in _mutants() if m.line == 20)
    judge(at_import, [coverage], timeout=5, run=_recording_runner(calls))
    assert calls[-1] is None, "a line run outside any check (at import) is judged by the whole suite"


def test_a_shared_mutant_stops_at_the_first_suite_that_kills_it() -> None:
    calls: list[list[str] | None] = []
    coverage = _coverage({12: frozenset({"a"})})
    raised = next(m for m in _mutants() if m.line == 12)
    outcome = judge(raised, [coverage, coverage], timeout=5, run=_recording_runner(calls, KILLED))
    assert (outcome.status, len(calls)) == (KILLED, 1)


def test_the_adapters_and_their_files_are_found_in_the_package() -> None:
    package = discover()
    assert package.modules["openai"] == "reference_adapters/openai_chat.py"
    assert package.modules["anthropic"] == "reference_adapters/anthropic.py"
    assert "reference_adapters/_gemini_schema.py" in package.files_of("gemini")
    assert {"reference_adapters/_http.py", "reference_adapters/_sse.py"} <= set(package.shared())
    every = [f for pool in pools(package, "all") for f in pool.files]
    assert sorted(every) == sorted(set(every)), "in `all`, each file is mutated in one pool"
    assert set(every) == {f for a in package.adapters for f in package.closures[a]}
    shared = next(pool for pool in pools(package, "all") if pool.name == "shared")
    assert set(shared.judges["reference_adapters/_http.py"]) == set(package.adapters)


def test_scenario_of_a_test_id() -> None:
    assert scenario_of("helix-conformance::test_conformance[openai-chat::text_basic::RES-01]") == "text_basic"
    recorded = "helix-conformance::test_conformance[gemini::recorded/google/x.1::STR-10]"
    assert scenario_of(recorded) == "recorded/google/x.1"


def test_the_verdict_of_a_suite_run() -> None:
    failed = "....F\nFAILED helix-conformance::test_conformance[openai-chat::tool_call::RES-06] - x\n"
    assert _verdict(1, failed, "") == (KILLED, "openai-chat::tool_call::RES-06")
    assert _verdict(0, "2200 passed", "") == (SURVIVED, "")
    assert _verdict(1, "VERDICT: FAIL — HARN-05\n", "")[0] == KILLED
    assert _verdict(4, "", "ERROR: cannot import reference_adapters.openai_chat\n")[0] == CRASHED


def test_a_sample_is_deterministic_and_in_file_order() -> None:
    mutants = _mutants()
    first = sample(mutants, 4, seed=3)
    assert first == sample(mutants, 4, seed=3)
    assert first == [m for m in mutants if m in first]
    assert sample(mutants, 0, seed=3) == mutants


def test_the_mutated_copy_is_imported_ahead_of_the_installed_package() -> None:
    check_shadowing()


def test_a_suite_that_passes_on_an_unimportable_copy_stops_the_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []

    def suite(coverage: AdapterCoverage, ids: list[str] | None, timeout: float, mutant: Mutant | None):  # type: ignore[no-untyped-def]
        assert mutant is not None
        ran.append(mutant.mutated_source.splitlines()[-1])
        return returncode, "", "", 1.0

    monkeypatch.setattr(mutation_run, "_suite", suite)
    coverage = _coverage({})
    returncode = 1
    mutation_run.check_canary(coverage, "reference_adapters/_sse.py", 5)
    assert ran == ['raise RuntimeError("harness-power canary: this copy must not pass")']
    returncode = 0
    with pytest.raises(ToolError, match="does not run the mutated copies"):
        mutation_run.check_canary(coverage, "reference_adapters/_sse.py", 5)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "equivalent.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_equivalents_file_of_the_repository_is_valid() -> None:
    for entry in equivalents.load(ROOT / "tools" / "equivalent_mutants.yaml"):
        assert (ROOT / entry.file).is_file(), entry
        # A moved line is a stale entry the tool would list as a real survivor: update `line` when the file changes.
        lines = (ROOT / entry.file).read_text(encoding="utf-8").splitlines()
        held = lines[entry.line - 1].strip() if entry.line <= len(lines) else "(past the end)"
        assert held == entry.source, f"{entry.file}:{entry.line} no longer holds {entry.source!r}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- file: a.py\n", "missing ['line', 'mutation', 'source', 'why']"),
        ("- {file: a.py, line: 0, mutation: m, source: s, why: w}\n", "`line` must be a positive integer"),
        ("- {file: a.py, line: 1, mutation: m, source: s, why: ''}\n", "`why` must be a non-empty string"),
        ("- {file: a.py, line: 1, mutation: m, source: s, why: w, extra: 1}\n", "unknown ['extra']"),
        ("{file: a.py}\n", "expected a list of entries"),
        ("- {file: a.py, line: 1, mutation: m, source: s, why: w}\n" * 2, "entry 2 repeats a.py:1 m"),
    ],
)
def test_a_bad_equivalents_file_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(EquivalentsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        equivalents.load(_write(tmp_path, text))


def test_equivalents_are_matched_and_stale_entries_reported() -> None:
    mutants = _mutants()
    zero = next(m for m in mutants if m.mutation == "`0` -> `1`")
    entries = [
        Equivalent("sample.py", zero.line, zero.mutation, zero.source_line, "x is never 0"),
        Equivalent("sample.py", 10, "`0` -> `1`", "logger.warning(...)", "moved"),
        Equivalent("sample.py", zero.line, "`x > 0` -> `x >= 0`", "if x > 1 and items:", "the line changed"),
        Equivalent("other.py", 3, "`a` -> `b`", "a", "not in this run's files"),
    ]
    triage = equivalents.match(entries, mutants, {"sample.py"})
    assert list(triage.matched) == [zero.key]
    assert [(e.line, reason.split(" ")[0]) for e, reason in triage.stale] == [(10, "no"), (9, "the")]


def test_the_report_subtracts_equivalents_and_lists_real_survivors() -> None:
    mutants = _mutants()
    zero, ret, raised = (
        next(m for m in mutants if m.line == n and m.operator == op)
        for n, op in ((9, "constant"), (20, "return"), (12, "delete"))
    )
    outcomes = [
        Outcome(zero, SURVIVED, "openai", "", 3, 1.0),
        Outcome(ret, SURVIVED, "openai", "", None, 1.0),
        Outcome(raised, KILLED, "openai", "p::a::RES-01", 3, 1.0),
    ]
    stale = Equivalent("sample.py", 99, "gone", "x", "stale")
    triage = equivalents.Triage(
        {zero.key: Equivalent("sample.py", 9, zero.mutation, "", "x is never 0")}, [(stale, "no such mutant")]
    )
    text = "\n".join(mutation_lines([PoolResult("openai", ("openai",), len(mutants), outcomes, 2.0)], triage))
    assert "score 1/2 = 50.0%" in text
    assert "sample.py:20" in text
    assert "`return found` -> `return None`" in text
    assert "x is never 0" in text.split("survivors triaged as equivalent")[1]
    assert "sample.py:99  gone: no such mutant" in text


def test_bad_options_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--sample", "-1"]) == 2
    assert "--sample >= 0" in capsys.readouterr().err


def test_branch_coverage_is_reported_and_merged_across_suites() -> None:
    from hpower.coverage_run import merged
    from hpower.report import _table

    one = FileCoverage("sample.py", [9, 10], [10], {}, [(9, 10), (9, 12)], [(9, 10)])
    other = FileCoverage("sample.py", [9, 10], [], {}, [(9, 10), (9, 12)], [(9, 12)])
    assert one.branch_percent == 50.0
    both = merged([_run(one), _run(other)], "sample.py")
    assert both is not None
    assert (both.missing, both.missing_branches) == ([], [])
    assert "50.0%" in _table([one])[1]


def _run(file: FileCoverage) -> AdapterCoverage:
    return AdapterCoverage("openai", 2, {file.file: file}, [], 1.0, True, "")


def test_rejudge_takes_the_survivors_of_a_previous_run(tmp_path: Path) -> None:
    from hpower.cli import previous_survivors
    from hpower.report import rejudged_lines

    mutants = _mutants()
    kept, killed, gone, unjudged = mutants[0], mutants[1], mutants[2], mutants[3]

    def row(mutant: Mutant, status: str) -> dict[str, object]:
        return {
            "status": status,
            "mutant": {"file": mutant.file, "line": mutant.line, "mutation": mutant.mutation},
        }

    previous = tmp_path / "before.json"
    outcomes = [row(kept, SURVIVED), row(killed, KILLED), row(gone, NOT_COVERED), row(unjudged, "unjudged")]
    pools_data = [{"pool": "p", "outcomes": outcomes}]
    for data in (pools_data, {"coverage": {}, "pools": pools_data}):  # the list of older runs, or the dict
        previous.write_text(json.dumps(data), encoding="utf-8")
        wanted = previous_survivors(previous)
        assert set(wanted) == {f"sample.py:{m.line} {m.mutation}" for m in (kept, gone, unjudged)}
    result = PoolResult("p", ("openai",), 3, [Outcome(kept, KILLED, "openai", "p::a::RES-06", 1, 1.0)], 1.0)
    existing = {f"sample.py:{m.line} {m.mutation}" for m in (kept, unjudged)}
    triage = equivalents.Triage({unjudged.key: Equivalent("sample.py", unjudged.line, "m", "s", "w")}, [])
    text = "\n".join(rejudged_lines([result], wanted, existing, previous, triage))
    assert f"unjudged -> equivalent  sample.py:{unjudged.line}" in text
    assert f"survived -> killed      sample.py:{kept.line} {kept.mutation}: p::a::RES-06" in text
    assert "not covered -> gone" in text
    assert "equivalent 1, gone 1, killed 1" in text


def test_rejudge_of_a_run_without_survivors_is_a_one_line_error(tmp_path: Path) -> None:
    from hpower.cli import previous_survivors

    previous = tmp_path / "before.json"
    previous.write_text("[]", encoding="utf-8")
    with pytest.raises(ToolError, match="no survivor"):
        previous_survivors(previous)
    previous.write_text("{", encoding="utf-8")
    with pytest.raises(ToolError, match="not a JSON file"):
        previous_survivors(previous)


# --- field-bug mutants ------------------------------------------------------------------------------------------


def _field(old: str, new: str, file: str = "x.py") -> field.FieldMutant:
    return field.FieldMutant(
        "m", "foreign-openai-sdk", file, old, new, "RES-01", "https://example.org/1", "a bug"
    )


def test_every_field_mutant_applies_once_and_compiles_and_cites_its_report() -> None:
    mutants = field.load()
    assert len(mutants) >= 20
    assert {m.adapter for m in mutants} == {
        "foreign-openai-sdk",
        "foreign-anthropic-sdk",
        "foreign-google-genai-sdk",
    }
    for mutant in mutants:
        source = (field.FIXTURE / mutant.file).read_text(encoding="utf-8")
        mutated = field.apply(source, mutant)
        assert mutated != source, mutant.id
        compile(mutated, mutant.file, "exec")
        assert mutant.issue.startswith("https://github.com/"), mutant.id


def test_the_fixture_is_a_verbatim_copy_of_the_adapters_written_elsewhere() -> None:
    original = ROOT.parent / "shared" / "foreign-adapters" / "helix_foreign_adapters"
    if not original.is_dir():
        pytest.skip(f"{original} is absent in this checkout")
    for path in original.rglob("*.py"):
        copy = field.FIXTURE / path.relative_to(original)
        assert copy.read_text(encoding="utf-8") == path.read_text(encoding="utf-8"), path.name


def test_a_block_is_found_at_its_indentation_and_replaced_at_the_same() -> None:
    source = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    mutated = field.apply(source, _field("if x:\n    return 1", "if not x:\n    return 1"))
    assert mutated == "def f(x):\n    if not x:\n        return 1\n    return 2\n"


@pytest.mark.parametrize("old", ["return 3", "return"])
def test_a_field_mutant_that_does_not_apply_once_is_a_one_line_error(old: str) -> None:
    with pytest.raises(ToolError, match="occurs"):
        field.apply("def f(x):\n    return 1\n    return 2\n", _field(old, "pass"))


def test_field_outcomes_credit_only_new_failures_and_report_both_rates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mutant = field.load()[0]
    seen = {("NT-04", "text_basic"), ("STR-01", "compat_several_choices")}

    def fake_run(*args: object) -> tuple[set[tuple[str, str]], float, str]:
        return seen, 1.0, ""

    monkeypatch.setattr(field, "run_suite", fake_run)
    on_clause = field.judge(
        field.FieldMutant(**{**mutant.__dict__, "clause": "STR-01"}), {("NT-04", "text_basic")}, 1, 10, None
    )
    elsewhere = field.judge(
        field.FieldMutant(**{**mutant.__dict__, "clause": "RES-06"}), {("NT-04", "text_basic")}, 1, 10, None
    )
    missed = field.judge(mutant, seen, 1, 10, None)
    assert (on_clause.status, elsewhere.status, missed.status) == (
        field.ON_CLAUSE,
        field.CAUGHT,
        field.MISSED,
    )
    assert on_clause.new_failures == ["STR-01 on compat_several_choices"]
    lines = field.report_lines([on_clause, elsewhere, missed], {mutant.adapter: {("NT-04", "text_basic")}})
    assert "caught 2/3 = 66.7%; on the intended clause 1/3 = 33.3%" in lines[2]


def test_a_seedless_run_draws_a_new_seed_and_says_which() -> None:
    args = parser().parse_args([])
    assert args.seed is None  # main() draws one and prints it in its first line


def test_another_harness_for_ast_mutants_must_hold_only_the_harness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--harness`` judges this checkout's mutants with another commit's harness: a directory with its own
    ``reference_adapters`` would be judged instead of the mutated copies, so it is refused; one whose package
    is imported is taken, and every suite run of the adapter gets it on PYTHONPATH after the mutated copy."""
    monkeypatch.setattr("hpower.cli.check_installed", lambda: None)
    assert main(["--harness", str(tmp_path), "--sample", "1", "--seed", "1"]) == 2
    assert "no helix_conformance package there" in capsys.readouterr().err
    shutil.copytree(
        ROOT / "helix_conformance",
        tmp_path / "helix_conformance",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (tmp_path / "reference_adapters").mkdir()
    assert main(["--harness", str(tmp_path), "--sample", "1", "--seed", "1"]) == 2
    assert "would be imported instead of this checkout's" in capsys.readouterr().err
    (tmp_path / "reference_adapters").rmdir()
    from hpower.cli import _harness

    assert _harness(tmp_path, adapters_allowed=False) == tmp_path.resolve()
    env = targets.environment(Path("/mutant"), tmp_path)
    assert env["PYTHONPATH"].split(os.pathsep)[:2] == ["/mutant", str(tmp_path)]
