"""The replay host: serves one adapter process's runs over real HTTP on loopback, from the judging side.

One host per adapter process (a Python worker, a Node driver, or pytest's own process under
``--helix-in-process``), inside the replay service (replay/service.py), whatever the adapter's HTTP client. It
owns what the provider side of a run is: which response answers which request (``match``), the delivery plan
(chunks, faults, the abort and cancel plans) and the trace of what was delivered and when, on a clock of its
own. The adapter's process never holds the plan; it gets bytes.

**Lockstep.** The adapter's side keeps a *link* to the host (a second loopback connection, replay/link.py and
the Node driver's ``replay.js``). When the adapter's process has nothing left to do but wait — every byte the
host sent has been read, its event loop would block — the link reports ``idle`` with the events of the
adapter's side since its last report (as marks), the bytes it wrote and read on each connection, and its next
timer. The host acts only then: it records the requests whose bytes the report accounts for, then sends the
next chunk of each response in progress (one event per read, with the adapter's reaction to the previous
chunk already in the trace), fires the abort or cancel plan, or ends a body. With nothing to do, it offers a
jump of the run's clock to the nearest timer (the adapter's or its own: a slow trickle after an abort, a
stall's expiry mark), never to the run's limit; bytes still in flight either way (a retry on its way, a chunk
not read yet) make the answer ``busy`` instead, so a jump can never outrun a request.

A connection the link does not account for (a client the adapter's side cannot count, a test's own client) is
served in real time, as before the link: chunks paced 1 ms apart, no jumps.
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from .delivery import cut_at_events, event_boundaries
from .http11 import LAST_CHUNK, BadRequest, Request, chunk, expects_continue, read_request, response_head
from .stage import (
    ADAPTER_EVENT_KINDS,
    SLOW_AFTER_ABORT_S,
    STALL_EXPIRED,
    STALL_EXPIRY_SHARE,
    AdapterMark,
    StagePlan,
    StageTrace,
)
from .trace import SentRequest, TraceEvent

LIBRARY = "http"
"""``SentRequest.library`` of every request: it reached the host over HTTP, whatever the client."""
PACE_S = 0.001
"""Between two event chunks on a connection the link does not account for: the client reads them apart."""
REDIRECTED_FROM = "x-helix-redirected-from"
"""The URL an httpx request was built for before the seam sent it here (replay/transport.py): traced as the
request's URL, and left out of its headers; matching reads only the path."""
RUN_PREFIX = "/_helix/"
"""A run's base URL path starts with ``/_helix/<token>``: a late request of an earlier run is told apart."""
READ_SIZE = 1 << 16
MAX_LINK_LINE = 4 << 20
BEGIN_WAIT_S = 10.0
"""How long a ``begin`` waits for its stage (the parent sends the stage before the run)."""
LIMIT_EPSILON_S = 1e-6
"""A jump to the run's limit shorter than this is none (the clock is there already)."""

_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


class Reactor(Protocol):
    """What the host needs of the service's event loop."""

    def watch(self, sock: socket.socket, on_readable: Callable[[], None]) -> None: ...

    def unwatch(self, sock: socket.socket) -> None: ...

    def finished(self, host_id: str, token: str, trace: StageTrace) -> None: ...


@dataclass(eq=False)
class Response:
    """One response being delivered on a connection."""

    index: int
    chunks: list[bytes]
    status: int
    headers: dict[str, str]
    fault_kind: str | None
    head_sent: bool = False
    next_chunk: int = 0
    phase: str = "body"
    """``body`` (chunks to send), ``held`` (silent until the client leaves), ``done``."""
    slow: bool = False
    """The abort plan fired: each further chunk waits SLOW_AFTER_ABORT_S on the run's clock."""
    slow_ready: bool = False


@dataclass(eq=False)
class HttpConn:
    sock: socket.socket
    port: int
    inbuf: bytearray = field(default_factory=bytearray)
    outbuf: bytearray = field(default_factory=bytearray)
    received: int = 0
    sent: int = 0
    eof: bool = False
    closed: bool = False
    linked: bool | None = None
    """Whether the link accounts for this connection (None: not known yet)."""
    continued: bool = False
    requests: deque[tuple[Request, int]] = field(default_factory=deque)
    """Parsed requests not recorded yet, with the received-byte offset where each ends."""
    response: Response | None = None
    stage: str = ""
    """The token of the run whose response this connection carries."""


@dataclass(eq=False)
class LinkConn:
    """The adapter process's link: JSON lines both ways."""

    sock: socket.socket
    inbuf: bytearray = field(default_factory=bytearray)
    waiting: bool = False
    """Its last answer was ``wait``: the adapter's side waits in real time, so the host acts when its own
    timer fires instead of at the next report."""
    offered: tuple[float, bool] | None = None
    """The jump offered by the last ``quiet`` answer, until confirmed or overtaken."""
    held: list[dict[str, Any]] | None = None
    """Messages after a ``begin`` whose stage has not arrived yet: handled once it has (the link does not
    wait for the begin to be taken)."""
    serial: int = 0
    """Changes whenever the host did something: a ``jump`` confirms an offer only if nothing changed."""


@dataclass(eq=False)
class ActiveStage:
    plan: StagePlan
    started: float
    record: StageTrace = field(default_factory=StageTrace)
    used: list[bool] = field(default_factory=list)
    skipped: float = 0.0
    credited: float = 0.0
    """Of ``skipped``, the jumps to the adapter's own timer past the run's limit while a stall was held."""
    aborted: bool = False
    cancel_sent: bool = False
    chunks_sent: int = 0
    timers: list[tuple[float, str, HttpConn]] = field(default_factory=list)
    """(due on the run's clock, what, connection): ``slow`` (the next trickled chunk), ``expire`` (a stall's
    expiry mark), ``pace`` (the next chunk of an unaccounted connection)."""
    link: LinkConn | None = None
    instructions: list[str] = field(default_factory=list)
    """``abort``/``cancel`` for the adapter's side, sent with the next answer."""

    def now(self) -> float:
        return time.monotonic() - self.started + self.skipped

    def stalled(self, conns: dict[int, HttpConn]) -> bool:
        """A response of this run is held silent (a stall, a read timeout, a connection held open)."""
        return any(
            c.stage == self.plan.token and c.response is not None and c.response.phase == "held"
            for c in conns.values()
        )

    def add(self, kind: Any, **fields: Any) -> None:
        events = self.record.events
        events.append(TraceEvent(len(events), self.now(), kind, **fields))


class Host:
    """Serves the runs of one adapter process (see the module's doc)."""

    def __init__(
        self,
        reactor: Reactor,
        host_id: str,
        listeners: tuple[socket.socket, socket.socket] | None = None,
    ) -> None:
        """``listeners``: listening sockets for HTTP and the link, opened where the adapter's process can reach
        them (a confined worker's own loopback, replay/service.py); None: on this machine's 127.0.0.1."""
        self.reactor = reactor
        self.id = host_id
        if listeners is None:
            listeners = (socket.create_server(("127.0.0.1", 0)), socket.create_server(("127.0.0.1", 0)))
        self.http, self.control = listeners
        for listener in (self.http, self.control):
            listener.setblocking(False)
        self.http_port = int(self.http.getsockname()[1])
        self.control_port = int(self.control.getsockname()[1])
        self.staged: dict[str, StagePlan] = {}
        self.active: ActiveStage | None = None
        self.ended: set[str] = set()
        self.conns: dict[int, HttpConn] = {}
        self.links: list[LinkConn] = []
        self.begin_waits: list[tuple[float, LinkConn, dict[str, Any]]] = []
        self.collect_waits: dict[str, float] = {}
        self.gone: set[int] = set()
        """Ports of connections the host has closed: a report naming one is not waiting for anything."""
        reactor.watch(self.http, self._accept_http)
        reactor.watch(self.control, self._accept_link)

    # --- the parent's side ------------------------------------------------------------------------------

    def stage(self, plan: StagePlan) -> None:
        self.staged[plan.token] = plan
        for wait in list(self.begin_waits):
            if wait[2].get("run") == plan.token:
                self.begin_waits.remove(wait)
                self._begin(wait[1], wait[2])

    def collect(self, token: str, grace_s: float) -> None:
        """End the run now if it never began, else once the adapter's side ends it or ``grace_s`` passed."""
        if token in self.staged:
            plan = self.staged.pop(token)
            self.reactor.finished(
                self.id, token, StageTrace(unused=_required(plan, [False] * len(plan.interactions)))
            )
        elif self.active is not None and self.active.plan.token == token:
            self.collect_waits[token] = time.monotonic() + grace_s

    def close(self) -> None:
        for sock in [
            self.http,
            self.control,
            *(c.sock for c in self.conns.values()),
            *(k.sock for k in self.links),
        ]:
            self.reactor.unwatch(sock)
            with contextlib.suppress(OSError):
                sock.close()
        self.conns.clear()
        self.links.clear()

    # --- time --------------------------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """The real monotonic time of the host's next timer, if any."""
        now = time.monotonic()
        deadlines = [w[0] for w in self.begin_waits] + list(self.collect_waits.values())
        stage = self.active
        if stage is not None and stage.timers:
            due = min(t[0] for t in stage.timers)
            deadlines.append(now + max(0.0, due - stage.now()))
        return min(deadlines, default=None)

    def fire_due(self) -> None:
        now = time.monotonic()
        for wait in [w for w in self.begin_waits if w[0] <= now]:
            self.begin_waits.remove(wait)
            self._release(wait[1])
        for token, deadline in list(self.collect_waits.items()):
            if deadline <= now:
                self._end(token, by_adapter=False)
        stage = self.active
        if stage is None or not self._fire_timers(stage):
            return
        link = stage.link
        if link is not None and link.waiting and self._steps(stage, at_report=False):
            link.waiting = False  # the adapter's side waited in real time: the host acted on its own timer
        self._pace_unlinked(stage)

    def _fire_timers(self, stage: ActiveStage) -> bool:
        now = stage.now()
        due = sorted((t for t in stage.timers if t[0] <= now + 1e-9), key=lambda t: t[0])
        for timer in due:
            stage.timers.remove(timer)
            _, what, conn = timer
            response = conn.response
            if response is None or conn.closed or conn.stage != stage.plan.token:
                continue
            if what == "slow":
                response.slow_ready = True
            elif what == "expire" and response.phase == "held":
                stage.add("fault", name=STALL_EXPIRED, interaction=response.index)
            elif what == "pace":
                self._step(stage, conn)
        if due and stage.link is not None:
            stage.link.serial += 1
        return bool(due)

    # --- HTTP ----------------------------------------------------------------------------------------------

    def _accept_http(self) -> None:
        while True:
            try:
                sock, address = self.http.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = HttpConn(sock, int(address[1]))
            self.gone.discard(conn.port)  # a port used again
            self.conns[conn.port] = conn
            self.reactor.watch(sock, functools.partial(self._readable, conn))

    def _readable(self, conn: HttpConn) -> None:
        """Read what the connection holds; requests are parsed, and recorded when a report accounts for them
        (or at once on a connection the link does not account for)."""
        if self._read(conn):
            self._changed()

    def _read(self, conn: HttpConn) -> bool:
        """``_readable`` without telling the link: True when anything arrived (bytes or the end)."""
        if conn.closed:
            return False
        before = (conn.received, conn.eof)
        try:
            while True:
                data = conn.sock.recv(READ_SIZE)
                if not data:
                    conn.eof = True
                    break
                conn.received += len(data)
                conn.inbuf += data
                if len(data) < READ_SIZE:
                    break
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            conn.eof = True
        if (conn.received, conn.eof) == before:
            return False
        try:
            while True:
                if not conn.continued and expects_continue(conn.inbuf):
                    conn.continued = True
                    self._write(conn, b"HTTP/1.1 100 Continue\r\n\r\n")
                request = read_request(conn.inbuf)
                if request is None:
                    break
                conn.continued = False
                conn.requests.append((request, conn.received - len(conn.inbuf)))
        except BadRequest:
            self._drop(conn)
            return True
        stage = self.active
        if conn.requests and stage is None:
            if not self._awaited(conn):
                self._reset(conn)  # between runs: a late request of the run that just ended
            return True  # else its run's begin waits for the stage: the request waits with it
        if conn.eof:
            self._client_left(conn)
            return True
        if stage is not None and conn.requests and (stage.link is None or conn.linked is False):
            conn.linked = False
            self._record_requests(stage, conn, conn.received)
            self._step(stage, conn)
        return True

    def _awaited(self, conn: HttpConn) -> bool:
        """Whether the connection's first request belongs to a run whose begin waits for its stage (the adapter's
        side got the run first; resetting the request would fail the run on the harness's own race)."""
        token, _ = _strip_run(conn.requests[0][0].target)
        waiting = [str(w[2].get("run")) for w in self.begin_waits]
        return token in waiting if token is not None else bool(waiting)

    def _client_left(self, conn: HttpConn) -> None:
        """The client closed the connection: a response being read or held is closed (AB-02)."""
        response = conn.response
        stage = self.active
        if (
            response is not None
            and response.phase != "done"
            and stage is not None
            and conn.stage == stage.plan.token
        ):
            stage.add("response_closed", interaction=response.index)
            response.phase = "done"
        self._drop(conn)

    def _drop(self, conn: HttpConn) -> None:
        if conn.closed:
            return
        conn.closed = True
        self.reactor.unwatch(conn.sock)
        with contextlib.suppress(OSError):
            conn.sock.close()
        self.conns.pop(conn.port, None)
        if len(self.gone) > 4096:
            self.gone.clear()
        self.gone.add(conn.port)
        self._changed()

    def _reset(self, conn: HttpConn) -> None:
        """A TCP RST (SO_LINGER 0): the client reads ECONNRESET, as from a dropped connection."""
        with contextlib.suppress(OSError):
            conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self._drop(conn)

    def _write(self, conn: HttpConn, data: bytes) -> None:
        if conn.closed or not data:
            return
        conn.outbuf += data
        self._flush(conn)

    def _flush(self, conn: HttpConn) -> None:
        while conn.outbuf and not conn.closed:
            try:
                written = conn.sock.send(conn.outbuf)
            except (BlockingIOError, InterruptedError):
                return  # the client reads slowly: the rest goes at the next step (accounting waits for it)
            except OSError:
                self._client_left(conn)
                return
            conn.sent += written
            del conn.outbuf[:written]

    # --- requests and responses ------------------------------------------------------------------------------

    def _record_requests(self, stage: ActiveStage, conn: HttpConn, accounted_to: int) -> None:
        """Trace the parsed requests whose last byte the adapter's side says it wrote, and start answering."""
        while conn.requests and conn.response is None and conn.requests[0][1] <= accounted_to:
            request, _ = conn.requests.popleft()
            self._answer(stage, conn, request)

    def _answer(self, stage: ActiveStage, conn: HttpConn, request: Request) -> None:
        target = request.target
        token, path_and_query = _strip_run(target)
        if token is not None and token != stage.plan.token:
            self._reset(conn)  # a late request of an earlier run: that run is over
            return
        path = urlsplit(path_and_query).path
        plan = stage.plan
        index = _match(plan, stage.used, request.method, path)
        host = request.headers.get("host", f"127.0.0.1:{self.http_port}")
        url = request.headers.pop(REDIRECTED_FROM, None) or f"http://{host}{path_and_query}"
        stage.record.requests.append(
            SentRequest(
                request.method,
                url,
                path,
                request.headers,
                request.body,
                index,
                stage.now(),
                LIBRARY,
            )
        )
        stage.add("request", name=f"{request.method} {path}", interaction=index)
        conn.stage = plan.token
        if index is None:  # in-process it was a ConnectError naming the request; here the connection drops
            self._reset(conn)
            return
        interaction = plan.interactions[index]
        fault = interaction.fault
        kind = fault.kind if fault is not None else None
        if kind in ("connect_error", "connect_timeout"):
            stage.add("fault", name=kind, interaction=index)
            if kind == "connect_error":
                self._reset(conn)
            else:
                conn.response = Response(
                    index, [], interaction.status, interaction.headers, kind, phase="held"
                )
            return
        chunks = plan.plan.chunks(interaction.body, plan.profile.split_events)
        if fault is not None:
            boundaries = event_boundaries(interaction.body, plan.profile.split_events)
            limit = boundaries[fault.after_events - 1] if 0 < fault.after_events <= len(boundaries) else 0
            chunks = cut_at_events(chunks, limit)
        conn.response = Response(index, chunks, interaction.status, interaction.headers, kind)

    def _step(self, stage: ActiveStage, conn: HttpConn) -> bool:
        """One step of the connection's response: the head and a chunk, a chunk, the abort plan, or the end
        of the body. False when there is nothing to do now (waiting for a timer, or no response)."""
        response = conn.response
        if response is None or response.phase != "body" or conn.closed or conn.stage != stage.plan.token:
            return False
        plan = stage.plan
        i = response.next_chunk
        after = plan.abort_after_events
        if after is not None and i == after and not stage.aborted and i < len(response.chunks):
            self._fire_abort(stage, response, conn, i)
            return True
        if response.slow:
            if not response.slow_ready:
                if not any(t[2] is conn and t[1] == "slow" for t in stage.timers):
                    stage.timers.append((stage.now() + SLOW_AFTER_ABORT_S, "slow", conn))
                return False
            response.slow_ready = False
        head = b""
        if not response.head_sent:
            response.head_sent = True
            head = response_head(response.status, response.headers)
        if i >= len(response.chunks):
            self._write(conn, head)
            self._end_body(stage, conn, response)
            return True
        if response.slow or (conn.linked is False and plan.plan.yield_between):
            # trickling after the abort; or a client the link does not count, paced in real time
            self._write(conn, head + self._chunk_event(stage, response))
            if conn.linked is False and response.next_chunk < len(response.chunks):
                stage.timers.append((stage.now() + PACE_S, "pace", conn))
        else:
            # Back to back up to the next barrier, each piece its own HTTP chunk, which the client's HTTP
            # parser hands on as its own piece (h11, aiohttp, urllib3, undici): the adapter reads one event at
            # a time without a handshake per event. A barrier waits for the adapter to be idle, having reacted
            # to everything before it: the abort or cancel point, and STR-02's (``StagePlan.hold``).
            self._write(conn, head + self._chunk_events(stage, response))
        if response.next_chunk == len(response.chunks) and response.fault_kind in (None, "truncate"):
            self._end_body(stage, conn, response)  # a clean or cut end goes with the last bytes
        return True

    def _barrier(self, stage: ActiveStage, response: Response) -> bool:
        """Whether the next chunk waits for the adapter to be idle first (see ``_step``)."""
        plan, j = stage.plan, response.next_chunk
        if j == plan.abort_after_events and not stage.aborted:
            return True
        if plan.hold.get(response.index) == j:
            return True
        return plan.cancel_after_chunks is not None and stage.chunks_sent >= plan.cancel_after_chunks

    def _chunk_events(self, stage: ActiveStage, response: Response) -> bytes:
        """``_chunk_event`` for the next chunk and each after it up to the next barrier, framed back to back
        (a run cut into hundreds of pieces sends them in one step: one method call and one keyword-built
        event per chunk were most of the host's time)."""
        plan, chunks, index, fault = stage.plan, response.chunks, response.index, response.fault_kind
        events = stage.record.events
        out = []
        clock, started, skipped = time.monotonic, stage.started, stage.skipped
        hold = plan.hold.get(index)
        abort_at = None if stage.aborted else plan.abort_after_events
        cancel = plan.cancel_after_chunks
        i = response.next_chunk
        while True:
            piece = chunks[i]
            events.append(
                TraceEvent(
                    len(events),
                    clock() - started + skipped,  # ``stage.now()``
                    "chunk",
                    "",
                    (piece,) if plan.chunk_bytes else (),
                    index,
                    i,
                    fault is None and i == len(chunks) - 1,
                )
            )
            stage.chunks_sent += 1
            i += 1
            if piece:
                out.append(b"%x\r\n%s\r\n" % (len(piece), piece))
            if (
                i >= len(chunks)
                or i in (abort_at, hold)
                or (cancel is not None and stage.chunks_sent >= cancel)
            ):
                break  # the next chunk waits for a barrier (``_barrier``), or there is none
        response.next_chunk = i
        return b"".join(out)

    def _chunk_event(self, stage: ActiveStage, response: Response) -> bytes:
        """Trace the response's next chunk as delivered; its bytes, framed as an HTTP chunk."""
        i = response.next_chunk
        piece = response.chunks[i]
        stage.add(
            "chunk",
            args=(piece,) if stage.plan.chunk_bytes else (),
            interaction=response.index,
            chunk_index=i,
            last=response.fault_kind is None and i == len(response.chunks) - 1,
        )
        stage.chunks_sent += 1
        response.next_chunk = i + 1
        return chunk(piece)

    def _end_body(self, stage: ActiveStage, conn: HttpConn, response: Response) -> None:
        """After the last chunk: the body ends (clean or truncated), the connection resets, or goes silent."""
        kind = response.fault_kind
        if kind is not None:
            stage.add("fault", name=kind, interaction=response.index)
        if kind is None or kind == "truncate":
            self._write(conn, LAST_CHUNK)
            stage.add("response_closed", interaction=response.index)
            response.phase = "done"
            conn.response = None
            if conn.requests:
                self._record_requests(stage, conn, conn.received if conn.linked is False else -1)
            return
        if kind == "reset":
            response.phase = "done"
            self._reset(conn)
            return
        response.phase = "held"
        if kind == "stall":
            after = stage.plan.abort_after_events
            if after is not None and after == len(response.chunks) and not stage.aborted:
                self._fire_abort(stage, response, conn, len(response.chunks))
            if stage.plan.read_timeout:
                stage.timers.append(
                    (stage.now() + stage.plan.read_timeout * STALL_EXPIRY_SHARE, "expire", conn)
                )

    def _fire_abort(self, stage: ActiveStage, response: Response, conn: HttpConn, i: int) -> None:
        stage.aborted = True
        response.slow = True
        stage.add("abort", interaction=response.index, chunk_index=i)
        stage.instructions.append("abort")

    # --- the link -------------------------------------------------------------------------------------------

    def _accept_link(self) -> None:
        while True:
            try:
                sock, _ = self.control.accept()
            except (BlockingIOError, InterruptedError, OSError):
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = LinkConn(sock)
            self.links.append(link)
            self.reactor.watch(sock, functools.partial(self._link_readable, link))

    def _link_readable(self, link: LinkConn) -> None:
        try:
            data = link.sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data or len(link.inbuf) > MAX_LINK_LINE:
            self._drop_link(link)
            return
        link.inbuf += data
        while (end := link.inbuf.find(b"\n")) >= 0:
            line = bytes(link.inbuf[:end])
            del link.inbuf[: end + 1]
            try:
                message = json.loads(line.decode())  # ValueError when not UTF-8: dropped below
            except ValueError:
                self._drop_link(link)
                return
            if not isinstance(message, dict):
                self._drop_link(link)
                return
            link.waiting = False
            if link.held is not None:
                link.held.append(message)
                continue
            self._link_message(link, message)
            if link.sock.fileno() < 0:
                return

    def _drop_link(self, link: LinkConn) -> None:
        self.reactor.unwatch(link.sock)
        with contextlib.suppress(OSError):
            link.sock.close()
        if link in self.links:
            self.links.remove(link)
        stage = self.active
        if stage is not None and stage.link is link:
            stage.link = None  # served in real time from now on
            for conn in self.conns.values():
                if conn.stage == stage.plan.token or conn.requests:
                    conn.linked = False
                    self._record_requests(stage, conn, conn.received)
                    self._step(stage, conn)

    def _send(self, link: LinkConn, message: dict[str, Any]) -> None:
        try:
            link.sock.sendall(_ENCODE(message).encode() + b"\n")
        except OSError:  # a link that does not read its answers is dropped
            self._drop_link(link)

    def _link_message(self, link: LinkConn, message: dict[str, Any]) -> None:
        kind = message.get("t")
        if kind == "begin":
            self._begin(link, message)
            return
        stage = self.active
        if stage is None or message.get("run") != stage.plan.token:
            if kind != "end":
                self._send(link, {"t": "over", "n": message.get("n")})
            return
        stage.link = link
        if not self._place_marks(stage, message.get("ev")):
            self._drop_link(link)
            return
        if kind == "idle":
            self._idle(stage, link, message)
        elif kind == "jump":
            self._jump(stage, link, message)
        elif kind == "end":
            # What the adapter's side did before it ended the run is in the host's sockets already (loopback):
            # a response it closed is read as closed before the record ends (AB-02), whichever socket the
            # reactor happened to look at first.
            self._read_all()
            self._end(stage.plan.token, by_adapter=True)
        elif kind == "events":
            pass
        else:
            self._drop_link(link)

    def _begin(self, link: LinkConn, message: dict[str, Any]) -> None:
        token = str(message.get("run"))
        plan = self.staged.pop(token, None)
        if plan is None:
            if token not in self.ended:  # the parent's stage is on its way: hold what follows until it comes
                self.begin_waits.append((time.monotonic() + BEGIN_WAIT_S, link, message))
                link.held = []
            return
        if self.active is not None:
            self._end(self.active.plan.token, by_adapter=False)
        stage = ActiveStage(plan, time.monotonic(), link=link)
        stage.used = [False] * len(plan.interactions)
        stage.record.begun = True
        self.active = stage
        if plan.abort_before:
            stage.add("abort", name="before")
        self._release(link)

    def _release(self, link: LinkConn) -> None:
        """Handle the messages held while the link's begin waited for its stage (``over`` if it never came)."""
        held, link.held = link.held or [], None
        for message in held:
            self._link_message(link, message)

    def _place_marks(self, stage: ActiveStage, marks: Any) -> bool:
        if marks is None:
            return True
        if not isinstance(marks, list):
            return False
        now = stage.now()
        for mark in marks:
            if not (isinstance(mark, list) and len(mark) == 2 and mark[0] in ADAPTER_EVENT_KINDS):
                return False
            stage.record.events.append(AdapterMark(now, str(mark[0]), str(mark[1])[:200]))
        return True

    def _accounted(self, stage: ActiveStage, conns: Any) -> bool | None:
        """Whether every byte either way has arrived, per the report; None when the report cannot be read."""
        self._read_all()
        if not isinstance(conns, list):
            return None
        reported: set[int] = set()
        settled = True
        for entry in conns:
            if not (isinstance(entry, list) and len(entry) == 3):
                return None
            port, written, read = entry
            if port is None:
                settled = False  # a connection still being set up
                continue
            if not all(isinstance(v, int) for v in (port, written, read)):
                return None
            reported.add(port)
            known = self.conns.get(port)
            if known is None:
                if port not in self.gone:
                    settled = False  # connected on the adapter's side, not accepted here yet: no jump now
                continue  # else closed on the host's side already
            known.linked = True
            if written != known.received or read != known.sent or known.outbuf:
                settled = False
            self._record_requests(stage, known, written)
        for conn in list(self.conns.values()):
            if conn.port not in reported and (conn.requests or conn.response is not None):
                conn.linked = False  # a client the adapter's side does not count: real time for it
                self._record_requests(stage, conn, conn.received)
                self._step(stage, conn)
        return settled

    def _read_all(self) -> None:
        """Accept and read whatever arrived on the HTTP side, before a report or an end is taken."""
        self._accept_http()
        for conn in list(self.conns.values()):
            if self._read(conn):
                self._changed()

    def _steps(self, stage: ActiveStage, *, at_report: bool) -> bool:
        """Every step due now: the cancel plan (once enough chunks were delivered, at a report: in-process
        the task was cancelled as soon as they were), else one step per linked connection."""
        cancel = stage.plan.cancel_after_chunks
        if at_report and cancel is not None and not stage.cancel_sent and stage.chunks_sent >= cancel:
            stage.cancel_sent = True
            stage.instructions.append("cancel")
            return True
        acted = False
        for conn in list(self.conns.values()):
            if conn.linked and self._step(stage, conn):
                acted = True
        if acted and stage.link is not None:
            stage.link.serial += 1
        return acted

    def _pace_unlinked(self, stage: ActiveStage) -> None:
        for conn in list(self.conns.values()):
            if conn.linked is False and conn.response is not None and conn.response.slow_ready:
                self._step(stage, conn)

    def _idle(self, stage: ActiveStage, link: LinkConn, message: dict[str, Any]) -> None:
        n = message.get("n")
        settled = self._accounted(stage, message.get("conns"))
        if settled is None:
            self._drop_link(link)
            return
        if not settled:
            self._answer_link(stage, link, {"t": "busy", "n": n})
            return
        if not message.get("sleeping") and self._steps(stage, at_report=True):
            self._answer_link(stage, link, {"t": "acted", "n": n})
            return
        offer = (
            self._offer(stage, message.get("timer"), bool(message.get("beyond")))
            if message.get("jump")
            else None
        )
        if offer is not None and message.get("busy") and not offer[1]:
            offer = None  # a thread of the adapter's at work: only the stall's own end may be jumped to
        if offer is None:
            link.waiting = True
            self._answer_link(stage, link, {"t": "wait", "n": n})
            return
        link.offered = offer
        answer = {"t": "quiet", "n": n, "d": offer[0], "s": link.serial}
        if offer[1]:
            answer["credit"] = True
        self._answer_link(stage, link, answer)

    def _offer(self, stage: ActiveStage, timer: Any, beyond: bool) -> tuple[float, bool] | None:
        """The jump the run's clock may take now: to the nearest timer, never to the run's limit; and
        whether it is a stall's credit: past the limit, to the adapter's own timer while a response is held
        silent (its read timeout ends the stall, however long: NT-04; that time is not counted)."""
        plan = stage.plan
        if not plan.virtual_time:
            return None
        now = stage.now()
        counted = now - stage.credited
        candidates = [t[0] - now for t in stage.timers]
        own = float(timer) if isinstance(timer, (int, float)) and timer >= 0 else None
        if own is not None and not beyond:
            candidates.append(own)
        nearest = max(0.0, min(candidates)) if candidates else None
        if nearest is not None and counted + nearest < plan.limit_s:
            return nearest, False
        if own is not None and beyond and stage.stalled(self.conns) and (nearest is None or own <= nearest):
            return own, True
        if own is not None and beyond and plan.limit_s - counted > LIMIT_EPSILON_S:
            # The adapter's own timer lies past the limit (an hour's retry-after): only the limit can end the
            # wait, and it comes first in real time too, so the clock may go there (the step's limit timer fires).
            return plan.limit_s - counted, False
        return None

    def _jump(self, stage: ActiveStage, link: LinkConn, message: dict[str, Any]) -> None:
        n = message.get("n")
        offered, link.offered = link.offered, None
        serial = link.serial
        settled = self._accounted(stage, message.get("conns"))
        d = message.get("d")
        if (
            settled is not True
            or offered is None
            or not isinstance(d, (int, float))
            or not 0 <= d <= offered[0]
            or serial != link.serial
            or message.get("s") != serial
        ):
            self._answer_link(stage, link, {"t": "busy", "n": n})
            return
        stage.skipped += float(d)
        if offered[1]:
            stage.credited += float(d)
        stage.record.skipped_s = stage.skipped
        self._fire_timers(stage)
        acted = False if message.get("sleeping") else self._steps(stage, at_report=True)
        answer = {"t": "advanced", "n": n, "d": d, "acted": acted}
        if offered[1]:
            answer["credit"] = True
        self._answer_link(stage, link, answer)

    def _answer_link(self, stage: ActiveStage, link: LinkConn, answer: dict[str, Any]) -> None:
        if stage.instructions:
            answer["do"] = stage.instructions
            stage.instructions = []
        self._send(link, answer)

    def _changed(self) -> None:
        stage = self.active
        if stage is not None and stage.link is not None:
            stage.link.serial += 1

    # --- the end of a run ---------------------------------------------------------------------------------

    def _end(self, token: str, *, by_adapter: bool) -> None:
        self.collect_waits.pop(token, None)
        stage = self.active
        if stage is None or stage.plan.token != token:
            return
        self.active = None
        self.ended.add(token)
        if len(self.ended) > 4096:
            self.ended.clear()
        record = stage.record
        record.ended_by_adapter = by_adapter
        record.elapsed_s = stage.now() - stage.credited
        record.skipped_s = stage.skipped
        record.unused = _required(stage.plan, stage.used)
        record.unlinked = sum(1 for c in self.conns.values() if c.linked is False and c.stage == token)
        for conn in list(self.conns.values()):
            if conn.stage == token and conn.response is not None and conn.response.phase != "done":
                with contextlib.suppress(OSError):  # held or half-read: the run is over
                    conn.sock.shutdown(socket.SHUT_RDWR)
                self._drop(conn)
            elif conn.stage == token:
                conn.requests.clear()
        self.reactor.finished(self.id, token, record)


def _strip_run(target: str) -> tuple[str | None, str]:
    """(run token, the target without the run's prefix); no token when the adapter dropped the prefix."""
    if target.startswith(RUN_PREFIX):
        rest = target[len(RUN_PREFIX) :]
        token, slash, tail = rest.partition("/")
        return token, slash + tail if slash else "/"
    return None, target


def _match(plan: StagePlan, used: list[bool], method: str, path: str) -> int | None:
    """The next interaction this request stands for: method and endpoint path, in the recorded order."""
    for i, interaction in enumerate(plan.interactions):
        if not used[i] and plan.profile.matches(method, path, interaction.path):
            used[i] = True
            return i
        if not used[i] and not interaction.optional:
            return None  # requests must come in the recorded order
    return None


def _required(plan: StagePlan, used: list[bool]) -> list[int]:
    return [i for i, u in enumerate(used) if not u and not plan.interactions[i].optional]
