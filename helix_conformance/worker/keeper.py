"""The parent's side of the worker's keeper (worker/sandbox.py): a control socket to a process that runs no
adapter code, so what it says is trusted, unlike anything on the worker's channel.

The keeper says how the worker is confined (``keeper``), opens listening sockets inside the worker's network
namespace for the parent (``listen``; or one only bound, whose port refuses connections), ends the worker and
everything it started (``kill``), and says how the worker ended (``ended``: its wait status and peak memory).
``vitals`` reads the worker's processes from ``/proc`` (Linux): what a hung worker looked like (memory, stopped),
and connection attempts the network namespace refused, which the kernel counts where no code of the adapter's can
reset them.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import time
from dataclasses import dataclass, field
from typing import Any

LISTEN_TIMEOUT_S = 5.0
ENDED_TIMEOUT_S = 1.0


@dataclass
class KeeperLink:
    """The parent's end of one keeper's control socket."""

    sock: socket.socket
    pid: int
    """The keeper's pid (the process the parent started)."""
    hello: dict[str, Any] | None = None
    ended: dict[str, Any] | None = None
    _buffer: bytearray = field(default_factory=bytearray)
    _fds: list[int] = field(default_factory=list)
    _closed: bool = False
    _escapes_seen: int = 0
    _strays_seen: set[int] = field(default_factory=set)
    _kept: frozenset[int] = frozenset()
    """The namespace's init and the worker (confined), once found: read from /proc once, not after every run."""

    @property
    def tier(self) -> str:
        """``namespaces``, ``subreaper`` or ``process group`` (``unknown`` before the keeper said)."""
        return str((self.hello or {}).get("tier") or "unknown")

    @property
    def confined(self) -> bool:
        return self.tier == "namespaces"

    def _read(self, deadline: float) -> dict[str, Any] | None:
        """The next message, or None at the deadline or once the keeper is gone."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                with contextlib.suppress(ValueError):
                    message = json.loads(line)
                    if isinstance(message, dict):
                        self._note(message)
                        return message
                continue
            if self._closed:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.sock], [], [], remaining)[0]:
                return None
            try:
                data, fds, _flags, _addr = socket.recv_fds(self.sock, 65536, 4)
            except OSError:
                data, fds = b"", []
            if not data:
                self._closed = True
            self._buffer += data
            self._fds.extend(fds)

    def _note(self, message: dict[str, Any]) -> None:
        if message.get("type") == "keeper":
            self.hello = message
        elif message.get("type") == "ended":
            self.ended = message

    def wait_hello(self, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while self.hello is None and self._read(deadline) is not None:
            pass
        return self.hello

    def listen(self, *, listening: bool = True) -> socket.socket:
        """A listening TCP socket on the worker's loopback (its own network namespace when confined): the
        replay server of a run serves the adapter from the parent on it. Not ``listening``: a socket only
        bound, whose port refuses connections (the ``connect_error`` runs'). OSError when the keeper cannot."""
        if not self.confined:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            if listening:
                listener.listen(64)
            return listener
        self.sock.sendall(
            b'{"type": "listen"}\n' if listening else b'{"type": "listen", "listening": false}\n'
        )
        deadline = time.monotonic() + LISTEN_TIMEOUT_S
        while (message := self._read(deadline)) is not None:
            if message.get("type") != "listener":
                continue
            if message.get("error") or not self._fds:
                raise OSError(f"the worker's keeper could not listen: {message.get('error')}")
            return socket.socket(fileno=self._fds.pop(0))
        raise OSError("the worker's keeper did not answer")

    def wait_ended(self, timeout: float = ENDED_TIMEOUT_S) -> dict[str, Any] | None:
        """How the worker ended, as the keeper saw it (after the worker's channel closed)."""
        deadline = time.monotonic() + timeout
        while self.ended is None and self._read(deadline) is not None:
            pass
        return self.ended

    def after_run(self, escapes: Any = None) -> list[str]:
        """What the adapter did behind the audit hook's back during the run just answered, for HARN-01:
        connection attempts the sandbox refused, and processes it started (then killed here). ``escapes``: the
        run's own count, as the worker read it before and after the run (``result``'s ``escapes``)."""
        return self.new_escapes(escapes) + self.end_strays()

    def end_strays(self) -> list[str]:
        """Processes the adapter started that still exist after its step (a fork or exec in native code, which
        the audit hook does not see): killed, and named once each (Linux; elsewhere they die with the worker)."""
        if self.hello is None:
            return []
        found = descendants(self.pid)
        if self.confined:  # the keeper's only child is the namespace's init; the worker is its PID 2
            if not self._kept or not self._kept <= set(found):
                worker = {pid for pid in found if _namespace_pid(pid) == 2}
                self._kept = frozenset(_children(self.pid)) | frozenset(worker) if worker else frozenset()
            keep: set[int] | frozenset[int] = self._kept
        else:
            keep = {int(self.hello.get("worker_pid") or 0)}
        named: list[str] = []
        for pid in found:
            if pid in keep:
                continue
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            if pid not in self._strays_seen:
                self._strays_seen.add(pid)
                name = _status(pid).get("Name") or "?"
                named.append(
                    f"a process the adapter started where the audit hook could not see it (pid {pid}, {name}: "
                    "a fork or exec from native code), still there after the step: killed"
                )
        return named

    def new_escapes(self, reported: Any = None) -> list[str]:
        """Connection attempts out of the worker's network namespace during the run just answered, as HARN-01
        reports them: the kernel refused them (no route), the audit hook did not see them (native code). The
        worker's count of the run (``reported``) where it sent one: runs are pipelined, so by the time the
        answer is read here the worker may be in the next run, whose packets the counter holds already (the
        keeper's count since the last answer, kept for a worker that sent none, was load-dependent)."""
        if not self.confined:
            return []
        if isinstance(reported, int) and not isinstance(reported, bool):
            new = (
                reported  # the counters are read only for a worker that sends no count (a /proc read per run)
            )
        else:
            count = escape_attempts(self.pid)
            new, self._escapes_seen = count - self._escapes_seen, max(count, self._escapes_seen)
        if new <= 0:
            return []
        return [
            f"{new} packet(s) to addresses outside loopback, from code the audit hook does not see (native "
            "code, ctypes): refused by the sandbox, which has no route out"
        ]

    def kill(self) -> None:
        """Ask the keeper to end the worker and all it started (the caller kills the keeper after)."""
        with contextlib.suppress(OSError):
            self.sock.sendall(b'{"type": "kill"}\n')

    def kill_group(self) -> None:
        """Outside namespaces: the worker's process group, in case the keeper could not (stopped, killed)."""
        worker = int((self.hello or {}).get("worker_pid") or 0)
        if worker > 0 and not self.confined:
            with contextlib.suppress(OSError):
                os.killpg(worker, signal.SIGKILL)

    def close(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()
        with contextlib.suppress(OSError):
            self.sock.close()


# --- vitals: the worker's processes as /proc shows them (Linux) -------------------------------------------


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError, ValueError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found.extend(int(p) for p in handle.read().split())
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the keeper); empty where /proc cannot tell."""
    found: list[int] = []
    stack = [pid]
    while stack:
        children = _children(stack.pop())
        found.extend(children)
        stack.extend(children)
    return found


def _namespace_pid(pid: int) -> int | None:
    """The process's pid in its own PID namespace (the last of ``NSpid``)."""
    values = _status(pid).get("NSpid", "").split()
    return int(values[-1]) if values and values[-1].isdigit() else None


def _status(pid: int) -> dict[str, str]:
    fields: dict[str, str] = {}
    with (
        contextlib.suppress(OSError),
        open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as handle,
    ):
        for line in handle:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def _kib(text: str | None) -> int:
    with contextlib.suppress(ValueError, AttributeError, IndexError):
        return int(str(text).split()[0])
    return 0


def describe_memory(kib: int) -> str:
    if kib >= 1024 * 1024:
        return f"{kib / 1024 / 1024:.1f} GB"
    return f"{kib / 1024:.0f} MB"


def vitals(keeper_pid: int) -> str:
    """What the adapter's processes look like now, in words for a failure message (Linux; else "")."""
    processes = [_status(pid) for pid in descendants(keeper_pid)]
    processes = [p for p in processes if p]
    if not processes:
        return ""
    resident = sum(_kib(p.get("VmRSS")) for p in processes)
    parts = [f"its processes held {describe_memory(resident)} of memory"]
    stopped = [p for p in processes if p.get("State", "").startswith(("T", "t"))]
    if stopped:
        parts.append(f"{len(stopped)} of them stopped (SIGSTOP or a tracer)")
    if len(processes) > 2:
        parts.append(f"{len(processes)} processes")
    return ", ".join(parts)


def escape_attempts(pid: int | str) -> int:
    """The kernel's count of packets with no route out of the network namespace of ``pid`` (the keeper's, or
    ``"self"`` in the worker) so far: ``IpOutNoRoutes`` + ``Ip6OutNoRoutes``, every attempt to reach a
    non-loopback address (a TCP connect, a UDP send), whatever code made it. The worker reads it twice per run,
    so only those two counters are parsed (the whole tables cost a tenth of a worker's CPU per run)."""
    total = 0
    with contextlib.suppress(OSError), open(f"/proc/{pid}/net/snmp", encoding="ascii", errors="replace") as f:
        header = f.readline()
        while header and not header.startswith("Ip:"):
            header = f.readline()
        names, values = header.split()[1:], f.readline().split()[1:]
        with contextlib.suppress(ValueError):
            total += int(dict(zip(names, values)).get("OutNoRoutes", 0))
    with (
        contextlib.suppress(OSError),
        open(f"/proc/{pid}/net/snmp6", encoding="ascii", errors="replace") as f,
    ):
        for line in f:
            if line.startswith("Ip6OutNoRoutes"):
                with contextlib.suppress(ValueError):
                    total += int(line.split()[1])
                break
    return total
