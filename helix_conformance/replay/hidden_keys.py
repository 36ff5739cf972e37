"""Provider keys are hidden from the environment while adapters replay.

In replay an adapter gets a dummy key (``runner.REPLAY_API_KEY``), but the user's real key usually sits in
``OPENAI_API_KEY`` and friends: an adapter, or an SDK that falls back to the variable, would carry it into
requests, results and reports. ``os.environ`` is process-wide and the step runs in a thread of its own, so the
variables are removed for as long as any holder needs them gone (every replay run, and the pytest session
from its first item to its end, which covers a timed-out adapter thread that is still running) and put back
when the last holder leaves. Recording never enters this: it needs the real key.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

PROVIDER_KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "HF_TOKEN",
)
"""The variables the official SDKs and the usual OpenAI-compatible clients read a key from."""

_lock = threading.Lock()
_holders = 0
_saved: dict[str, str] = {}


def hide(extra: Iterable[str | None] = ()) -> None:
    """Remove the provider key variables (and ``extra``, e.g. the spec's ``api_key_env``) until the
    matching ``restore``; nested holders share one hiding."""
    global _holders
    names = [*PROVIDER_KEY_VARIABLES, *(name for name in extra if name)]
    with _lock:
        _holders += 1
        for name in names:
            if name in os.environ and name not in _saved:
                _saved[name] = os.environ.pop(name)


def restore() -> None:
    """Leave; the last holder to leave puts every hidden variable back (unless something set it since)."""
    global _holders
    with _lock:
        _holders = max(0, _holders - 1)
        if _holders:
            return
        for name, value in _saved.items():
            os.environ.setdefault(name, value)
        _saved.clear()


@contextmanager
def provider_keys_hidden(extra: Iterable[str | None] = ()) -> Iterator[None]:
    """``hide`` for the duration of the block."""
    hide(extra)
    try:
        yield
    finally:
        restore()
