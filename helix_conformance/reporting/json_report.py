"""``--helix-report=PATH``: every clause x scenario outcome as schema-versioned JSON."""

from __future__ import annotations

import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

from .. import __version__
from ..adapters import ResolvedAdapter
from ..clauses import CLAUSES
from .outcomes import OutcomeLog

SCHEMA_VERSION = 1


def build_report(
    log: OutcomeLog,
    resolved: ResolvedAdapter,
    options: dict[str, tuple[Any, str]],
    *,
    strict: bool,
    exitstatus: int,
) -> dict[str, Any]:
    spec = resolved.spec
    clauses = {}
    for clause_id, outcomes in log.by_clause().items():
        clause = CLAUSES[clause_id]
        clauses[clause_id] = {
            "level": clause.level,
            "area": clause.area,
            "status": log.clause_status(clause_id),
            "scenarios": {o.scenario: o.status for o in outcomes},
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "helix-conformance", "version": __version__, "python": platform.python_version()},
        "adapter": {
            "name": spec.name,
            "target": resolved.target,
            "wire_profile": spec.wire_profile,
            "model": spec.model,
            "capabilities": sorted(spec.capabilities),
        },
        "settings": {dest: {"value": value, "source": source} for dest, (value, source) in options.items()},
        "verdict": "pass" if exitstatus == 0 else "fail",
        "exit_status": exitstatus,
        "strict": strict,
        "gate_errors": list(log.gate_errors),
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
                "duration_s": round(o.duration_s, 4),
                "reproduce": f'pytest --adapter={resolved.requested} -k "{o.profile}::{o.scenario}::{o.clause}"',
            }
            for o in log.items.values()
        ],
    }


def write_json_report(
    path: Path,
    log: OutcomeLog,
    resolved: ResolvedAdapter,
    options: dict[str, tuple[Any, str]],
    *,
    strict: bool,
    exitstatus: int,
) -> None:
    """Write atomically, so a pipeline never reads half a report."""
    data = build_report(log, resolved, options, strict=strict, exitstatus=exitstatus)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, default=str)
        handle.write("\n")
    os.replace(tmp, path)
