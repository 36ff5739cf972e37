"""TOOL-02's valid instance of a ``pattern`` schema: the simplest match, walked out of the pattern."""

from __future__ import annotations

import re

import pytest
from hypothesis import find, settings
from hypothesis import strategies as st

from helix_conformance.checks.regex_example import simplest_match
from helix_conformance.checks.schema_equivalence import NO_MATCH, _simplest_match


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"^ord_[0-9]+$", "ord_0"),
        (r"^ORD-[0-9]{4}$", "ORD-0000"),
        (r"(ab|c)+\d{2}", "ab00"),
        (r"[^a-z0-9]x?", "A"),
        (r"\w\s\S\W.", "0 0 a"),
        (r"(?i)id-[A-F]{2,}", "id-AA"),
        (r"^$", ""),
        (r"[^\d]", "a"),
    ],
)
def test_the_simplest_match_is_walked_out_of_the_pattern(pattern: str, expected: str) -> None:
    assert simplest_match(pattern) == expected
    assert re.fullmatch(pattern, expected)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)a", r"(?<!b)c", r"[^\x00-\U0010ffff]", "[unclosed"])
def test_what_the_walk_cannot_say_is_none_and_left_to_hypothesis(pattern: str) -> None:
    assert simplest_match(pattern) is None


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(x|y)z\1"])
def test_the_caller_still_finds_a_match_where_the_walk_cannot(pattern: str) -> None:
    assert re.fullmatch(pattern, _simplest_match(pattern))


@pytest.mark.parametrize("pattern", [r"^ord_[0-9]+$", r"^ORD-[0-9]{4}$", r"[a-z]{3}_\d"])
def test_it_is_what_hypothesis_shrank_to_before(pattern: str) -> None:
    """The instances TOOL-02 compares did not change with the walk (the scenarios' patterns)."""
    shrunk = find(st.from_regex(pattern, fullmatch=True), lambda _: True, settings=settings(database=None))
    assert simplest_match(pattern) == shrunk


@pytest.mark.parametrize("pattern", [r"(?=a)b", r"(?<=x)y"])
def test_a_pattern_nothing_matches_gives_an_instance_instead_of_a_crash(pattern: str) -> None:
    """A user's tool schema may hold such a pattern: TOOL-02 must still judge (the instance is invalid under
    both schemas compared, so it shows no difference), not raise from inside Hypothesis."""
    assert _simplest_match(pattern) == NO_MATCH
