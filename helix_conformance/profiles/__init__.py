"""Wire profiles by name. Profiles are looked up lazily so importing this package stays cheap: its
standard-library modules (``wire``, ``eventstream``, ``servers``) load without the contract's models, which the
replay service never needs (profiles/wire.py)."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import DecodedRequest, DecodedTool, WireProfile

KNOWN_PROFILES = (
    "openai-chat",
    "anthropic-messages",
    "gemini",
    "openai-responses",
    "bedrock-converse",
    "cohere-chat",
)


def get_profile(name: str) -> WireProfile:
    if name == "openai-chat":
        from .openai_chat import PROFILE

        return PROFILE
    if name == "anthropic-messages":
        from .anthropic_messages import PROFILE as ANTHROPIC

        return ANTHROPIC
    if name == "gemini":
        from .gemini import PROFILE as GEMINI

        return GEMINI
    if name == "openai-responses":
        from .openai_responses import PROFILE as RESPONSES

        return RESPONSES
    if name == "bedrock-converse":
        from .bedrock_converse import PROFILE as BEDROCK

        return BEDROCK
    if name == "cohere-chat":
        from .cohere_chat import PROFILE as COHERE

        return COHERE
    if name == "custom":
        from .custom import PROFILE as CUSTOM

        return CUSTOM
    close = difflib.get_close_matches(name, (*KNOWN_PROFILES, "custom"), n=1)
    raise KeyError(
        f"unknown wire profile {name!r}{f' (did you mean {close[0]!r}?)' if close else ''}; known: "
        f"{', '.join(KNOWN_PROFILES)} "
        "(an adapter for another protocol uses wire_profile='custom' with its own cassette_dir)"
    )


def __getattr__(name: str) -> Any:
    if name in ("DecodedRequest", "DecodedTool", "WireProfile"):
        from . import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["KNOWN_PROFILES", "DecodedRequest", "DecodedTool", "WireProfile", "get_profile"]
