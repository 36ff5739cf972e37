"""HARN: integrity of the run itself, judged whatever the adapter did with errors."""

from __future__ import annotations

import json
from typing import Any

from .context import CheckContext
from .registry import check, fail


@check("HARN-01", needs_result=False)
def every_request_matched(ctx: CheckContext) -> None:
    run = ctx.main
    unmatched = [f"{r.method} {r.url}" for r in run.trace.requests if r.interaction is None]
    if unmatched or run.unintercepted:
        requests = [f"{r.method} {r.url}" for r in run.trace.requests]
        repeated = any(request in requests[:i] for i, request in enumerate(requests) if request in unmatched)
        why = (
            ": the same request was sent again after its recorded response, a retry the recording does "
            "not contain (is the HTTP client or SDK retrying on its own? the official SDKs do unless built "
            "with max_retries=0)"
            if repeated
            else ""
        )
        fail(
            ctx,
            "the adapter made requests that match no recorded interaction (even if it turned the "
            f"replay error into an ErrorStepResult){why}",
            expected="only the recorded requests, and no other way out to the network",
            actual=unmatched + run.unintercepted,
            details=run.trace.describe(),
        )

    if ctx.profile.by_regression:
        _requests_equal_the_recorded_ones(ctx)


def _requests_equal_the_recorded_ones(ctx: CheckContext) -> None:
    """The custom profile cannot decode requests, so each must equal the one recorded live (regression)."""
    interactions = ctx.session.interactions()
    for sent in ctx.main.trace.requests:
        if sent.interaction is None:
            continue
        recorded = interactions[sent.interaction].request_body
        if recorded is None:
            continue
        differences = json_differences(
            _json_or_text(recorded), _json_or_text(sent.body.decode("utf-8", "replace"))
        )
        if differences:
            fail(
                ctx,
                "the request differs from the one recorded live (the custom profile judges requests by "
                "regression; re-record with --helix-record-mode=rewrite if the change is intended)",
                actual=differences[:10],
                details=f"recorded in {interactions[sent.interaction].source}",
            )


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def json_differences(recorded: Any, sent: Any, path: str = "$") -> list[str]:
    """Where two JSON values differ, as paths with both values (the first few are shown)."""
    if isinstance(recorded, dict) and isinstance(sent, dict):
        out: list[str] = []
        for key in sorted(set(recorded) | set(sent)):
            where = f"{path}.{key}"
            if key not in sent:
                out.append(f"{where}: recorded {recorded[key]!r:.80}, not sent")
            elif key not in recorded:
                out.append(f"{where}: sent {sent[key]!r:.80}, not recorded")
            else:
                out.extend(json_differences(recorded[key], sent[key], where))
        return out
    if isinstance(recorded, list) and isinstance(sent, list) and len(recorded) == len(sent):
        return [
            d for i, (a, b) in enumerate(zip(recorded, sent)) for d in json_differences(a, b, f"{path}[{i}]")
        ]
    return [] if recorded == sent else [f"{path}: recorded {recorded!r:.80}, sent {sent!r:.80}"]


@check("HARN-02", needs_result=False)
def every_interaction_used(ctx: CheckContext) -> None:
    run = ctx.main
    if run.unused_interactions and not run.timed_out and not run.raised and not run.setup_error:
        unused = [
            f"#{i}: HTTP {run.interactions[i].status} from {run.interactions[i].source}"
            for i in run.unused_interactions
        ]
        fail(ctx, "recorded interactions were never requested (a skipped retry or request)", actual=unused)


@check("HARN-03", needs_result=False)
def returned_within_the_timeout(ctx: CheckContext) -> None:
    if ctx.main.timed_out:
        fail(
            ctx,
            f"generate_step did not return within {ctx.session.settings.timeout} s "
            "(set --helix-timeout to change the limit)",
            details=ctx.main.trace.describe(),
        )


@check("HARN-04")
def no_task_left_pending(ctx: CheckContext) -> None:
    """Only work the adapter left running: the loop's finalisation of async generators is not counted
    (replay/pending.py)."""
    pending = ctx.main.pending_tasks
    if pending:
        more = f" (and {len(pending) - 1} more)" if len(pending) > 1 else ""
        fail(
            ctx,
            f"an asyncio task started by the adapter was still pending after it returned: {pending[0]}{more}",
            actual=pending,
        )
