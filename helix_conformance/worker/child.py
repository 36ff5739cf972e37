"""The worker process: imports and builds the adapter, runs scenarios on request, answers with plain data.

Started by ``client.AdapterWorker`` as ``python -m helix_conformance.worker --fds R,W``. Reads frames on fd R,
writes JSON lines on fd W (docs/worker-protocol.md); stdout and stderr stay the adapter's. It never returns
normally: it leaves with ``os._exit`` so threads and atexit handlers the adapter left cannot keep it alive.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import platform
import signal
import sys
import threading
import traceback
from typing import Any

from . import guard
from .keeper import escape_attempts
from .protocol import (
    EXIT_CHANNEL_LOST,
    PROTOCOL_VERSION,
    ChannelClosed,
    ChannelTampered,
    RequestReader,
    encode_answer,
    header,
    write_all,
)


def _die_with_parent() -> None:
    """Linux: the kernel kills the worker if pytest dies, even while the adapter spins in C."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


class Worker:
    def __init__(self, out_fd: int) -> None:
        self.out_fd = out_fd
        self.spec: Any = None
        self.lock = threading.Lock()  # the request reader's thread answers too (received, tampered)

    def send(self, message: dict[str, Any]) -> None:
        data = encode_answer(message)
        with self.lock:
            write_all(self.out_fd, data)

    def received(self, message: dict[str, Any]) -> None:
        """A run's frame arrived whole: the parent can now tell a run that never arrived (taken off the
        channel) from one that hangs."""
        if message.get("type") == "run":
            self._send_or_leave(header("received", id=message.get("id"), seq=message.get("seq")))

    def tampered(self, what: str) -> None:
        self._send_or_leave(header("tampered", what=what))

    def _send_or_leave(self, message: dict[str, Any]) -> None:
        try:
            self.send(message)
        except OSError:
            os._exit(EXIT_CHANNEL_LOST)

    def hello(self, message: dict[str, Any]) -> None:
        if message.get("v") != PROTOCOL_VERSION:
            self.send(header("error", kind="version", message=f"worker speaks version {PROTOCOL_VERSION}"))
            os._exit(3)
        sys.path[:] = [str(p) for p in message.get("sys_path", sys.path)]
        if message.get("cwd"):
            os.chdir(str(message["cwd"]))
        from ..adapters import AdapterNotFound, ResolvedCommand, resolve_name

        try:
            resolved = resolve_name(str(message["adapter"]))
        except AdapterNotFound as exc:
            self.send(header("error", kind="adapter_not_found", message=str(exc)))
            return
        except BaseException as exc:  # the adapter's module raised something odd while loading
            self.send(header("error", kind="adapter_not_found", message=f"{type(exc).__name__}: {exc}"))
            return
        if isinstance(resolved, ResolvedCommand):  # an adapter of another language: the parent starts it
            command = resolved.command
            self.send(
                header(
                    "driver",
                    argv=list(command.argv),
                    adapter=command.adapter,
                    cwd=command.cwd,
                    not_applicable=[list(pair) for pair in command.not_applicable],
                    target=resolved.target,
                    origin=resolved.origin,
                )
            )
            return
        spec = self.spec = resolved.spec
        self.send(
            header(
                "ready",
                pid=os.getpid(),
                python=platform.python_version(),
                target=resolved.target,
                origin=resolved.origin,
                spec={
                    "name": str(spec.name),
                    "wire_profile": str(spec.wire_profile),
                    "model": str(spec.model),
                    "capabilities": sorted(str(c) for c in spec.capabilities),
                    "cassette_dir": str(spec.cassette_dir) if spec.cassette_dir is not None else None,
                    "description": str(spec.description),
                    "api_key_env": spec.api_key_env,
                    "servers": sorted(str(s) for s in spec.servers),
                },
            )
        )

    def run(self, message: dict[str, Any], payload: bytes) -> None:
        from ..replay.runner import AdapterJob, run_adapter
        from .runs import encode_run

        run_id = message.get("id")
        self.send(header("started", id=run_id))  # the parent times this run from here (worker/pool.py)
        try:
            job = pickle.loads(payload)
            if not isinstance(job, AdapterJob) or job.link is None:
                raise TypeError(f"a run's payload is an AdapterJob with a link, not {type(job).__name__}")
            guard.drain()
            escapes = escape_attempts("self")
            guard.allow_only(
                frozenset({job.link.http_port, job.link.control_port, job.link.refusing_port} - {0})
            )
            run = run_adapter(job, self.spec)
            run.unintercepted.extend(guard.drain())
            escapes = escape_attempts("self") - escapes  # this run's alone (keeper.new_escapes)
            data = encode_run(run)
        except BaseException as exc:  # the harness side of the worker failed: say so, keep serving
            self.send(
                header(
                    "failed",
                    id=run_id,
                    message=f"{type(exc).__name__}: {exc}",
                    traceback=traceback.format_exc()[-4000:],
                )
            )
            return
        self.send(header("result", id=run_id, run=data, escapes=escapes))


def main(argv: list[str]) -> None:
    fds = argv[argv.index("--fds") + 1].split(",") if "--fds" in argv else []
    if len(fds) != 2:
        sys.stderr.write("usage: python -m helix_conformance.worker --fds READ_FD,WRITE_FD\n")
        os._exit(2)
    _die_with_parent()
    logging.getLogger().addHandler(logging.NullHandler())  # no lastResort prints of the adapter's logs
    worker = Worker(int(fds[1]))
    requests = RequestReader(int(fds[0]), worker.received, worker.tampered).start()
    # The official SDKs put platform.processor() in their headers: on Linux it runs `uname -p` once, then
    # caches it. Computed before the guard is armed, it is not a refused process in every first run.
    platform.uname().processor  # noqa: B018
    guard.install()
    queue: list[tuple[dict[str, Any], bytes]] = []
    try:
        while True:
            frame = requests.next(block=not queue)
            while frame is not None:
                queue.append(frame)
                frame = requests.next(block=False)
            # Runs the parent waits for ("urgent") go before the ones it sent ahead (worker/pool.py).
            index = next((i for i, (m, _) in enumerate(queue) if m.get("urgent")), 0)
            message, payload = queue.pop(index)
            kind = message.get("type")
            if kind == "hello":
                worker.hello(message)
            elif kind == "run" and worker.spec is not None:
                worker.run(message, payload)
            elif kind == "shutdown":
                break
            else:
                worker.send(header("error", kind="unexpected", message=f"unexpected {kind!r}"))
    except ChannelClosed:
        pass  # the parent ended the session
    except ChannelTampered:
        os._exit(EXIT_CHANNEL_LOST)  # the parent was told (the reader's ``tampered``) and replaces us
    except OSError:
        os._exit(EXIT_CHANNEL_LOST)  # the answer channel is gone (closed inside the worker): nothing to tell
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    os._exit(0)
