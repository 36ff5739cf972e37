"""The adapter's side of the replay link: counts the bytes on every connection to the host, and reports to the
host whenever the adapter's process is idle (replay/host.py says what the host does with a report).

Connections to the host's HTTP port are counted where Python sends and receives (``CountedSocket``, swapped in
when a socket connects there): whatever the client — httpx, aiohttp, requests, a sync client in a thread — its
reads and writes go through ``socket.socket`` methods. A socket the link cannot count (a native client) is one the
host serves in real time. The link itself is one blocking loopback connection, JSON lines, one request and its
answer at a time.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .trace import Trace


def _no_load() -> float:
    """A run with no loop yet (its begin), or none that measures load (--helix-real-time)."""
    return 0.0


ANSWER_TIMEOUT_S = 30.0
"""A host that does not answer a report within this long is taken as gone: the run goes on in real time."""


@dataclass(frozen=True)
class LinkAddress:
    """Where the run's host is (127.0.0.1), and the run's token."""

    http_port: int
    control_port: int
    token: str
    refusing_port: int = 0
    """The run's base URL is on this port, where nothing listens (a ``connect_error`` run); 0: none."""


class CountedSocket(socket.socket):
    """A socket connected to the host: every byte sent and received is counted (the host compares)."""

    __slots__ = ()

    def send(self, data: Any, *args: Any) -> int:
        sent = super().send(data, *args)
        _count(self, sent, 0)
        return sent

    def sendall(self, data: Any, *args: Any) -> None:
        super().sendall(data, *args)
        _count(self, memoryview(data).nbytes, 0)

    def sendmsg(self, buffers: Any, *args: Any) -> int:
        sent = super().sendmsg(buffers, *args)
        _count(self, sent, 0)
        return sent

    def recv(self, size: int, *args: Any) -> bytes:
        if on_activity is not None:
            on_activity()
        data = super().recv(size, *args)
        _count(self, 0, len(data))
        return data

    def recv_into(self, buffer: Any, *args: Any) -> int:
        if on_activity is not None:
            on_activity()
        got = super().recv_into(buffer, *args)
        _count(self, 0, got)
        return got

    def recvfrom(self, size: int, *args: Any) -> Any:
        data, address = super().recvfrom(size, *args)
        _count(self, 0, len(data))
        return data, address

    def recvfrom_into(self, buffer: Any, *args: Any) -> Any:
        got, address = super().recvfrom_into(buffer, *args)
        _count(self, 0, got)
        return got, address

    def close(self) -> None:
        _forget(self)
        super().close()

    def detach(self) -> int:
        _forget(self)
        return super().detach()


READ_FUNCTIONS = frozenset(
    f.__code__
    for f in (
        CountedSocket.recv,
        CountedSocket.recv_into,
        CountedSocket.recvfrom,
        CountedSocket.recvfrom_into,
    )
)
"""A thread whose innermost frame is one of these waits for the host's next bytes (replay/clock.py)."""


@dataclass
class _Counts:
    port: int | None
    fd: int
    written: int = 0
    read: int = 0
    closed: bool = False


_lock = threading.Lock()
_counts: weakref.WeakKeyDictionary[socket.socket, _Counts] = weakref.WeakKeyDictionary()
_http_port: int | None = None
_refusing_port = 0
_refused: list[int] = []
"""Connection attempts to ``_refusing_port`` not reported yet, each as the number of the run's events before it
(``rf`` in the next report places them among its marks)."""
_run_events: list[Any] = []
"""The events of the run the link reports on (``Trace.events``)."""
_patched = 0
_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex


def _count(sock: socket.socket, written: int, read: int) -> None:
    counts = _counts.get(sock)
    if counts is not None:
        counts.written += written
        counts.read += read
        if written and on_activity is not None:
            on_activity()


on_activity: Callable[[], None] | None = None
"""Called when a counted connection sent bytes or is about to wait for some, from whatever thread: a sync
client in a thread wakes the run's loop this way, so that the loop reports (replay/clock.py)."""


def _forget(sock: socket.socket) -> None:
    """Mark the socket closed, without the lock: a collection while this thread holds ``_lock`` may run a
    finalizer that closes a socket (urllib3's pool closes its connections so), and taking the lock again
    there deadlocked the run. Closed entries are dropped under the lock by ``connections``."""
    counts = _counts.get(sock)
    if counts is not None:
        counts.closed = True


def _to_host(sock: socket.socket, address: Any) -> bool:
    return (
        _http_port is not None
        and sock.family in (socket.AF_INET, socket.AF_INET6)
        and isinstance(address, tuple)
        and len(address) >= 2
        and address[1] == _http_port
        and str(address[0]) in ("127.0.0.1", "localhost", "::1", "::ffff:127.0.0.1")
    )


def _adopt(sock: socket.socket) -> None:
    """Count this socket from now on (it is connecting to the host)."""
    if type(sock) is socket.socket:
        with contextlib.suppress(TypeError):
            sock.__class__ = CountedSocket
    if isinstance(sock, CountedSocket):
        with _lock:
            _counts[sock] = _Counts(None, sock.fileno())


def _bound(sock: socket.socket) -> None:
    """Learn the socket's local port, once it has one: a socket adopted by a thread that has not called
    ``connect`` yet is unbound (port 0), and a 0 kept here named the connection wrongly in every report after
    (the host then served it unlinked, in real time: a false ERR-04 timeout under load)."""
    counts = _counts.get(sock)
    if counts is not None and counts.port is None:
        with contextlib.suppress(OSError):
            counts.port = int(sock.getsockname()[1]) or None


def _note_refused(sock: socket.socket, address: Any) -> None:
    """An attempt to reach the run's refusing port: counted whatever comes of it (the kernel refuses it)."""
    if (
        _refusing_port
        and sock.family in (socket.AF_INET, socket.AF_INET6)
        and isinstance(address, tuple)
        and len(address) >= 2
        and address[1] == _refusing_port
        and str(address[0]) in ("127.0.0.1", "localhost", "::1", "::ffff:127.0.0.1")
    ):
        with _lock:
            _refused.append(len(_run_events))
        if on_activity is not None:
            on_activity()


def refused_attempts(reported: int, upto: int) -> list[int]:
    """The attempts to the refusing port made after the run's first ``upto`` events at the latest, each as
    its place among the events from ``reported`` on (``rf``); later ones wait for the next report."""
    with _lock:
        taken = [at for at in _refused if at <= upto]
        _refused[:] = [at for at in _refused if at > upto]
    return [max(0, at - reported) for at in taken]


def _connect(self: socket.socket, address: Any) -> None:
    _note_refused(self, address)
    if _to_host(self, address):
        _adopt(self)
        try:
            _original_connect(self, address)
        finally:
            _bound(self)
        return
    _original_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _note_refused(self, address)
    if _to_host(self, address):
        _adopt(self)
        try:
            return _original_connect_ex(self, address)
        finally:
            _bound(self)
    return _original_connect_ex(self, address)


@contextlib.contextmanager
def counting(http_port: int, refusing_port: int = 0) -> Iterator[None]:
    """Count every connection made to the host's ``http_port`` while the block runs (sockets connected to it
    stay counted after), and every attempt to reach ``refusing_port``."""
    global _http_port, _patched, _refusing_port
    with _lock:
        _http_port = http_port
        _refusing_port = refusing_port
        _refused.clear()
        _patched += 1
        socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        with _lock:
            _patched -= 1
            if _patched == 0:
                socket.socket.connect = _original_connect  # type: ignore[method-assign]
                socket.socket.connect_ex = _original_connect_ex  # type: ignore[method-assign]


def connections() -> list[list[Any]]:
    """Every counted connection still open: [local port (None while unknown), bytes written, bytes read]."""
    with _lock:
        items = list(_counts.items())
    out = []
    gone = []
    for sock, counts in items:
        if counts.closed or sock.fileno() < 0:
            gone.append(sock)
            continue
        if counts.port is None:
            _bound(sock)
        out.append([counts.port, counts.written, counts.read])
    if gone:
        with _lock:
            for sock in gone:
                _counts.pop(sock, None)
    return out


def counted_fds() -> set[int]:
    """File descriptors of the counted connections (a loop's selector may hold them: the host accounts for them)."""
    with _lock:
        return {c.fd for c in _counts.values() if not c.closed}


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
"""One encoder for every message (``json.dumps`` with separators makes one per call)."""


@dataclass
class Answer:
    kind: str
    """``begun``, ``acted``, ``quiet`` (a jump of ``d`` is offered), ``advanced`` (the clock jumped ``d``),
    ``wait`` (nothing will happen but in real time), ``busy`` (bytes in flight: look again soon), ``over``
    (the run is not the host's current one), ``unknown``, ``lost`` (the link is gone)."""
    d: float = 0.0
    serial: Any = None
    do: list[str] = field(default_factory=list)
    """What the host asks of the adapter's side now: ``abort`` (the abort plan), ``cancel`` (NT-03)."""
    acted: bool = False
    credit: bool = False
    """The jump was credited to a stall the host holds (replay/clock.py ``credited_s``)."""


class Link:
    """One adapter process's connection to its host (one per process; each run is named by its token)."""

    def __init__(self, address: LinkAddress) -> None:
        self.address = address
        self.sock = socket.create_connection(("127.0.0.1", address.control_port), timeout=ANSWER_TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = bytearray()
        self.lock = threading.Lock()
        self.serial = 0
        self.broken = False
        self.token = ""
        self.trace: Trace | None = None
        self.reported = 0
        self.load: Callable[[], float] = _no_load
        """Seconds the run's clock left off for the machine's load (the loop's ``starved_s``), sent with every
        report as ``st``: the host's clock leaves them off too."""

    def close(self) -> None:
        self.broken = True
        with contextlib.suppress(OSError):
            self.sock.close()

    # --- one run ---

    def begin(self, token: str, trace: Trace) -> Answer:
        """Name the run the next reports are about, and wait until the host has it: ``begun``, else ``over``
        (its stage never came) or ``lost``. The adapter starts only after, so its clock does not run while the
        host waits for the run's stage."""
        global _run_events
        self.token, self.trace, self.reported, self.load = token, trace, 0, _no_load
        _run_events = trace.events
        return self._ask({"t": "begin", "run": token})

    def idle(
        self,
        timer: float | None,
        *,
        jump: bool,
        beyond: bool = False,
        sleeping: bool = False,
        busy: bool = False,
        conns: list[list[Any]] | None = None,
    ) -> Answer:
        """The adapter's side is idle: its next timer is ``timer`` s away (None: none); ``beyond``: that
        timer is at or past the step's limit; ``jump``: the clock may jump (no job or socket of its own at
        work); ``busy``: a thread of the adapter's is at work, so only a stall's credit may be offered.
        ``conns``: the byte counts (``connections()``) taken before ``busy`` was (now when None)."""
        return self._ask(
            {
                "t": "idle",
                "run": self.token,
                **self._events(),
                "conns": connections() if conns is None else conns,
                "timer": timer,
                "beyond": beyond,
                "jump": jump,
                "sleeping": sleeping,
                "busy": busy,
            }
        )

    def jump(self, offer: Answer, d: float, *, sleeping: bool = False) -> Answer:
        """Take ``d`` s of the jump the host offered (the clock advances only if the answer is ``advanced``)."""
        return self._ask(
            {
                "t": "jump",
                "run": self.token,
                "d": d,
                "s": offer.serial,
                **self._events(),
                "conns": connections(),
                "sleeping": sleeping,
            }
        )

    def end(self) -> None:
        """The run is over on the adapter's side: its last events, then no more reports."""
        with self.lock:
            if not self.broken:
                try:
                    self._write({"t": "end", "run": self.token, **self._events()})
                except OSError:
                    self.broken = True
        self.token, self.trace = "", None

    # --- the wire ---

    def _events(self) -> dict[str, Any]:
        """The run's events since the last report, as marks (``ev``), and the refused connection attempts
        among them (``rf``: how many of those marks came before each)."""
        trace = self.trace
        if trace is None:
            return {"ev": [], "rf": []}
        events = trace.events[self.reported :]
        reported, self.reported = self.reported, self.reported + len(events)
        return {
            "ev": [[e.kind, e.name] for e in events],
            "rf": refused_attempts(reported, self.reported),
        }

    def _ask(self, message: dict[str, Any]) -> Answer:
        with self.lock:
            if self.broken:
                return Answer("lost")
            self.serial += 1
            message["n"], message["st"] = self.serial, self.load()
            try:
                self._write(message)
                while True:
                    answer = self._read()
                    if answer.get("n") == self.serial:
                        break
            except (OSError, ValueError):
                self.broken = True
                return Answer("lost")
        d = answer.get("d")
        do = answer.get("do")
        return Answer(
            str(answer.get("t")),
            float(d) if isinstance(d, (int, float)) else 0.0,
            answer.get("s"),
            [str(x) for x in do] if isinstance(do, list) else [],
            bool(answer.get("acted")),
            bool(answer.get("credit")),
        )

    def _write(self, message: dict[str, Any]) -> None:
        self.sock.sendall(_ENCODE(message).encode() + b"\n")

    def _read(self) -> dict[str, Any]:
        while (end := self.buffer.find(b"\n")) < 0:
            data = self.sock.recv(1 << 16)
            if not data:
                raise OSError("the host closed the link")
            self.buffer += data
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        message = json.loads(line.decode())  # a str: no encoding to detect (ValueError if not UTF-8)
        if not isinstance(message, dict):
            raise ValueError("not an object")
        return message


_links: dict[tuple[int, int], Link] = {}
_links_lock = threading.Lock()


def link_to(address: LinkAddress) -> Link:
    """This process's link to the host at ``address`` (made once, and again if it broke)."""
    key = (address.http_port, address.control_port)
    with _links_lock:
        link = _links.get(key)
        if link is None or link.broken:
            link = _links[key] = Link(address)
        return link
