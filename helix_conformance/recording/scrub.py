"""Scrubbing one recorded interaction before it is written: credentials, account ids and key values.

What is replaced (by ``PLACEHOLDER``, or ``URL_PLACEHOLDER`` inside URL-encoded text), keeping the header or
field itself so the cassette still shows that it was sent:

* headers, request and response, by name (case-insensitive): the credentials (``CREDENTIAL_HEADERS``: a SigV4
  ``Authorization`` and ``X-Amz-Security-Token`` among them) and
  the ids that name the account (``ACCOUNT_HEADERS``: OpenAI ``openai-organization`` / ``openai-project``
  sent and echoed, Anthropic's ``anthropic-organization-id`` response header, Google's
  ``x-goog-user-project`` quota project on Vertex), plus ``extra_headers`` (a profile's ``secret_headers``);
* query parameters of the URI that carry keys (``SECRET_QUERY_KEYS``: Gemini's ``?key=``, OAuth's
  ``access_token``, a presigned AWS URL's ``X-Amz-Signature``/``-Credential``/``-Security-Token``), edited in
  place so the rest of the URI keeps its bytes;
* token fields of bodies (``SECRET_BODY_FIELDS``) in JSON (``"access_token": "..."``) and form-encoded text
  (``client_secret=...``): none of the three LLM APIs puts a key in a body, but Vertex credentials make the
  Google client record its OAuth token exchange (``oauth2.googleapis.com/token``), whose request and response
  carry refresh and access tokens;
* every occurrence of each of ``secrets`` anywhere (URI, header values, request and response bodies):
  literal, percent-encoded (any of its characters, up to all of them) and base64-encoded (standard or
  URL-safe, at any alignment inside a longer base64 run). This is what catches a key a provider echoes back
  in an error message, or an adapter smuggles into an id. The recorder passes the key in use and every key
  the secret scan finds by the shared table of key patterns (``keys.py``, ``scan.keys_in``): what the scan
  would report as a key is what is scrubbed.
  In an AWS event stream (Bedrock) each message's payload is scrubbed and the message framed again, its
  CRCs right.
"""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Iterable
from typing import Any

from ..profiles import eventstream

PLACEHOLDER = "<scrubbed>"
URL_PLACEHOLDER = "scrubbed"
"""In query strings and form bodies, where ``<`` and ``>`` would have to be percent-encoded."""

CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "ocp-apim-subscription-key",
        "x-amz-security-token",
        "cookie",
        "set-cookie",
    }
)
"""Headers whose value is a credential: a cassette holding any other value than a placeholder is a leak."""
ACCOUNT_HEADERS = frozenset(
    {
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "anthropic-workspace-id",
        "x-goog-user-project",
    }
)
"""Headers naming the account the recording was made with: not credentials, but nobody else's business."""
SCRUBBED_HEADERS = CREDENTIAL_HEADERS | ACCOUNT_HEADERS
SECRET_QUERY_KEYS = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "access_token",
        "x-amz-signature",
        "x-amz-security-token",
        "x-amz-credential",
    }
)
"""Query parameters holding a key; a presigned AWS URL carries its SigV4 signature, session token and access key
id (``X-Amz-Signature``, bound to its ``X-Amz-Date``) there."""
SECRET_BODY_FIELDS = frozenset(
    {
        "api_key",
        "apiKey",
        "access_token",
        "refresh_token",
        "id_token",
        "client_secret",
        "password",
        "passwd",
        "secret_key",
        "private_key",
        "session_token",
        "aws_secret_access_key",
        "secretAccessKey",
        "SecretAccessKey",
        "sessionToken",
        "SessionToken",
    }
)
MIN_SECRET_LENGTH = 8
"""Shorter ``secrets`` are not replaced: a value like ``test`` would be cut out of every body, and is no
secret worth the damage (the header carrying it is scrubbed by name anyway)."""


def _alternation(names: Iterable[str]) -> str:
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


_QUERY_RE = re.compile(rf"([?&](?:{_alternation(SECRET_QUERY_KEYS)})=)[^&#]*", re.IGNORECASE)
_JSON_FIELD_RE = re.compile(rf'("(?:{_alternation(SECRET_BODY_FIELDS)})"\s*:\s*")(?:[^"\\]|\\.)*(")')
_FORM_FIELD_RE = re.compile(rf"((?:^|[&\s?])(?:{_alternation(SECRET_BODY_FIELDS)})=)[^&\s]*")


def scrub_uri(uri: str) -> str:
    """The URI with the value of every key-carrying query parameter replaced, nothing else touched."""
    return _QUERY_RE.sub(lambda m: m.group(1) + URL_PLACEHOLDER, uri)


def scrub_body_fields(text: str) -> str:
    """``text`` with the values of token fields replaced, in JSON and in form-encoded bodies."""
    text = _JSON_FIELD_RE.sub(lambda m: m.group(1) + PLACEHOLDER + m.group(2), text)
    return _FORM_FIELD_RE.sub(lambda m: m.group(1) + URL_PLACEHOLDER, text)


def _scrub_headers(headers: Any, names: frozenset[str]) -> Any:
    if not isinstance(headers, dict):
        return headers
    out: dict[Any, Any] = {}
    for name, value in headers.items():
        if str(name).lower() not in names:
            out[name] = value
        else:
            out[name] = [PLACEHOLDER for _ in value] if isinstance(value, list) else PLACEHOLDER
    return out


def _replace_literals(value: Any, patterns: list[tuple[re.Pattern[str], re.Pattern[bytes]]]) -> Any:
    """Every string (and bytes) inside ``value`` with each secret's forms replaced; dict keys are kept."""
    if isinstance(value, str):
        for text_pattern, _ in patterns:
            value = text_pattern.sub(_placeholder_for, value)
        return value
    if isinstance(value, bytes):
        messages = eventstream.split_messages(value)
        if messages and all(eventstream.decode(m) is not None for m in messages):
            # an AWS event stream: scrub each payload and frame it again, so lengths and CRCs stay right
            return b"".join(_replace_in_message(m, patterns) for m in messages)
        for _, bytes_pattern in patterns:
            value = bytes_pattern.sub(_bytes_placeholder_for, value)
        return value
    if isinstance(value, dict):
        return {key: _replace_literals(item, patterns) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_literals(item, patterns) for item in value]
    return value


def _replace_in_message(message: bytes, patterns: list[tuple[re.Pattern[str], re.Pattern[bytes]]]) -> bytes:
    decoded = eventstream.decode(message)
    payload = decoded.payload if decoded is not None else b""
    scrubbed = payload
    for _, bytes_pattern in patterns:
        scrubbed = bytes_pattern.sub(_bytes_placeholder_for, scrubbed)
    return message if scrubbed == payload else eventstream.with_payload(message, scrubbed)


def _placeholder_for(match: re.Match[str]) -> str:
    return URL_PLACEHOLDER if "%" in match.group() else PLACEHOLDER


def _bytes_placeholder_for(match: re.Match[bytes]) -> bytes:
    return (URL_PLACEHOLDER if b"%" in match.group() else PLACEHOLDER).encode()


def _base64_forms(secret: str) -> list[str]:
    """The runs of base64 characters that encode ``secret`` wherever it sits in a longer encoded text: one per
    alignment (0, 1 or 2 bytes before it), standard and URL-safe, without the characters its neighbours share."""
    raw = secret.encode("utf-8")
    forms = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = encoded[(0, 2, 3)[offset] : (offset + len(raw)) // 3 * 4]
        if len(core) >= MIN_SECRET_LENGTH:
            forms.extend([core, core.replace("+", "-").replace("/", "_")])
    return forms


def _char_pattern(char: str) -> str:
    encoded = "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return f"(?:{re.escape(char)}|(?i:{re.escape(encoded)}))"


def _secret_patterns(secrets: Iterable[str]) -> list[tuple[re.Pattern[str], re.Pattern[bytes]]]:
    """One pattern per secret matching its literal and percent-encoded forms (each character either way, in
    any case, as the scan looks for a key in use: keys.find_keys), and one per base64 form (exact: base64 is
    case-sensitive); longest first, so a key that contains another is replaced whole."""
    sources: dict[str, int] = {}
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) < MIN_SECRET_LENGTH:
            continue
        sources["".join(_char_pattern(c) for c in secret)] = re.IGNORECASE
        for form in _base64_forms(secret):
            sources.setdefault(re.escape(form), 0)
    return [
        (re.compile(source, flags), re.compile(source.encode("utf-8"), flags))
        for source, flags in sources.items()
    ]


def _scrub_body(body: Any) -> Any:
    if isinstance(body, str):
        return scrub_body_fields(body)
    if isinstance(body, dict) and isinstance(body.get("string"), str):
        return {**body, "string": scrub_body_fields(body["string"])}
    return body


def scrub_interaction(
    interaction: dict[str, Any], *, extra_headers: Iterable[str] = (), secrets: Iterable[str] = ()
) -> dict[str, Any]:
    """A scrubbed copy of one vcrpy interaction (``{"request": ..., "response": ...}``); see the module doc."""
    names = SCRUBBED_HEADERS | {name.lower() for name in extra_headers}
    out = copy.deepcopy(interaction)
    request, response = out.get("request"), out.get("response")
    for part in (request, response):
        if not isinstance(part, dict):
            continue
        if "headers" in part:
            part["headers"] = _scrub_headers(part["headers"], names)
        if "body" in part:
            part["body"] = _scrub_body(part["body"])
    if isinstance(request, dict) and isinstance(request.get("uri"), str):
        request["uri"] = scrub_uri(request["uri"])
    patterns = _secret_patterns(secrets)
    if patterns:
        out = _replace_literals(out, patterns)
    return out


def replace_secrets(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of ``value`` (any YAML-able data: the provenance, say) with every literal secret replaced."""
    patterns = _secret_patterns(secrets)
    return _replace_literals(copy.deepcopy(value), patterns) if patterns else value
