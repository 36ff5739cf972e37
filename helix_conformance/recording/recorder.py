"""Record scenarios live through the adapter under test and write them as cassettes, safely.

Per scenario: run the adapter with the real key against the provider (``LiveCapture`` forwards its requests),
check the answer stands for the scenario (``live.verify_live``), scrub secrets, scan what is left and refuse
on any hit, write atomically — never over an existing cassette unless the mode is ``rewrite`` — and say what
changed in meaning against the cassette it replaces (``diff.semantic_diff``).
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import platform
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from .. import __version__
from ..contract import AdapterContext, AdapterSpec
from ..profiles.base import WireProfile
from ..profiles.summary import ResponseSummary
from ..replay.cassette import CassetteError, dump_cassette
from ..replay.runner import run_live
from ..scenarios.live import why_not_live
from ..scenarios.model import Scenario
from .capture import CapturedExchange, LiveCapture
from .diff import semantic_diff, summarise_cassette
from .live import observed_result, summary_of_observed, verify_live
from .scan import scan_cassette_data
from .scrub import replace_secrets, scrub_interaction

PROVIDER_KEY_ENV = {
    "openai-chat": "OPENAI_API_KEY",
    "anthropic-messages": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "bedrock-converse": "AWS_BEARER_TOKEN_BEDROCK",
    "cohere-chat": "CO_API_KEY",
}
LIBRARIES = ("httpx", "httpx2", "openai", "anthropic", "google-genai", "botocore", "cohere", "pydantic")
"""Versions written into the provenance when installed: what produced and parsed the bytes."""
MIN_RECORD_TIMEOUT_S = 120.0
"""A live answer (thinking, long text) can take far longer than a replay; the scenario timeout is a floor."""

Action = Literal["recorded", "rewritten", "kept", "authored", "refused", "failed"]


@dataclass(frozen=True)
class RecordOutcome:
    """What recording did for one scenario, and why; ``refused`` and ``failed`` fail the run."""

    scenario: str
    action: Action
    message: str
    path: Path | None = None
    diff: tuple[str, ...] = ()

    @property
    def is_problem(self) -> bool:
        return self.action in ("refused", "failed")

    def lines(self) -> list[str]:
        where = f" {self.path}" if self.path else ""
        head = f"  {self.action:<9} {self.scenario}{where}: {self.message}"
        return [head, *(f"      {line}" for line in self.diff)]


@dataclass(frozen=True)
class RecordSettings:
    mode: str
    root: Path
    """Cassettes are written to ``root/<profile>/<scenario>.yaml``."""
    api_key: str
    base_url: str | None = None
    timeout: float = MIN_RECORD_TIMEOUT_S


def key_env_of(spec: AdapterSpec, profile: WireProfile) -> str | None:
    """The environment variable holding the provider key: the spec's own, else the profile's usual one."""
    return spec.api_key_env or PROVIDER_KEY_ENV.get(profile.name)


def record_suite(
    spec: AdapterSpec,
    profile: WireProfile,
    scenarios: Iterable[Scenario],
    settings: RecordSettings,
    echo: Callable[[str], None] = lambda line: None,
    on_start: Callable[[Scenario], None] = lambda scenario: None,
) -> list[RecordOutcome]:
    """Record every scenario the mode asks for, in order, echoing each outcome as it is known (``on_start``
    is told before each scenario)."""
    folder = settings.root / profile.name
    first_time = not any(folder.glob("*.yaml")) if folder.is_dir() else True
    outcomes = []
    for scenario in scenarios:
        if settings.mode == "once" and not first_time:
            outcome = RecordOutcome(
                scenario.id,
                "kept",
                f"{folder} already holds cassettes and mode 'once' records a profile only the first time "
                "(use --helix-record-mode=new for the missing ones, rewrite to refresh all)",
            )
        else:
            on_start(scenario)
            try:
                outcome = record_scenario(scenario, spec, profile, settings)
            except Exception as exc:  # a bug of ours must not lose the other scenarios' recordings
                outcome = RecordOutcome(
                    scenario.id, "failed", f"recording crashed: {type(exc).__name__}: {exc}"
                )
        outcomes.append(outcome)
        for line in outcome.lines():
            echo(line)
    return outcomes


def record_scenario(
    scenario: Scenario, spec: AdapterSpec, profile: WireProfile, settings: RecordSettings
) -> RecordOutcome:
    reason = why_not_live(scenario)
    if reason is not None:
        return RecordOutcome(scenario.id, "authored", f"no live form: {reason}")
    path = settings.root / profile.name / f"{scenario.id}.yaml"
    if path.exists() and settings.mode != "rewrite":
        return RecordOutcome(scenario.id, "kept", "exists (only mode 'rewrite' replaces a cassette)", path)
    capture = LiveCapture()
    context = AdapterContext(
        api_key=settings.api_key,
        base_url=settings.base_url or profile.default_base_url,
        record_mode=settings.mode,  # type: ignore[arg-type]
    )
    run = run_live(scenario, spec, capture, context, max(settings.timeout, MIN_RECORD_TIMEOUT_S))
    problem = _run_problem(run, capture.exchanges)
    if problem:
        return RecordOutcome(scenario.id, "failed", f"nothing written: {problem}", path)
    refusal = _error_answer(capture.exchanges, run.result, profile, settings.api_key)
    if refusal:
        return RecordOutcome(scenario.id, "refused", f"nothing written: {refusal}", path)
    observed = observed_result(run.result)
    if profile.by_regression:
        summaries = [summary_of_observed(observed)] * len(capture.exchanges)
    else:
        summaries = [
            profile.summarise_response(e.status, e.response_headers, e.body) for e in capture.exchanges
        ]
    mismatch = verify_live(scenario, profile, summaries)
    if mismatch:
        return RecordOutcome(
            scenario.id,
            "refused",
            "not written, the live answer does not stand for the scenario: " + "; ".join(mismatch),
            path,
        )
    secrets = (settings.api_key,)
    try:
        interactions = [
            scrub_interaction(
                _interaction(e, binary=profile.binary_stream),
                extra_headers=profile.secret_headers,
                secrets=secrets,
            )
            for e in capture.exchanges
        ]
    except UnicodeDecodeError:
        return RecordOutcome(scenario.id, "refused", "not written: a body is not UTF-8 text", path)
    provenance = _provenance(scenario, spec, profile, settings, summaries)
    provenance["observed"] = replace_secrets(observed, secrets)  # a key a provider echoes ends up in text
    data = {"provenance": provenance, "interactions": interactions, "version": 1}
    hits = scan_cassette_data(data, where=str(path), secrets=secrets)  # the key in use, in any form left
    if hits:
        found = "; ".join(f"{hit.location}: {hit.kind} ({hit.excerpt})" for hit in hits)
        return RecordOutcome(scenario.id, "refused", f"not written, the secret scan found: {found}", path)
    before = _summaries_of(path, profile)
    existed = path.exists()
    text = dump_cassette(provenance, interactions)
    try:
        _write(path, text, replace=settings.mode == "rewrite")
    except FileExistsError:
        return RecordOutcome(scenario.id, "kept", "appeared while recording; not replaced", path)
    diff = tuple(semantic_diff(before, summaries)) if existed else ()
    if existed:
        message = "re-recorded; " + ("no change in meaning" if not diff else "changed in meaning:")
        return RecordOutcome(scenario.id, "rewritten", message, path, diff)
    return RecordOutcome(scenario.id, "recorded", _describe(summaries[-1]), path)


def _run_problem(run: Any, exchanges: Sequence[CapturedExchange]) -> str | None:
    if run.setup_error:
        return str(run.setup_error)
    failed = [e for e in exchanges if e.error]
    if failed:
        return f"the request to {_host(failed[0].url)} failed: {failed[0].error}"
    if run.timed_out:
        return f"generate_step did not return within {run.options.timeout:.0f} s"
    if run.raised is not None:
        return f"generate_step raised {type(run.raised).__name__}: {run.raised}"
    if not exchanges:
        return "the adapter made no HTTP request through httpx or httpx2 (recording captures only those)"
    return None


def _error_answer(
    exchanges: Sequence[CapturedExchange], result: Any, profile: WireProfile, key: str
) -> str | None:
    """Why the provider's answer is an error and no recording (an HTTP error status, or an error event in
    the stream, which the adapter returned as an error result), in one line without the key."""
    for exchange in exchanges:
        if exchange.status >= 400:
            said = _error_message(exchange.body, key)
            return f"the provider answered HTTP {exchange.status}" + (f": {said}" if said else "")
    if getattr(result, "type", None) != "error":
        return None
    error_type = None
    if not profile.by_regression and exchanges:
        last = exchanges[-1]
        error_type = profile.summarise_response(last.status, last.response_headers, last.body).error_type
    said = _one_line(replace_secrets(str(getattr(result, "error", "")), (key,)))
    if error_type:
        return f"the provider answered an error event ({error_type}): {said}"
    return f"the adapter returned an error result: {said}"


def _error_message(body: bytes, key: str) -> str:
    """The provider's own words from an error body (``error.message`` or ``message``), else its first line."""
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, list) and data:  # Gemini's non-streaming errors come as a one-element list
        data = data[0]
    if isinstance(data, dict):
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else data.get("message")
        if isinstance(message, str):
            text = message
    return _one_line(replace_secrets(text, (key,)))


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"


def _interaction(exchange: CapturedExchange, *, binary: bool = False) -> dict[str, Any]:
    """One exchange as a vcrpy interaction; a binary stream (AWS event-stream) keeps its bytes (``!!binary``)."""
    body: str | bytes = exchange.body
    if not binary or exchange.status >= 400:  # error bodies are JSON text on every profile
        body = exchange.body.decode("utf-8")
    return {
        "request": {
            "method": exchange.method,
            "uri": exchange.url,
            "body": exchange.request_body.decode("utf-8") or None,
            "headers": {k: [v] for k, v in exchange.request_headers.items()},
        },
        "response": {
            "status": {"code": exchange.status, "message": "OK" if exchange.status == 200 else ""},
            "headers": {k: [v] for k, v in exchange.response_headers.items()},
            "body": {"string": body},
        },
    }


def _provenance(
    scenario: Scenario,
    spec: AdapterSpec,
    profile: WireProfile,
    settings: RecordSettings,
    summaries: Sequence[ResponseSummary],
) -> dict[str, Any]:
    return {
        "kind": "recorded",
        "scenario": scenario.id,
        "profile": profile.name,
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "model": spec.model,
        "adapter": spec.name,
        "adapter_package": _package_of(spec),
        "host": _host(settings.base_url or profile.default_base_url),
        "record_mode": settings.mode,
        "harness": f"helix-conformance {__version__}",
        "python": platform.python_version(),
        "libraries": _library_versions(),
        "verified": _verified(scenario, summaries),
    }


def _verified(scenario: Scenario, summaries: Sequence[ResponseSummary]) -> list[str]:
    """What recording checked of the live answer (``live.verify_live``), kept as evidence in the cassette."""
    last = summaries[-1]
    facts = [f"result type {last.result_type}", f"stop reason {last.stop_reason}"]
    if last.tool_calls:
        facts.append("tool calls " + ", ".join(c.name for c in last.tool_calls))
    if scenario.live_token:
        facts.append(f"repeats {scenario.live_token!r} from the tool result")
    return facts


def _package_of(spec: AdapterSpec) -> str:
    module = getattr(spec.factory, "__module__", "") or ""
    top = module.split(".")[0]
    for dist in _distributions().get(top, []):
        try:
            return f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return module or "unknown"


@functools.lru_cache(maxsize=1)
def _distributions() -> Mapping[str, list[str]]:
    """Top-level module -> distributions; reading every installed distribution once is enough."""
    return metadata.packages_distributions()


def _library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


def _describe(summary: ResponseSummary) -> str:
    parts = [summary.result_type, f"stop {summary.stop_reason}"]
    if summary.text:
        parts.append(f"{len(summary.text)} chars of text")
    if summary.tool_calls:
        parts.append("calls " + ", ".join(c.name for c in summary.tool_calls))
    return ", ".join(parts)


def _summaries_of(path: Path, profile: WireProfile) -> list[ResponseSummary]:
    """The cassette being replaced, read back for the diff; an unreadable one counts as empty."""
    try:
        return summarise_cassette(profile, path)
    except CassetteError:
        return []


def _write(path: Path, text: str, *, replace: bool) -> None:
    """Write atomically; without ``replace`` an existing file is never overwritten (FileExistsError)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # atomic, and fails if the path exists
    finally:
        Path(tmp).unlink(missing_ok=True)
