"""A ScenarioRun as plain data (worker side) and back (parent side): the trace, the results, what was raised."""

from __future__ import annotations

import base64
from typing import Any

from ..replay.interactions import ReplayInteraction
from ..replay.runner import RunOptions, ScenarioRun
from ..replay.trace import SentRequest, Trace, TraceEvent
from .snapshot import Decoder, Encoder, SnapshotError

_EVENT_KINDS = frozenset(
    {"request", "chunk", "response_closed", "callback", "callback_done", "abort", "fault", "returned"}
)


def encode_run(run: ScenarioRun) -> dict[str, Any]:
    """Everything the checks read of a run, as JSON-ready data; one encoder, so identities are shared."""
    enc = Encoder()
    results = [enc.value(r) for r in run.results]
    raised = enc.value(run.raised) if run.raised is not None else None
    chunk_bytes = run.options.chunk_bytes
    mutated = _input_changed(run)
    events = [
        [
            e.seq,
            e.at,
            e.kind,
            e.name,
            [] if e.kind == "chunk" and not chunk_bytes else [enc.value(a) for a in e.args],
            e.interaction,
            e.chunk_index,
            e.last,
        ]
        for e in list(run.trace.events)
    ]
    requests = [
        {
            "method": r.method,
            "url": r.url,
            "path": r.path,
            "headers": dict(r.headers),
            "body": base64.b64encode(r.body).decode("ascii"),
            "interaction": r.interaction,
            "at": r.at,
            "library": r.library,
            "refused": r.refused,
        }
        for r in list(run.trace.requests)
    ]
    return {
        "results": results,
        "raised": raised,
        "timed_out": bool(run.timed_out),
        "setup_error": run.setup_error,
        "cancelled": run.cancelled,
        "cancel_latency_s": run.cancel_latency_s,
        "unused_interactions": list(run.unused_interactions),
        "unintercepted": [str(u) for u in run.unintercepted],
        "pending_tasks": [str(p)[:1000] for p in run.pending_tasks],
        # MSG-07 reads them only when they differ: most of a run's answer otherwise, for nothing.
        "input_before": enc.value(run.input_before) if mutated else None,
        "input_after": enc.value(run.input_after) if mutated else None,
        "duration_s": run.duration_s,
        "step_s": run.step_s,
        "skipped_s": run.skipped_s,
        "real_wait_s": run.real_wait_s,
        "import_s": run.import_s,
        "imported": run.imported,
        "trace": {"events": events, "requests": requests},
    }


def _input_changed(run: ScenarioRun) -> bool:
    if run.input_after is None:
        return False
    try:
        return bool(run.input_before != run.input_after)
    except Exception:  # an object the adapter put into its input that cannot be compared: the parent shows it
        return True


def decode_run(data: Any, options: RunOptions, interactions: list[ReplayInteraction]) -> ScenarioRun:
    """The ScenarioRun the checks read, rebuilt from the worker's data; malformed data is a SnapshotError."""
    if not isinstance(data, dict):
        raise SnapshotError("the run is not an object")
    try:
        dec = Decoder()
        trace = Trace()
        results = [dec.value(r) for r in _list(data, "results")]
        raised = dec.value(data.get("raised"))
        for seq, at, kind, name, args, interaction, chunk_index, last in _list(data["trace"], "events"):
            if kind not in _EVENT_KINDS:
                raise SnapshotError(f"unknown trace event {kind!r}")
            trace.events.append(
                TraceEvent(
                    int(seq),
                    float(at),
                    kind,
                    str(name),
                    tuple(map(dec.value, args)) if args else (),
                    _opt_int(interaction),
                    _opt_int(chunk_index),
                    bool(last),
                )
            )
        for r in _list(data["trace"], "requests"):
            trace.requests.append(
                SentRequest(
                    str(r["method"]),
                    str(r["url"]),
                    str(r["path"]),
                    {str(k): str(v) for k, v in dict(r["headers"]).items()},
                    base64.b64decode(str(r["body"])),
                    _opt_int(r["interaction"]),
                    float(r["at"]),
                    str(r["library"]),
                    bool(r.get("refused", False)),
                )
            )
        run = ScenarioRun(options=options, trace=trace, interactions=interactions)
        run.results = results
        run.raised = raised if isinstance(raised, BaseException) else None
        run.timed_out = bool(data.get("timed_out"))
        run.setup_error = _opt_str(data.get("setup_error"))
        cancelled = data.get("cancelled")
        run.cancelled = cancelled if isinstance(cancelled, bool) else None
        run.cancel_latency_s = _opt_float(data.get("cancel_latency_s"))
        run.unused_interactions = [int(i) for i in _list(data, "unused_interactions")]
        run.unintercepted = [str(u) for u in _list(data, "unintercepted")]
        run.pending_tasks = [str(p) for p in _list(data, "pending_tasks")]
        run.input_before = dec.value(data.get("input_before"))
        run.input_after = dec.value(data.get("input_after"))
        run.duration_s = float(data.get("duration_s") or 0.0)
        run.step_s = float(data.get("step_s") or 0.0)
        run.skipped_s = float(data.get("skipped_s") or 0.0)
        run.real_wait_s = float(data.get("real_wait_s") or 0.0)
        run.import_s = float(data.get("import_s") or 0.0)
        run.imported = int(data.get("imported") or 0)
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError, RecursionError) as exc:
        raise SnapshotError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
    return run


def _list(data: Any, key: str) -> list[Any]:
    value = data[key]
    if not isinstance(value, list):
        raise SnapshotError(f"{key} is not a list")
    return value


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
