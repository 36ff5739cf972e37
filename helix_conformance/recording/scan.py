"""Scanning a cassette for secrets before it is written, and in pre-commit / CI (``helix-conformance scan``).

Every string is read: URI, headers, request and response bodies, the provenance block. A JSON body (or a
JSON string inside one, like tool-call ``arguments``), each SSE event's ``data:`` payload and each AWS
event-stream message's payload (Bedrock's binary stream) are parsed and walked, so a hit is named precisely: ``interaction 0 › response.body › event 3 › delta.text``.

Reported, each hit with the rule that flagged it (``SecretHit.why``): key patterns of the major providers and
hosts (``PATTERNS``), ``Bearer`` tokens, JWTs, URL credentials; a credential or account header
(``scrub.CREDENTIAL_HEADERS``, ``scrub.ACCOUNT_HEADERS``), a key-carrying query parameter or a token or
password field holding anything but a placeholder; 32 lower-case hex characters standing alone (the form of
an Azure OpenAI key); and random-looking tokens (``looks_random``: 20 to ``MAX_TOKEN_LENGTH`` characters mixing
case and digits, Shannon entropy over ``ENTROPY_BITS``, and not made of words and numbers, which keeps model
names and URL paths out; longer runs are blobs, not keys).

A key is also found where it is hidden: spread over a stream's deltas (the text and argument pieces of every
SSE event are joined and scanned again), percent-encoded (in the URI and anywhere else), or base64-encoded
(any base64 token that decodes to text is scanned for key patterns, even in an id field).

Allowed on purpose, for the random-string heuristic only (a real key pattern is reported wherever it is):

* opaque blobs the providers issue and want echoed back, by the JSON field they sit in (not by value):
  Anthropic thinking ``signature`` and ``redacted_thinking`` ``data``, Bedrock's ``redactedContent``, Gemini ``thoughtSignature`` (and the
  OpenAI-compatible ``thought_signature``), OpenAI ``encrypted_content`` and any other ``encrypted*`` field
  (Anthropic web-search ``encrypted_index``), OpenRouter's ``reasoning.encrypted`` ``data``, and OpenAI's
  ``obfuscation`` padding (random by design);
* identifiers: a field or header named ``id`` or ending in ``_id`` / ``Id`` / ``-id`` (``tool_call_id``,
  ``responseId``, ``request-id``, ``x-request-id``...), ``system_fingerprint``, and the response headers
  ``cf-ray``, ``etag``, ``report-to`` / ``nel`` (Cloudflare's signed report URL); in free text (an error
  message quoting a request id) tokens starting with a provider id prefix (``ID_PREFIXES``);
* inline media: ``data`` beside a ``mimeType`` / ``media_type`` / ``format``, base64 in ``data:`` URIs,
  ``b64_json``-style fields, and any base64 whose bytes start with a media or compression magic number
  (``encodings.MAGIC``: images, audio, PDF, gzip...);
* bodies that are not text (compressed with something other than gzip): key patterns only.

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from .._yaml import YamlRefused, read_yaml_file
from ..profiles import eventstream
from ..replay.cassette import CassetteError
from .encodings import base64_media, base64_text
from .keys import KEY_PATTERNS, find_keys, identifier, is_placeholder
from .scrub import ACCOUNT_HEADERS, CREDENTIAL_HEADERS, SECRET_BODY_FIELDS, SECRET_QUERY_KEYS

SEPARATOR = " › "

PATTERNS = KEY_PATTERNS
"""The key patterns (keys.py), shared with the recorder's scrubber."""

MAX_JSON_DEPTH = 64
"""JSON nested deeper is scanned as plain text (no provider nests anywhere near that)."""
ENTROPY_MIN_LENGTH = 20
MAX_TOKEN_LENGTH = 256
"""Longest run judged by the entropy rule: API keys are far shorter (key patterns are looked for at any
length); longer random runs are media, ciphertext or padding."""
ENTROPY_BITS = 4.0
"""Bits per character over which a token is random-looking (a little less for tokens under 26 characters)."""
MAX_WORDINESS = 0.5
"""Share of characters in runs of four or more of one class (``lower``, ``UPPER``, ``2024``) above which a
token reads as words and numbers (a model name, a URL path, an identifier) rather than random bytes."""
ID_PREFIXES = (
    "chatcmpl-", "msg_", "toolu_", "srvtoolu_", "call_", "req_", "resp_", "rs_", "fc_", "gen-", "ws_",
    "container_", "cntr_", "file_", "file-", "batch_",
)  # fmt: skip
OPAQUE_FIELDS = frozenset(
    {
        "signature",
        "thoughtSignature",
        "thought_signature",
        "encrypted_content",
        "encryptedContent",
        "obfuscation",
        "redactedContent",
    }
)
_OPAQUE_DATA_TYPES = frozenset({"redacted_thinking", "reasoning.encrypted"})
_MEDIA_TYPE_FIELDS = frozenset({"mimeType", "mime_type", "media_type", "format", "transcript"})
"""Beside ``data``, these say it is inline media (Gemini and Anthropic media, OpenAI input and output audio)."""
MEDIA_FIELDS = frozenset({"b64_json", "partial_image_b64", "image_base64", "audio_base64"})
"""Fields that hold base64 media by name (OpenAI image generation)."""
STREAM_TEXT_FIELDS = frozenset(
    {"content", "text", "arguments", "partial_json", "thinking", "reasoning", "reasoning_content", "delta",
     "refusal", "args", "input", "tool_plan"}
)  # fmt: skip
"""String fields whose pieces, over a stream's events, concatenate into one text (deltas)."""
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>\\]+", re.IGNORECASE)

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
    why: str = ""
    """The rule that flagged it, in words: which pattern, field or heuristic, and what was decoded first."""

    def __str__(self) -> str:
        line = f"{self.location}: {self.kind} ({self.excerpt})" + (f" [{self.why}]" if self.why else "")
        return f"{self.where}: {line}" if self.where else line


class NotACassette(CassetteError):
    """Valid YAML, but no ``interactions`` list: some other file (``scan`` skips these in directories)."""


class SecretsFound(Exception):
    """Raised instead of writing a cassette that holds secrets; the message lists every hit."""

    def __init__(self, where: str, hits: list[SecretHit]) -> None:
        self.where = where
        self.hits = hits
        lines = "\n".join(f"  {str(hit).removeprefix(f'{hit.where}: ')}" for hit in hits)
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


def _core(token: str) -> str:
    return max(re.split(r"[-_]", token.strip("=")), key=len)


def looks_random(token: str) -> bool:
    """The high-entropy heuristic, on the longest ``-``/``_``-separated part of ``token`` (so that
    ``Meta-Llama-3.1-70B-Instruct`` is judged by its words): long, upper and lower case and digits, high
    Shannon entropy, and not made of words and numbers."""
    core = _core(token)
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
    if identifier(key):
        return True
    if key in OPAQUE_FIELDS or key.startswith("encrypted") or key in MEDIA_FIELDS:
        return True
    if key == "data" and parent is not None:
        return parent.get("type") in _OPAQUE_DATA_TYPES or any(f in parent for f in _MEDIA_TYPE_FIELDS)
    return False


class _Scanner:
    """Walks a loaded cassette; ``loc`` is the location so far, ``path`` the JSON path inside its last part."""

    def __init__(self, where: str, secrets: Sequence[str] = ()) -> None:
        self.where = where
        self.secrets = tuple(secrets)
        """The keys in use (the recorder's): found in any form the scan reads (keys.find_keys)."""
        self.hits: list[SecretHit] = []
        self.found: set[str] = set()
        """Every secret value reported: a second way of finding one (joined, decoded) is not a second hit."""

    def hit(self, loc: tuple[str, ...], kind: str, secret: str, why: str) -> None:
        location = SEPARATOR.join(part for part in loc if part)
        self.found.add(secret)
        self.hits.append(SecretHit(location, kind, mask(secret), self.where, why))

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
                        self.hit(
                            (*loc, child),
                            f"secret field {name!r}",
                            item,
                            "a credential field holds a value, not a placeholder",
                        )
        elif isinstance(value, list):
            for i, item in enumerate(value):
                self.walk(item, loc, f"{path}[{i}]", key, waived)
        elif isinstance(value, bytes):
            text, binary = _decoded(value)
            where_path = path.removesuffix(".string") if path.endswith(".body.string") else path
            messages = _event_stream(value) if binary else None
            if messages is not None:  # an AWS event stream: its JSON payloads, read like SSE events
                self.stream(
                    [message.payload.decode("utf-8", "replace") for message in messages], (*loc, where_path)
                )
            elif binary:  # not text: key patterns only, random bytes are no secret
                self.text(text, (*loc, where_path), entropy=False)
            else:
                self.string(text, loc, where_path, key, waived)
        elif isinstance(value, str):
            self.string(
                value,
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
                text = _decoded(value)[0] if isinstance(value, bytes) else str(value)
                before = len(self.hits)
                self.text(text, where, entropy=guarded is None and not _waived(name, None))
                if guarded and len(self.hits) == before and not is_placeholder(text):
                    self.hit(where, guarded, text, f"the {name} header must hold a placeholder")

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
        payloads = []
        for n, event in enumerate(piece for piece in _SSE_EVENT_END.split(body) if piece.strip()):
            data: list[str] = []
            for line in _LINE_END.split(event):
                if line.startswith("data:"):
                    data.append(line[6:] if line.startswith("data: ") else line[5:])
                else:
                    self.text(line, (*loc, f"event {n}"))
            payloads.append("\n".join(data))
        self.stream(payloads, loc)

    def stream(self, payloads: list[str], loc: tuple[str, ...]) -> None:
        """Each event's payload, then the text pieces of all events joined (a key spread over deltas)."""
        pieces: dict[str, list[tuple[int, str]]] = {}
        for n, payload in enumerate(payloads):
            where = (*loc, f"event {n}")
            self.string(payload, where, "", None, False)
            for field, piece in _stream_pieces(payload):
                pieces.setdefault(field, []).append((n, piece))
        for field, parts in pieces.items():
            if len(parts) > 1:
                joined = "".join(piece for _, piece in parts)
                span = f"events {parts[0][0]}-{parts[-1][0]}"
                self.text(
                    joined,
                    (*loc, f"{field} deltas joined ({span})"),
                    derived=f"found in the {field!r} pieces of the stream joined",
                )

    def query(self, uri: str, loc: tuple[str, ...]) -> None:
        location = SEPARATOR.join(part for part in loc if part)
        if any(hit.location == location for hit in self.hits):
            return
        for name, _, value in (part.partition("=") for part in uri.partition("?")[2].split("&")):
            secret = value.partition("#")[0]
            if name.lower() in SECRET_QUERY_KEYS and not is_placeholder(secret):
                why = "a key-carrying query parameter holds a value, not a placeholder"
                self.hit(loc, f"secret query parameter {name!r}", secret, why)

    def text(
        self,
        text: str,
        loc: tuple[str, ...],
        *,
        entropy: bool = True,
        derived: str = "",
        hex_keys: bool | None = None,
    ) -> None:
        """Every rule over one string. ``derived`` (how the text was obtained: joined, decoded) reports only
        what was not found already, and says how it was found. ``hex_keys`` (default: as ``entropy``) reads
        32-hex values as keys: decoded text is read so too (an Azure key percent- or base64-encoded)."""
        hex_keys = entropy if hex_keys is None else hex_keys
        spans: list[tuple[int, int]] = []

        def claim(start: int, end: int) -> bool:
            if any(start < e and s < end for s, e in spans):
                return False
            spans.append((start, end))
            return True

        def report(kind: str, secret: str, why: str) -> None:
            if derived and any(known in secret or secret in known for known in self.found):
                return
            self.hit(loc, kind, secret, f"{why}; {derived}" if derived else why)

        for key in find_keys(text, hex_keys=hex_keys, known=self.secrets):  # the table the scrubber shares
            if claim(key.start, key.end):
                report(key.kind, key.secret, key.why)
        for match in _FORM_FIELD.finditer(text):
            if not is_placeholder(match.group(1)) and claim(*match.span(1)):
                report("secret field", match.group(1), "a form field named like a credential holds a value")
        for match in _TOKEN.finditer(text):
            token = match.group()
            if text[max(0, match.start() - 7) : match.start()] == "base64," or base64_media(token):
                continue  # inline media
            decoded = base64_text(token)
            if decoded is not None:  # encoded text, not key material: what it says is scanned instead
                if not derived:
                    before = len(self.hits)
                    self.text(decoded, loc, entropy=False, derived="base64-encoded", hex_keys=True)
                    if len(self.hits) > before:
                        claim(*match.span())
                continue
            if not entropy or token.startswith(ID_PREFIXES) or len(token) > MAX_TOKEN_LENGTH:
                continue
            if _in_url_path_or_id(text, match.start()):
                continue
            if looks_random(token) and claim(*match.span()):
                core = _core(token)
                report(
                    "high-entropy string",
                    token,
                    f"random-looking: {len(core)} characters mixing case and digits, "
                    f"{shannon_entropy(core):.1f} bits each",
                )
        if _PERCENT.search(text) and not derived:
            plain = unquote(unquote(text))
            if plain != text:
                self.text(plain, loc, entropy=False, derived="percent-encoded", hex_keys=True)


def _in_url_path_or_id(text: str, start: int) -> bool:
    """Whether the token at ``start`` sits in a URL's path (an article slug, a CDN file name, a redirect id)
    or in the value of an id-named query parameter (``upload_id=``): addresses, not credentials. Keys in a
    URL travel as query parameters or before an ``@``, which are judged."""
    for url in _URL.finditer(text):
        if url.start() <= start < url.end():
            query = url.group().find("?")
            if query < 0 or start < url.start() + query:
                return True
            name = text[url.start() + query : start].rsplit("&", 1)[-1].lstrip("?").partition("=")[0]
            return name == "id" or name.endswith(("_id", "Id", "-id"))
    return False


def _stream_pieces(payload: str) -> Iterator[tuple[str, str]]:
    """(field, string) of every text-like field in one SSE event's JSON payload, in document order."""
    try:
        parsed = json.loads(payload)
    except (ValueError, RecursionError):
        return
    if _too_deep(parsed):
        return
    stack: list[tuple[str | None, Any]] = [(None, parsed)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, str):
            if key in STREAM_TEXT_FIELDS:
                yield key, value
        elif isinstance(value, dict):
            stack.extend(reversed([(str(k), v) for k, v in value.items()]))
        elif isinstance(value, list):
            stack.extend(reversed([(key, v) for v in value]))


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


def _join(path: str, key: str) -> str:
    name = key if re.fullmatch(r"[A-Za-z_][\w-]*", key) else json.dumps(key)
    if not path:
        return name if name == key else f"[{name}]"
    return f"{path}.{name}" if name == key else f"{path}[{name}]"


def _event_stream(raw: bytes) -> list[eventstream.Message] | None:
    """The messages of an AWS event-stream body (Bedrock's ConverseStream), or None when it is not one."""
    pieces = eventstream.split_messages(raw)
    messages = [eventstream.decode(piece) for piece in pieces]
    if not messages or any(m is None for m in messages):
        return None
    return [m for m in messages if m is not None]


def _decoded(raw: bytes) -> tuple[str, bool]:
    """Bytes as text, and whether they are binary (not UTF-8); raw vcrpy keeps gzip-compressed bodies as
    ``!!binary``, other encodings (brotli, zstd) stay binary."""
    if raw[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError, EOFError):
            raw = gzip.decompress(raw)
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("latin-1"), True


def scan_cassette_data(
    data: Mapping[str, Any], *, where: str, secrets: Sequence[str] = ()
) -> list[SecretHit]:
    """Every secret in a loaded cassette (vcrpy YAML as a dict), in document order; ``secrets`` are the keys
    in use (the recorder's), found in any form the scrubber may have left."""
    scanner = _Scanner(where, secrets)
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
