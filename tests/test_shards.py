"""Shards (``--helix-shard=I/N``) run as separate pytest processes, as a CI matrix runs them, and joined by
``helix-conformance report merge``: the merged report is the unsharded run's (verdict, results, clause
statuses), a broken adapter fails on the same clause, and what cannot be joined is refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from once import once_per_session
from plugin_runs import HELIX_ENV, SUBPROCESS_TIMEOUT

from helix_conformance.cli import main
from helix_conformance.sharding import assign, parse_shard

TESTS = Path(__file__).parent


def _spread_selection() -> str:
    """``-k`` for a handful of cheap scenarios the plan spreads over both shards of two: text_basic and
    stop_max_tokens (where the broken adapter below fails), and the first of a few others the reference openai
    adapter's plan puts in the other shard (which one depends on the plan's weights, so it is looked up)."""
    from collections import Counter

    from helix_conformance.adapters import resolve_adapter
    from helix_conformance.suite import plan_suite

    planned = plan_suite(resolve_adapter("openai").spec)
    weights = Counter(p.scenario.id for p in planned if p.skip_reason is None)
    shard_of = assign(((sid, weights[sid]) for sid in dict.fromkeys(p.scenario.id for p in planned)), 2)
    fixed = ("text_basic", "stop_max_tokens")
    if len({shard_of[f] for f in fixed}) == 2:
        return " or ".join(fixed)
    other = next(
        sid
        for sid in ("thinking_text", "stop_sequence", "text_unicode", "tool_call", "system_multiturn")
        if shard_of[sid] not in {shard_of[f] for f in fixed}
    )
    return " or ".join((*fixed, other))


SELECTED = _spread_selection()
BROKEN = (
    "from broken_adapters.results import ADAPTERS\n"
    "spec = next(a.spec for a in ADAPTERS if a.name == 'length_mapped_to_end_turn')\n"
)
"""Maps finish_reason "length" to end_turn: STOP-01 fails on stop_max_tokens (tests/broken_adapters)."""


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in HELIX_ENV and not k.startswith("HELIX_")}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(TESTS), env.get("PYTHONPATH", "")])
    return env


def _python(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ARGS`` in ``folder``, as a CI job runs it."""
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=folder,
        env=_env(folder),
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
        check=False,
    )


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _python(folder, "pytest", "-p", "no:cacheprovider", "--assert=plain", "-q", *args)


def _merge(folder: Path, out: str, *shards: str) -> subprocess.CompletedProcess[str]:
    return _python(folder, "helix_conformance", "report", "merge", out, *shards)


def run_badge(folder: Path, report: str) -> str:
    done = _python(folder, "helix_conformance", "report", report, "--format", "badge")
    assert done.returncode == 0, done.stderr
    return done.stdout


def _runs(folder: Path, adapter: str) -> dict[str, subprocess.CompletedProcess[str]]:
    """Shards 1/2 and 2/2 and the unsharded run of the same selection, each in a process of its own."""
    common = (f"--adapter={adapter}", "-k", SELECTED)
    return {
        "shard1": _pytest(folder, *common, "--helix-shard=1/2", "--helix-report=shard1.json"),
        "shard2": _pytest(folder, *common, "--helix-shard=2/2", "--helix-report=shard2.json"),
        "whole": _pytest(folder, *common, "--helix-report=whole.json"),
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The reference adapter's shard and whole runs, made once for the session (13 tests read them); a test
    that writes files works in a copy (``_own_copy``)."""
    return once_per_session(tmp_path_factory, "reference-shards", lambda folder: _runs(folder, "openai"))


def _own_copy(reference: tuple[Path, dict[str, Any]], tmp_path: Path) -> Path:
    for report in reference[0].glob("*.json"):
        (tmp_path / report.name).write_bytes(report.read_bytes())
    return tmp_path


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("broken-shards")
    (folder / "broken_stop.py").write_text(BROKEN, encoding="utf-8")
    return folder, _runs(folder, "broken_stop")


def _load(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / name).read_text(encoding="utf-8"))
    return data


def _same_judgement(merged: dict[str, Any], whole: dict[str, Any]) -> None:
    assert merged["verdict"] == whole["verdict"]
    assert merged["exit_status"] == whole["exit_status"]
    shown = ("id", "clause", "scenario", "level", "outcome", "message", "cause", "happening")
    assert sorted(tuple(r[k] for k in shown) for r in merged["results"]) == sorted(
        tuple(r[k] for k in shown) for r in whole["results"]
    )
    assert {c: v["status"] for c, v in merged["clauses"].items()} == {
        c: v["status"] for c, v in whole["clauses"].items()
    }
    assert merged["gate_errors"] == whole["gate_errors"]
    assert merged["compatibility"] == whole["compatibility"]
    assert merged["not_applicable"] == whole["not_applicable"]
    assert sorted(map(json.dumps, merged["causes"])) == sorted(map(json.dumps, whole["causes"]))


@pytest.mark.slow  # shard sessions and a merge: an integration that rarely changes
def test_shards_of_the_reference_adapter_merge_into_the_unsharded_report(
    reference: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    folder, runs = _own_copy(reference, tmp_path), reference[1]
    assert [runs[name].returncode for name in ("shard1", "shard2", "whole")] == [0, 0, 0], runs[
        "whole"
    ].stdout
    shard1, shard2 = _load(folder, "shard1.json"), _load(folder, "shard2.json")
    assert shard1["selection"]["shard"] == {"index": 1, "count": 2}
    scenarios = [{r["scenario"] for r in s["results"]} for s in (shard1, shard2)]
    assert all(scenarios), "the selection's scenarios are spread over both shards"
    assert not scenarios[0] & scenarios[1], "a scenario is whole in one shard"
    for name in ("shard1", "shard2"):
        verdict = next(line for line in runs[name].stdout.splitlines() if line.startswith("VERDICT"))
        assert f"shard {name[-1]}/2 of the suite: judges this shard, not the gate" in verdict
        assert f"helix-conformance shard {name[-1]}/2: " in runs[name].stdout

    done = _merge(folder, "merged.json", "shard2.json", "shard1.json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("merged 2 shards into merged.json: PASS: adapter openai")
    merged, whole = _load(folder, "merged.json"), _load(folder, "whole.json")
    _same_judgement(merged, whole)
    assert merged["selection"]["shard"] is None
    assert merged["selection"]["merged"]["shards"] == 2
    assert "helix_shard" not in merged["settings"]

    page = _python(folder, "helix_conformance", "report", "shard1.json", "--format", "md").stdout
    assert "shard 1/2 of the suite: judges this shard, not the gate" in page
    assert json.loads(run_badge(folder, "shard1.json"))["message"].startswith("shard 1/2 · ")
    assert not json.loads(run_badge(folder, "merged.json"))["message"].startswith("shard")
    for out in ("merged.md", "merged.html"):
        assert _merge(folder, out, "shard1.json", "shard2.json").returncode == 0
        assert "shard 1/2" not in (folder / out).read_text(encoding="utf-8")
        assert "not the gate" not in (folder / out).read_text(encoding="utf-8")
    assert "clauses hold" in (folder / "merged.html").read_text(encoding="utf-8")


@pytest.mark.slow  # shard sessions and a merge: an integration that rarely changes
def test_a_broken_adapter_sharded_and_merged_fails_on_the_same_clause(
    broken: tuple[Path, dict[str, Any]],
) -> None:
    folder, runs = broken
    assert runs["whole"].returncode == 1
    assert sorted(runs[name].returncode for name in ("shard1", "shard2")) == [0, 1]
    done = _merge(folder, "merged.json", "shard1.json", "shard2.json")
    assert done.returncode == 1, done.stderr
    assert "FAIL: adapter broken-length_mapped_to_end_turn" in done.stdout
    merged, whole = _load(folder, "merged.json"), _load(folder, "whole.json")
    assert merged["clauses"]["STOP-01"]["status"] == "failed"
    assert merged["clauses"]["STOP-01"]["scenarios"]["stop_max_tokens"] == "failed"
    _same_judgement(merged, whole)


def _edited(folder: Path, name: str, change: dict[str, Any]) -> str:
    data = _load(folder, name)
    for path, value in change.items():
        *parents, last = path.split(".")
        target = data
        for key in parents:
            target = target[key]
        target[last] = value
    out = f"edited-{len(list(folder.glob('edited-*')))}.json"
    (folder / out).write_text(json.dumps(data), encoding="utf-8")
    return out


@pytest.mark.slow  # shard sessions and a merge: an integration that rarely changes
@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (["shard1.json"], "missing shard 2/2: give the JSON report of every shard 1..2"),
        (["shard1.json", "shard1.json"], "shard 1/2 given twice"),
        (["shard1.json", "whole.json"], "whole.json is not a shard's report"),
        (["shard1.json", {"strict": True}], "differ in --helix-strict"),
        (["shard1.json", {"adapter.requested": "anthropic"}], "differ in the adapter"),
        (["shard1.json", {"adapter.wire_profile": "gemini"}], "differ in the adapter"),
        (["shard1.json", {"tool.version": "0.0.1"}], "differ in the helix-conformance version"),
        (["shard1.json", {"settings.helix_examples.value": 9}], "differ in --helix-examples"),
        (["shard1.json", {"selection.shard": {"index": 2, "count": 3}}], "shards of one suite share N"),
        (["shard1.json", {"selection.shard": {"index": 1, "count": 2}}], "shard 1/2 given twice"),
        (["shard1.json", "missing.json"], "missing.json does not exist"),
    ],
    ids=[
        "missing",
        "twice",
        "not-a-shard",
        "strictness",
        "adapter",
        "profile",
        "version",
        "setting",
        "count",
        "same-index",
        "no-file",
    ],
)
def test_shards_that_cannot_be_joined_are_refused_in_one_line(
    reference: tuple[Path, dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    inputs: list[Any],
    message: str,
    tmp_path: Path,
) -> None:
    folder = _own_copy(reference, tmp_path)
    monkeypatch.chdir(folder)
    names = [item if isinstance(item, str) else _edited(folder, "shard2.json", item) for item in inputs]
    assert main(["report", "merge", "out.json", *names]) == 2
    err = capsys.readouterr().err
    assert err.startswith("helix-conformance report: error: ")
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not (folder / "out.json").exists()


@pytest.mark.slow  # shard sessions and a merge: an integration that rarely changes
def test_overlapping_shards_are_refused(
    reference: tuple[Path, dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    folder = _own_copy(reference, tmp_path)
    monkeypatch.chdir(folder)
    stolen = _load(folder, "shard1.json")["results"][:1]
    shard2 = _edited(folder, "shard2.json", {"results": _load(folder, "shard2.json")["results"] + stolen})
    assert main(["report", "merge", "out.json", "shard1.json", shard2]) == 2
    assert "shards overlap" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["merge"], "give OUT and the JSON report of every shard"),
        (["merge", "out.json"], "give OUT and the JSON report of every shard"),
        (["merge", "out.txt", "a.json"], "cannot tell the format of 'out.txt'"),
        (["merge", "a.json", "a.json"], "is also a shard's report"),
        (["a.json", "b.json"], "one report at a time"),
    ],
)
def test_merge_usage_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["0/2", "3/2", "x", "1/0", "2"])
def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--assert=plain", "--adapter=openai", f"--helix-shard={value}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR")]
    assert errors == [
        f"ERROR: --helix-shard: expected I/N, e.g. 1/4: shard I (from 1 to N) of N"
        f"{' (1 <= I <= N)' if '/' in value else ''}; got {value!r}"
    ]
    assert "Traceback" not in result.stderr.str()


def test_a_shard_cannot_write_the_baseline(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--adapter=openai", "--helix-shard=1/2", "--helix-write-baseline"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "write the baseline from a run without --helix-shard" in result.stderr.str()


def test_shards_are_whole_scenarios_balanced_and_deterministic() -> None:
    weights = [(f"s{i:02}", (i * 7) % 11 + 1) for i in range(30)]
    shard_of = assign(weights, 4)
    assert assign(list(reversed(weights)), 4) == shard_of, "the order the plan lists them in does not matter"
    assert set(shard_of) == {s for s, _ in weights}
    assert set(shard_of.values()) == {1, 2, 3, 4}
    load = [sum(w for s, w in weights if shard_of[s] == i) for i in (1, 2, 3, 4)]
    assert max(load) - min(load) <= max(w for _, w in weights)
    assert assign([("only", 3)], 3) == {"only": 1}
    assert str(parse_shard(" 2 / 4 ")) == "2/4"


@pytest.mark.slow  # shard sessions and a merge: an integration that rarely changes
def test_a_shard_the_selection_leaves_empty_passes_and_leaves_the_judgement_to_the_merge(
    pytester: pytest.Pytester,
) -> None:
    """One scenario selected: one shard of two runs it, the other has nothing to run and is no failure."""
    results = [
        pytester.runpytest_subprocess(
            "-p",
            "no:cacheprovider",
            "--assert=plain",
            "--adapter=openai",
            f"--helix-shard={i}/2",
            "-k",
            "text_basic",
        )
        for i in (1, 2)
    ]
    assert [r.ret for r in results] == [pytest.ExitCode.OK, pytest.ExitCode.OK]
    empty = "HARN-05 is judged on the merged report: 0 checks executed here"
    assert sorted(empty in r.outlines for r in results) == [False, True]
