"""The worker's guard: an audit hook (PEP 578) refuses the ways out of the replay that Python code takes.

Audit events fire inside CPython's C code, so ``connect_ex``, ``_socket`` used directly, ``super().connect``,
UDP and TCP Fast Open ``sendto`` and name lookups are all seen, whatever Python code they come through.
Connections and lookups are judged on the address itself: loopback addresses and ``localhost`` pass, every
other host (``127.example.com`` included) is refused; once the worker knows its replay host, a loopback
connection passes only to that host's ports (``allow_only``). Starting or forking a process is refused outright
(a child process would escape the hook), and so is signalling another process (pytest among them). ctypes
lookups of the C functions that would do the same behind the hook's back (``connect``, ``fork``, ``execve``,
``syscall``…) are refused by name. Native code that calls them directly is not seen here: the sandbox
(worker/sandbox.py) is what contains it, where the system allows. Every refusal is kept for HARN-01.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from typing import Any

LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "localhost.localdomain"})
PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.startfile",
        "pty.spawn",
        "os.fork",
        "os.forkpty",
    }
)
SIGNAL_EVENTS = frozenset({"os.kill", "os.killpg"})
NATIVE_ESCAPES = frozenset(
    {
        "connect",
        "sendto",
        "sendmsg",
        "sendmmsg",
        "getaddrinfo",
        "gethostbyname",
        "fork",
        "vfork",
        "clone",
        "clone3",
        "__clone",
        "execve",
        "execv",
        "execvp",
        "execvpe",
        "execl",
        "execlp",
        "execle",
        "fexecve",
        "posix_spawn",
        "posix_spawnp",
        "system",
        "popen",
        "syscall",
        "ptrace",
        "kill",
        "killpg",
        "process_vm_writev",
        "unshare",
        "setns",
    }
)
"""C functions whose ctypes lookup is refused: each reaches the network, starts a process or touches
another process behind the audit hook's back."""
_INET = (socket.AF_INET, socket.AF_INET6)

_refused: list[str] = []
_lock = threading.Lock()
_installed = False
_loopback_ports: frozenset[int] | None = None
"""The only loopback ports a connection may reach once set (the replay host's: ``allow_only``)."""


class NetworkRefused(ConnectionRefusedError):
    """Raised where the adapter tried to leave the replay."""


class ProcessRefused(PermissionError):
    """Raised where the adapter tried to start a process."""


def is_loopback_host(host: Any) -> bool:
    """True for a loopback IP literal or the name localhost; a name is never resolved to decide."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip().lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def allow_only(ports: frozenset[int]) -> None:
    """From now on, loopback connections reach only these ports (the run's replay host, its HTTP and its
    link): the adapter's own loopback servers are refused like the network."""
    global _loopback_ports
    _loopback_ports = ports


def drain() -> list[str]:
    """The refusals since the last call (the worker attaches them to the run that made them)."""
    with _lock:
        out = list(_refused)
        _refused.clear()
    return out


def _refuse(what: str, error: type[OSError]) -> None:
    with _lock:
        _refused.append(what)
    if error is ProcessRefused:
        raise error(
            f"helix-conformance: {what} refused; an adapter under test may not start, fork or signal processes, "
            "nor look up the C functions that would (HARN-01)"
        )
    raise error(
        f"helix-conformance: {what} refused; during a scenario the adapter reaches only the replay host at "
        "AdapterContext.base_url (HARN-01)"
    )


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event.startswith("socket."):
        _judge_socket(event, args)
    elif event in PROCESS_EVENTS:
        if event in ("os.fork", "os.forkpty"):
            _refuse(f"forking the process ({event})", ProcessRefused)
        shown = " ".join(
            str(a) for a in (args[1] if len(args) > 1 and isinstance(args[1], (list, tuple)) else args[:1])
        )
        _refuse(f"starting a process ({shown[:200]})", ProcessRefused)
    elif event in SIGNAL_EVENTS:
        _judge_signal(event, args)
    elif event.startswith("ctypes.dlsym"):
        name = args[1] if len(args) > 1 else None
        if isinstance(name, bytes):
            name = name.decode("ascii", "replace")
        if isinstance(name, str) and name in NATIVE_ESCAPES:
            _refuse(f"a ctypes lookup of the C function {name}()", ProcessRefused)


def _judge_signal(event: str, args: tuple[Any, ...]) -> None:
    """Signalling itself is the adapter's business; any other process (pytest, its keeper) is not."""
    import os

    target, signum = (*args, None, None)[:2]
    own = target in (os.getpid(), 0) if event == "os.kill" else target == os.getpgrp()
    if not own:
        _refuse(f"sending signal {signum} to process {target} ({event})", ProcessRefused)


def _judge_socket(event: str, args: tuple[Any, ...]) -> None:
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        sock, address = args[0], args[1]
        if address is None or getattr(sock, "family", None) not in _INET:
            return  # AF_UNIX paths, connected UDP sends without an address
        host = address[0] if isinstance(address, tuple) and address else address
        port = address[1] if isinstance(address, tuple) and len(address) > 1 else None
        allowed = _loopback_ports
        if not is_loopback_host(host) or (
            allowed is not None and event == "socket.connect" and port not in allowed
        ):
            verb = {"socket.connect": "connect", "socket.sendto": "sendto", "socket.sendmsg": "sendmsg"}[
                event
            ]
            _refuse(f"socket {verb} to {address!r}", NetworkRefused)
    elif event == "socket.getaddrinfo":
        host = args[0]
        if host is not None and not is_loopback_host(host):
            _refuse(f"DNS lookup of {host!r}", NetworkRefused)
    elif (
        event in ("socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr")
        and args
        and not is_loopback_host(args[0])
    ):
        _refuse(f"DNS lookup of {args[0]!r}", NetworkRefused)


def install() -> None:
    """Arm the guard for the rest of the process (an audit hook cannot be removed: by design)."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
