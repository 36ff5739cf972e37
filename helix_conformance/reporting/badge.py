"""A shields.io endpoint badge: ``https://img.shields.io/endpoint?url=<where the JSON is served>``."""

from __future__ import annotations

import json
from typing import Any

from .views import clauses_holding


def render_badge(data: dict[str, Any]) -> str:
    passed = data["verdict"] == "pass"
    known = sum(1 for r in data["results"] if r["outcome"] == "baselined")
    message = f"{clauses_holding(data)} clauses" + (f", {known} known" if known else "")
    badge = {
        "schemaVersion": 1,
        "label": f"helix {data['adapter']['wire_profile']}",
        "message": message if passed else f"failing · {message}",
        "color": ("yellowgreen" if known else "brightgreen") if passed else "red",
    }
    return json.dumps(badge) + "\n"
