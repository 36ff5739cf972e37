"""The simplest string a regular expression matches, for TOOL-02's valid instances of a ``pattern`` schema.

Hypothesis's ``from_regex`` builds its Unicode tables first: 1.6 s of every fresh run (CI, a new checkout)
for a string like ``ord_0``. Patterns in tool schemas are short literals, classes and repeats, so this walks
the parsed pattern and takes the least of each part: the fewest repeats, the first branch, the first
character of a class. The answer is checked with ``re``; ``None`` where the walk cannot say (lookarounds,
backreferences, a class it cannot satisfy), and the caller asks Hypothesis then.
"""

from __future__ import annotations

import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    from re import _constants as sre
    from re import _parser as sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_constants as sre
    import sre_parse

_CATEGORIES = {
    sre.CATEGORY_DIGIT: ("0", r"\d"),
    sre.CATEGORY_NOT_DIGIT: ("a", r"\D"),
    sre.CATEGORY_WORD: ("0", r"\w"),
    sre.CATEGORY_NOT_WORD: (" ", r"\W"),
    sre.CATEGORY_SPACE: (" ", r"\s"),
    sre.CATEGORY_NOT_SPACE: ("0", r"\S"),
}
"""Each class escape: its simplest character, and its source inside a class."""
_CANDIDATES = "0aA _-.!~" + "".join(chr(c) for c in range(0x21, 0x7F))


class _Unsure(Exception):
    """A construct the walk does not handle."""


def simplest_match(pattern: str) -> str | None:
    """The least string ``pattern`` fully matches, or None where this walk cannot tell."""
    try:
        parsed = sre_parse.parse(pattern)
        found = _sequence(list(parsed.data))
    except (_Unsure, re.error, RecursionError, OverflowError):
        return None
    return found if re.fullmatch(pattern, found) else None


def _sequence(items: list[tuple[Any, Any]]) -> str:
    return "".join(_item(op, av) for op, av in items)


def _item(op: Any, av: Any) -> str:
    if op is sre.LITERAL:
        return chr(av)
    if op is sre.AT:
        return ""
    if op is sre.ANY:
        return "a"
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
        least, _most, body = av
        return _sequence(list(body)) * int(least)
    if op is sre.SUBPATTERN:
        return _sequence(list(av[-1]))
    if op is getattr(sre, "ATOMIC_GROUP", None):
        return _sequence(list(av))
    if op is sre.BRANCH:
        return _sequence(list(av[1][0]))
    if op is sre.IN:
        return _in_class(list(av))
    if op is sre.NOT_LITERAL:
        return next(c for c in _CANDIDATES if ord(c) != av)
    raise _Unsure(str(op))


def _in_class(items: list[tuple[Any, Any]]) -> str:
    """The class's first character; a negated class takes the first candidate it does not exclude."""
    if items and items[0][0] is sre.NEGATE:
        pattern = re.compile("[" + _class_source(items[1:]) + "]")
        return next((c for c in _CANDIDATES if not pattern.match(c)), "") or _unsure("negated class")
    for op, av in items:
        if op is sre.LITERAL:
            return chr(av)
        if op is sre.RANGE:
            return chr(av[0])
        if op is sre.CATEGORY and av in _CATEGORIES:
            return _CATEGORIES[av][0]
    return _unsure("character class")


def _class_source(items: list[tuple[Any, Any]]) -> str:
    parts = []
    for op, av in items:
        if op is sre.LITERAL:
            parts.append(re.escape(chr(av)))
        elif op is sre.RANGE:
            parts.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif op is sre.CATEGORY and av in _CATEGORIES:
            parts.append(_CATEGORIES[av][1])
        else:
            _unsure("character class")
    return "".join(parts)


def _unsure(what: str) -> str:
    raise _Unsure(what)
