"""``--helix-quick``: the suite for an adapter author's edit loop, a few seconds, never the gate.

A full run judges every scenario and breaks, re-splits and re-calls the representative of each delivery shape
(``checks/draws.py``). While an author edits, what they need is a fast red or green on every clause, not the
gate's verdict. So a quick run keeps, from the full plan:

- every check on the representative of each delivery shape (the adapter's generic code sees one scenario of
  each shape; its main run is all most clauses need), and on the first authored scenario of each finish within
  a shape (the shape does not tell finishes apart, and STOP-01 maps each), but none on the inputs Hypothesis
  generates (MSG-01..05, TOOL-02/03 on random histories and schemas: a quarter of a quick run's runs, for
  clauses the authored scenarios judge too);
- a clause whose check asks for runs beyond its scenario's main run (it has an ``ahead`` hook: the fault
  corpus of ERR-03/04/05, RES-12 and NT-01, NT-02's corruptions, STR-10's splits, STR-09/11's callback
  styles, NT-03's cancellation, NT-04/05's stalls, STR-08's slow delivery) on its first such scenario only;
- a clause no representative is judged on, on its first scenario.

So every clause the full plan judges is judged at least once, and the selection is a pure function of the
plan: deterministic, the same on every machine. A check a quick run keeps is the full run's check (the same
runs, the same seed), so a failure it finds is a failure of the gate; a pass proves only the checks it ran,
and everything it prints and writes says so (``QUICK_NOTE``): the summary's last line, the JSON report's
``selection.quick``, a JUnit property on every test case, the badge; ``helix-conformance report --check``
refuses its report, and ``--helix-write-baseline`` refuses to write a baseline from it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .profiles.base import WireProfile
    from .scenarios.model import Scenario
    from .suite import PlannedCheck

QUICK_NOTE = "QUICK CHECK — not a gate"
"""What a quick run says where a full run says ``VERDICT``: the summary, the reports, the badge."""

QUICK_PROPERTY = "helix_quick"
"""The JUnit property every test case of a quick run carries (value ``QUICK_NOTE``)."""

QUICK_HINT = "run without --helix-quick for the verdict"


def quick_plan(planned: Sequence[PlannedCheck], profile: WireProfile) -> list[PlannedCheck]:
    """The checks of ``planned`` (the full plan, in its order) a quick run keeps (the module's docstring)."""
    from .checks.draws import first_of_each, representative

    finishes = frozenset(first_of_each(profile.name, _shape_and_finish).values())
    kept: set[int] = set()
    beyond_main: set[str] = set()
    for index, check in enumerate(planned):
        scenario = check.scenario
        if scenario.generated or not (representative(scenario, profile) or scenario.id in finishes):
            continue
        if check.check.ahead is None:
            kept.add(index)
        elif check.clause not in beyond_main and check.skip_reason is None:
            beyond_main.add(check.clause)
            kept.add(index)
    judged = {planned[index].clause for index in kept if planned[index].skip_reason is None}
    by_clause: dict[str, list[int]] = {}
    for index, check in enumerate(planned):
        by_clause.setdefault(check.clause, []).append(index)
    for clause, indices in by_clause.items():
        if clause not in judged:  # judged on no representative (or skipped on all of them): its first check
            runnable = [i for i in indices if planned[i].skip_reason is None]
            kept.add((runnable or indices)[0])
    return [check for index, check in enumerate(planned) if index in kept]


def _shape_and_finish(scenario: Scenario) -> Hashable:
    """A delivery shape told apart by its finishes (``scenarios/shapes.py``): what a quick run keeps one of."""
    from .scenarios.shapes import delivery_shape, finishes

    return (delivery_shape(scenario), finishes(scenario))
