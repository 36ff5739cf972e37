"""Speed on adapters written elsewhere: the official-SDK examples against the reference adapters, an adapter
left on its SDK's retry and timeout defaults, a wrong profile, and pytest-xdist.

Every figure is a ``pytest --adapter=...`` subprocess in an empty directory, measured in the same interleaved
rounds as the figure it is compared with. ``--before REV`` measures the same figures on another commit of
this repository (checked out into a temporary git worktree and put first on ``PYTHONPATH``), in the same
rounds, so a change's effect is read from one run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from measure import ROOT, Row, Samples, interleave, pytest_wall, seconds, verdict, with_noise

EXAMPLES = {"openai": "openai-sdk", "anthropic": "anthropic-sdk", "gemini": "gemini-sdk"}
EXAMPLE_RATIO_TARGET = 1.5
EXAMPLE_WALL_TARGET_S = 20.0
SLOW_RETRY_RATIO_TARGET = 1.5
WRONG_PROFILE_TARGET_S = 15.0
ADAPTERS_MODULE = Path(__file__).resolve().parent / "adapters" / "sdk_defaults.py"


@dataclass(frozen=True)
class Version:
    """The code a figure runs: this checkout, or another commit put first on PYTHONPATH."""

    label: str
    env: dict[str, str]


@contextmanager
def versions(before: str | None) -> Iterator[list[Version]]:
    """This checkout, and with ``before`` that commit in a temporary worktree (removed afterwards)."""
    now = Version("now", {})
    if before is None:
        yield [now]
        return
    tmp = Path(tempfile.mkdtemp(prefix="helix-before-"))
    tree = tmp / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), before], check=True)
    try:
        yield [now, Version(f"before ({before})", {"PYTHONPATH": str(tree)})]
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def speed_rows(
    rounds: int, before: str | None = None, workers: tuple[int, ...] = (2, 4)
) -> tuple[list[Row], list[Samples]]:
    with tempfile.TemporaryDirectory(prefix="helix-speed-") as tmp, versions(before) as codes:
        cwd = Path(tmp)
        shutil.copy(ADAPTERS_MODULE, cwd / "sdk_defaults.py")  # importable from the run's directory
        figures: dict[str, Callable[[], float]] = {}
        cpu: dict[str, list[float]] = {}  # the CPU seconds of the xdist rows and their serial run
        for code in codes:

            def wall(
                *args: str, ok: tuple[int, ...] = (0, 5), code: Version = code, cpu_of: str = ""
            ) -> Callable[[], float]:
                log = cpu.setdefault(cpu_of, []) if cpu_of else None
                return pytest_wall([*args, "-q", "-p", "no:randomly"], cwd, env=code.env, ok=ok, cpu=log)

            for reference, example in EXAMPLES.items():
                cpu_of = f"{code.label}|openai" if reference == "openai" else ""
                figures[f"{code.label}|{reference}"] = wall(f"--adapter={reference}", cpu_of=cpu_of)
                figures[f"{code.label}|{example}"] = wall(f"--adapter={example}", ok=(0, 1))
            figures[f"{code.label}|sdk-defaults"] = wall("--adapter=sdk_defaults:spec", ok=(0, 1))
            figures[f"{code.label}|wrong-profile"] = wall("--adapter=sdk_defaults:wrong_profile", ok=(1,))
            for n in workers:
                key = f"{code.label}|openai -n {n}"
                figures[key] = wall("--adapter=openai", "-n", str(n), cpu_of=key)
        figures["now|openai one worker"] = pytest_wall(
            ["--adapter=openai", "--helix-workers=1", "-q", "-p", "no:randomly"], cwd
        )
        figures["now|openai-sdk one worker"] = pytest_wall(
            ["--adapter=openai-sdk", "--helix-workers=1", "-q", "-p", "no:randomly"], cwd, ok=(0, 1)
        )
        figures["now|sdk-defaults real time"] = pytest_wall(
            ["--adapter=sdk_defaults:spec", "--helix-real-time", "-q"], cwd, ok=(0, 1)
        )
        samples = interleave(figures, rounds)
    cpu_samples = {key: Samples(tuple(values)) for key, values in cpu.items()}
    return _rows(samples, cpu_samples, [c.label for c in codes], workers), list(samples.values())


def _rows(
    samples: dict[str, Samples], cpu: dict[str, Samples], labels: list[str], workers: tuple[int, ...]
) -> list[Row]:
    rows: list[Row] = []
    for label in labels:
        got = {key.split("|", 1)[1]: value for key, value in samples.items() if key.startswith(f"{label}|")}
        rows.append(Row(f"**{label}**", ""))
        for reference, example in EXAMPLES.items():
            ref, ex = got[reference], got[example]
            ratio = ex.median / ref.median
            rows.append(
                Row(
                    f"example {example} vs reference {reference}",
                    f"{with_noise(seconds(ex.median), ex)} vs {with_noise(seconds(ref.median), ref)}",
                    f"≤ {EXAMPLE_RATIO_TARGET:g}× and ≤ {EXAMPLE_WALL_TARGET_S:g} s",
                    f"{ratio:.2f}×",
                    verdict(ratio <= EXAMPLE_RATIO_TARGET and ex.median <= EXAMPLE_WALL_TARGET_S),
                )
            )
        slow, ref = got["sdk-defaults"], got["openai"]
        rows.append(
            Row(
                "SDK defaults (2 retries, backoff with jitter, 600 s timeout) vs reference openai",
                f"{with_noise(seconds(slow.median), slow)}",
                f"≤ {SLOW_RETRY_RATIO_TARGET:g}×",
                f"{slow.median / ref.median:.2f}×",
                verdict(slow.median / ref.median <= SLOW_RETRY_RATIO_TARGET),
            )
        )
        same = got["openai-sdk"]
        rows.append(
            Row(
                "  the same vs example openai-sdk (one SDK, its timers and client the only difference)",
                f"{seconds(slow.median)} vs {seconds(same.median)}",
                ratio=f"{slow.median / same.median:.2f}×",
            )
        )
        if label == "now":
            real = samples["now|sdk-defaults real time"]
            rows.append(
                Row(
                    "  the same with --helix-real-time (timers waited out, as before virtual time)",
                    with_noise(seconds(real.median), real),
                    ratio=f"{real.median / slow.median:.2f}× virtual",
                )
            )
        if label == "now":
            for name in ("openai", "openai-sdk"):
                one = samples[f"now|{name} one worker"]
                rows.append(
                    Row(
                        f"  {name} with one adapter worker (--helix-workers=1) vs two (the default here)",
                        f"{with_noise(seconds(one.median), one)} vs {seconds(got[name].median)}",
                        ratio=f"{got[name].median / one.median:.2f}× with two",
                    )
                )
        wrong = got["wrong-profile"]
        rows.append(
            Row(
                "wrong profile (OpenAI adapter declared anthropic-messages): wall to the stop",
                with_noise(seconds(wrong.median), wrong),
                f"≤ {WRONG_PROFILE_TARGET_S:g} s",
                f"{wrong.median / WRONG_PROFILE_TARGET_S:.2f}× target",
                verdict(wrong.median <= WRONG_PROFILE_TARGET_S),
            )
        )
        serial_cpu = cpu[f"{label}|openai"].median
        for n in workers:
            par, par_cpu = got[f"openai -n {n}"], cpu[f"{label}|openai -n {n}"].median
            rows.append(
                Row(
                    f"pytest-xdist -n {n} vs serial (reference openai; {os.cpu_count()} CPUs here"
                    f"{', so more workers than cores' if n > (os.cpu_count() or 1) else ''})",
                    f"{with_noise(seconds(par.median), par)} vs {seconds(ref.median)}",
                    "< 1× (faster)",
                    f"{par.median / ref.median:.2f}×",
                    verdict(par.median < ref.median),
                )
            )
            rows.append(
                Row(
                    "  its CPU (user + system of pytest and every worker) vs serial's",
                    f"{seconds(par_cpu)} vs {seconds(serial_cpu)}",
                    ratio=f"{par_cpu / serial_cpu:.2f}×",
                )
            )
    return rows
