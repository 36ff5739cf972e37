"""Cassettes: vcrpy-format YAML (``interactions`` + ``version: 1``) with a ``provenance`` block of ours.

vcrpy ignores the extra top-level key, so our cassettes stay loadable by vcrpy and pytest-recording.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from .._yaml import YamlRefused, read_yaml_file
from ..content_encoding import ContentEncodingError, decode_content

PROVENANCE_KINDS = ("authored", "recorded")


class CassetteError(Exception):
    """A cassette is missing, unreadable or not in the expected format; the message says which and why."""


@dataclass(frozen=True)
class Interaction:
    method: str
    uri: str
    status: int
    headers: dict[str, str]
    body: bytes
    request_body: str | None = None

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path


@dataclass(frozen=True)
class Cassette:
    path: Path
    provenance: dict[str, Any]
    interactions: tuple[Interaction, ...] = field(default_factory=tuple)


def _first(value: Any) -> str:
    """vcrpy stores header values as lists of strings."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _body_bytes(body: Any, where: str) -> bytes:
    if isinstance(body, dict):
        body = body.get("string", "")
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    raise CassetteError(f"{where}: response body must be a string, got {type(body).__name__}")


def load_cassette(path: Path) -> Cassette:
    """Read and validate one cassette; every problem is a CassetteError naming the file and the field."""
    try:
        data = read_yaml_file(path)
    except FileNotFoundError:
        raise CassetteError(f"cassette not found: {path}") from None
    except YamlRefused as exc:
        raise CassetteError(f"cassette {path} {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"cassette {path} has no 'interactions' list (is it a vcrpy cassette?)")
    provenance = data.get("provenance")
    if not isinstance(provenance, dict) or provenance.get("kind") not in PROVENANCE_KINDS:
        raise CassetteError(
            f"cassette {path} has no provenance block with kind {' or '.join(PROVENANCE_KINDS)}; "
            "every cassette must say whether it was authored here or recorded live"
        )
    interactions = []
    for i, raw in enumerate(data["interactions"]):
        where = f"cassette {path}, interaction {i}"
        try:
            request, response = raw["request"], raw["response"]
            for part, value in (("request", request), ("response", response)):
                if not isinstance(value, dict):
                    raise CassetteError(f"{where}: '{part}' must be a mapping, got {type(value).__name__}")
            status = int(response["status"]["code"])
            headers = response.get("headers") or {}
            if not isinstance(headers, dict):
                raise CassetteError(
                    f"{where}: response headers must be a mapping of name to values, got "
                    f"{type(headers).__name__}"
                )
            flat = {str(k).lower(): _first(v) for k, v in headers.items()}
            try:  # served without its encoding: decoded here, as a client would (content_encoding.py)
                body = decode_content(
                    _body_bytes(response.get("body"), where), flat.get("content-encoding", "")
                )
            except ContentEncodingError as exc:
                raise CassetteError(f"{where}: the response {exc}") from None
            interactions.append(
                Interaction(
                    method=str(request["method"]).upper(),
                    uri=str(request["uri"]),
                    status=status,
                    headers=flat,
                    body=body,
                    request_body=request.get("body"),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CassetteError(f"{where} is malformed: missing or invalid {exc}") from None
    return Cassette(path=path, provenance=provenance, interactions=tuple(interactions))


class _LiteralDumper(yaml.SafeDumper):
    """Dump multi-line strings as literal blocks so SSE bodies read like the wire; never anchors or aliases
    (a value used twice is written twice): ``load_cassette`` refuses them."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_LiteralDumper.add_representer(str, _represent_str)


def dump_cassette(provenance: dict[str, Any], interactions: list[dict[str, Any]]) -> str:
    data = {"provenance": provenance, "interactions": interactions, "version": 1}
    return yaml.dump(data, Dumper=_LiteralDumper, allow_unicode=True, sort_keys=False, width=4096)


def interaction_dict(
    method: str, uri: str, status: int, content_type: str, body: str | bytes
) -> dict[str, Any]:
    """A vcrpy interaction; a binary body (AWS event-stream) is kept as bytes, which YAML writes ``!!binary``."""
    return {
        "request": {"method": method, "uri": uri, "body": None, "headers": {}},
        "response": {
            "status": {"code": status, "message": "OK" if status == 200 else ""},
            "headers": {"content-type": [content_type]},
            "body": {"string": body},
        },
    }
