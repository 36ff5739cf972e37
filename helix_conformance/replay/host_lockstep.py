"""The replay host's end of the link (replay/host.py, replay/link.py): the adapter's side reports idle with the
bytes each connection moved and its next timer, and the host acts (the next step of each response, the abort or
cancel plan) or offers a jump of the run's clock; a ``jump`` takes the offer if nothing changed since.
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import time
from typing import Any

from .host_state import (
    BARRIER_PATIENCE_S,
    BEGIN_WAIT_S,
    LIMIT_EPSILON_S,
    MAX_LINK_LINE,
    MAX_REFUSED_PER_REPORT,
    READ_SIZE,
    UNLINKED_AFTER_REPORTS,
    ActiveStage,
    HostState,
    LinkConn,
)
from .stage import ADAPTER_EVENT_KINDS, AdapterMark

_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


class Lockstep(HostState):
    """The link's side of the host."""

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

    def _read_links(self) -> None:
        """Accept and read every link now, whatever order the service's loop would have taken them in."""
        self._accept_link()
        for link in list(self.links):
            if link in self.links:
                self._link_readable(link)

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
                if message.get("t") != "begin":
                    link.held.append(message)
                    continue
                self._give_up_waiting(link)  # the adapter's side went on to its next run: so does the link
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
            stage.notes.append(f"{stage.now() * 1000:.1f} ms: the link was dropped")
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
        stage.leave_off_load(message.get("st"))  # before the report's requests and marks are placed
        if not self._place_marks(stage, message.get("ev"), message.get("rf")):
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
        """Make the run active and answer ``begun``: the adapter's side starts its adapter only then, so the host
        knows the run before any of its bytes, and no wait for a stage is counted on the run's clock. A stage
        not here yet is on its way from the parent (it is sent before the run): the begin waits for it, up to
        ``BEGIN_WAIT_S``, then is answered ``over``, as at once for a run already collected."""
        token = str(message.get("run"))
        plan = self.staged.pop(token, None)
        if plan is None:
            if token in self.ended:
                self._send(link, {"t": "over", "n": message.get("n")})
            else:  # the parent's stage is on its way: hold what follows until it comes
                message["_waiting_since"] = time.monotonic()
                self.begin_waits.append((time.monotonic() + BEGIN_WAIT_S, link, message))
                link.held = []
            return
        if self.active is not None:
            self._end(self.active.plan.token, by_adapter=False)
        stage = ActiveStage(plan, time.monotonic(), link=link)
        since = message.get("_waiting_since")
        if isinstance(since, float):
            stage.notes.append(f"its begin waited {(stage.started - since) * 1000:.1f} ms for its stage")
        stage.used = [False] * len(plan.interactions)
        stage.record.begun = True
        self.active = stage
        if plan.abort_before:
            stage.add("abort", name="before")
        self._send(link, {"t": "begun", "n": message.get("n")})
        self._release(link)

    def _give_up_waiting(self, link: LinkConn) -> None:
        """Stop waiting for the stage of the run the link began: the begin and what it held are answered ``over``."""
        for wait in [w for w in self.begin_waits if w[1] is link]:
            self.begin_waits.remove(wait)
            self._send(link, {"t": "over", "n": wait[2].get("n")})
        self._release(link)

    def _release(self, link: LinkConn) -> None:
        """Handle the messages held while the link's begin waited for its stage (``over`` if it never came)."""
        held, link.held = link.held or [], None
        for message in held:
            self._link_message(link, message)

    def _place_marks(self, stage: ActiveStage, marks: Any, refused: Any = None) -> bool:
        """Place the report's marks, and its refused connection attempts among them (``rf``: how many marks
        came before each); False for a report that cannot be read."""
        if marks is None:
            marks = []
        if not isinstance(marks, list):
            return False
        if refused is None:
            refused = []
        if not isinstance(refused, list) or not all(
            isinstance(at, int) and not isinstance(at, bool) for at in refused
        ):
            return False
        refused = sorted(refused)[:MAX_REFUSED_PER_REPORT]
        now = stage.now() if marks else 0.0
        for i, mark in enumerate(marks):
            if not (isinstance(mark, list) and len(mark) == 2 and mark[0] in ADAPTER_EVENT_KINDS):
                return False
            while refused and refused[0] <= i:
                refused.pop(0)
                self._refused_connect(stage)
                now = stage.now()
            stage.record.events.append(AdapterMark(now, str(mark[0]), str(mark[1])[:200]))
        for _ in refused:
            self._refused_connect(stage)
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
                closed_after = self.gone.get(port)
                if closed_after is None or written == read == 0 or written > closed_after:
                    # Connected on the adapter's side, not accepted here yet: no jump now. A port the host closed
                    # before may be in use again (the kernel hands ports out again): a connection the host closed
                    # had carried a request, one with no byte either way is a new one still being accepted. More
                    # written than the host had received when it closed: a client that sent its next request on
                    # a kept-alive connection before it saw the close (undici under load); it gets the reset and
                    # goes on (an error, a new connection), and the run's clock waits for that, not a timer.
                    settled = False
                continue  # else closed on the host's side already
            known.linked, known.unreported = True, 0
            if written != known.received or read != known.sent or known.outbuf:
                settled = False
            self._record_requests(stage, known, written)
        for conn in list(self.conns.values()):
            if conn.port not in reported and (conn.requests or conn.response is not None):
                conn.unreported += 1
                if conn.unreported < UNLINKED_AFTER_REPORTS:
                    settled = False  # perhaps connected after the report was written: ask again soon
                    continue
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

    def _held_by_work(self, stage: ActiveStage, busy: bool) -> bool:
        """Whether a barrier waits for a thread of the adapter's still at work: a sync client's reader thread
        (boto3 in ``to_thread``) may be parsing the chunks before it, their callbacks not yet fired, so STR-02's
        hold would be passed before them. Up to ``BARRIER_PATIENCE_S``: a background thread that never rests
        (polling, computing) does not hold the run up for longer."""
        at_barrier = busy and any(
            conn.linked
            and conn.response is not None
            and conn.response.phase == "body"
            and conn.response.next_chunk < len(conn.response.chunks)
            and self._barrier(stage, conn.response)
            for conn in self.conns.values()
        )
        if not at_barrier:
            stage.busy_at_barrier_since = None
            return False
        now = time.monotonic()
        if stage.busy_at_barrier_since is None:
            stage.busy_at_barrier_since = now
        return now - stage.busy_at_barrier_since < BARRIER_PATIENCE_S

    def _idle(self, stage: ActiveStage, link: LinkConn, message: dict[str, Any]) -> None:
        n = message.get("n")
        settled = self._accounted(stage, message.get("conns"))
        if settled is None:
            self._drop_link(link)
            return
        if not settled or self._held_by_work(stage, bool(message.get("busy"))):
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
        now = stage.peek()
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
        kind = str(answer.get("t"))
        stage.answers[kind] = stage.answers.get(kind, 0) + 1
        if stage.instructions:
            answer["do"] = stage.instructions
            stage.instructions = []
        self._send(link, answer)

    def _changed(self) -> None:
        stage = self.active
        if stage is not None and stage.link is not None:
            stage.link.serial += 1
