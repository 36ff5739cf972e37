"""What an adapter author hands the harness: how to build the adapter, what it speaks, what it can do."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .adapter import LLMAdapter

Capability = Literal[
    "thinking",  # returns reasoning in `thinking` (RES-08, STR-03)
    "parallel_tool_calls",  # returns several tool calls from one response (RES-06)
    "retries",  # honours config.max_retries itself (CFG-03..05)
    "caching",  # implements config.caching='auto' (CACHE-02..04)
    "abort",  # honours abort_signal (AB-01..03)
    "non_streaming",  # also offers a non-streaming mode (STOP-03)
]
CAPABILITIES: tuple[str, ...] = Capability.__args__  # type: ignore[attr-defined]

RecordMode = Literal["none", "once", "new", "rewrite"]


@dataclass(frozen=True)
class AdapterContext:
    """Handed to the factory for every scenario run. In replay ``api_key`` is a dummy."""

    api_key: str
    base_url: str
    record_mode: RecordMode = "none"
    scripted_responses: tuple[Any, ...] = ()
    """Only for the ``scripted`` wire profile (the MockLLMAdapter): the results to play back."""
    timeout: float = 60.0
    """The read (idle) timeout the adapter should use, in seconds: a response that sends nothing for this long
    is given up as ``provider_timeout`` (NT-04). In replay it is short, a fifth of ``--helix-timeout`` (2 s by
    default), so the adapter's own timeout ends a stalled stream well before the scenario's limit."""


@dataclass(frozen=True)
class AdapterSpec:
    """Everything the harness needs to run the suite against one adapter."""

    name: str
    factory: Callable[[AdapterContext], LLMAdapter]
    wire_profile: str
    model: str
    capabilities: frozenset[str] = field(default_factory=frozenset)
    cassette_dir: Path | None = None
    description: str = ""
    api_key_env: str | None = None
    """The environment variable holding the provider key for recording; by default the profile's usual one
    (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY). A custom provider must name its own."""
    servers: frozenset[str] = field(default_factory=frozenset)
    """The servers of the wire profile this adapter is written for (``helix-conformance list servers``):
    e.g. ``{"openai", "deepseek"}`` for openai-chat, ``{"gemini-api", "vertex"}`` for gemini. Empty means the
    profile's own provider (OpenAI, Anthropic, the Gemini API). The quirks of declared servers are judged by
    the gate; the others' are run and reported in the compatibility matrix without failing it."""

    def __post_init__(self) -> None:
        if self.cassette_dir is not None and not isinstance(self.cassette_dir, Path):
            object.__setattr__(self, "cassette_dir", Path(self.cassette_dir))
        if isinstance(self.servers, str) or not all(isinstance(s, str) for s in self.servers):
            raise ValueError(
                f"AdapterSpec {self.name!r}: servers is a set of server names, e.g. "
                f"frozenset({{'openai', 'deepseek'}}), not {self.servers!r}"
            )
        if not isinstance(self.servers, frozenset):
            object.__setattr__(self, "servers", frozenset(self.servers))
        unknown = set(self.capabilities) - set(CAPABILITIES)
        if unknown:
            raise ValueError(
                f"AdapterSpec {self.name!r}: unknown capabilities {sorted(unknown)}; "
                f"known: {', '.join(CAPABILITIES)}"
            )
