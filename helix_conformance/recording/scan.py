"""Scanning a cassette for secrets before it is written, and in pre-commit / CI (``helix-conformance scan``).

Every string is read: URI, headers, request and response bodies, the provenance block. A JSON body (or a
JSON string inside one, like tool-call ``arguments``) and each SSE event's ``data:`` payload are parsed and
walked, so a hit is named precisely: ``interaction 0 › response.body › event 3 › delta.text``.

Reported: key patterns of the major providers and hosts (``PATTERNS``), ``Bearer`` tokens, JWTs, URL
credentials; a credential or account header (``scrub.CREDENTIAL_HEADERS``, ``scrub.ACCOUNT_HEADERS``), a
key-carrying query parameter or a token field holding anything but a placeholder; and random-looking strings
(``looks_random``: 20+ characters mixing case and digits, Shannon entropy over ``ENTROPY_BITS``, and not
made of words and numbers, which keeps model names and URL paths out).

Allowed on purpose, for the random-string heuristic only (a real key pattern is reported wherever it is):

* opaque blobs the providers issue and want echoed back, by the JSON field they sit in (not by value):
  Anthropic thinking ``signature`` and ``redacted_thinking`` ``data``, Gemini ``thoughtSignature`` (and the
  OpenAI-compatible ``thought_signature``), OpenAI ``encrypted_content`` and any other ``encrypted*`` field
  (Anthropic web-search ``encrypted_index``), OpenRouter's ``reasoning.encrypted`` ``data``, and OpenAI's
  ``obfuscation`` padding (random by design);
* identifiers: a field or header named ``id`` or ending in ``_id`` / ``Id`` / ``-id`` (``tool_call_id``,
  ``responseId``, ``request-id``, ``x-request-id``...), ``system_fingerprint``, and the response headers
  ``cf-ray``, ``etag``, ``report-to`` / ``nel`` (Cloudflare's signed report URL); in free text (an error
  message quoting a request id) tokens starting with a provider id prefix (``ID_PREFIXES``);
* inline media: ``data`` beside a ``mimeType`` / ``media_type`` and base64 in ``data:`` URIs.

Lower-case hex (hashes, UUIDs, trace ids) never trips the heuristic, which wants mixed case: hex-format keys
are caught by their prefixes (``sk-or-v1-``) instead.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._yaml import YamlRefused, read_yaml_file
from ..replay.cassette import CassetteError
from .scrub import ACCOUNT_HEADERS, CREDENTIAL_HEADERS, SECRET_BODY_FIELDS, SECRET_QUERY_KEYS, is_placeholder

SEPARATOR = " › "

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
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

MAX_JSON_DEPTH = 64
"""JSON nested deeper is scanned as plain text (no provider nests anywhere near that)."""
ENTROPY_MIN_LENGTH = 20
ENTROPY_BITS = 4.0
"""Bits per character over which a token is random-looking (a little less for tokens under 26 characters)."""
MAX_WORDINESS = 0.5
"""Share of characters in runs of four or more of one class (``lower``, ``UPPER``, ``2024``) above which a
token reads as words and numbers (a model name, a URL path, an identifier) rather than random bytes."""
ID_PREFIXES = (
    "chatcmpl-", "msg_", "toolu_", "srvtoolu_", "call_", "req_", "resp_", "rs_", "fc_", "gen-", "ws_",
)  # fmt: skip
OPAQUE_FIELDS = frozenset(
    {
        "signature",
        "thoughtSignature",
        "thought_signature",
        "encrypted_content",
        "encryptedContent",
        "obfuscation",
    }
)
_OPAQUE_DATA_TYPES = frozenset({"redacted_thinking", "reasoning.encrypted"})
_MEDIA_TYPE_FIELDS = frozenset({"mimeType", "mime_type", "media_type"})
_ID_FIELDS = frozenset({"id", "cf-ray", "system_fingerprint", "etag", "report-to", "nel"})

_HEADER_KINDS = dict.fromkeys(CREDENTIAL_HEADERS, "unscrubbed credential header") | dict.fromkeys(
    ACCOUNT_HEADERS, "unscrubbed account header"
)
"""Headers that must hold a placeholder: any other value is reported (key patterns by their own kind)."""
_TOKEN = re.compile(rf"[A-Za-z0-9+/_-]{{{ENTROPY_MIN_LENGTH},}}=*")
_FORM_FIELD = re.compile(rf"(?:^|[?&\s])(?:{'|'.join(sorted(SECRET_BODY_FIELDS))})=([^&\s]*)")
_SSE_LINE = re.compile(r"^(?:data|event):", re.MULTILINE)
_SSE_EVENT_END = re.compile(r"\r\n\r\n|\n\n|\r\r")
_LINE_END = re.compile(r"\r\n|\n|\r")
_CLASS_RUN = re.compile(r"a{4,}|A{4,}|9{4,}")


@dataclass(frozen=True)
class SecretHit:
    """One secret found: where in the cassette, what it looks like, and a masked excerpt (never the value)."""

    location: str
    kind: str
    excerpt: str
    where: str = ""
    """The cassette (a path, or what the caller passed as ``where``)."""

    def __str__(self) -> str:
        line = f"{self.location}: {self.kind} ({self.excerpt})"
        return f"{self.where}: {line}" if self.where else line


class NotACassette(CassetteError):
    """Valid YAML, but no ``interactions`` list: some other file (``scan`` skips these in directories)."""


class SecretsFound(Exception):
    """Raised instead of writing a cassette that holds secrets; the message lists every hit."""

    def __init__(self, where: str, hits: list[SecretHit]) -> None:
        self.where = where
        self.hits = hits
        lines = "\n".join(f"  {hit.location}: {hit.kind} ({hit.excerpt})" for hit in hits)
        super().__init__(f"refusing to write {where}: {len(hits)} secret(s) found\n{lines}")


def mask(secret: str) -> str:
    """A few leading characters and the length: enough to find the value, never enough to use it."""
    shown = 4 if len(secret) >= 12 else len(secret) // 3
    return f"{secret[:shown]}…({len(secret)} chars)"


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (0 for the empty string)."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def _class(char: str) -> str:
    return "a" if char.islower() else "A" if char.isupper() else "9" if char.isdigit() else char


def wordiness(text: str) -> float:
    """Share of characters in runs of four or more lower-case letters, capitals or digits."""
    in_runs = sum(len(run.group()) for run in _CLASS_RUN.finditer("".join(map(_class, text))))
    return in_runs / len(text) if text else 0.0


def looks_random(token: str) -> bool:
    """The high-entropy heuristic, on the longest ``-``/``_``-separated part of ``token`` (so that
    ``Meta-Llama-3.1-70B-Instruct`` is judged by its words): long, upper and lower case and digits, high
    Shannon entropy, and not made of words and numbers."""
    core = max(re.split(r"[-_]", token.strip("=")), key=len)
    return (
        len(core) >= ENTROPY_MIN_LENGTH
        and any(c.isupper() for c in core)
        and any(c.islower() for c in core)
        and any(c.isdigit() for c in core)
        and shannon_entropy(core) > min(ENTROPY_BITS, 3.1 + 0.035 * len(core))
        and wordiness(core) <= MAX_WORDINESS
    )


def _waived(key: str | None, parent: Mapping[str, Any] | None) -> bool:
    """Whether the field ``key`` (in ``parent``) holds a provider-issued blob or id: no entropy check."""
    if key is None:
        return False
    if key in _ID_FIELDS or key.endswith(("_id", "Id", "-id")):
        return True
    if key in OPAQUE_FIELDS or key.startswith("encrypted"):
        return True
    if key == "data" and parent is not None:
        return parent.get("type") in _OPAQUE_DATA_TYPES or any(f in parent for f in _MEDIA_TYPE_FIELDS)
    return False


class _Scanner:
    """Walks a loaded cassette; ``loc`` is the location so far, ``path`` the JSON path inside its last part."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.hits: list[SecretHit] = []

    def hit(self, loc: tuple[str, ...], kind: str, secret: str) -> None:
        location = SEPARATOR.join(part for part in loc if part)
        self.hits.append(SecretHit(location, kind, mask(secret), self.where))

    def walk(self, value: Any, loc: tuple[str, ...], path: str, key: str | None, waived: bool) -> None:
        if isinstance(value, Mapping):
            for raw_key, item in value.items():
                name = str(raw_key)
                child = _join(path, name)
                if not loc and not path and name == "interactions" and isinstance(item, list):
                    for i, interaction in enumerate(item):
                        self.walk(interaction, (f"interaction {i}",), "", None, False)
                elif name == "headers" and isinstance(item, Mapping):
                    self.headers(item, (*loc, child))
                else:
                    before = len(self.hits)
                    self.walk(item, loc, child, name, _waived(name, value))
                    field_leak = (
                        name in SECRET_BODY_FIELDS and isinstance(item, str) and not is_placeholder(item)
                    )
                    if field_leak and len(self.hits) == before:
                        self.hit((*loc, child), f"secret field {name!r}", item)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                self.walk(item, loc, f"{path}[{i}]", key, waived)
        elif isinstance(value, (str, bytes)):
            text = _decoded(value) if isinstance(value, bytes) else value
            self.string(
                text,
                loc,
                path.removesuffix(".string") if path.endswith(".body.string") else path,
                key,
                waived,
            )

    def headers(self, headers: Mapping[Any, Any], loc: tuple[str, ...]) -> None:
        for raw_name, raw_values in headers.items():
            name = str(raw_name).lower()
            where = (*loc[:-1], _join(loc[-1], name))
            guarded = _HEADER_KINDS.get(name)
            for value in raw_values if isinstance(raw_values, list) else [raw_values]:
                text = _decoded(value) if isinstance(value, bytes) else str(value)
                before = len(self.hits)
                self.text(text, where, entropy=guarded is None and not _waived(name, None))
                if guarded and len(self.hits) == before and not is_placeholder(text):
                    self.hit(where, guarded, text)

    def string(self, text: str, loc: tuple[str, ...], path: str, key: str | None, waived: bool) -> None:
        stripped = text.strip()
        if len(stripped) > 1 and stripped[0] in "{[":
            try:
                parsed = json.loads(stripped)
            except (ValueError, RecursionError):
                pass
            else:
                if _too_deep(parsed):  # read as text: walking it would overflow the stack
                    self.text(text, (*loc, path), entropy=not waived)
                    return
                self.walk(parsed, (*loc, path), "", None, False)
                return
        if _SSE_LINE.search(text):
            self.sse(text, (*loc, path))
            return
        self.text(text, (*loc, path), entropy=not waived)
        if key == "uri":
            self.query(text, (*loc, path))

    def sse(self, body: str, loc: tuple[str, ...]) -> None:
        events = [piece for piece in _SSE_EVENT_END.split(body) if piece.strip()]
        for n, event in enumerate(events):
            where = (*loc, f"event {n}")
            data: list[str] = []
            for line in _LINE_END.split(event):
                if line.startswith("data:"):
                    data.append(line[6:] if line.startswith("data: ") else line[5:])
                else:
                    self.text(line, where)
            self.string("\n".join(data), where, "", None, False)

    def query(self, uri: str, loc: tuple[str, ...]) -> None:
        location = SEPARATOR.join(part for part in loc if part)
        if any(hit.location == location for hit in self.hits):
            return
        for name, _, value in (part.partition("=") for part in uri.partition("?")[2].split("&")):
            if name.lower() in SECRET_QUERY_KEYS and not is_placeholder(value.partition("#")[0]):
                self.hit(loc, f"secret query parameter {name!r}", value.partition("#")[0])

    def text(self, text: str, loc: tuple[str, ...], *, entropy: bool = True) -> None:
        spans: list[tuple[int, int]] = []

        def claim(start: int, end: int) -> bool:
            if any(start < e and s < end for s, e in spans):
                return False
            spans.append((start, end))
            return True

        for kind, pattern in PATTERNS:
            for match in pattern.finditer(text):
                group = 1 if pattern.groups else 0
                secret = match.group(group)
                if pattern.groups and (is_placeholder(secret) or not _token_like(secret)):
                    continue
                if claim(*match.span(group)):
                    self.hit(loc, kind, secret)
        for match in _FORM_FIELD.finditer(text):
            if not is_placeholder(match.group(1)) and claim(*match.span(1)):
                self.hit(loc, "secret field", match.group(1))
        if not entropy:
            return
        for match in _TOKEN.finditer(text):
            token = match.group()
            if text[max(0, match.start() - 7) : match.start()] == "base64," or token.startswith(ID_PREFIXES):
                continue
            if looks_random(token) and claim(*match.span()):
                self.hit(loc, "high-entropy string", token)


def _too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` deep (iterative: it may be very deep)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _token_like(secret: str) -> bool:
    """A bearer token or URL password, not a word: ``Bearer authentication`` is prose."""
    return any(c.isdigit() for c in secret) or len(secret) >= 24


def _join(path: str, key: str) -> str:
    name = key if re.fullmatch(r"[A-Za-z_][\w-]*", key) else json.dumps(key)
    if not path:
        return name if name == key else f"[{name}]"
    return f"{path}.{name}" if name == key else f"{path}[{name}]"


def _decoded(raw: bytes) -> str:
    """Bytes as text; raw vcrpy keeps gzip-compressed bodies as ``!!binary``."""
    if raw[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError, EOFError):
            raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace")


def scan_cassette_data(data: Mapping[str, Any], *, where: str) -> list[SecretHit]:
    """Every secret in a loaded cassette (vcrpy YAML as a dict), in document order."""
    scanner = _Scanner(where)
    scanner.walk(data, (), "", None, False)
    return scanner.hits


def scan_text(text: str, *, where: str = "", location: str = "") -> list[SecretHit]:
    """Every secret in one body or file of text (JSON, SSE or plain), located as in a cassette."""
    scanner = _Scanner(where)
    scanner.string(text, (), location, None, False)
    return scanner.hits


def ensure_no_secrets(data: Mapping[str, Any], *, where: str) -> None:
    """Raise ``SecretsFound`` naming every hit; the recorder calls this before writing ``where``."""
    hits = scan_cassette_data(data, where=where)
    if hits:
        raise SecretsFound(where, hits)


def scan_file(path: Path) -> list[SecretHit]:
    """Scan one cassette file; a file that is unreadable, not YAML or not a cassette is a CassetteError."""
    try:
        data = read_yaml_file(Path(path))
    except FileNotFoundError:
        raise CassetteError(f"{path}: no such file") from None
    except YamlRefused as exc:
        raise CassetteError(f"{path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise NotACassette(f"{path}: not a cassette (no 'interactions' list)")
    return scan_cassette_data(data, where=str(path))
