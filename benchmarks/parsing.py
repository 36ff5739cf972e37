"""Stream parsing throughput of the reference adapters against the raw floor and the official SDKs.

Per provider, in the same rounds and alternating: the reference parser, the floor and the SDK each parse the
same large body (``streams.py``). Targets (../shared/DESIGN.md): at least 3x the SDK's speed, and within 2x
of the floor. Peak memory is measured apart, under tracemalloc (which slows parsing down), and reported as
the peak allocated while parsing, beside the size of the body.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

from measure import Row, Samples, interleave, timed, verdict
from streams import LargeStream, large_stream, parse_floor, parse_reference, parse_sdk

SDK_TARGET = 3.0
FLOOR_TARGET = 2.0


def _rate(stream: LargeStream, samples: Samples) -> str:
    return f"{stream.events / samples.median / 1000:.0f} k events/s"


def peak_memory(stream: LargeStream) -> int:
    """Bytes allocated at the peak while the reference parser reads the stream (the chunks already exist)."""
    chunks = stream.chunks()
    tracemalloc.start()
    try:
        parse_reference(stream, chunks)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _sides(
    stream: LargeStream, chunks: list[bytes], sdk: Callable[[list[bytes]], int]
) -> dict[str, Callable[[], float]]:
    return {
        "reference": timed(lambda: parse_reference(stream, chunks)),
        "floor": timed(lambda: parse_floor(chunks)),
        "sdk": timed(lambda: sdk(chunks)),
    }


def parsing_rows(providers: list[str], events: int, rounds: int) -> tuple[list[Row], list[Samples]]:
    rows: list[Row] = []
    everything: list[Samples] = []
    for provider in providers:
        stream = large_stream(provider, events)
        chunks = stream.chunks()
        sdk = parse_sdk(provider)
        result = parse_reference(stream, chunks)  # warm-up: imports, first-call caches, on every side
        parse_floor(chunks)
        sdk_events = sdk(chunks)
        if type(result).__name__ != "TextStepResult" or sdk_events < stream.events // 2:
            raise RuntimeError(
                f"{provider}: the large stream did not parse ({result!r:.200}, SDK {sdk_events})"
            )
        samples = interleave(_sides(stream, chunks, sdk), rounds)
        everything.extend(samples.values())
        ref, floor, sdk_s = samples["reference"], samples["floor"], samples["sdk"]
        size = f"{stream.events} events, {len(stream.body) / 1e6:.1f} MB"
        vs_sdk = sdk_s.median / ref.median
        vs_floor = ref.median / floor.median
        rows += [
            Row(
                f"parse {provider} ({size}): reference vs SDK",
                f"{_rate(stream, ref)} vs {_rate(stream, sdk_s)}",
                f"≥ {SDK_TARGET:g}× the SDK",
                f"{vs_sdk:.1f}×",
                verdict(vs_sdk >= SDK_TARGET),
            ),
            Row(
                f"parse {provider}: reference vs floor (split + json.loads)",
                f"{_rate(stream, ref)} vs {_rate(stream, floor)}",
                f"≤ {FLOOR_TARGET:g}× the floor's time",
                f"{vs_floor:.2f}×",
                verdict(vs_floor <= FLOOR_TARGET),
            ),
            Row(
                f"parse {provider}: peak memory (tracemalloc)",
                f"{peak_memory(stream) / 1e6:.2f} MB for a {len(stream.body) / 1e6:.1f} MB body",
            ),
        ]
    return rows, everything
