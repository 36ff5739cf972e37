"""Every number in README.md and docs/*.md, found and classified, so none can go stale unnoticed.

A number in the docs is one of:

- **generated**: inside ``<!-- generated: NAME -->`` … ``<!-- /generated -->``; a test renders NAME from the code
  or a real run and compares (``HELIX_UPDATE_DOCS=1`` rewrites the region);
- **measured**: inside ``<!-- measured: WHEN; WHERE; HOW -->`` … ``<!-- /measured -->``, a record of one
  measurement (a benchmark, a harness-power run) that says when, on what machine and with which command: true of
  that run by construction, and dated so a reader knows its age;
- **checked**: a ``Fact`` below matches it and the test compares it with the value the code has;
- **not a claim about this project**: a clause id, a heading or list number, an HTTP status, a literal in code
  (a fenced input block or an inline code span), a version of a standard — by the rules in ``incidental``;
- **listed**: in ``DECLARED``, with why it cannot drift.

``unclassified`` returns what is none of these: a new number in the docs fails the test until it is placed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

FENCE = re.compile(r"^(```+)([^\n]*)\n(.*?)^\1\s*$", re.M | re.S)
INPUT_LANGS = {"sh", "bash", "python", "toml", "yaml", "yml", "json", "ini", "ts", "typescript", "js", "mjs"}
"""Fenced blocks of these languages are input (commands, code, config): their numbers are literals."""
CHECKED_BLOCKS = {
    ("docs/writing-an-adapter.md", "text"): "tests/test_writing_an_adapter_doc.py runs the guide and "
    "finds every line of each excerpt in the output (times aside)"
}
"""Output excerpts a test compares with a real run."""
REGION = re.compile(r"<!-- (generated|measured): ([^>]*?) -->\n(.*?)<!-- /\1 -->", re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
CLAUSE_ID = re.compile(r"\b[A-Z]{2,5}-\d\d(?:(?:/|\.\.)\d\d)*\b")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
NUMBER = re.compile(r"(?<![\w.\-/#])\d+(?:[.,]\d+)*(?![\w\-])")
HTTP_STATUSES = {
    "200",
    "400",
    "401",
    "403",
    "404",
    "408",
    "409",
    "413",
    "422",
    "429",
    "500",
    "502",
    "503",
    "504",
    "529",
}


@dataclass(frozen=True)
class Number:
    path: Path
    line: int
    text: str
    """The number as written."""
    context: str
    """The line it is on (code spans and links blanked)."""

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}: {self.text!r} in: {self.context.strip()[:140]}"


@dataclass(frozen=True)
class Fact:
    """A number the docs state about the code, found by ``pattern`` (its first group) and compared with
    ``value()``: the pattern must match at least once, so a fact cannot vanish from the docs unnoticed."""

    doc: str
    pattern: str
    value: Callable[[], str]
    why: str = ""

    def matches(self, text: str) -> list[re.Match[str]]:
        return list(re.finditer(self.pattern, text))


def regions(text: str) -> Iterator[tuple[str, str, int, int]]:
    """(kind, header, start, end) of every generated or measured region of ``text``."""
    for match in REGION.finditer(text):
        yield match.group(1), match.group(2), match.start(), match.end()


def numbers(path: Path) -> Iterator[tuple[Number, int]]:
    """Every number of ``path`` outside the regions, input blocks, code spans, link targets and clause ids,
    with its offset in the file."""
    text = path.read_text(encoding="utf-8")
    blank = list(text)
    for _, _, start, end in regions(text):
        blank[start:end] = [c if c == "\n" else " " for c in text[start:end]]
    cleaned = "".join(blank)
    doc = str(path.relative_to(ROOT))
    for match in FENCE.finditer(cleaned):
        lang = match.group(2).strip().split(" ")[0].split("{")[0]
        if lang in INPUT_LANGS or (doc, lang) in CHECKED_BLOCKS:
            start, end = match.span()
            cleaned = (
                cleaned[:start] + "".join(c if c == "\n" else " " for c in cleaned[start:end]) + cleaned[end:]
            )
    offset = 0
    for number, line in enumerate(cleaned.splitlines(keepends=True), 1):
        shown = CODE_SPAN.sub(lambda m: " " * len(m.group()), line)
        shown = LINK_TARGET.sub(lambda m: " " * len(m.group()), shown)
        shown = CLAUSE_ID.sub(lambda m: " " * len(m.group()), shown)
        for found in NUMBER.finditer(shown):
            yield Number(path, number, found.group(), shown), offset + found.start()
        offset += len(line)


def incidental(number: Number) -> bool:
    """Numbers that state nothing about this project: headings and list items, HTTP statuses, exit codes
    (pytest's, tested where they are returned), citations (an **Evidence.** paragraph quotes a provider's
    documentation; tests/test_wire_evidence.py keeps one for each wire rule)."""
    line, text = number.context, number.text
    stripped = line.lstrip()
    if stripped.startswith("**Evidence.**"):
        return True  # a citation: the provider's documentation or an SDK's source, with its version
    if re.match(r"#+ \d+\.", stripped) and stripped.split()[1].rstrip(".") == text:
        return True  # "## 4. The whole gate"
    if re.match(rf"{re.escape(text)}\. \S", stripped):
        return True  # an ordered list item
    if text in HTTP_STATUSES:
        return True
    return bool(re.search(rf"\bexits? {re.escape(text)}\b|\bexit code {re.escape(text)}\b", line))
