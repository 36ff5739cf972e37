"""Adapter text made safe for every report: provider keys redacted, control characters shown as escapes.

Error messages, content and tool arguments come from the adapter under test and reach terminals, CI logs and
pull-request comments. A key the adapter echoes must not be published there, and an escape sequence in them
must not drive the reader's terminal (clear the screen, forge a hyperlink, rewrite a line).
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from ..recording.scrub import MIN_SECRET_LENGTH, scrub_uri
from ..replay.hidden_keys import PROVIDER_KEY_VARIABLES

KEY_ENVS = PROVIDER_KEY_VARIABLES
"""Environment variables holding the providers' keys, the same ones replay hides from adapters: the value of
each is never shown in a report."""

_protected: set[str] = set()
"""Further variables named by the adapters run in this process (``AdapterSpec.api_key_env``)."""
_remembered: dict[str, str] = {}
"""Values seen by ``protect_env`` (value -> variable): replay hides the variables from the environment while
adapters run (``replay.hidden_keys``), which is when failure texts are made."""

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""C0 (but newline and tab), DEL, C1, the bidirectional overrides that reorder what a reader sees, and lone
surrogates (a name decoded with ``surrogateescape``), which no UTF-8 file or terminal can hold."""


def protect_env(name: str | None = None) -> None:
    """Redact the key variables' values as they are now, and the value of ``name`` too (an adapter's own
    key variable, ``AdapterSpec.api_key_env``). Called before a run starts, while the keys are still set."""
    if name:
        _protected.add(name)
    for variable, value in _current():
        _remembered.setdefault(value, variable)


def _current() -> list[tuple[str, str]]:
    pairs = ((name, os.environ.get(name, "").strip()) for name in (*KEY_ENVS, *sorted(_protected)))
    return [(name, value) for name, value in pairs if len(value) >= MIN_SECRET_LENGTH]


def key_values() -> list[tuple[str, str]]:
    """(variable, value) of every key to redact: set now or when ``protect_env`` was called; longest value
    first (one containing another is replaced whole). Values shorter than ``MIN_SECRET_LENGTH`` are kept, as
    in cassettes: ``test`` would cut words out of every message."""
    found = dict(_remembered)
    for name, value in _current():
        found.setdefault(value, name)
    return sorted(((name, value) for value, name in found.items()), key=lambda p: len(p[1]), reverse=True)


def redact(text: str) -> str:
    """``text`` with the value of every key variable (also percent-encoded) replaced by ``<redacted NAME>``."""
    for name, value in key_values():
        for form in dict.fromkeys((value, quote(value, safe=""))):
            text = text.replace(form, f"<redacted {name}>")
    return text


def neutralise(text: str) -> str:
    r"""``text`` with every control character but newline and tab shown as an escape (ESC as ``\x1b``)."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """The one function adapter text goes through before it reaches a report or the terminal."""
    if not text:  # most items carry no text: nothing to redact, and reading the key variables costs
        return text
    return neutralise(redact(text))


def shown_setting(value: Any) -> Any:
    """An option's value as the header and the report show it: a URL keeps no password
    (``https://user:***@host``, a lone user name may be a token: ``https://***@host``) and no key parameter."""
    if not isinstance(value, str) or "://" not in value:
        return value
    try:
        parts = urlsplit(value)
        password = parts.password
    except ValueError:
        return value
    if "@" in parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        user = f"{parts.username}:***" if password is not None else "***"
        value = urlunsplit(parts._replace(netloc=f"{user}@{host}"))
    return scrub_uri(value)
