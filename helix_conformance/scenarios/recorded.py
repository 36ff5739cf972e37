"""Recorded traffic as scenarios: one recorded response and the outcome written for it, judged by the clauses.

A recording is listed in an ``expected.yml`` catalogue beside it (``cassettes/recorded/expected.yml`` for the
bundled corpus; ``<cassette dir>/recorded/expected.yml`` for a user's own): per interaction, the canonical
outcome a conforming adapter returns, written by reading the response. Each replayed interaction becomes a
``RecordedScenario`` (``replay/recorded.py`` reads the stream into its parts and serves it as recorded).
Only the response is known, so the request-side clauses (``clauses.REQUEST_SIDE``) are not planned on it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..clauses import CLAUSES, judges_request
from ..contract import ERROR_CODES, STOP_REASONS, ParsedToolCall, StopReason, Tool, UserMessage
from ..profiles.servers import servers_of
from .model import Exchange, Expected, Finish, Part, Raw, Scenario, Stream, StreamError, ToolCall
from .preconditions import OPTIONS, Precondition
from .served import asking

RECORDED_PREFIX = "recorded/"
"""Every recorded scenario id starts so (``-k recorded`` selects them)."""
EXPECTED_FILE = "expected.yml"
"""Not ``.yaml``: the catalogue is no cassette, and cassette globs (``*/*.yaml``) must not pick it up."""
REFERENCE_ADAPTERS = {
    "openai-chat": "openai",
    "anthropic-messages": "anthropic",
    "gemini": "gemini",
    "openai-responses": "openai-responses",
    "bedrock-converse": "bedrock",
    "cohere-chat": "cohere",
}
"""The wire profiles a catalogue may name (the ones that can read a recorded response), each with the name
of its reference adapter (``tests/test_recorded.py`` replays the corpus through it)."""
PROFILES = tuple(REFERENCE_ADAPTERS)
Kind = Literal["stream", "stream_error", "http_error", "bad_body"]
"""How a recorded response is judged: a 200 stream, a 200 stream with an error event (ERR-03), an HTTP error
status (ERR-01/02), or a 200 body that is no stream of the profile at all (ERR-05)."""
_KIND_TAG = {"stream_error": "stream_error", "http_error": "http_error", "bad_body": "bad_body"}
_STREAM_ERROR_KIND = {"provider_rate_limited": "rate_limit", "provider_overloaded": "overloaded"}
_TEXTS = ("content", "thinking")
_KEYS = frozenset(
    {"type", "stop_reason", "tool_calls", "error_code", "status_code", "retryable", "should"}
    | {f"{name}{suffix}" for name in _TEXTS for suffix in ("", "_starts", "_ends")}
)
_UNSAFE = re.compile(r"[^\w.\-\[\]/]")


class CatalogueError(ValueError):
    """An expected outcome or catalogue that cannot be used; the message says where and what to write."""


# --- the written outcome -----------------------------------------------------------------------------------


def check_outcome(raw: object, where: str) -> dict[str, Any]:
    """One interaction's written outcome, validated (the vocabulary of ``expected.yml``)."""
    if not isinstance(raw, dict):
        raise CatalogueError(
            f"{where}: an outcome is a mapping (type, stop_reason, ...) or {{excluded: why}}"
        )
    unknown = sorted(set(map(str, raw)) - _KEYS)
    if unknown:
        raise CatalogueError(
            f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})"
        )
    kind = raw.get("type")
    if kind not in ("text", "tool_calls", "error"):
        raise CatalogueError(f"{where}: type must be text, tool_calls or error, got {kind!r}")
    should = raw.get("should", [])
    if not isinstance(should, list) or any(clause not in CLAUSES for clause in should):
        raise CatalogueError(f"{where}: should lists clause ids (those only SHOULD for this outcome)")
    for name in _KEYS - {"type", "tool_calls", "status_code", "retryable", "should"}:
        if name in raw and not isinstance(raw[name], str):
            raise CatalogueError(f"{where}: {name} must be a string, got {type(raw[name]).__name__}")
    if "status_code" in raw and (
        not isinstance(raw["status_code"], int) or isinstance(raw["status_code"], bool)
    ):
        raise CatalogueError(f"{where}: status_code must be an integer HTTP status")
    if "retryable" in raw and not isinstance(raw["retryable"], bool):
        raise CatalogueError(f"{where}: retryable must be true or false")
    if kind == "error":
        if raw.get("error_code") not in ERROR_CODES:
            raise CatalogueError(f"{where}: an error needs error_code, one of {', '.join(ERROR_CODES)}")
        extra = sorted(
            k for k in raw if k not in ("type", "error_code", "status_code", "retryable", "should")
        )
        if extra:
            raise CatalogueError(f"{where}: an error outcome has no {', '.join(extra)}")
        return dict(raw)
    if raw.get("stop_reason") not in STOP_REASONS:
        raise CatalogueError(f"{where}: stop_reason must be one of {', '.join(STOP_REASONS)}")
    if kind == "tool_calls" and raw["stop_reason"] != "tool_use":
        raise CatalogueError(f"{where}: a tool_calls outcome stops with tool_use (RES-02)")
    if kind == "text" and "tool_calls" in raw:
        raise CatalogueError(f"{where}: a text outcome has no tool_calls")
    for key in ("error_code", "status_code", "retryable"):
        if key in raw:
            raise CatalogueError(f"{where}: {key} belongs to an error outcome")
    if kind == "tool_calls":
        _check_calls(raw.get("tool_calls"), where)
    return dict(raw)


def _check_calls(calls: object, where: str) -> None:
    if not isinstance(calls, list) or not calls:
        raise CatalogueError(f"{where}: a tool_calls outcome lists its calls: [{{id, name, arguments}}]")
    for i, call in enumerate(calls):
        spot = f"{where}, tool_calls[{i}]"
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            raise CatalogueError(f"{spot}: a call is a mapping with a name (and id, arguments)")
        if set(call) - {"id", "name", "arguments"}:
            raise CatalogueError(f"{spot}: only id, name and arguments are written")
        if not isinstance(call.get("arguments", {}), dict):
            raise CatalogueError(f"{spot}: arguments are a mapping (the parsed JSON object)")
        if "id" in call and not isinstance(call["id"], str):
            raise CatalogueError(f"{spot}: id is a string (leave it out where the provider sends none)")


def expected_text(outcome: Mapping[str, Any], name: str, read: str) -> str | None:
    """``content`` or ``thinking`` as the checks compare it: the written text; for a long text written as
    ``<name>_starts``/``<name>_ends``, the whole text the profile's reader found, once it starts and ends so;
    absent, none (``""`` for content, None for thinking). A CatalogueError when the read text does not fit."""
    if name in outcome:
        return str(outcome[name])
    starts, ends = outcome.get(f"{name}_starts"), outcome.get(f"{name}_ends")
    if starts is None and ends is None:
        return "" if name == "content" else None
    if not read.startswith(starts or "") or not read.endswith(ends or ""):
        raise CatalogueError(
            f"the recorded {name} does not start with {str(starts)[:40]!r} and end with {str(ends)[-40:]!r} "
            f"as written (it is {read[:40]!r} … {read[-40:]!r})"
        )
    return read


# --- the catalogue -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recording:
    """One recording of a catalogue: its key (``<dir>/<file>``), wire profile and written outcomes."""

    key: str
    provider: str
    profile: str | None
    interactions: tuple[dict[str, Any] | None, ...]
    """Per interaction: the expected outcome, or None where that interaction is not replayed."""
    excluded: str | None
    import_options: dict[str, Any] = field(default_factory=dict)
    gap: str | None = None
    """A known way the reference adapter misses the expected outcome (not judged; a strict xfail in tests)."""
    problem: str | None = None
    """Why its written outcomes cannot be used (then ``interactions`` is empty)."""
    server: str | None = None
    """The server it was recorded from (``profiles/servers.py``): its own ``server``, else its directory's."""
    needs: tuple[str, ...] | None = None
    """The request options its responses need (``scenarios/preconditions.OPTIONS``), as written; None where
    the catalogue does not say (a user's catalogue may not)."""

    def precondition(self, source: str, outcome: Mapping[str, Any]) -> Precondition | None:
        """When its provider sends the response of ``outcome``: to a request with ``needs`` (and the tools a
        tool call answers), from ``server``; the recording (``source``: where it was recorded) is the
        evidence."""
        if self.needs is None and self.server is None:
            return None
        needs = (*(self.needs or ()), *(("tools",) if outcome.get("type") == "tool_calls" else ()))
        return Precondition(
            f"a response recorded from {self.server or self.provider}",
            (f"cassettes/recorded/{self.cassette} ({source})",),
            frozenset(needs),
            servers=frozenset({self.server}) if self.server else None,
        )

    @property
    def adapter(self) -> str | None:
        """The reference adapter of its wire profile, by name."""
        return REFERENCE_ADAPTERS.get(self.profile or "")

    @property
    def cassette(self) -> str:
        """The cassette path under the catalogue's directory."""
        directory, name = self.key.split("/", 1)
        return f"{directory}/{output_name(Path(name))}"


def output_name(recording: Path) -> str:
    """The cassette file name of a recording: ``.yaml``/``.yml``/``.txt`` replaced by ``.yaml``, other
    suffixes kept (``x.chunks.txt`` and ``x.json`` of the same fixture must not collide)."""
    name = recording.name
    for suffix in (".yaml", ".yml", ".txt"):
        if name.endswith(suffix):
            return name[: -len(suffix)] + ".yaml"
    return name + ".yaml"


def read_catalogue(data: object, where: str) -> list[Recording]:
    """The recordings of a parsed ``expected.yml``: ``profiles`` (provider dir -> wire profile) and
    ``recordings`` (``<dir>/<file>`` -> interactions, or excluded with a reason)."""
    if not isinstance(data, dict) or not isinstance(data.get("recordings"), dict):
        raise CatalogueError(f"{where}: needs a 'recordings' mapping of <dir>/<file> to its outcomes")
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict) or any(p not in PROFILES for p in profiles.values()):
        raise CatalogueError(
            f"{where}: 'profiles' maps each recording directory to a wire profile ({', '.join(PROFILES)})"
        )
    servers = data.get("servers") or {}
    if not isinstance(servers, dict) or not all(isinstance(v, str) for v in servers.values()):
        raise CatalogueError(
            f"{where}: 'servers' maps each recording directory to the server it was recorded from"
        )
    out = []
    for key, entry in data["recordings"].items():
        spot = f"{where}, {key}"
        if not isinstance(key, str) or "/" not in key.strip("/"):
            raise CatalogueError(
                f"{spot}: keys are <dir>/<file>, the cassette's path in the catalogue's folder"
            )
        if not isinstance(entry, dict):
            raise CatalogueError(f"{spot}: an entry is a mapping with 'interactions' or 'excluded'")
        provider = key.split("/", 1)[0]
        raw = entry.get("interactions") or []
        if not isinstance(raw, list) or (not raw and not entry.get("excluded")):
            raise CatalogueError(
                f"{spot}: list 'interactions' (one outcome per interaction) or say 'excluded'"
            )
        if profiles.get(provider) is None and not entry.get("excluded"):
            raise CatalogueError(f"{spot}: 'profiles' names no wire profile for directory {provider!r}")
        problem = None
        server = entry.get("server") or servers.get(provider)
        try:
            needs = _needs(entry, spot)
            _check_server(server, profiles.get(provider), spot)
            interactions = tuple(
                None
                if isinstance(item, dict) and "excluded" in item
                else check_outcome(item, f"{spot}, interaction {i}")
                for i, item in enumerate(raw)
            )
        except CatalogueError as exc:  # this recording cannot be judged; the others still can
            interactions, problem, needs = (), str(exc), None
        out.append(
            Recording(
                key=key,
                provider=provider,
                profile=profiles.get(provider),
                interactions=interactions,
                excluded=entry.get("excluded"),
                import_options=entry.get("import") or {},
                gap=entry.get("gap"),
                problem=problem,
                server=server,
                needs=needs,
            )
        )
    return out


def _needs(entry: dict[str, Any], where: str) -> tuple[str, ...] | None:
    """The request options the recording's responses need (``needs: [tools, include_usage]``; ``[]`` for
    none), checked against the options the decoders read."""
    if "needs" not in entry:
        return None
    needs = entry["needs"]
    if not isinstance(needs, list) or any(option not in OPTIONS for option in needs):
        raise CatalogueError(
            f"{where}: needs lists the request options its responses need, of {', '.join(OPTIONS)} "
            "([] for none: any request gets them)"
        )
    return tuple(needs)


def _check_server(server: object, profile: str | None, where: str) -> None:
    if server is None or profile is None:
        return
    known = [s.id for s in servers_of(profile)]
    if server not in known:
        raise CatalogueError(
            f"{where}: server {server!r} is not a server of wire profile {profile} ({', '.join(known)})"
        )


# --- the scenarios -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedScenario(Scenario):
    """A scenario whose response is one interaction of a recorded cassette, served as recorded."""

    cassette: str = ""
    """The cassette file the response is served from."""
    interaction: int = 0
    problem: str | None = None
    """Why the recording or its outcome cannot be used: every planned check fails with it (a cassette problem)."""
    gap: str | None = None
    """A known gap of the reference adapter: the scenario is planned, every check skipped with it."""
    source: str = ""
    """Who recorded it from where: its server, and the repository or file its cassette's provenance names."""
    first_of_shape: bool = True
    """Whether it is the first recording loaded of its server, source and delivery shape
    (``replay/recorded.py``): the one the fault corpus breaks for them all (``checks/draws.py``)."""


def recorded_id(cassette: str, interaction: int | None) -> str:
    """``recorded/<dir>/<name>`` (the cassette path without ``.yaml`` or ``.chunks``), ``[i]`` appended for
    interaction ``i`` of a cassette that holds several; characters ``-k`` cannot name become ``_``."""
    stem = cassette.removesuffix(".yaml").removesuffix(".chunks")
    suffix = f"[{interaction}]" if interaction is not None else ""
    return RECORDED_PREFIX + _UNSAFE.sub("_", stem) + suffix


def recorded_scenario(
    scenario_id: str,
    description: str,
    profile: str,
    outcome: Mapping[str, Any],
    *,
    kind: Kind,
    parts: tuple[Part, ...],
    read_text: str = "",
    read_thinking: str = "",
    served: Raw | None = None,
    cassette: str,
    interaction: int,
    gap: str | None = None,
    precondition: Precondition | None = None,
    source: str = "",
) -> RecordedScenario:
    """The scenario of one recorded response: ``parts`` are what its stream carries (read by the profile),
    ``served`` the whole response for the kinds that are no stream; the expectation is ``outcome``'s."""
    calls = tuple(
        ParsedToolCall(id=c.get("id", ""), name=c["name"], arguments=c.get("arguments") or {})
        for c in outcome.get("tool_calls") or ()
    )
    expect = _expected(outcome, calls, read_text, read_thinking)
    if kind == "stream":
        tool_parts = tuple(ToolCall(c.id or None, c.name, (json.dumps(c.arguments),)) for c in calls)
        response: Stream | StreamError | Raw = Stream(parts + tool_parts, Finish(outcome["stop_reason"]))
    elif kind == "stream_error":
        response = StreamError(parts, _STREAM_ERROR_KIND.get(outcome["error_code"], "server_error"))
    elif served is not None:
        response = served
    else:
        raise ValueError(f"a {kind} recording is served whole: pass served")
    requires = {"thinking"} if expect.thinking is not None else set()
    if len(calls) >= 2:
        requires.add("parallel_tool_calls")
    return RecordedScenario(
        id=scenario_id,
        description=description,
        messages=(UserMessage(content="(the request of a recorded exchange: only its response was kept)"),),
        exchanges=(Exchange(response),),
        expect=expect,
        tools=tuple(_tool(name) for name in dict.fromkeys(c.name for c in calls)),
        config={"max_retries": 0},
        requires=frozenset(requires),
        tags=frozenset({"recorded", *([_KIND_TAG[kind]] if kind in _KIND_TAG else [])}),
        profiles=frozenset({profile}),
        should=frozenset(outcome.get("should", ())),
        not_live="it is a recorded response of another client's request",
        cassette=cassette,
        interaction=interaction,
        gap=gap,
        source=source,
        preconditions=(precondition,) if precondition is not None else (),
        # The input asks for what the response needs (reasoning, usage...), as a caller would (CFG-02).
        profile_config=asking(*precondition.needs, profiles=(profile,)) if precondition is not None else (),
    )


def unusable_scenario(scenario_id: str, profile: str, cassette: str, problem: str) -> RecordedScenario:
    """A recording that cannot be judged (a broken catalogue entry or cassette): its one check fails with
    ``problem`` when it is served (``replay/recorded.py``), as a missing cassette does."""
    return RecordedScenario(
        id=scenario_id,
        description=f"a recorded exchange that cannot be replayed: {problem}",
        messages=(UserMessage(content="(unused)"),),
        exchanges=(Exchange(Stream((), Finish("end_turn"))),),
        expect=Expected("text", "end_turn"),
        tags=frozenset({"recorded"}),
        profiles=frozenset({profile}),
        cassette=cassette,
        problem=problem,
    )


def judged_on(scenario: Scenario, clause: str) -> bool:
    """Whether ``clause`` is planned on ``scenario`` at all: on a recorded one, the response side only (an
    unusable one: RES-01 alone, which carries its problem)."""
    if not isinstance(scenario, RecordedScenario):
        return True
    if scenario.problem is not None:
        return clause == "RES-01"
    return not judges_request(clause)


def gap_reason(scenario: Scenario) -> str | None:
    """The skip reason of every check of a recorded scenario with a known gap, else None."""
    if isinstance(scenario, RecordedScenario) and scenario.gap:
        return f"not judged: a known gap of the reference adapter on this recording ({scenario.gap})"
    return None


def _expected(
    outcome: Mapping[str, Any], calls: tuple[ParsedToolCall, ...], read_text: str, read_thinking: str
) -> Expected:
    if outcome["type"] == "error":
        return Expected(
            "error",
            error_codes=(outcome["error_code"],),
            status_code=outcome.get("status_code"),
            retryable=outcome.get("retryable"),
        )
    stop: StopReason = outcome["stop_reason"]
    return Expected(
        outcome["type"],
        stop,
        content=expected_text(outcome, "content", read_text),
        thinking=expected_text(outcome, "thinking", read_thinking),
        tool_calls=calls,
    )


def _tool(name: str) -> Tool:
    """A tool the recording calls: its schema is unknown, so any object is accepted."""
    return Tool(name=name, description="A tool the recorded response calls.", input_schema={"type": "object"})
