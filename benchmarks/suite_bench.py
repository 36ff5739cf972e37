"""The whole suite against each reference adapter: pytest's wall time, and where the time goes.

Two measurements per adapter:

* ``pytest --adapter=NAME -q`` in an empty directory, as a user runs it (start-up, collection, every check,
  the summary), interleaved across adapters round by round;
* the same plan run in this process through ``SuiteRunner`` with every scenario run recorded, which splits
  the check time into the adapter's share (the wall time spent awaiting ``generate_step``, which includes
  the replay transport the adapter pulls its bytes from) and the harness's share (everything else: thread
  and event loop per run, interception, building inputs, the checks themselves, Hypothesis).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from measure import Row, Samples, interleave, pytest_wall, seconds, verdict, with_noise

SUITE_TARGET_S = 10.0


@dataclass(frozen=True)
class Split:
    """One in-process pass over an adapter's plan."""

    checks: int
    scenarios: int
    runs: int
    total_s: float
    adapter_s: float

    @property
    def harness_s(self) -> float:
        return self.total_s - self.adapter_s


def split_time(name: str) -> Split:
    """Run the adapter's whole plan without pytest, recording every scenario run it makes."""
    from helix_conformance.adapters import resolve_adapter
    from helix_conformance.checks import context
    from helix_conformance.checks.context import HarnessSettings
    from helix_conformance.replay.runner import ScenarioRun
    from helix_conformance.suite import SuiteRunner, plan_suite

    spec = resolve_adapter(name).spec
    runs: list[ScenarioRun] = []
    original = context.run_scenario

    def recording(*args: object, **kwargs: object) -> ScenarioRun:
        run = original(*args, **kwargs)  # type: ignore[arg-type]
        runs.append(run)
        return run

    started = time.perf_counter()
    planned = plan_suite(spec)
    runner = SuiteRunner(spec, HarnessSettings())
    runner.expect(planned)
    context.run_scenario = recording  # type: ignore[assignment]
    try:
        for item in planned:
            runner.run(item)
    finally:
        context.run_scenario = original
    total = time.perf_counter() - started
    executed = [p for p in planned if not p.skip_reason]
    return Split(
        checks=len(executed),
        scenarios=len({p.scenario.id for p in executed}),
        runs=len(runs),
        total_s=total,
        adapter_s=sum(r.step_s for r in runs),
    )


def suite_rows(adapters: list[str], rounds: int) -> tuple[list[Row], list[Samples]]:
    """Rows: pytest wall per adapter (target ≤ 10 s), then the in-process split per adapter."""
    with tempfile.TemporaryDirectory(prefix="helix-bench-") as tmp:
        walls = interleave(
            {
                name: pytest_wall([f"--adapter={name}", "-q", "-p", "no:randomly"], Path(tmp))
                for name in adapters
            },
            rounds,
        )
        collect = interleave(
            {"collect": pytest_wall([f"--adapter={adapters[0]}", "--collect-only", "-q"], Path(tmp))},
            rounds,
        )["collect"]
    rows: list[Row] = []
    for name in adapters:
        wall = walls[name]
        rows.append(
            Row(
                f"suite wall: pytest --adapter={name} -q",
                with_noise(seconds(wall.median), wall),
                f"≤ {SUITE_TARGET_S:g} s",
                f"{wall.median / SUITE_TARGET_S:.2f}× target",
                verdict(wall.median <= SUITE_TARGET_S),
            )
        )
    rows.append(
        Row(
            f"  of which pytest start-up + collection (--collect-only, {adapters[0]})",
            with_noise(seconds(collect.median), collect),
        )
    )
    for name in adapters:
        split = split_time(name)
        rows.append(
            Row(
                f"  {name}: checks in-process ({split.checks} checks, {split.runs} adapter runs)",
                f"{seconds(split.total_s)}: adapter {split.adapter_s / split.total_s:.0%}, "
                f"harness {split.harness_s / split.total_s:.0%}",
            )
        )
        rows.append(
            Row(
                f"  {name}: harness overhead per scenario ({split.scenarios} scenarios)",
                f"{seconds(split.harness_s / split.scenarios)} "
                f"({seconds(split.harness_s / max(split.runs, 1))} per adapter run)",
            )
        )
    return rows, [*walls.values(), collect]
