"""The replay host's HTTP connections (replay/host.py): accepting them, reading requests as their bytes arrive,
writing without blocking, and how a connection ends (the client left, the host dropped it, or reset it).
"""

from __future__ import annotations

import contextlib
import functools
import socket

from .host_state import READ_SIZE, HostState, HttpConn, strip_run
from .http11 import BadRequest, expects_continue, read_request


class Connections(HostState):
    """The HTTP side of the host."""

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
            self.gone.pop(conn.port, None)  # a port used again
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
            if self._late(conn):
                token, _ = strip_run(conn.requests[0][0].target)
                self.late_resets.append(f"port {conn.port}, a request of run {token or '(none named)'}")
                del self.late_resets[:-8]
                self._reset(conn)  # between runs: a late request of a run that is over
            return True  # else its run's begin is on its way (over the link, or waiting for its stage)
        if conn.eof:
            self._client_left(conn)
            return True
        if stage is not None and conn.requests and (stage.link is None or conn.linked is False):
            conn.linked = False
            self._record_requests(stage, conn, conn.received)
            self._step(stage, conn)
        return True

    def _late(self, conn: HttpConn) -> bool:
        """Whether the connection's first request, read with no run active, belongs to a run that is over.
        The adapter's side writes a run's begin before its adapter sends anything, but the host may read the
        request first: the link is a new connection on a process's first run, and the two sockets' bytes may be
        taken in either order. A request naming a run not known to be over waits for that run's begin (its
        reports then answer it, or reset it as another run's)."""
        token, _ = strip_run(conn.requests[0][0].target)
        if token is not None:
            return token in self.ended
        self._read_links()  # no run named: late unless a begin was written before it
        return self.active is None and not self.begin_waits

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
        self.gone[conn.port] = conn.received
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
