"""What every foreign-format importer shares: errors, header scrubbing, bodies, provenance, SOURCES.md.

An importer turns one foreign recording into the harness's cassette format (vcrpy YAML plus a ``provenance``
block of kind ``recorded``), keeping every response byte the provider sent and saying where it came from.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..content_encoding import ContentEncodingError, decode_content
from ..recording.scrub import SCRUBBED_HEADERS, scrub_uri
from ..replay.cassette import dump_cassette
from ..scenarios.recorded import output_name

IMPORTER = "helix-conformance import"

__all__ = ["IMPORTER", "ImportFailure", "Imported", "Source", "output_name", "read_sources", "render"]

SECRET_HEADERS = SCRUBBED_HEADERS
"""Request/response headers never copied into an imported cassette, whatever the source kept (the recorder's
list: credentials and the ids naming the account)."""
HOP_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding", "connection"})
"""Dropped from responses: bodies are stored decompressed and re-framed by the replay engine."""


class ImportFailure(Exception):
    """Input that cannot be imported; the message names the file and what is wrong with it (one line)."""


@dataclass(frozen=True)
class Source:
    """Where a recording came from: a public repository (path at a commit), or just a local file."""

    repository: str | None = None
    path: str | None = None
    commit: str | None = None

    def as_dict(self, file: Path) -> dict[str, str]:
        if self.repository:
            return {
                "repository": self.repository,
                "path": self.path or file.name,
                "commit": self.commit or "unknown",
            }
        return {"file": file.name}


@dataclass
class Imported:
    """One recording converted: its interactions (vcrpy dicts) and what the provenance block records."""

    format: str
    interactions: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    """How the stored bytes differ from what went over the wire (reconstructed framing, re-serialised JSON)."""
    recorded: str | None = None
    """When it was recorded (ISO date), where the recording says so."""
    model: str | None = None
    """The model, where the format stores no request to read it from (Vercel fixtures)."""


def fail(path: Path, message: str) -> ImportFailure:
    return ImportFailure(f"{path}: {message}")


def header_dict(raw: Any, path: Path, where: str, *, response: bool) -> dict[str, list[str]]:
    """vcrpy headers (name -> list of values), lower-cased, secrets and hop-by-hop headers dropped."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise fail(path, f"{where}: headers must be a mapping, got {type(raw).__name__}")
    out: dict[str, list[str]] = {}
    for name, value in raw.items():
        key = str(name).lower()
        if key in SECRET_HEADERS or (response and key in HOP_HEADERS):
            continue
        out[key] = [_text(v) for v in value] if isinstance(value, list) else [_text(value)]
    return out


BINARY_STREAMS = ("application/vnd.amazon.eventstream",)
"""Media types of binary streams (AWS event-stream): their bodies are kept as bytes, never decoded."""


def _text(value: Any) -> str:
    """A header value as text: boto3 recordings (pydantic-ai's) store some as bytes (YAML ``!!binary``)."""
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def decode_body(raw: bytes, encoding: str, path: Path, where: str, content_type: str = "") -> str | bytes:
    """Response bytes as text: decoded by their content-encoding (raw vcrpy keeps the wire encoding); a
    binary stream (``BINARY_STREAMS``) stays bytes."""
    try:
        data = decode_content(raw, encoding)
    except ContentEncodingError as exc:
        raise fail(path, f"{where}: the response {exc}") from None
    if any(kind in content_type.lower() for kind in BINARY_STREAMS):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(path, f"{where}: body is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def interaction(
    method: str,
    uri: str,
    request_body: str | None,
    request_headers: dict[str, list[str]],
    status: int,
    message: str,
    response_headers: dict[str, list[str]],
    body: str | bytes,
) -> dict[str, Any]:
    return {
        "request": {
            "method": method.upper(),
            "uri": scrub_uri(uri),
            "body": request_body,
            "headers": request_headers,
        },
        "response": {
            "status": {"code": status, "message": message},
            "headers": response_headers,
            "body": {"string": body},
        },
    }


def recorded_date(interactions: list[dict[str, Any]]) -> str | None:
    """The recording date: a ``Date`` header if the source kept one, else a chunk's ``created`` timestamp."""
    for item in interactions:
        for value in item["response"]["headers"].get("date", []):
            try:
                return parsedate_to_datetime(value).date().isoformat()
            except (TypeError, ValueError):
                continue
    for item in interactions:
        body = item["response"]["body"]["string"]
        for line in body.splitlines() if isinstance(body, str) else ():
            payload = line[len("data:") :].strip() if line.startswith("data:") else line.strip()
            if '"created"' not in payload:
                continue
            try:
                created = json.loads(payload).get("created")
            except (ValueError, AttributeError):
                continue
            if isinstance(created, int) and created > 1_000_000_000:
                return datetime.fromtimestamp(created, tz=timezone.utc).date().isoformat()
    return None


def model_of(interactions: list[dict[str, Any]]) -> str | None:
    """The model the recording talked to, from the request body or the first response that names one."""
    for item in interactions:
        body = item["request"].get("body")
        if isinstance(body, str) and '"model"' in body:
            try:
                model = json.loads(body).get("model")
            except (ValueError, AttributeError):
                model = None
            if isinstance(model, str):
                return model
        path = str(urlsplit(item["request"]["uri"]).path)
        if "/models/" in path:
            return path.rsplit("/models/", 1)[1].split(":", 1)[0]
        if path.startswith("/model/") and path.endswith(("/converse-stream", "/converse")):  # Bedrock
            return unquote(path[len("/model/") :].rsplit("/", 1)[0])
    return None


def render(imported: Imported, file: Path, source: Source) -> str:
    """The cassette text: provenance first (kind ``recorded``), then the interactions, vcrpy-loadable."""
    provenance: dict[str, Any] = {
        "kind": "recorded",
        "format": imported.format,
        "source": source.as_dict(file),
        "sha256": hashlib.sha256(file.read_bytes()).hexdigest(),
        "recorded": imported.recorded or recorded_date(imported.interactions) or "unknown",
        "model": imported.model or model_of(imported.interactions) or "unknown",
        "importer": IMPORTER,
    }
    if imported.notes:
        provenance["notes"] = imported.notes
    return dump_cassette(provenance, imported.interactions)


# --- a SOURCES.md catalogue (as in ../shared/recordings): file -> repository, path, commit ----------------
# Files are listed under ``### <dir>/`` headings as ``- **`name`**`` followed by a line
# ``source: `owner/repo` · `path/in/repo` · commit `sha```; keys are ``<dir>/<name>``.

_HEADING = re.compile(r"^###\s+`?([^`\s]+?)/?`?\s*$")
_FILE = re.compile(r"^-\s+\*\*`([^`]+)`\*\*")
_SOURCE = re.compile(r"source:\s*`([^`]+)`\s*·\s*`([^`]+)`\s*·\s*commit\s*`([0-9a-f]{7,40})`")


def read_sources(path: Path) -> dict[str, Source]:
    """Every file the catalogue describes, keyed ``<dir>/<name>``; an ImportFailure if none is found."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFailure(f"{path}: cannot be read ({exc})") from None
    sources: dict[str, Source] = {}
    directory, current = "", None
    for raw in text.splitlines():
        line = raw.strip()
        if heading := _HEADING.match(line):
            directory, current = heading.group(1).rstrip("/"), None
        elif file := _FILE.match(line):
            current = f"{directory}/{file.group(1)}" if directory else file.group(1)
        elif current and (source := _SOURCE.search(line)):
            sources[current] = Source(*source.groups())
            current = None
    if not sources:
        raise ImportFailure(f"{path}: no 'source: `repo` · `path` · commit `sha`' entries found")
    return sources


def source_for(recording: Path, sources: dict[str, Source]) -> Source | None:
    """The catalogue entry of a recording, matched by ``<parent dir>/<name>`` and then by name alone."""
    key = f"{recording.parent.name}/{recording.name}"
    if key in sources:
        return sources[key]
    matches = [s for k, s in sources.items() if k.rsplit("/", 1)[-1] == recording.name]
    return matches[0] if len(matches) == 1 else None
