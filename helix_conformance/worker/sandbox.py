"""The worker's confinement, set up before any adapter code runs (docs/worker-protocol.md, "Confinement").

``python -m helix_conformance.worker`` starts as the **keeper**: a process that never runs adapter code. It
forks the worker and stays behind to end everything the adapter started when the worker ends, to tell the
parent how it ended (exit status, peak memory) and, in a network namespace, to open listening sockets there
for the parent. On Linux, where unprivileged user namespaces work, the worker gets namespaces of its own:

- **network**: loopback only, so no connection leaves the machine whatever code makes it (ctypes, a native
  HTTP client); the kernel counts the attempts (``keeper.py`` reads the counters for HARN-01);
- **PID**: the worker's processes cannot see or signal pytest, and when the namespace's first process (a
  small init kept by the keeper) ends, the kernel kills every process in it: nothing outlives the worker;
- **mount**: a ``/proc`` of that PID namespace only (pytest's memory is not reachable through ``/proc``);
- **user**: the above without privileges; the worker then drops every capability it had in it.

Elsewhere the worker leads a process group of its own that the keeper kills when the worker ends, and on
Linux the keeper is a child subreaper, so a process that escapes the group is still its descendant and is
killed with it. The audit hook (``guard.py``) stays on in every case. Only the standard library: this runs
before anything else is imported.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 1 << 18
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
CAPABILITY_VERSION_3 = 0x20080522

NAMESPACES = "namespaces"
SUBREAPER = "subreaper"
PROCESS_GROUP = "process group"
MEMORY_SHARE = 0.5
"""The worker may use this share of the machine's memory (RLIMIT_DATA): a hog meets MemoryError long before
the machine's OOM killer picks a process, pytest perhaps."""


class SetupFailed(Exception):
    """A step of the namespace setup failed: the keeper falls back to a process group."""


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    """prctl(2); OSError where it fails or does not exist (not Linux)."""
    prctl = getattr(_libc(), "prctl", None)
    if prctl is None:
        raise OSError(errno.ENOSYS, "prctl does not exist here")
    if prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise SetupFailed(f"{what}: {os.strerror(errno)}")


def memory_limit() -> int | None:
    """Bytes the worker may use: MEMORY_SHARE of physical memory, where the system says how much there is."""
    with contextlib.suppress(ValueError, OSError, AttributeError):
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * MEMORY_SHARE)
    return None


# --- inside the namespaces -------------------------------------------------------------------------------


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def _enter_namespaces(uid: int, gid: int) -> None:
    """unshare user, network, PID and mount namespaces; map our ids; bring loopback up. Irreversible."""
    libc = _libc()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWNS), "unshare")
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    except OSError as exc:
        raise SetupFailed(f"mapping user ids: {exc}") from None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        import fcntl

        try:
            request = struct.pack("16sH14x", b"lo", 0)
            flags = struct.unpack("16sH14x", fcntl.ioctl(probe.fileno(), SIOCGIFFLAGS, request))[1]
            fcntl.ioctl(probe.fileno(), SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))
        except OSError as exc:
            raise SetupFailed(f"bringing loopback up: {exc}") from None


def _mount_proc() -> None:
    """In the new PID namespace's first process: a /proc showing that namespace only."""
    libc = _libc()
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")
    _check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mounting /proc")


def _drop_capabilities() -> None:
    """The worker keeps no capability in its user namespace (it could unmount its /proc with one)."""
    libc = _libc()
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
            last = int(handle.read())
        for cap in range(last + 1):
            libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = struct.pack("Ii", CAPABILITY_VERSION_3, 0)
    data = ctypes.create_string_buffer(24)  # two {effective, permitted, inheritable} sets, all empty
    _check(libc.capset(ctypes.c_char_p(header), data), "dropping capabilities")
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def probe_namespaces() -> str | None:
    """Try the whole namespace setup in a throwaway child: None when it works here, else why not. The keeper
    only enters namespaces for real once a probe succeeded: a half-done setup cannot be undone."""
    if not sys.platform.startswith("linux"):
        return "not Linux"
    if not os.path.exists("/proc/self/ns/user"):
        return "the kernel has no user namespaces"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - a child process
        os.close(read)
        try:
            _enter_namespaces(os.getuid(), os.getgid())
            init = os.fork()
            if init == 0:
                try:
                    _mount_proc()
                    os.write(write, b"ok")
                except BaseException as exc:
                    os.write(write, str(exc).encode("utf-8", "replace")[:500])
                os._exit(0)
            os.waitpid(init, 0)
        except BaseException as exc:
            os.write(write, str(exc).encode("utf-8", "replace")[:500])
        os._exit(0)
    os.close(write)
    answer = b""
    while chunk := os.read(read, 4096):
        answer += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return None if answer == b"ok" else (answer.decode("utf-8", "replace") or "the probe ended silently")


# --- the keeper ------------------------------------------------------------------------------------------


class Keeper:
    """The process the parent started: keeps the worker's confinement and outlives the worker by a moment,
    to end what the adapter left and say how the worker ended. It runs no adapter code."""

    def __init__(
        self,
        control: socket.socket,
        channel_fds: tuple[int, ...],
        namespaces: bool = True,
        probed: bool = False,
    ) -> None:
        self.control = control
        self.channel_fds = channel_fds
        self.namespaces = namespaces
        self.probed = probed
        """The parent confined a worker already: the probe is skipped."""
        self.tier = PROCESS_GROUP
        self.why = ""
        self.child = 0
        """The keeper's own child: the namespace's init, or the worker itself."""
        self.worker_pid = 0
        self.status_read = -1
        self.outcome: dict[str, Any] | None = None

    def send(self, message: dict[str, Any], fds: list[int] | None = None) -> None:
        data = json.dumps(message).encode() + b"\n"
        with contextlib.suppress(OSError):  # the parent went away: nothing to tell
            if fds:
                socket.send_fds(self.control, [data], fds)
            else:
                self.control.sendall(data)

    def start(self) -> None:
        """Fork the worker (via an init in namespaces); returns in the worker only."""
        with contextlib.suppress(OSError):
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        why = "turned off by the parent (--no-namespaces)" if not self.namespaces else None
        if self.namespaces and not self.probed:
            why = probe_namespaces()
        uid, gid = os.getuid(), os.getgid()
        if why is None:
            try:
                _enter_namespaces(uid, gid)
                self.tier = NAMESPACES
            except SetupFailed as exc:  # the probe said it would work: report it, run without
                why = str(exc)
        if self.tier != NAMESPACES:
            self.why = why or ""
            with contextlib.suppress(OSError, AttributeError):
                _prctl(PR_SET_CHILD_SUBREAPER, 1)
                self.tier = SUBREAPER
        status_read, status_write = os.pipe()
        wake_read, wake_write = os.pipe()  # SIGCHLD wakes the keeper's select (set before the child exists)
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.child = os.fork()
        if self.child == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in (status_read, wake_read, wake_write):
                os.close(fd)
            self.control.close()
            if self.tier == NAMESPACES:
                _init(status_write, self.channel_fds)  # returns in the worker only
            else:
                os.close(status_write)
                os.setsid()  # a group of its own: the keeper kills the group when the worker ends
                _become_worker()
            return
        os.close(status_write)
        self.status_read = status_read
        self.worker_pid = self.child if self.tier != NAMESPACES else 0
        for fd in self.channel_fds:  # only the worker holds the channels: its end is their end
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            _prctl(PR_SET_DUMPABLE, 0)  # the adapter cannot read or write this process through /proc
        self.send({"type": "keeper", "tier": self.tier, "why": self.why, "worker_pid": self.worker_pid})
        self.serve(wake_read)

    def serve(self, wake_read: int) -> None:
        """Answer the parent until the worker has ended, then end what is left and leave with its status."""
        watched: list[Any] = [self.control, wake_read, self.status_read]
        while True:
            ready, _, _ = select.select(watched, [], [], 1.0)
            if self.control in ready and not self._request():
                watched.remove(self.control)
            if self.status_read in ready and not self._read_status():
                watched.remove(self.status_read)
            if wake_read in ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_read, 512)
            if self._reap():
                break
        self._finish()

    def _read_status(self) -> bool:
        """The worker's wait status and peak memory, as the namespace's init wrote them; False at the pipe's
        end (the init is gone)."""
        try:
            data = os.read(self.status_read, 64)
        except OSError:
            return False
        if data and self.outcome is None:
            with contextlib.suppress(struct.error):
                status, peak = struct.unpack("qq", data[:16])
                self.outcome = {"status": status, "max_rss_kb": peak}
        return bool(data)

    def _request(self) -> bool:
        try:
            line = self.control.recv(4096)
        except OSError:
            return False
        if not line:
            return False
        for text in line.decode("utf-8", "replace").splitlines():
            with contextlib.suppress(ValueError, AttributeError):
                request = json.loads(text)
                if request.get("type") == "listen":
                    self._listen(request.get("listening", True) is not False)
                elif request.get("type") == "kill":
                    self._kill_everything()
        return True

    def _listen(self, listening: bool = True) -> None:
        """A listening TCP socket on loopback, made here: in namespaces it is the worker's loopback, which the
        parent cannot reach otherwise. The parent gets the socket itself; no copy stays here. Not
        ``listening``: bound only, so that a connection to its port is refused (a ``connect_error`` run)."""
        try:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            if listening:
                listener.listen(64)
        except OSError as exc:
            self.send({"type": "listener", "error": str(exc)})
            return
        with listener:
            self.send({"type": "listener", "port": listener.getsockname()[1]}, [listener.fileno()])

    def _reap(self) -> bool:
        """Reap children (orphans adopted as subreaper among them); True once the keeper's child ended."""
        done = False
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                return done
            if pid == self.child:
                done = True
                if self.tier == NAMESPACES and self.outcome is None:  # the init wrote it before it ended
                    self._read_status()
                if self.outcome is None:  # no init in between: the worker's own status
                    self.outcome = {"status": status, "max_rss_kb": int(usage.ru_maxrss)}

    def _kill_everything(self) -> None:
        """End the worker and whatever it started."""
        if self.tier == NAMESPACES:
            with contextlib.suppress(OSError):
                os.kill(self.child, signal.SIGKILL)  # the init: the kernel ends the namespace with it
            return
        with contextlib.suppress(OSError):
            os.killpg(self.child, signal.SIGKILL)
        _kill_descendants()

    def _finish(self) -> None:
        if self.tier != NAMESPACES:
            self._kill_everything()  # what the worker left behind (processes it started)
        with contextlib.suppress(ChildProcessError):
            while os.wait4(-1, os.WNOHANG)[0]:
                pass
        outcome = self.outcome or {"status": 0, "max_rss_kb": 0}
        self.send({"type": "ended", **outcome})
        _leave_like(int(outcome["status"]))


def _kill_descendants() -> None:
    """As a child subreaper, every process the worker started is a descendant: kill them all (Linux)."""
    for _ in range(50):
        children = _children(os.getpid())
        if not children:
            return
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            for _pid in children:
                os.waitpid(-1, 0)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found.extend(int(p) for p in handle.read().split())
    return found


def _leave_like(status: int) -> None:
    """Exit as the worker did: the same exit code, or death by the same signal (without a core dump)."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.set_wakeup_fd(-1)
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
            os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _init(status_write: int, channel_fds: tuple[int, ...]) -> None:
    """The first process of the new PID namespace: mounts its /proc, forks the worker, reaps orphans, and
    tells the keeper how the worker ended. When it exits, the kernel kills every process left in there."""
    with contextlib.suppress(OSError):
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    with contextlib.suppress(SetupFailed):  # the probe mounted one: failing now is not worth a dead worker
        _mount_proc()
    os.setsid()  # the worker's process group is this namespace's: kill(0, ...) reaches no one outside
    worker = os.fork()
    if worker == 0:
        os.close(status_write)
        _become_worker()
        return
    for fd in channel_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    with contextlib.suppress(OSError):
        _prctl(PR_SET_DUMPABLE, 0)
    with contextlib.suppress(OSError, SetupFailed):
        _drop_capabilities()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    while True:
        try:
            pid, status, usage = os.wait4(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if pid == worker:
            with contextlib.suppress(OSError):
                os.write(status_write, struct.pack("qq", status, int(usage.ru_maxrss)))
            os._exit(0)


def _become_worker() -> None:
    """The worker, before the adapter is imported: dies with its keeper, holds no privilege, has a memory
    limit."""
    with contextlib.suppress(OSError):
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, SetupFailed):
            _drop_capabilities()
    limit = memory_limit()
    if limit is not None:
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def confine(argv: list[str]) -> None:
    """Called first by ``python -m helix_conformance.worker``: with ``--control FD`` this process becomes the
    keeper and the call returns only in the confined worker; without it, nothing happens."""
    if "--control" not in argv:
        return
    control = socket.socket(fileno=int(argv[argv.index("--control") + 1]))
    fds = argv[argv.index("--fds") + 1].split(",") if "--fds" in argv else []
    channel = tuple(int(fd) for fd in fds if fd.isdigit())
    Keeper(
        control, channel, namespaces="--no-namespaces" not in argv, probed="--namespaces-work" in argv
    ).start()
