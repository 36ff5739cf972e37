"""Start the process an adapter name runs in: the Python worker (protocol 1), or a driver (protocol 2) for
``node:PATH``, ``cmd:COMMAND`` or a name that resolves to a ``DriverCommand``. One place for pytest
(``start_for_session``), ``run_conformance`` (``shared``) and ``helix-conformance replay`` (``open_adapter``).
"""

from __future__ import annotations

import atexit
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ..adapters import CMD_PREFIX, NODE_PREFIX, AdapterNotFound, DriverCommand, ResolvedAdapter, parse_command
from .client import AdapterWorker, DriverRedirect, WorkerStartError
from .driver import DriverWorker
from .node import node_command

if TYPE_CHECKING:
    from .driver_pool import DriverPool
    from .pool import WorkerPool

DRIVER_NOT_APPLICABLE: dict[str, str] = {
    "HARN-04": "not applicable to an adapter run by a driver command: HARN-04 reads the work the adapter left "
    "running after its step, which only the Node driver (node:) reports",
}
"""Clauses planned as skipped, with why, for an adapter a ``cmd:`` driver runs."""
CANCELLED_BY_SIGNAL = (
    "not applicable: a step run by a driver is cancelled only through its AbortSignal (NT-03 aborts it "
    "mid-stream), and this adapter does not declare the 'abort' capability"
)
"""Why NT-03 is skipped for a driver's adapter that does not declare 'abort'."""
CONFINEMENT = {
    "namespaces": "confined: no network, no view of other processes",
    "subreaper": "not confined (no user namespaces): its processes die with it",
    "process group": "not confined: its process group dies with it",
}
"""The keeper's tier (worker/sandbox.py) in words, for the header and the notes."""
POOL_SIZE = 4
"""Workers ``shared`` keeps alive between ``run_conformance`` calls (least recently used closed first)."""


@dataclass
class Opened:
    """An adapter's process, started, with the adapter as it resolved there."""

    worker: AdapterWorker | DriverWorker
    resolved: ResolvedAdapter
    mode: Literal["worker", "driver"]
    _pool: WorkerPool | DriverPool | None = field(default=None, repr=False)
    spares: list[AdapterWorker] = field(default_factory=list, repr=False)
    """Workers of the same adapter started beside this one (``open_adapter``'s ``workers``), still starting:
    the pool's first members after it."""

    def pool(self, size: int) -> WorkerPool | DriverPool:
        """The runs' pool of ``size`` processes of the adapter, this one first: made on first use, kept and
        resized with the process, so later calls reuse what started."""
        if self._pool is None:
            spares, self.spares = self.spares, []
            self._pool = pool_for(self.worker, size, spares)
        else:
            self._pool.resize(size)
        return self._pool

    def describe(self) -> str:
        """``a worker process (python 3.11.7, pid 123)``: the mode, for headers and notes."""
        ready = self.worker.ready or {}
        if self.mode == "worker":
            process = self.worker.process if isinstance(self.worker, AdapterWorker) else None
            keeper = process.keeper if process is not None else None
            pid = process.popen.pid if process is not None else ready.get("pid")
            confined = f", {CONFINEMENT.get(keeper.tier, keeper.tier)}" if keeper is not None else ""
            return f"a worker process of its own (python {ready.get('python')}, pid {pid}{confined})"
        runtime = ready.get("runtime") or "driver"
        return f"a driver process of its own ({runtime}, pid {ready.get('pid')})"

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        for spare in self.spares:
            spare.close()
        self.worker.close()


def pool_for(
    worker: AdapterWorker | DriverWorker, size: int, spares: list[AdapterWorker] | None = None
) -> WorkerPool | DriverPool:
    """``size`` processes of the adapter, ``worker`` first: Python workers (pool.py; ``spares`` started
    already), or drivers each driven by a thread (driver_pool.py)."""
    if isinstance(worker, AdapterWorker):
        from .pool import WorkerPool

        return WorkerPool(worker, size, spares or [])
    from .driver_pool import DriverPool

    return DriverPool(worker, size)


def open_adapter(requested: str, *, cwd: str | None = None, workers: int = 1) -> Opened:
    """Start the adapter's process and resolve the adapter in it; AdapterNotFound (a one-line usage error)
    when it cannot be found or started. The caller closes it. A Python adapter's other ``workers - 1``
    workers start at once beside it (``Opened.spares``)."""
    where = cwd or os.getcwd()
    if requested.startswith(NODE_PREFIX):
        command = node_command()
        worker = DriverWorker(requested, requested[len(NODE_PREFIX) :], command, cwd=where)
        return _driver(worker, {})
    if requested.startswith(CMD_PREFIX):
        return _command(requested, parse_command(requested), where)
    python = AdapterWorker(requested, cwd=where)
    spares: list[AdapterWorker] = []
    try:
        spares = python.siblings(workers - 1)
        return Opened(python, python.resolve(), "worker", spares=spares)
    except BaseException as exc:
        for spare in spares:  # the same name fails or redirects there: not one of them is needed
            spare.close()
        if isinstance(exc, DriverRedirect):
            return _command(requested, exc.resolved.command, where)
        if isinstance(exc, WorkerStartError):
            raise AdapterNotFound(str(exc)) from None
        raise


def _command(requested: str, command: DriverCommand, cwd: str) -> Opened:
    worker = DriverWorker(requested, command.adapter, list(command.argv), cwd=command.cwd or cwd)
    return _driver(worker, {**DRIVER_NOT_APPLICABLE, **dict(command.not_applicable)})


def _driver(worker: DriverWorker, not_applicable: dict[str, str]) -> Opened:
    try:
        resolved = worker.resolve()
    except WorkerStartError as exc:
        worker.close()
        raise AdapterNotFound(str(exc)) from None
    except AdapterNotFound:
        worker.close()
        raise
    if "abort" not in resolved.spec.capabilities:
        not_applicable = {"NT-03": CANCELLED_BY_SIGNAL, **not_applicable}
    return Opened(worker, replace(resolved, not_applicable=tuple(not_applicable.items())), "driver")


def start_for_session(config: Any, requested: str, workers: int = 1) -> Opened:
    """pytest's worker or driver for the session (``workers`` of them for a Python adapter: ``Opened.pool``),
    stopped when pytest unconfigures. The xdist controller only needs the spec: its process stops at once
    (the xdist workers start their own)."""
    opened = open_adapter(requested, workers=workers)
    config.add_cleanup(opened.close)
    if xdist_controller(config):
        opened.close()
    return opened


def xdist_controller(config: Any) -> bool:
    """pytest-xdist's controller: it collects and reports, its workers run the items."""
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


_POOL: OrderedDict[tuple[Any, ...], Opened] = OrderedDict()


def shared(requested: str, workers: int = 1) -> Opened:
    """A started worker for ``requested`` in this directory and import path, kept for the next call (a
    worker costs about a second to start; tests call ``run_conformance`` many times). A worker that died or
    hung between calls is replaced by its own ``run_scenario``; one whose adapter module changed on disk since
    (an edit, then ``importlib.reload``) is not reused. ``close_shared`` stops them all. A new one starts with
    its ``workers - 1`` others (``open_adapter``)."""
    key = (requested, os.getcwd(), tuple(sys.path), _module_stamp(requested))
    opened = _POOL.pop(key, None)
    if opened is None:
        opened = open_adapter(requested, workers=workers)
    _POOL[key] = opened
    while len(_POOL) > POOL_SIZE:
        _, oldest = _POOL.popitem(last=False)
        oldest.close()
    return opened


def _module_stamp(requested: str) -> tuple[str, int] | None:
    """The adapter module's file and modification time, when this process has imported it (a spec passed to
    ``run_conformance`` was): a changed file makes a new worker."""
    from ..adapters import available

    target = available().get(requested, requested)
    module = sys.modules.get(target.partition(":")[0])
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return None
    try:
        return path, os.stat(path).st_mtime_ns
    except OSError:
        return None


def close_shared() -> None:
    """Stop every pooled worker (at interpreter exit; tests may call it)."""
    while _POOL:
        _, opened = _POOL.popitem()
        opened.close()


atexit.register(close_shared)
