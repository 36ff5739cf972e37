"""A semantic diff of two recordings of the same scenario: what the provider said differently, not YAML churn.

Two live recordings never share ids, usage or exact text, so the diff reports meaning: result type, whether
there is text (and its length), tool calls and their arguments, stop reason, error type, problems, and the
shape of the event sequence (runs of one event type collapsed, ``ping`` and SSE comments ignored: their
number and place vary from one recording to the next).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path

from ..profiles.base import WireProfile
from ..profiles.summary import ResponseSummary, SummaryToolCall
from ..replay.cassette import load_cassette
from .live import summaries_of

NOISE_EVENTS = frozenset({"ping", "comment"})
"""Keep-alives whose count and position carry no meaning."""
_NONE = "—"
_SHOWN_EVENTS = 10
_SHORT = 40


def summarise_cassette(profile: WireProfile, path: Path) -> list[ResponseSummary]:
    """Every interaction of a cassette, read back as recording does (``live.summaries_of``)."""
    return summaries_of(load_cassette(path), profile)


def diff_cassettes(profile: WireProfile, old: Path, new: Path) -> list[str]:
    """The semantic diff of two cassettes (a missing ``old`` is one line saying so)."""
    if not old.exists():
        return [f"no previous cassette at {old}"]
    return semantic_diff(summarise_cassette(profile, old), summarise_cassette(profile, new))


def semantic_diff(old: Sequence[ResponseSummary], new: Sequence[ResponseSummary]) -> list[str]:
    """Human-readable lines, one per meaningful change; empty when the two say the same."""
    lines: list[str] = []
    several = max(len(old), len(new)) > 1
    if len(old) != len(new):
        lines.append(f"interactions: {len(old)} → {len(new)}")
    for i, (before, after) in enumerate(zip(old, new)):
        prefix = f"interaction {i + 1}: " if several else ""
        lines += [prefix + line for line in _diff_one(before, after)]
    for i in range(len(new), len(old)):
        lines.append(f"interaction {i + 1} removed: {_outline(old[i])}")
    for i in range(len(old), len(new)):
        lines.append(f"interaction {i + 1} added: {_outline(new[i])}")
    return lines


def _diff_one(old: ResponseSummary, new: ResponseSummary) -> list[str]:
    lines: list[str] = []
    if old.status != new.status:
        lines.append(f"status: {old.status} → {new.status}")
    if old.result_type != new.result_type:
        lines.append(f"result type: {old.result_type} → {new.result_type}")
    lines += _text_line("text", old.text, new.text)
    lines += _text_line("thinking", old.thinking, new.thinking)
    if old.thinking_signed != new.thinking_signed:
        lines.append(f"thinking signature: {_signed(old)} → {_signed(new)}")
    if _calls(old.tool_calls) != _calls(new.tool_calls):
        lines.append(f"tool calls: {_calls(old.tool_calls)} → {_calls(new.tool_calls)}")
    if (old.stop_reason, old.wire_stop) != (new.stop_reason, new.wire_stop):
        lines.append(f"stop reason: {_stop(old)} → {_stop(new)}")
    if old.error_type != new.error_type:
        lines.append(f"error: {old.error_type or _NONE} → {new.error_type or _NONE}")
    if set(old.problems) != set(new.problems):
        lines.append(f"problems: {'; '.join(old.problems) or _NONE} → {'; '.join(new.problems) or _NONE}")
    if _shape(old.events) != _shape(new.events):
        lines.append(_events_line(old.events, new.events))
    return lines


def _text_line(name: str, old: str, new: str) -> list[str]:
    if old == new:
        return []
    line = f"{name}: {_presence(old)} → {_presence(new)}"
    if old and new:
        first = _first_difference(old, new)
        if first is not None:
            line += f"; first difference: {first[0]!r} → {first[1]!r}"
    return [line]


def _presence(text: str) -> str:
    return f"present ({len(text)} chars)" if text else "absent"


def _first_difference(old: str, new: str) -> tuple[str, str] | None:
    """The first few differing words of each side, when both are short enough to read in a line."""
    old_words, new_words = old.split(), new.split()
    start = 0
    while start < min(len(old_words), len(new_words)) and old_words[start] == new_words[start]:
        start += 1
    before, after = " ".join(old_words[start : start + 4]), " ".join(new_words[start : start + 4])
    if before == after or len(before) > _SHORT or len(after) > _SHORT:
        return None  # same words, other whitespace; or too long to be worth a line
    return before, after


def _signed(summary: ResponseSummary) -> str:
    return "signed" if summary.thinking_signed else "unsigned"


def _call(call: SummaryToolCall) -> str:
    if call.arguments_valid or not isinstance(call.arguments, str):
        arguments = json.dumps(call.arguments, ensure_ascii=False)
    else:
        arguments = f"<invalid JSON {call.arguments!r}>"
    return f"{call.name}({arguments})"


def _calls(calls: Sequence[SummaryToolCall]) -> str:
    """Calls by name and arguments; ids differ between any two recordings and are left out."""
    return ", ".join(_call(call) for call in calls) or _NONE


def _stop(summary: ResponseSummary) -> str:
    if summary.stop_reason is None:
        return _NONE if summary.wire_stop is None else f"? ({summary.wire_stop})"
    wire = summary.wire_stop
    return summary.stop_reason if wire in (None, summary.stop_reason) else f"{summary.stop_reason} ({wire})"


def _runs(events: Sequence[str]) -> list[tuple[str, int]]:
    return [(name, len(list(run))) for name, run in groupby(e for e in events if e not in NOISE_EVENTS)]


def _shape(events: Sequence[str]) -> list[str]:
    return [name for name, _ in _runs(events)]


def _events_line(old: Sequence[str], new: Sequence[str]) -> str:
    """Both sequences from just before where their shapes part (a long common start is elided)."""
    old_shape, new_shape = _shape(old), _shape(new)
    same = 0
    while same < min(len(old_shape), len(new_shape)) and old_shape[same] == new_shape[same]:
        same += 1
    skip = max(0, same - 1)
    return f"events: {compress_events(old, skip)} → {compress_events(new, skip)}"


def compress_events(events: Sequence[str], skip: int = 0) -> str:
    """The event sequence with runs collapsed (``content_block_delta×12``) and keep-alives left out; at
    most ten runs are shown, from run ``skip`` on."""
    runs = _runs(events)
    shown = [name if count == 1 else f"{name}×{count}" for name, count in runs[skip : skip + _SHOWN_EVENTS]]
    if skip:
        shown.insert(0, "…")
    if len(runs) > skip + _SHOWN_EVENTS:
        shown.append("…")
    return " ".join(shown) or _NONE


def _outline(summary: ResponseSummary) -> str:
    """One interaction in a few words, for added and removed ones."""
    parts = [f"HTTP {summary.status}", summary.result_type]
    if summary.text:
        parts.append(f"text ({len(summary.text)} chars)")
    if summary.tool_calls:
        parts.append(_calls(summary.tool_calls))
    if summary.error_type:
        parts.append(f"error {summary.error_type}")
    if summary.stop_reason:
        parts.append(f"stop {_stop(summary)}")
    return ", ".join(parts)
