"""HARN: integrity of the run itself, judged whatever the adapter did with errors."""

from __future__ import annotations

import json
from typing import Any

from ..language import Said
from ..replay.interactions import ReplayInteraction
from ..replay.runner import ScenarioRun
from ..replay.trace import SentRequest
from .common import did_not_return
from .context import CheckContext
from .registry import check, fail


@check("HARN-01", needs_result=False)
def every_request_matched(ctx: CheckContext) -> None:
    run = ctx.main
    endpoint = ctx.sent()
    others = [r.line for r in run.trace.requests if not any(r is e for e in endpoint)]
    if run.unintercepted:
        what, outside_hint = reached_outside(run.unintercepted)
        fail(
            ctx,
            f"{what}: {', '.join(run.unintercepted[:3])}",
            expected="every request sent to AdapterContext.base_url, and no other way out to the network"
            + (" or to other processes" if outside_hint is PROCESS_HINT else ""),
            actual=run.unintercepted + others,
            details=run.trace.describe(),
            hint=outside_hint,
        )
    if others:
        fail(
            ctx,
            f"the adapter sent {len(others)} request(s) that are not the provider call "
            f"({_endpoint(ctx)}): a step makes the provider's request and no other",
            expected=f"only {_endpoint(ctx)}",
            actual=others,
            details=run.trace.describe(),
            hint=Said(
                "A library fetching data while the step runs: LiteLLM downloads its model cost map unless "
                "LITELLM_LOCAL_MODEL_COST_MAP=True; a models-list, token-count or health-check call before the "
                "completion. Turn it off, or do it once outside generate_step.",
                "A library fetching data while the step runs: a models-list, token-count or health-check call "
                "before the completion. Turn it off, or do it once outside generateStep.",
            ),
        )
    unmatched = [r for r in endpoint if r.interaction is None]
    if unmatched:
        first = unmatched[0]
        before = [
            r
            for r in endpoint[: endpoint.index(first)]
            if (r.method, r.url, r.refused) == (first.method, first.url, first.refused)
        ]
        got = received(run, before[-1]) if before else ""
        message, hint = _extra_request(ctx, got, before[-1] if before else None)
        fail(
            ctx,
            message,
            expected=f"{len(run.interactions)} request(s), as recorded",
            actual=[r.line for r in unmatched],
            details=run.trace.describe(),
            hint=hint,
        )

    if ctx.profile.by_regression:
        _requests_equal_the_recorded_ones(ctx)


def _requests_equal_the_recorded_ones(ctx: CheckContext) -> None:
    """The custom profile cannot decode requests, so each must equal the one recorded live (regression)."""
    interactions = ctx.session.interactions()
    for sent in ctx.main.trace.requests:
        if sent.interaction is None or sent.refused:  # a refused connection said nothing to compare
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
        sent = ctx.sent()
        if not sent:
            fail(
                ctx,
                "recorded interactions were never requested: the adapter sent no request to the provider",
                actual=unused,
                hint=NO_REQUEST_HINT,
            )
        last = sent[-1]
        if last.interaction is None:
            fail(
                ctx,
                f"recorded interactions were never requested: the adapter's last request ({last.line}) matched "
                "no recording, so it received the harness's replay error instead",
                actual=unused,
                hint="See HARN-01 on this scenario: the request meant for the unused interaction was not the "
                "recorded one.",
            )
        got = received(run, last)
        fail(
            ctx,
            f"recorded interactions were never requested: after {got} (interaction #{last.interaction}) the "
            "adapter sent no further request",
            actual=unused,
            hint=_skipped_retry_hint(ctx, run.interactions[last.interaction]),
        )


def reached_outside(unintercepted: list[str]) -> tuple[str, Said]:
    """What the refusals the worker reported amount to, and the hint for it: processes, or the network."""
    if any(word in u for u in unintercepted for word in PROCESS_WORDS):
        return (
            "the adapter tried to start, fork or signal a process, or to reach outside the replay",
            PROCESS_HINT,
        )
    return "the adapter reached for the network elsewhere than its replay host (AdapterContext.base_url)", (
        UNINTERCEPTED_HINT
    )


PROCESS_WORDS = ("process", "fork", "signal", "C function")
"""How the worker's guard words what is not the network (worker/guard.py)."""
PROCESS_HINT = Said(
    "A step runs in the adapter's own process and ends there: a child process would outlive the run and act "
    "beyond the harness's view (the worker refuses os.fork, subprocess, exec, signals to other processes, and "
    "ctypes lookups of the C functions that do the same). Do the work in the step, or outside the adapter.",
    "A step runs in the adapter's own process and ends there: a child process would outlive the run and act "
    "beyond the harness's view. Do the work in the step, or outside the adapter.",
)
UNINTERCEPTED_HINT = Said(
    "The replay answers every request sent to AdapterContext.base_url, whatever the HTTP client (httpx, "
    "aiohttp, requests, urllib); httpx and httpx2, the clients of the official SDKs, reach it whatever URL they "
    "build. Another client with a URL of its own (or a raw socket) goes to the network, which is refused while "
    "a scenario runs. Point the provider client at context.base_url.",
    "The replay answers requests to `context.baseUrl` only: point the SDK's `baseURL` (or your `fetch`) at "
    "it, with no host of the provider's own left in the request.",
)
NO_REQUEST_HINT = Said(
    "The step returned before any request reached the replay; its result says why. Usual causes: an error "
    "while building the request, caught into an ErrorStepResult; a setting the harness does not provide (take "
    "the key and base URL from AdapterContext, not the environment); a client that ignores context.base_url, "
    "whose connection or DNS lookup fails.",
    "The step returned before any request reached the replay; its result says why. Usual causes: an error "
    "while building the request, caught into an error result; a setting the harness does not provide (take "
    "`apiKey` and `baseUrl` from the context `createAdapter` gets, not `process.env`); a request sent "
    "elsewhere than `context.baseUrl`.",
)


def received(run: ScenarioRun, request: SentRequest) -> str:
    """What the adapter got back for ``request``, in words: a recorded status, a transport fault, or nothing
    (no recording matched it, so the harness raised its replay error into the client)."""
    if request.interaction is None:
        return "no response (the request matched no recording: the harness raised its replay error)"
    interaction = run.interactions[request.interaction]
    if request.refused:
        return "a refused connection (no request sent)"
    if interaction.fault is not None and interaction.fault.kind in ("connect_error", "connect_timeout"):
        return f"a {interaction.fault.kind.replace('_', ' ')} (no response)"
    if interaction.fault is not None:
        return f"HTTP {interaction.status} then a {interaction.fault.kind.replace('_', ' ')} mid-body"
    return f"HTTP {interaction.status}"


def _endpoint(ctx: CheckContext) -> str:
    paths = sorted({f"{i.method} …{ctx.profile.endpoint_tail(i.path)}" for i in ctx.main.interactions})
    return " or ".join(paths) or "the provider's endpoint"


def _max_retries(ctx: CheckContext) -> str:
    value = ctx.scenario.config.get("max_retries")
    name = "config.maxRetries" if ctx.language == "typescript" else "config.max_retries"
    return f"{name}={value}" if value is not None else f"{name} (default 3)"


def _extra_request(ctx: CheckContext, got: str, previous: SentRequest | None) -> tuple[str, str | Said]:
    """HARN-01's message and hint for a request to the endpoint beyond the recorded ones."""
    if previous is None:
        return (
            "the adapter sent more requests to the provider than the recording holds (every recorded "
            "interaction had been used)",
            Said(
                "A second provider call in one step (a retry nothing asked for, a follow-up or count request); "
                "one generate_step makes one call, plus the retries the recording contains.",
                "A second provider call in one step (a retry nothing asked for, a follow-up or count request); "
                "one generateStep makes one call, plus the retries the recording contains.",
            ),
        )
    message = f"the same request was sent again after {got}: a retry the recording does not contain"
    if previous.interaction is None:
        return message, (
            "The earlier request already matched no recording (its method or path differ from the recorded "
            f"{_endpoint(ctx)}: see the trace); retrying the harness's replay error cannot help. Fix the "
            "request, and do not retry an error that is not the provider's."
        )
    interaction = ctx.main.interactions[previous.interaction]
    if interaction.fault is None and interaction.status in NOT_RETRYABLE:
        return message, (
            f"An HTTP {interaction.status} is not retryable (ERR-01, ERR-02): the SDK or a wrapper retried it "
            "anyway. The official SDKs retry only 408/409/429/5xx; a wrapper that retries every exception (or "
            "stacks its retries on the SDK's) sends it again."
        )
    what = "transport error" if interaction.fault is not None else f"HTTP {interaction.status}"
    allows = f"The adapter, its HTTP client or its SDK retried the {what} more often than {_max_retries(ctx)} allows"
    return message, Said(
        f"{allows} (CFG-03): build the SDK client with max_retries=0 and retry in the adapter, or pass max_retries "
        "through; a library that reconnects on its own after a connection error adds a retry of its own.",
        f"{allows} (CFG-03): build the SDK client with `maxRetries: 0` and retry in the adapter, or pass "
        "`config.maxRetries` through; a library that reconnects on its own after a connection error adds a "
        "retry of its own.",
    )


NOT_RETRYABLE = frozenset({400, 401, 403, 404, 413, 422})


def _skipped_retry_hint(ctx: CheckContext, interaction: ReplayInteraction) -> str | Said:
    if interaction.fault is not None:
        return (
            f"The recording retries after this {interaction.fault.kind.replace('_', ' ')}: transport errors "
            f"are retryable (ERR-02), and {_max_retries(ctx)} asks for the retry (CFG-03). A library that "
            "makes the request lazily, after its retry wrapper returned, skips it."
        )
    if interaction.status >= 400:
        retries = f"The recording retries after this HTTP {interaction.status} ({_max_retries(ctx)}, CFG-03)"
        return Said(
            f"{retries}: not retrying, giving up after the first 429/5xx, or turning the SDK's retries off "
            "(max_retries=0) without retrying in the adapter.",
            f"{retries}: not retrying, giving up after the first 429/5xx, or turning the SDK's retries off "
            "(`maxRetries: 0`) without retrying in the adapter.",
        )
    return (
        "The recording holds another request after a successful response: the step stopped short of a "
        "request the scenario makes."
    )


@check("HARN-03", needs_result=False)
def returned_within_the_timeout(ctx: CheckContext) -> None:
    if ctx.main.timed_out:
        fail(
            ctx,
            f"{did_not_return(ctx.main, ctx.session.settings.timeout)} (set --helix-timeout to change the limit)",
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
            Said(
                f"an asyncio task started by the adapter was still pending after it returned: {pending[0]}{more}",
                f"a timer the adapter scheduled was still pending after its step settled: {pending[0]}{more}",
            ),
            actual=pending,
        )
