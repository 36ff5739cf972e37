"""What helix-conformance costs a project that has it installed but does not pass ``--adapter``.

The plugin loads from the ``pytest11`` entry point ``helix_conformance`` in every pytest run; the "without"
side disables it with ``-p no:helix_conformance``. Both sides run the same subprocess in the same directory,
interleaved, so start-up noise (and PYTHONDONTWRITEBYTECODE recompiling everything) hits both alike.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from measure import Row, Samples, interleave, pytest_wall, seconds, verdict

NO_COST_RATIO = 1.05
"""'No measurable difference': within 5 %, or within the rounds' own spread when that is larger."""

TRIVIAL_TEST = '''"""A project that does not use helix-conformance."""


def test_one() -> None:
    assert 1 + 1 == 2
'''


def _row(figure: str, with_plugin: Samples, without: Samples) -> Row:
    ratio = with_plugin.median / without.median
    allowed = max(NO_COST_RATIO, 1 + max(with_plugin.spread, without.spread) / 2)
    return Row(
        figure,
        f"{seconds(with_plugin.median)} vs {seconds(without.median)} without",
        f"≤ {allowed:.2f}× (no measurable cost)",
        f"{ratio:.2f}×",
        verdict(ratio <= allowed),
    )


def plugin_rows(rounds: int) -> tuple[list[Row], list[Samples]]:
    with tempfile.TemporaryDirectory(prefix="helix-bench-trivial-") as tmp:
        project = Path(tmp)
        (project / "test_trivial.py").write_text(TRIVIAL_TEST, encoding="utf-8")
        off = ["-p", "no:helix_conformance"]
        version = interleave(
            {
                "with": pytest_wall(["--version"], project),
                "without": pytest_wall(["--version", *off], project),
            },
            rounds,
        )
        collect = interleave(
            {
                "with": pytest_wall(["--collect-only", "-q", "-p", "no:cacheprovider"], project),
                "without": pytest_wall(["--collect-only", "-q", "-p", "no:cacheprovider", *off], project),
            },
            rounds,
        )
    rows = [
        _row("plugin cost: pytest --version, with vs without", version["with"], version["without"]),
        _row("plugin cost: trivial collection, with vs without", collect["with"], collect["without"]),
    ]
    return rows, [*version.values(), *collect.values()]
