"""Raw vcrpy / pytest-recording cassettes (``version: 1``): bodies as recorded, often gzip ``!!binary``.

Also the shared reader of vcrpy-shaped YAML, which ``pydantic_ai`` reuses for its ``parsed_body`` variant.
Compressed bodies are stored decompressed (with ``Content-Encoding`` dropped), as the replay engine serves
them; secrets in headers and query strings are dropped.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .._yaml import YamlRefused, read_yaml_file
from .common import Imported, decode_body, fail, header_dict, interaction

FORMAT = "vcrpy"


def load_yaml(path: Path) -> dict[str, Any]:
    """The cassette's top-level mapping, or an ImportFailure naming the file."""
    try:
        data = read_yaml_file(path)
    except FileNotFoundError:
        raise fail(path, "no such file") from None
    except YamlRefused as exc:
        raise fail(path, str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise fail(path, "has no 'interactions' list: not a vcrpy cassette")
    if not data["interactions"]:
        raise fail(path, "has an empty 'interactions' list: nothing to import")
    return data


def parsed_json(value: Any, path: Path, where: str) -> str:
    """A pydantic-ai ``parsed_body`` as the JSON text its deserializer makes (``json.dumps``), refused when
    the YAML value is not JSON: a date, bytes, NaN, a key that is not a string. ``json.dumps`` would write
    some of those (NaN, a number key) silently, giving the cassette a body no provider sent."""
    problem = _not_json(value)
    if problem is None:
        try:
            return json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            problem = str(exc)
    raise fail(
        path, f"{where}: parsed_body is not JSON ({problem}); pydantic-ai stores a parsed JSON body there"
    )


def _not_json(value: Any) -> str | None:
    stack = [(value, "parsed_body")]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    return f"{at} has the key {key!r}, a {type(key).__name__}"
                stack.append((inner, f"{at}.{key}"))
        elif isinstance(item, list):
            stack.extend((inner, f"{at}[{i}]") for i, inner in enumerate(item))
        elif isinstance(item, float) and not math.isfinite(item):
            return f"{at} is {item!r}"
        elif item is not None and not isinstance(item, (str, int, float, bool)):
            return f"{at} is a {type(item).__name__}"
    return None


def _body_text(
    body: Any, parsed: Any, has_parsed: bool, encoding: str, path: Path, where: str, content_type: str = ""
) -> str | bytes:
    if has_parsed:  # pydantic-ai: the JSON body as a YAML mapping; json.dumps is what its deserializer does
        return parsed_json(parsed, path, f"{where} response")
    if isinstance(body, dict):
        body = body.get("string", "")
    if body is None:
        return ""
    if isinstance(body, bytes):
        return decode_body(body, encoding, path, where, content_type)
    if isinstance(body, str):
        return body
    raise fail(path, f"{where}: body must be a string or binary, got {type(body).__name__}")


def _request_body(request: dict[str, Any], path: Path, where: str) -> str | None:
    if "parsed_body" in request:
        return parsed_json(request["parsed_body"], path, f"{where} request")
    body = request.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    if isinstance(body, bytes):
        text = decode_body(body, "", path, f"{where} request")
        return text if isinstance(text, str) else None
    return body if isinstance(body, str) else None


def convert_interactions(data: dict[str, Any], path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The interactions in our cassette shape, and whether any body came from a ``parsed_body``."""
    out: list[dict[str, Any]] = []
    parsed_seen = False
    for i, raw in enumerate(data["interactions"]):
        where = f"interaction {i}"
        if not isinstance(raw, dict) or not isinstance(raw.get("request"), dict):
            raise fail(path, f"{where} has no 'request' mapping")
        if not isinstance(raw.get("response"), dict):
            raise fail(path, f"{where} has no 'response' mapping")
        request, response = raw["request"], raw["response"]
        status = response.get("status")
        code = status.get("code") if isinstance(status, dict) else None
        if not isinstance(code, int):
            raise fail(path, f"{where}: response.status.code is missing or not an integer")
        if not isinstance(request.get("method"), str) or not isinstance(request.get("uri"), str):
            raise fail(path, f"{where}: request.method and request.uri must be strings")
        raw_headers = response.get("headers") or {}
        encoding = content_type = ""
        if isinstance(raw_headers, dict):
            encoding = _header(raw_headers, "content-encoding").lower()
            content_type = _header(raw_headers, "content-type")
        has_parsed = "parsed_body" in response
        parsed_seen = parsed_seen or has_parsed or "parsed_body" in request
        body = _body_text(
            response.get("body"), response.get("parsed_body"), has_parsed, encoding, path, where, content_type
        )
        out.append(
            interaction(
                request["method"],
                request["uri"],
                _request_body(request, path, where),
                header_dict(request.get("headers"), path, f"{where} request", response=False),
                code,
                str(status.get("message") or "") if isinstance(status, dict) else "",
                header_dict(raw_headers, path, f"{where} response", response=True),
                body,
            )
        )
    return out, parsed_seen


def _header(headers: dict[Any, Any], name: str) -> str:
    """A vcrpy header's values joined (vcrpy stores a list per name; pydantic-ai may store bytes)."""
    values = [
        v
        for k, vs in headers.items()
        if str(k).lower() == name
        for v in (vs if isinstance(vs, list) else [vs])
    ]
    return ", ".join(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in values)


def convert(path: Path) -> Imported:
    data = load_yaml(path)
    interactions, parsed = convert_interactions(data, path)
    if parsed:
        raise fail(path, "has parsed_body fields: it is a pydantic-ai cassette (use --format pydantic-ai)")
    notes = []
    if any("gzip" in str(v).lower() for i in data["interactions"] for v in _encodings(i)):
        notes.append("response bodies were gzip-compressed on the wire; stored decompressed")
    return Imported(FORMAT, interactions, notes)


def _encodings(raw: Any) -> list[Any]:
    headers = raw.get("response", {}).get("headers") or {} if isinstance(raw, dict) else {}
    return [v for k, vs in headers.items() if str(k).lower() == "content-encoding" for v in vs]
