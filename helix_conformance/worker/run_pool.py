"""What a pool of an adapter's processes offers the session: a run waited for now (``run_scenario``, the
executor) and a run sent ahead (``submit``, a ticket). The Python workers' pool (pool.py) and the drivers'
(driver_pool.py) differ only in how a run reaches a process."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, Protocol, TypeVar

from ..contract import AdapterSpec
from ..profiles.base import WireProfile
from ..replay.interactions import ReplayInteraction
from ..replay.runner import RunOptions, ScenarioRun
from ..scenarios.model import Scenario

RunCall = tuple[
    Scenario, AdapterSpec, WireProfile, list[ReplayInteraction], RunOptions, str | None, tuple[Any, ...]
]
"""(scenario, spec, profile, interactions, options, base_url, scripted): one run, as submitted."""


class Ticket(Protocol):
    """A run handed to a pool; ``result()`` waits for it."""

    def result(self) -> ScenarioRun: ...

    def cancel(self) -> None: ...


TicketT = TypeVar("TicketT", bound=Ticket)


class _Queued(Protocol):
    urgent: bool


QueuedT = TypeVar("QueuedT", bound=_Queued)


def enqueue(backlog: list[QueuedT], ticket: QueuedT) -> None:
    """Queue ``ticket``: an urgent one (waited for) before the runs sent ahead, after the urgent ones already
    queued; one sent ahead last."""
    if ticket.urgent:
        at = next((i for i, t in enumerate(backlog) if not t.urgent), len(backlog))
        backlog.insert(at, ticket)
    else:
        backlog.append(ticket)


class RunPool(ABC, Generic[TicketT]):
    """Runs handed to an adapter's processes; the ones waited for go before the ones sent ahead."""

    def run_scenario(
        self,
        scenario: Scenario,
        spec: AdapterSpec,
        profile: WireProfile,
        interactions: list[ReplayInteraction],
        options: RunOptions,
        *,
        base_url: str | None = None,
        scripted: tuple[Any, ...] = (),
    ) -> ScenarioRun:
        """Same signature and meaning as ``replay.runner.run_scenario``: a run waited for now."""
        call: RunCall = (scenario, spec, profile, interactions, options, base_url, scripted)
        return self.take(call, urgent=True).result()

    def submit(
        self,
        scenario: Scenario,
        spec: AdapterSpec,
        profile: WireProfile,
        interactions: list[ReplayInteraction],
        options: RunOptions,
        *,
        base_url: str | None = None,
        scripted: tuple[Any, ...] = (),
        urgent: bool = False,
    ) -> TicketT:
        """Hand a run to the pool; it starts as soon as a process has room."""
        return self.take((scenario, spec, profile, interactions, options, base_url, scripted), urgent=urgent)

    @abstractmethod
    def take(self, call: RunCall, *, urgent: bool) -> TicketT:
        """Queue ``call``: ``urgent`` ones before the runs sent ahead, after the urgent ones already queued."""

    @abstractmethod
    def resize(self, size: int) -> None: ...

    @abstractmethod
    def close(self) -> None: ...
