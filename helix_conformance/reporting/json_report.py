"""The report as data: every clause x scenario outcome, schema-versioned. The JSON file is this dict; the
Markdown and HTML reports and the badge are rendered from it (also later, from the file:
``helix-conformance report out.json --format html``)."""

from __future__ import annotations

import json
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from ..adapters import ResolvedAdapter
from ..baseline import Baseline
from ..clauses import AREAS, CLAUSES
from ..profiles.servers import declared_servers
from .applicability import not_applicable_data
from .causes import causes_data
from .compatibility import matrix_data
from .outcomes import OutcomeLog
from .safety import safe_text, shown_setting

SCHEMA_VERSION = 3
"""2: outcomes ``baselined`` and ``stale``, clause texts, areas, the baseline, notes. 3: the servers the
adapter declares (``adapter.servers``) and each result's (``results[].servers``), outcomes ``compat_failed``
and ``not_applicable``, the ``compatibility`` matrix and the ``not_applicable`` checks with their reasons."""
READABLE_VERSIONS = (2, SCHEMA_VERSION)
"""Report schemas ``helix-conformance report`` renders (an older one is read as this one, empty where it
had nothing to say)."""


class ReportError(Exception):
    """A report file that cannot be rendered; the message names the file and what is wrong."""


def build_report(
    log: OutcomeLog,
    resolved: ResolvedAdapter,
    options: dict[str, tuple[Any, str]],
    *,
    strict: bool,
    exitstatus: int,
    baseline: Baseline | None = None,
    selection: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec = resolved.spec
    adapter = {
        "name": spec.name,
        "requested": resolved.requested,
        "target": resolved.target,
        "wire_profile": spec.wire_profile,
        "model": spec.model,
        "capabilities": sorted(spec.capabilities),
        "servers": sorted(declared_servers(spec, spec.wire_profile)),
    }
    settings = {
        dest: {"value": shown_setting(value), "source": source} for dest, (value, source) in options.items()
    }
    shown_baseline = (
        {"path": str(baseline.path), "entries": len(baseline.entries)} if baseline is not None else None
    )
    return report_data(
        log,
        adapter,
        settings,
        strict=strict,
        exitstatus=exitstatus,
        baseline=shown_baseline,
        selection=selection or whole_suite(),
    )


def whole_suite() -> dict[str, Any]:
    """The ``selection`` of a run of every check: no shard, nothing deselected."""
    return {"shard": None, "narrowed": False, "last_failed": False, "quick": False}


def report_data(
    log: OutcomeLog,
    adapter: dict[str, Any],
    settings: dict[str, Any],
    *,
    strict: bool,
    exitstatus: int,
    baseline: dict[str, Any] | None,
    selection: dict[str, Any],
) -> dict[str, Any]:
    """The report of ``log``, for a run (``build_report``) or for the shards' outcomes joined (``merge``).
    ``selection``: the shard this run is (``sharding.Shard.as_data``), whether anything else was deselected
    (``narrowed``), whether ``--lf`` did it (``last_failed``), and whether ``--helix-quick`` chose the checks
    (``quick``: not a gate, quick.py)."""
    requested = adapter["requested"]
    clauses = {}
    for clause_id, outcomes in sorted(log.by_clause().items(), key=lambda kv: list(CLAUSES).index(kv[0])):
        clause = CLAUSES[clause_id]
        clauses[clause_id] = {
            "level": clause.level,
            "area": clause.area,
            "source": clause.source,
            "text": clause.text,
            "status": log.clause_status(clause_id),
            "scenarios": {o.scenario: o.status for o in outcomes},
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tool": {"name": "helix-conformance", "version": __version__, "python": platform.python_version()},
        "adapter": adapter,
        "settings": settings,
        "selection": selection,
        "verdict": "pass" if exitstatus == 0 else "fail",
        "exit_status": exitstatus,
        "strict": strict,
        "gate_errors": [safe_text(error) for error in log.gate_errors],
        "causes": causes_data(log, requested),
        "notes": [safe_text(note) for note in log.notes],
        "baseline": baseline,
        "areas": dict(AREAS),
        "compatibility": matrix_data(log, adapter["wire_profile"], frozenset(adapter["servers"])),
        "not_applicable": not_applicable_data(log),
        "clauses": clauses,
        "results": [
            {
                "id": o.nodeid,
                "clause": o.clause,
                "scenario": o.scenario,
                "profile": o.profile,
                "level": o.level,
                "outcome": o.status,
                "message": o.message,
                "baseline_reason": o.baseline_reason,
                "servers": sorted(o.servers),
                "requires": sorted(o.requires),
                "cause": o.cause,
                "happening": o.happening,
                "duration_s": round(o.duration_s, 4),
                "reproduce": f'pytest --adapter={requested} -k "{o.profile}::{o.scenario}::{o.clause}"',
            }
            for o in log.items.values()
        ],
    }


def render_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, default=str) + "\n"


def load_report(path: Path) -> dict[str, Any]:
    """Read a report written by --helix-report=*.json, refusing files it cannot render with a clear reason."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path} cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or "schema_version" not in data:
        raise ReportError(f"{path} is not a helix-conformance report (no schema_version)")
    if data["schema_version"] not in READABLE_VERSIONS:
        raise ReportError(
            f"{path} has report schema {data['schema_version']!r}; this helix-conformance "
            f"({__version__}) renders schemas {', '.join(map(str, READABLE_VERSIONS))}: re-run the suite with "
            "--helix-report"
        )
    for key in ("adapter", "verdict", "clauses", "results"):
        if key not in data:
            raise ReportError(f"{path} is missing {key!r}: not a complete helix-conformance report")
    return upgraded(data)


def upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """A report of an older schema read as this one: what it did not record is empty (a version 2 report knew
    no servers, so it has no compatibility matrix and nothing not applicable)."""
    if data["schema_version"] == 2 and isinstance(data.get("adapter"), dict):
        data = {**data, "adapter": {"servers": [], **data["adapter"]}}
        data.setdefault("compatibility", None)
        data.setdefault("not_applicable", None)
    if "selection" not in data:  # written before shards: a whole-suite run as far as it said
        data = {**data, "selection": whole_suite()}
    return data
