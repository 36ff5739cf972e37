"""The replay engine on its own: how fast it re-streams a body, and how fast cassettes load.

Re-streaming: a large body (thousands of events) served through ``run_scenario`` to an adapter that only
reads the raw bytes with httpx, so what is timed is the harness: interception, the delivery plan, a trace
entry per chunk and, under the default plan, a turn of the event loop before every event (STR-02).

Cassette loading: every YAML file under ``cassettes/`` read by ``load_cassette``, with the C loader
(libyaml's CSafeLoader, used when PyYAML has it) and with the pure-Python SafeLoader, interleaved.
"""

from __future__ import annotations

import time
from typing import Any

from measure import ROOT, Row, Samples, interleave, seconds, timed
from streams import large_stream

_TLS: list[Any] = []


def _reader_spec() -> Any:
    import httpx

    if not _TLS:  # built once, as the reference adapters do: loading the CA bundle costs ~50 ms
        _TLS.append(httpx.create_ssl_context())

    from helix_conformance.contract import AdapterContext, AdapterSpec

    class RawReader:
        """Reads the whole response body and returns; parses nothing."""

        def __init__(self, base_url: str) -> None:
            self.base_url = base_url

        async def generate_step(self, input: Any) -> Any:
            async with httpx.AsyncClient(verify=_TLS[0]) as client:
                request = client.build_request("POST", f"{self.base_url}/chat/completions", json={})
                response = await client.send(request, stream=True)
                async for _ in response.aiter_raw():
                    pass
                await response.aclose()
            return None

    def factory(context: AdapterContext) -> Any:
        return RawReader(context.base_url or "")

    return AdapterSpec(name="bench-reader", factory=factory, wire_profile="openai-chat", model="gpt-4o-mini")


def restream_time(events: int, plan: Any) -> tuple[int, float]:
    """Events served and the wall time of one run re-streaming them under ``plan``."""
    from helix_conformance.profiles import get_profile
    from helix_conformance.replay.interactions import ReplayInteraction
    from helix_conformance.replay.judging import run_scenario
    from helix_conformance.replay.runner import RunOptions
    from helix_conformance.scenarios import get_scenario

    profile = get_profile("openai-chat")
    stream = large_stream("openai", events)
    path = "/v1/chat/completions"
    headers = {"content-type": "text/event-stream"}
    interaction = ReplayInteraction("POST", path, 200, headers, stream.body, None, False, "benchmark")
    started = time.perf_counter()
    run = run_scenario(
        get_scenario("text_basic"), _reader_spec(), profile, [interaction], RunOptions(plan=plan)
    )
    elapsed = time.perf_counter() - started
    if run.raised or run.timed_out or len(run.trace.of("chunk")) == 0:
        raise RuntimeError(f"the re-streaming run failed: {run.raised!r}, timed out: {run.timed_out}")
    return stream.events, elapsed


def load_all(pure: bool) -> int:
    """Load every cassette of the checkout; ``pure`` forces PyYAML's Python loader."""
    import yaml

    from helix_conformance import _yaml
    from helix_conformance.replay import cassette

    original = _yaml._loader_class  # cassettes load through helix_conformance._yaml (refuses bombs first)
    if pure:
        _yaml._loader_class = lambda: yaml.SafeLoader
    try:
        paths = sorted((ROOT / "cassettes").rglob("*.yaml"))
        for path in paths:
            if "interactions" in path.read_text(encoding="utf-8"):
                cassette.load_cassette(path)
        return len(paths)
    finally:
        _yaml._loader_class = original


def replay_rows(events: int, rounds: int) -> tuple[list[Row], list[Samples]]:
    from helix_conformance.replay.delivery import EventPlan, SplitPlan

    restream_time(200, EventPlan())  # warm-up: imports, httpx, the stream classes
    n = large_stream("openai", events).events
    runs = interleave(
        {
            "event": lambda: restream_time(events, EventPlan())[1],
            "whole": lambda: restream_time(events, SplitPlan(()))[1],
        },
        rounds,
    )
    count = load_all(pure=False)
    loads = interleave({"c": timed(lambda: load_all(False)), "pure": timed(lambda: load_all(True))}, rounds)
    event, whole = runs["event"], runs["whole"]
    rows = [
        Row(
            f"replay: re-stream {n} events, one per chunk (default plan)",
            f"{n / event.median / 1000:.1f} k events/s ({seconds(event.median / n)} per event)",
        ),
        Row(
            "replay: the same body in one chunk (fixed cost of a run + trace)",
            f"{seconds(whole.median)} per run",
        ),
        Row(
            f"cassette load: all {count} YAML files, C loader vs pure Python",
            f"{seconds(loads['c'].median)} vs {seconds(loads['pure'].median)}",
            "C loader used when available",
            f"{loads['pure'].median / loads['c'].median:.1f}× faster",
            "yes" if _c_loader() else "no",
        ),
    ]
    return rows, [event, whole, *loads.values()]


def _c_loader() -> bool:
    import yaml

    from helix_conformance._yaml import _loader_class

    c_loader = getattr(yaml, "CSafeLoader", None)
    return c_loader is not None and _loader_class() is c_loader
