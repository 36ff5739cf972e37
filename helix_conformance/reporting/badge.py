"""A shields.io endpoint badge: ``https://img.shields.io/endpoint?url=<where the JSON is served>``."""

from __future__ import annotations

import json
from typing import Any

from .views import broken_clauses, clauses_holding, stale_results, stale_words


def render_badge(data: dict[str, Any]) -> str:
    passed = data["verdict"] == "pass"
    known = sum(1 for r in data["results"] if r["outcome"] == "baselined")
    message = f"{clauses_holding(data)} clauses" + (f", {known} known" if known else "")
    stale = stale_results(data)
    if passed:
        shown = message
    elif stale and not broken_clauses(data) and not data.get("gate_errors"):
        shown = f"{message} · {stale_words(len(stale))}"  # nothing is broken: the baseline is out of date
    else:
        shown = f"failing · {message}"
    shard = (data.get("selection") or {}).get("shard")
    if shard:  # one shard's verdict is not the adapter's: the badge of the merged report is
        shown = f"shard {shard['index']}/{shard['count']} · {shown}"
    quick = (data.get("selection") or {}).get("quick")
    if quick:  # a quick check's pass is no adapter's badge
        shown = f"quick check, not a gate · {shown}"
    badge = {
        "schemaVersion": 1,
        "label": f"helix {data['adapter']['wire_profile']}",
        "message": shown,
        "color": _colour(passed=passed, known=bool(known), quick=bool(quick)),
    }
    return json.dumps(badge) + "\n"


def _colour(*, passed: bool, known: bool, quick: bool) -> str:
    """Red for a failing verdict; a passing one grey when a quick check's (not a gate), yellow-green with known
    failures baselined, else green."""
    if not passed:
        return "red"
    if quick:
        return "lightgrey"
    return "yellowgreen" if known else "brightgreen"
