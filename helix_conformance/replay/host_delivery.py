"""What the replay host sends on a connection (replay/host.py): each request traced and matched to its
interaction, then its response step by step: the head, the chunks of the delivery plan up to the next barrier,
the abort plan, and the end the plan gives the body (clean, cut, reset, or held silent).
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from .delivery import cut_at_events, event_boundaries
from .host_state import (
    LIBRARY,
    PACE_S,
    REDIRECTED_FROM,
    RUN_PREFIX,
    ActiveStage,
    HostState,
    HttpConn,
    Response,
    strip_run,
)
from .http11 import LAST_CHUNK, Request, chunk, response_head
from .stage import SLOW_AFTER_ABORT_S, STALL_EXPIRY_SHARE, StagePlan
from .trace import SentRequest, TraceEvent


class Delivery(HostState):
    """The provider's side of each connection."""

    def _record_requests(self, stage: ActiveStage, conn: HttpConn, accounted_to: int) -> None:
        """Trace the parsed requests whose last byte the adapter's side says it wrote, and start answering."""
        while conn.requests and conn.response is None and conn.requests[0][1] <= accounted_to:
            request, _ = conn.requests.popleft()
            self._answer(stage, conn, request)

    def _answer(self, stage: ActiveStage, conn: HttpConn, request: Request) -> None:
        target = request.target
        token, path_and_query = strip_run(target)
        if token is not None and token != stage.plan.token:
            self._reset(conn)  # a late request of an earlier run: that run is over
            return
        path = urlsplit(path_and_query).path
        plan = stage.plan
        index = match(plan, stage.used, request.method, path)
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
        kind = interaction.fault_kind
        if kind in ("connect_error", "connect_timeout"):
            stage.add("fault", name=kind, interaction=index)
            if kind == "connect_error":
                self._reset(conn)
            else:
                conn.response = Response(
                    index, [], interaction.status, interaction.headers, kind, phase="held"
                )
            return
        chunks = plan.plan.chunks(interaction.body, plan.wire.split_events)
        if kind is not None:
            boundaries = event_boundaries(interaction.body, plan.wire.split_events)
            after = interaction.fault_after_events
            limit = boundaries[after - 1] if 0 < after <= len(boundaries) else 0
            chunks = cut_at_events(chunks, limit)
        conn.response = Response(index, chunks, interaction.status, interaction.headers, kind)

    def _refused_connect(self, stage: ActiveStage) -> None:
        """Trace a connection attempt the adapter's side reported refused (``rf``): a ``connect_error`` run's
        base URL is the host's refusing port, so each attempt stands for the next request, matched to the
        ``connect_error`` interaction while it is unused (a retry beyond it: HARN-01)."""
        index = next(
            (
                i
                for i, served in enumerate(stage.plan.interactions)
                if not stage.used[i] and served.fault_kind == "connect_error"
            ),
            None,
        )
        if index is not None:
            stage.used[index] = True
        url = f"http://127.0.0.1:{self.refusing_port}{RUN_PREFIX}{stage.plan.token}"
        stage.record.requests.append(
            SentRequest("", url, "", {}, b"", index, stage.now(), LIBRARY, refused=True)
        )
        stage.add("request", name="connect (refused)", interaction=index)
        if index is not None:
            stage.add("fault", name="connect_error", interaction=index)

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
                    stage.timers.append((stage.peek() + SLOW_AFTER_ABORT_S, "slow", conn))
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
                stage.timers.append((stage.peek() + PACE_S, "pace", conn))
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
        clock, origin = time.monotonic, stage.started - stage.skipped + stage.starved
        at = stage.now()  # each stamp below is ``stage.now()``'s: none before an earlier one
        hold = plan.hold.get(index)
        abort_at = None if stage.aborted else plan.abort_after_events
        cancel = plan.cancel_after_chunks
        i = response.next_chunk
        while True:
            piece = chunks[i]
            at = max(clock() - origin, at)
            events.append(
                TraceEvent(
                    len(events),
                    at,
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
        stage.stamped = at
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
                    (stage.peek() + stage.plan.read_timeout * STALL_EXPIRY_SHARE, "expire", conn)
                )

    def _fire_abort(self, stage: ActiveStage, response: Response, conn: HttpConn, i: int) -> None:
        stage.aborted = True
        response.slow = True
        stage.add("abort", interaction=response.index, chunk_index=i)
        stage.instructions.append("abort")


def match(plan: StagePlan, used: list[bool], method: str, path: str) -> int | None:
    """The next interaction this request stands for: method and endpoint path, in the recorded order."""
    for i, interaction in enumerate(plan.interactions):
        if not used[i] and plan.wire.matches(method, path, interaction.path):
            used[i] = True
            return i
        if not used[i] and not interaction.optional:
            return None  # requests must come in the recorded order
    return None
