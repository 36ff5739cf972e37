"""HARN: integrity of the run itself, judged whatever the adapter did with errors."""

from __future__ import annotations

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
            actual=unmatched + [f"socket to {a}" for a in run.unintercepted],
            details=run.trace.describe(),
        )


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
    if ctx.main.pending_tasks:
        fail(
            ctx,
            "asyncio tasks started by the adapter were still pending after it returned",
            actual=ctx.main.pending_tasks,
        )
