"""What a key looks like: one table of key patterns, read by the recorder's scrubber and by the secret scan.

The scrubber (``scrub.py``) replaces every match in what it writes; the scan (``scan.py``) reports every match
it finds. Both call ``find_keys``, so a key type the scan knows is never written by the recorder, and a key
the scrubber would replace is never missed by the scan: they cannot drift apart (a 32-hex Azure key was
reported by one and not the other before).

A 32-hex value is a key only as a whole value (a header, a field) or right after a word like ``key``: hex
also spells hashes, trace ids and request ids, which stay. Identifier fields and headers (``id``, ``*_id``,
``x-request-id``) are never read as hex keys (``identifier``); the other patterns apply everywhere.

Beside the patterns, the **keys in use** (``known``: the key the recorder recorded with) are keys whatever
they look like, found in any case: the scrubber replaces them in every form it knows, and the scan looks
for them wherever it reads, including where the scrubber cannot (a key streamed in pieces across a stream's
deltas, a 32-hex key a provider echoes upper-cased), so the recorder refuses instead of writing one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("anthropic key", re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}")),
    ("openrouter key", re.compile(r"(?<![\w-])sk-or-v1-[0-9a-f]{32,}")),
    ("openai key", re.compile(r"(?<![\w-])sk-(?!ant-|or-)[A-Za-z0-9_-]{20,}")),
    ("google api key", re.compile(r"AIza[0-9A-Za-z_-]{35}")),
    ("google oauth token", re.compile(r"(?<![\w-])ya29\.[0-9A-Za-z_-]{20,}")),
    ("groq key", re.compile(r"(?<![\w-])gsk_[A-Za-z0-9]{40,}")),
    ("huggingface token", re.compile(r"(?<![\w-])hf_[A-Za-z0-9]{30,}")),
    ("AWS access key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("github token", re.compile(r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("slack token", re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("JWT", re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer token", re.compile(r"\bbearer\s+([A-Za-z0-9._~+/-]{7,}[A-Za-z0-9_~+/-]=*)", re.IGNORECASE)),
    ("credentials in URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@")),
)
"""(kind, pattern), most specific first; the first group, where there is one, is the secret."""
HEX_KEY_KIND = "hex key"
KNOWN_KEY_KIND = "the key in use"
MIN_KNOWN_LENGTH = 8
"""Shorter keys in use are not looked for: ``test`` would be found in every text."""
HEX_KEY = re.compile(r"(?<![\w-])(?:[0-9a-f]{32}|[0-9A-F]{32})(?![\w-])")
_KEY_WORD_BEFORE = re.compile(r"(?:key|secret|token|password|credential)s?[\"']?\W{0,4}$", re.IGNORECASE)
_PLACEHOLDER_RE = re.compile(
    r"(?:bearer\s+)?[<\[({*]*(?:scrubbed|redacted|filtered|removed|hidden|masked|dummy|placeholder)[>\])}*]*"
    r"|\**|x{3,}",
    re.IGNORECASE,
)
IDENTIFIER_NAMES = frozenset({"id", "cf-ray", "system_fingerprint", "etag", "report-to", "nel"})


@dataclass(frozen=True)
class FoundKey:
    """One key in a text: its kind, where it sits (``start``, ``end``) and why it reads as a key."""

    kind: str
    start: int
    end: int
    secret: str
    why: str


def is_placeholder(value: str) -> bool:
    """True for an empty value or one that plainly stands in for a secret (``<scrubbed>``, ``REDACTED``...)."""
    return _PLACEHOLDER_RE.fullmatch(value.strip()) is not None


def identifier(name: str | None) -> bool:
    """A field or header named as an identifier (``id``, ``tool_call_id``, ``x-request-id``): its hex value is
    an id, not a key."""
    return name is not None and (name in IDENTIFIER_NAMES or name.endswith(("_id", "Id", "-id")))


def _token_like(secret: str) -> bool:
    """A bearer token or URL password, not a word: ``Bearer authentication`` is prose."""
    return any(c.isdigit() for c in secret) or len(secret) >= 24


def hex_key_like(token: str, text: str, start: int) -> bool:
    """A 32-hex token at ``start`` of ``text`` reads as a key, not a hash, id or URL part: digits and letters
    mixed, and either the whole value (a header, a field) or right after a word like ``key``."""
    if not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)):
        return False
    if text.strip() == token:
        return True
    return _KEY_WORD_BEFORE.search(text[max(0, start - 24) : start]) is not None


def find_keys(text: str, *, hex_keys: bool = True, known: Sequence[str] = ()) -> list[FoundKey]:
    """Every key in ``text`` by the table, without overlaps (the key in use first, then the more specific
    pattern). ``hex_keys`` is false for an identifier's value."""
    found: list[FoundKey] = []

    def free(start: int, end: int) -> bool:
        return not any(start < k.end and k.start < end for k in found)

    folded = text.casefold()
    for key in known:
        if len(key) < MIN_KNOWN_LENGTH:
            continue
        start = folded.find(key.casefold())
        while start >= 0:
            if free(start, start + len(key)):
                secret = text[start : start + len(key)]
                found.append(
                    FoundKey(KNOWN_KEY_KIND, start, start + len(key), secret, "the key recorded with")
                )
            start = folded.find(key.casefold(), start + 1)

    for kind, pattern in KEY_PATTERNS:
        for match in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            secret = match.group(group)
            if pattern.groups and (is_placeholder(secret) or not _token_like(secret)):
                continue
            if free(*match.span(group)):
                found.append(FoundKey(kind, *match.span(group), secret, f"matches the {kind} pattern"))
    if hex_keys:
        for match in HEX_KEY.finditer(text):
            if hex_key_like(match.group(), text, match.start()) and free(*match.span()):
                why = "32 hex characters as a whole value or after 'key': the form of an Azure OpenAI key"
                found.append(FoundKey(HEX_KEY_KIND, *match.span(), match.group(), why))
    return sorted(found, key=lambda k: k.start)


def replace_keys(text: str, placeholder: str, *, hex_keys: bool = True) -> str:
    """``text`` with every key ``find_keys`` finds replaced by ``placeholder``."""
    for key in reversed(find_keys(text, hex_keys=hex_keys)):
        text = text[: key.start] + placeholder + text[key.end :]
    return text
