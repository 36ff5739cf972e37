"""The replay service: a process of the judging side that runs the replay hosts (replay/host.py).

pytest's process (or ``run_conformance``'s, or ``helix-conformance replay``'s) starts one service and asks it
for a host per adapter process; it stages each run on that run's host before the adapter's process gets the
run, and collects the host's record when the run's answer arrives. The hosts answer the adapter's HTTP and its
link in lockstep, a few times per chunk: in a process of their own they never wait for the interpreter lock
while pytest judges (a thread in pytest's process waited up to 5 ms for it, per handshake). The service is
trusted like pytest's own code, so the parent speaks pickle to it; it never runs adapter code and never
unpickles anything from an adapter's process (the adapter's link speaks JSON).

Frames both ways: an 8-byte big-endian length, then a pickle of a tuple. Parent to service: ``("host", id,
listeners)``, ``("stage", id, StagePlan)``, ``("collect", id, token, grace_s)``, ``("close_host", id)``. The
parent's end is a Unix socket: a host of a worker confined in a network namespace of its own (worker/sandbox.py)
listens on sockets its keeper opened on that namespace's loopback, which no other process can reach; the
``host`` message then carries those sockets (SCM_RIGHTS, ``listeners`` = 3: HTTP, the link, and one only bound,
whose port refuses connections), and the host serves them instead of the machine's loopback. Service to parent:
``("host", id, http_port, control_port, refusing_port)``, ``("trace", id, token, StageTrace)`` (once per staged
run, when the adapter's side ends it or when collected), ``("error", text)`` for a failure of the service itself.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import selectors
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .idle_threads import waits_for_others
from .stage import StagePlan, StageTrace

HEADER = struct.Struct(">Q")
START_TIMEOUT_S = 60.0
COLLECT_GRACE_S = 2.0
"""How long a collected run waits for the adapter's side to end it (its last events) before the host ends it."""
ANSWER_TIMEOUT_S = 30.0
READ_BYTES = 64 * 1024
"""What one read of the parent's or the service's pipe asks for (as worker/protocol.READ_CHUNK: a 1 MiB read
buffer cost about 40 us per message, allocated and shrunk each time)."""


class ReplayServiceError(Exception):
    """The replay service failed (a harness bug, never the adapter's): the run cannot be judged."""


# --- the service process ------------------------------------------------------------------------------------


class _Reactor:
    """The service's event loop: one selector for the parent's pipe, every host's listeners and connections."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        from .host import Host

        self.selector = selectors.DefaultSelector()
        self.parent = socket.socket(fileno=read_fd)
        self.write_fd = write_fd
        self.inbuf = bytearray()
        self.fds_in: list[int] = []
        """Sockets the parent passed, in the order they came; each ``host`` message takes its own."""
        self.hosts: dict[str, Host] = {}
        self.host_class = Host
        self.parent.setblocking(False)
        self.selector.register(self.parent, selectors.EVENT_READ, self._parent_readable)

    def watch(self, sock: socket.socket, on_readable: Callable[[], None]) -> None:
        self.selector.register(sock, selectors.EVENT_READ, on_readable)

    def unwatch(self, sock: socket.socket) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.selector.unregister(sock)

    def finished(self, host_id: str, token: str, trace: StageTrace) -> None:
        self.send(("trace", host_id, token, trace))

    def send(self, message: tuple[Any, ...]) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(HEADER.pack(len(data)) + data)
        while view:
            try:
                view = view[os.write(self.write_fd, view) :]
            except BlockingIOError:
                select_write(self.write_fd)

    def run(self) -> None:
        while True:
            deadlines = [d for host in self.hosts.values() if (d := host.next_deadline()) is not None]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            for key, _ in self.selector.select(timeout):
                key.data()
            for host in list(self.hosts.values()):
                host.fire_due()

    def _parent_readable(self) -> None:
        try:
            data, fds, _flags, _address = socket.recv_fds(self.parent, READ_BYTES, 16)
        except BlockingIOError:
            return
        self.fds_in.extend(fds)
        if not data:
            os._exit(0)  # the parent is gone
        self.inbuf += data
        messages, taken = _frames(self.inbuf)
        del self.inbuf[:taken]
        for message in messages:
            self._handle(message)

    def _handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "host":
            passed = message[2] if len(message) > 2 else 0
            listeners = [socket.socket(fileno=self.fds_in.pop(0)) for _ in range(passed)]
            host = self.hosts.get(message[1])
            if host is not None and listeners:  # a new worker in a new namespace: serve its loopback now
                self.hosts.pop(message[1]).close()
                host = None
            if host is None:
                host = self.hosts[message[1]] = self.host_class(
                    self,
                    message[1],
                    listeners=(listeners[0], listeners[1], listeners[2]) if len(listeners) == 3 else None,
                )
            else:
                for listener in listeners:
                    listener.close()
            self.send(("host", message[1], host.http_port, host.control_port, host.refusing_port))
        elif kind == "stage":
            self._host(message[1]).stage(message[2])
        elif kind == "collect":
            host = self.hosts.get(message[1])
            if host is None:
                self.send(("trace", message[1], message[2], StageTrace()))
            else:
                host.collect(message[2], message[3])
        elif kind == "close_host":
            host = self.hosts.pop(message[1], None)
            if host is not None:
                host.close()

    def _host(self, host_id: str) -> Any:
        host = self.hosts.get(host_id)
        if host is None:
            host = self.hosts[host_id] = self.host_class(self, host_id)
        return host


def select_write(fd: int) -> None:
    import select

    select.select([], [fd], [], 1.0)


def main(argv: list[str]) -> None:
    fds = argv[argv.index("--fds") + 1].split(",") if "--fds" in argv else []
    if len(fds) != 2:
        sys.stderr.write("usage: python -m helix_conformance.replay.service --fds READ_FD,WRITE_FD\n")
        os._exit(2)
    reactor = _Reactor(int(fds[0]), int(fds[1]))
    try:
        reactor.run()
    except BaseException:
        with contextlib.suppress(BaseException):
            reactor.send(("error", traceback.format_exc()[-4000:]))
        os._exit(1)


# --- the parent's side ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostAddress:
    """Where one adapter process's host listens: its HTTP port and its link's port, on 127.0.0.1; and its
    refusing port, where nothing listens (a ``connect_error`` run's base URL: the connection is refused)."""

    id: str
    http_port: int
    control_port: int
    incarnation: int
    refusing_port: int

    def base_url(self, token: str, default_base_url: str, *, refused: bool = False) -> str:
        """A run's base URL: the host's origin (its refusing port's for a run whose connection is ``refused``),
        the run's prefix, and the path of the provider's base URL."""
        from urllib.parse import urlsplit

        from .host_state import RUN_PREFIX

        path = urlsplit(default_base_url).path.rstrip("/")
        port = self.refusing_port if refused else self.http_port
        return f"http://127.0.0.1:{port}{RUN_PREFIX}{token}{path}"


class ReplayService:
    """pytest's handle on the service process: hosts, stages, and the records it sends back."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.write_lock = threading.Lock()
        """Writes are not made under ``changed``: the reader thread must always be free to store answers."""
        self.process: subprocess.Popen[bytes] | None = None
        self.to_service = -1
        self.from_service = -1
        self.incarnation = 0
        self.hosts: dict[str, HostAddress] = {}
        self.listeners: dict[str, tuple[socket.socket, socket.socket, socket.socket]] = {}
        self.traces: dict[tuple[str, str], StageTrace] = {}
        self.failure = ""
        self.next_host = 0

    # --- lifecycle ---

    def _start(self) -> None:
        """Start the process (under the lock)."""
        request_end, service_end = socket.socketpair()
        request_end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        read_req, write_req = service_end.detach(), request_end.detach()
        read_out, write_out = os.pipe()
        with contextlib.suppress(OSError, AttributeError, ImportError):
            import fcntl

            fcntl.fcntl(read_out, fcntl.F_SETPIPE_SZ, 1 << 20)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "helix_conformance.replay.service",
                    "--fds",
                    f"{read_req},{write_out}",
                ],
                pass_fds=(read_req, write_out),
                stdin=subprocess.DEVNULL,
                env=env,
            )
        finally:
            os.close(read_req)
            os.close(write_out)
        self.to_service, self.from_service = write_req, read_out
        self.incarnation += 1
        self.hosts.clear()
        self.failure = ""
        incarnation = self.incarnation
        threading.Thread(
            target=self._read, args=(read_out, incarnation), name="helix-replay-service", daemon=True
        ).start()

    def close(self) -> None:
        with self.changed, self.write_lock:
            process, self.process = self.process, None
            with contextlib.suppress(OSError):
                os.close(self.to_service)
            self.to_service = -1
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(2)
            if process.poll() is None:
                process.kill()
                process.wait()

    def _alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            if self.process is not None:
                self.failure = self.failure or f"the replay service ended ({self.process.returncode})"
            self._start()

    def _write(self, message: tuple[Any, ...], fds: tuple[int, ...] = ()) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            with self.write_lock:
                _write_all(self.to_service, HEADER.pack(len(data)) + data, fds)
        except OSError as exc:
            raise ReplayServiceError(f"the replay service is gone: {exc}") from None

    def _read(self, fd: int, incarnation: int) -> None:
        buffer = bytearray()
        while True:
            try:
                data = os.read(fd, READ_BYTES)
            except OSError:
                data = b""
            if not data:
                with self.changed:
                    if self.incarnation == incarnation:
                        self.failure = self.failure or "the replay service ended"
                    self.changed.notify_all()
                with contextlib.suppress(OSError):
                    os.close(fd)
                return
            buffer += data
            messages, taken = _frames(buffer)
            del buffer[:taken]
            with self.changed:
                for message in messages:
                    if message[0] == "host":
                        self.hosts[message[1]] = HostAddress(
                            message[1], message[2], message[3], incarnation, message[4]
                        )
                    elif message[0] == "trace":
                        self.traces[(message[1], message[2])] = message[3]
                    elif message[0] == "error":
                        self.failure = f"the replay service failed: {message[1]}"
                self.changed.notify_all()

    # --- what the executors call ---

    def host(
        self,
        host_id: str | None = None,
        listeners: tuple[socket.socket, socket.socket, socket.socket] | None = None,
    ) -> HostAddress:
        """The host of ``host_id`` (a new host when None), started on this service (again if it restarted).
        ``listeners``: its HTTP and link listening sockets and its refusing one, opened where the adapter's
        process can reach them (a confined worker's network namespace: worker/keeper.py); kept here for a
        restarted service, closed with the host. None: the service listens on 127.0.0.1 itself."""
        with self.changed:
            self._alive()
            if host_id is None:
                self.next_host += 1
                host_id = f"h{self.next_host}"
            if listeners is not None:  # a new process to serve there: its address comes with the answer
                self._close_listeners(host_id)
                self.listeners[host_id] = listeners
                self.hosts.pop(host_id, None)
            known = self.hosts.get(host_id)
            if known is not None and known.incarnation == self.incarnation and listeners is None:
                return known
            incarnation = self.incarnation
            passed = self.listeners.get(host_id)
        if passed is None:
            self._write(("host", host_id))
        else:
            self._write(("host", host_id, 3), tuple(listener.fileno() for listener in passed))
        deadline = time.monotonic() + START_TIMEOUT_S
        with self.changed:
            while (found := self.hosts.get(host_id)) is None or found.incarnation != incarnation:
                if self.failure or time.monotonic() > deadline or self.incarnation != incarnation:
                    raise ReplayServiceError(self.failure or "the replay service did not answer")
                self.changed.wait(0.5)
            return found

    def stage(self, host: HostAddress, plan: StagePlan) -> None:
        if host.incarnation != self.incarnation:
            raise ReplayServiceError("the replay service restarted; the run's host is gone")
        self._write(("stage", host.id, plan))

    def collect(self, host: HostAddress, token: str, grace_s: float = COLLECT_GRACE_S) -> StageTrace:
        """The host's record of the run (ending it if the adapter's side has not)."""
        key = (host.id, token)
        with self.changed:
            arrived = key in self.traces
            if not arrived and host.incarnation != self.incarnation:
                raise ReplayServiceError("the replay service restarted during the run")
        if not arrived:
            self._write(("collect", host.id, token, grace_s))
        deadline = time.monotonic() + grace_s + ANSWER_TIMEOUT_S
        with self.changed:
            while key not in self.traces:
                if self.failure or host.incarnation != self.incarnation:
                    raise ReplayServiceError(self.failure or "the replay service restarted during the run")
                if time.monotonic() > deadline:
                    raise ReplayServiceError("the replay service did not send the run's record")
                self.changed.wait(0.5)
            return self.traces.pop(key)

    def close_host(self, host: HostAddress) -> None:
        with self.changed:
            current = host.incarnation == self.incarnation and self.process is not None
            self.hosts.pop(host.id, None)
            self._close_listeners(host.id)
        if current:
            with contextlib.suppress(ReplayServiceError):
                self._write(("close_host", host.id))

    def _close_listeners(self, host_id: str) -> None:
        for listener in self.listeners.pop(host_id, ()):
            with contextlib.suppress(OSError):
                listener.close()


def _frames(buffer: bytearray) -> tuple[list[Any], int]:
    """The whole frames at the start of ``buffer``, unpickled, and how many bytes they took (removed by the
    caller at once: removing each frame as it is read moved the rest of a large read every time)."""
    messages, at = [], 0
    with memoryview(buffer) as view:
        while len(buffer) - at >= HEADER.size:
            (size,) = HEADER.unpack_from(buffer, at)
            end = at + HEADER.size + size
            if len(buffer) < end:
                break
            messages.append(pickle.loads(view[at + HEADER.size : end]))
            at = end
    return messages, at


def _write_all(fd: int, data: bytes, fds: tuple[int, ...] = ()) -> None:
    """Write ``data`` on the service's socket, the passed sockets with its first bytes."""
    view = memoryview(data)
    if fds:
        with socket.socket(fileno=os.dup(fd)) as sock:
            view = view[socket.send_fds(sock, [view], list(fds)) :]
    while view:
        view = view[os.write(fd, view) :]


waits_for_others(ReplayService._read.__code__)  # its reader thread never wakes an adapter's loop (clock.py)

_SERVICE: ReplayService | None = None
_SERVICE_LOCK = threading.Lock()


def replay_service() -> ReplayService:
    """This process's replay service (started on first use, stopped at exit)."""
    global _SERVICE
    with _SERVICE_LOCK:
        if _SERVICE is None:
            _SERVICE = ReplayService()
            atexit.register(_SERVICE.close)
        return _SERVICE


if __name__ == "__main__":
    main(sys.argv)
