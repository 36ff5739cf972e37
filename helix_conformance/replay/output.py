"""The adapter's console output of one run (``ScenarioRun.output``, kept by drivers), as a failure shows it: a
line repeated back to back once with its count, the first and last lines when there are many. An SDK that
logs every malformed event writes hundreds of the same line; the failure needs to show that it did, once."""

from __future__ import annotations

SHOWN_LINES = 40
"""At most this many lines: the first half and the last half, with how many were left out between."""
LINE_CHARS = 300


def output_excerpt(output: str) -> str:
    """``output`` bounded for a failure's details; empty when the run printed nothing."""
    lines: list[str] = []
    repeats: list[int] = []
    for line in output.rstrip("\n").splitlines():
        shown = line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " …"
        if lines and shown == lines[-1]:
            repeats[-1] += 1
            continue
        lines.append(shown)
        repeats.append(1)
    described = [line if n == 1 else f"{line}   [× {n}, back to back]" for line, n in zip(lines, repeats)]
    if len(described) > SHOWN_LINES:
        half = SHOWN_LINES // 2
        left_out = len(described) - 2 * half
        described = [*described[:half], f"[… {left_out} more lines …]", *described[-half:]]
    return "\n".join(described)


def with_output(details: str, output: str, which: str) -> str:
    """``details`` followed by the excerpt of the output of ``which`` run, when it printed anything."""
    excerpt = output_excerpt(output)
    if not excerpt:
        return details
    section = f"the adapter's stdout/stderr during {which}:\n" + "\n".join(
        "  " + line for line in excerpt.splitlines()
    )
    return f"{details}\n{section}" if details else section
