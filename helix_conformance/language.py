"""The language a failure speaks: an adapter author reads hints, clause text and ``explain`` in the names and
idioms of the language the adapter is written in (Python's ``should_stop`` and ``json.loads``, or the seed's
TypeScript ``shouldStop`` and ``JSON.parse`` with the official JS SDKs' error classes).

Which language an adapter is in is ``adapters.language_of``; the clause catalogue's TypeScript wording is
``clauses_typescript.py``; a check's own hint or message in both languages is a ``Said``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Language = Literal["python", "typescript"]
LANGUAGES: tuple[Language, ...] = ("python", "typescript")
NAMES: dict[str, Language] = {
    "python": "python",
    "py": "python",
    "typescript": "typescript",
    "ts": "typescript",
    "javascript": "typescript",
    "js": "typescript",
}
"""What ``explain --language`` accepts."""


@dataclass(frozen=True)
class Said:
    """One thing said to an adapter author, in each language."""

    python: str
    typescript: str

    def to(self, language: Language) -> str:
        return self.typescript if language == "typescript" else self.python


def spoken(text: str | Said, language: Language) -> str:
    """``text`` as the author of an adapter in ``language`` reads it: a ``Said`` in its language's words, a
    plain string with the contract's names in that language (``typescript_names``)."""
    if isinstance(text, Said):
        return text.to(language)
    return typescript_names(text) if language == "typescript" else text


_TYPESCRIPT_NAMES = {
    "generate_step": "generateStep",
    "on_text_delta": "onTextDelta",
    "on_thinking": "onThinking",
    "on_tool_call": "onToolCall",
    "on_error": "onError",
    "should_stop": "shouldStop",
    "stop_reason": "stopReason",
    "sub_agent_calls": "subAgentCalls",
    "max_retries": "maxRetries",
    "abort_signal": "abortSignal",
    "is_complete": "isComplete",
}
_ASSIGNED = re.compile(r"\b(should_stop|stop_reason|retryable)=(True|False|'[^']*')")
_FLAG = re.compile(r"\b(on_thinking\([^,()]*), (True|False)\)")
_NAME = re.compile(r"\b(" + "|".join(_TYPESCRIPT_NAMES) + r")\b")
_LITERAL = {"True": "true", "False": "false"}


def typescript_names(text: str) -> str:
    """A harness-written sentence about the contract with the seed's TypeScript names: ``should_stop=True`` →
    ``shouldStop: true``, ``on_text_delta`` → ``onTextDelta``. Only for the harness's own words (messages,
    expectations), never for evidence: an adapter's text is shown as it was."""
    text = _ASSIGNED.sub(lambda m: f"{m.group(1)}: {_LITERAL.get(m.group(2), m.group(2))}", text)
    text = _FLAG.sub(lambda m: f"{m.group(1)}, {_LITERAL[m.group(2)]})", text)
    return _NAME.sub(lambda m: _TYPESCRIPT_NAMES[m.group(1)], text)


def parse_language(value: str) -> Language:
    """A language named on the command line; ValueError listing the accepted names."""
    try:
        return NAMES[value.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown language {value!r}: use one of {', '.join(NAMES)}") from None
