"""A run's console output as a failure shows it (replay/output.py): bounded, repeats collapsed, nothing when the
adapter printed nothing."""

from __future__ import annotations

from helix_conformance.replay.output import SHOWN_LINES, output_excerpt, with_output


def test_back_to_back_repeats_are_one_line_with_their_count() -> None:
    text = "start\n" + "Could not parse message into JSON\n" * 250 + "end\nend\n"
    assert output_excerpt(text).splitlines() == [
        "start",
        "Could not parse message into JSON   [× 250, back to back]",
        "end   [× 2, back to back]",
    ]


def test_many_lines_keep_their_start_and_end_and_long_lines_are_cut() -> None:
    text = "\n".join(f"line {i}" for i in range(500)) + "\n" + "x" * 1000
    shown = output_excerpt(text).splitlines()
    assert len(shown) == SHOWN_LINES + 1
    assert shown[0] == "line 0"
    assert shown[SHOWN_LINES // 2] == f"[… {501 - SHOWN_LINES} more lines …]"
    assert shown[-1] == "x" * 300 + " …"


def test_details_gain_a_section_only_when_something_was_printed() -> None:
    assert with_output("trace", "", "the run") == "trace"
    assert (
        with_output("trace", "hello\n", "the run")
        == "trace\nthe adapter's stdout/stderr during the run:\n  hello"
    )
    assert with_output("", "hello", "the run") == "the adapter's stdout/stderr during the run:\n  hello"
