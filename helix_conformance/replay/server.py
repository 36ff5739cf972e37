"""The replay server: a scenario's interactions over real HTTP/1.1 on 127.0.0.1, for adapters we cannot patch.

The in-process replay patches httpx/httpx2 (``transport.py``); an adapter in another language (a Node driver,
worker/driver.py) or on another HTTP stack gets the same responses from this server instead: the same matching
(``Replayer.match``), the same DeliveryPlan chunks (each its own HTTP chunk, written and flushed apart), and the
same trace events (``request``, ``chunk``, ``fault``, ``stall_expired``, ``response_closed``), so every check
reads the run unchanged. Faults are real transport behaviour: a reset is a TCP RST, a read timeout, stall or
connect timeout is a connection held silent until the client gives up, a truncation ends the chunked body
cleanly where the cut is (the adapter must notice the missing terminal event itself, as in-process).

One server per run, on an ephemeral port. docs/worker-protocol.md (version 2) says what each choice is for:
pacing between events, holding for STR-02, settling before the abort plan fires.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from urllib.parse import urlsplit

from ..profiles.base import WireProfile
from .delivery import DeliveryPlan, cut_at_events, event_boundaries
from .http11 import LAST_CHUNK, BadRequest, Connection, Request, chunk, reset, response_head
from .interactions import ReplayInteraction
from .trace import SentRequest, Trace
from .transport import SLOW_AFTER_ABORT_S, STALL_EXPIRED, Replayer

LIBRARY = "http"
"""``SentRequest.library`` of a request that reached the server (in-process it names httpx or httpx2)."""
PACE_S = 0.001
"""Pause between two event chunks of an EventPlan, so the client reads them apart (one event per read)."""
HOLD_S = 1.0
"""STR-02: how long the chunk carrying the last text delta waits for the first ``on_text_delta``."""
SETTLE_S = 0.02
SETTLE_MAX_S = 0.25
"""Before the abort plan fires, the run must be quiet this long (at most SETTLE_MAX_S): the callbacks of the
chunks already delivered are in the trace before the abort, as when the in-process reader pulls chunk N."""
STALL_EXPIRY_SHARE = 0.9
"""A stalled connection still open after this share of the adapter's read timeout is marked stall_expired:
the adapter was still reading when its own timeout was about to end the read (NT-04, AB-02)."""
POLL_S = 0.05

AbortHook = Callable[[int, int], None]
"""Fires the abort plan: (interaction, chunk index); it adds the trace's ``abort`` event itself."""


class ReplayServer:
    """Serves one run's interactions, in order, on 127.0.0.1:<ephemeral port>, until closed."""

    def __init__(
        self,
        interactions: list[ReplayInteraction],
        profile: WireProfile,
        trace: Trace,
        plan: DeliveryPlan,
        *,
        read_timeout: float | None,
        abort_after_events: int | None = None,
        on_abort: AbortHook | None = None,
        hold: Mapping[int, int] | None = None,
    ) -> None:
        self.replayer = Replayer(interactions, profile, trace, plan)
        self.profile, self.trace, self.plan = profile, trace, plan
        self.read_timeout = read_timeout
        self.abort_after_events, self.on_abort, self.aborted = abort_after_events, on_abort, False
        self.hold = dict(hold or {})
        """Interaction index -> chunk index that waits for the first on_text_delta (STR-02)."""
        self.closing = threading.Event()
        self.lock = threading.Lock()
        self.sockets: set[socket.socket] = set()
        self.threads: list[threading.Thread] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.origin = f"http://127.0.0.1:{self.port}"

    # --- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> ReplayServer:
        thread = threading.Thread(target=self._accept_loop, name=f"helix-replay-{self.port}", daemon=True)
        thread.start()
        self.threads.append(thread)
        return self

    def base_url(self, default_base_url: str) -> str:
        """The server's origin with the path of the provider's base URL (``/v1`` for OpenAI)."""
        return self.origin + urlsplit(default_base_url).path.rstrip("/")

    def close(self) -> None:
        """Stop serving: held and idle connections are closed, threads end within a poll interval."""
        self.closing.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept loop's select at once
        with contextlib.suppress(OSError):
            self.listener.close()
        with self.lock:
            live = list(self.sockets)
        for sock in live:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in list(self.threads):
            thread.join(POLL_S * 4)

    def unused(self) -> list[int]:
        return self.replayer.unused()

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _accept_loop(self) -> None:
        while not self.closing.is_set():
            try:
                ready, _, _ = select.select([self.listener], [], [], POLL_S)
                if not ready:
                    continue
                sock, _ = self.listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.sockets.add(sock)
            thread = threading.Thread(target=self._connection, args=(sock,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _connection(self, sock: socket.socket) -> None:
        conn = Connection(sock)
        try:
            while not self.closing.is_set():
                request = conn.read_request()
                if request is None or not self._serve(sock, request):
                    break
        except (BadRequest, OSError, ValueError):
            pass
        finally:
            with self.lock:
                self.sockets.discard(sock)
            with contextlib.suppress(OSError):
                sock.close()

    # --- one exchange --------------------------------------------------------------------------------

    def _serve(self, sock: socket.socket, request: Request) -> bool:
        """Answer one request; True when the connection may carry another one (keep-alive)."""
        path = urlsplit(request.target).path
        with self.lock:
            index = self.replayer.match(request.method, path)
        url = f"http://{request.headers.get('host', self.origin[7:])}{request.target}"
        self.trace.add_request(
            SentRequest(
                request.method, url, path, request.headers, request.body, index, self.trace.now(), LIBRARY
            )
        )
        if (
            index is None
        ):  # in-process: a ConnectError naming the request; here the connection drops (HARN-01)
            reset(sock)
            return False
        interaction = self.replayer.interactions[index]
        fault = interaction.fault
        if fault is not None and fault.kind in ("connect_error", "connect_timeout"):
            self.trace.add("fault", name=fault.kind, interaction=index)
            if fault.kind == "connect_error":
                reset(sock)
            else:
                self._silent(sock, index, expire=False)
            return False
        chunks = self.plan.chunks(interaction.body, self.profile.split_events)
        if fault is not None:
            boundaries = event_boundaries(interaction.body, self.profile.split_events)
            limit = boundaries[fault.after_events - 1] if 0 < fault.after_events <= len(boundaries) else 0
            chunks = cut_at_events(chunks, limit)
        try:
            sock.sendall(response_head(interaction.status, interaction.headers))
            for i, piece in enumerate(chunks):
                if not self._before_chunk(sock, index, i):
                    self._closed(index)
                    return False
                self.trace.add_chunk(piece, index, i, fault is None and i == len(chunks) - 1)
                sock.sendall(chunk(piece))
            if fault is not None:
                self.trace.add("fault", name=fault.kind, interaction=index)
            if fault is None or fault.kind == "truncate":
                sock.sendall(LAST_CHUNK)
                self._closed(index)
                return True
        except OSError:  # the client closed or reset the connection
            self._closed(index)
            return False
        if fault.kind == "reset":
            reset(sock)
            return False
        if fault.kind == "stall":
            self._fire_abort(index, len(chunks))
        self._silent(sock, index, expire=fault.kind == "stall")
        return False

    def _before_chunk(self, sock: socket.socket, index: int, i: int) -> bool:
        """Pace, hold and fire the abort plan before chunk ``i``; False when the client has gone."""
        if i > 0 and self.plan.yield_between and not self._wait(sock, PACE_S):
            return False
        if self.hold.get(index) == i:
            self._hold_for_first_delta()
        after = self.abort_after_events
        if after is not None and i >= after:
            if i == after:
                self._fire_abort(index, i)
            return self._wait(sock, SLOW_AFTER_ABORT_S)
        return True

    def _hold_for_first_delta(self) -> None:
        deadline = time.monotonic() + HOLD_S
        while not self.trace.callbacks("on_text_delta") and time.monotonic() < deadline:
            if self.closing.wait(0.001):
                return

    def _fire_abort(self, index: int, i: int) -> None:
        if self.aborted or self.on_abort is None or self.abort_after_events != i:
            return
        self.aborted = True
        self._settle()
        self.on_abort(index, i)

    def _settle(self) -> None:
        """Wait until no trace event was added for SETTLE_S (at most SETTLE_MAX_S)."""
        end = time.monotonic() + SETTLE_MAX_S
        count, quiet_since = len(self.trace.events), time.monotonic()
        while time.monotonic() < end and time.monotonic() - quiet_since < SETTLE_S:
            if self.closing.wait(0.002):
                return
            if len(self.trace.events) != count:
                count, quiet_since = len(self.trace.events), time.monotonic()

    def _silent(self, sock: socket.socket, index: int, *, expire: bool) -> None:
        """Send nothing until the client gives up or the run ends; a stall outliving most of the adapter's
        read timeout is marked stall_expired, as the in-process replay marks a read that ran into it."""
        started = time.monotonic()
        mark_at = started + self.read_timeout * STALL_EXPIRY_SHARE if expire and self.read_timeout else None
        while True:
            step = POLL_S if mark_at is None else max(0.0, min(POLL_S, mark_at - time.monotonic()))
            if not self._wait(sock, step):
                break
            if mark_at is not None and time.monotonic() >= mark_at:
                self.trace.add("fault", name=STALL_EXPIRED, interaction=index)
                mark_at = None
        self._closed(index)

    def _closed(self, index: int) -> None:
        self.trace.add("response_closed", interaction=index)

    def _wait(self, sock: socket.socket, seconds: float) -> bool:
        """Sleep ``seconds`` watching the connection; False as soon as the client closed it or the run ended."""
        end = time.monotonic() + seconds
        while True:
            if self.closing.is_set():
                return False
            remaining = end - time.monotonic()
            try:
                ready, _, _ = select.select([sock], [], [], max(0.0, min(POLL_S, remaining)))
                if ready and not sock.recv(1, socket.MSG_PEEK):
                    return False
            except OSError:
                return False
            if ready:  # bytes the client sent ahead (a pipelined request): they wait for their turn
                time.sleep(max(0.0, min(POLL_S, remaining)))
            if remaining <= 0:
                return True
