"""``helix-conformance report merge OUT SHARD.json...``: the JSON reports of the shards of one suite
(``--helix-shard=I/N``) joined into the report one run of the whole suite writes, with the verdict recomputed
from the joined outcomes (``OutcomeLog.fails_gate``) and HARN-05 judged on the whole, as a single run does.

Shards of different runs cannot be joined: another adapter, profile, tool version, strictness, baseline or
setting that changes what is judged, a shard given twice or one missing is refused with a line saying which.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..gate import session_errors
from .json_report import ReportError, load_report, report_data
from .outcomes import ItemOutcome, OutcomeLog

SAME: tuple[tuple[str, str], ...] = (
    ("adapter", "the adapter"),
    ("tool.version", "the helix-conformance version"),
    ("schema_version", "the report schema"),
    ("strict", "--helix-strict"),
    ("baseline", "the baseline"),
    ("settings.helix_examples.value", "--helix-examples"),
    ("settings.helix_seed.value", "--helix-seed"),
    ("settings.helix_timeout.value", "--helix-timeout"),
    ("settings.helix_real_time.value", "--helix-real-time"),
    ("settings.helix_in_process.value", "--helix-in-process"),
)
"""What every shard of one suite shares: the path in the report, and how a user names it."""
STOPPED = "helix-conformance stopped early"


def _at(data: dict[str, Any], path: str) -> Any:
    value: Any = data
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _shown(value: Any) -> str:
    if isinstance(value, dict) and "requested" in value:
        return f"--adapter={value['requested']} ({value.get('wire_profile')})"
    return repr(value)


def load_shards(paths: list[Path]) -> list[tuple[Path, dict[str, Any]]]:
    """The shards' reports, in shard order, refused unless they are exactly shards 1..N of one suite."""
    shards = [(path, load_report(path)) for path in paths]
    for path, data in shards:
        if not (data.get("selection") or {}).get("shard"):
            raise ReportError(
                f"{path} is not a shard's report (it was not run with --helix-shard=I/N); merge joins the "
                "shards of one suite"
            )
        if (data.get("selection") or {}).get("quick"):
            raise ReportError(
                f"{path} was written by a quick check (--helix-quick), not a gate: merge the shards of runs "
                "without --helix-quick"
            )
    first_path, first = shards[0]
    for path, data in shards[1:]:
        for key, name in SAME:
            if _at(data, key) != _at(first, key):
                raise ReportError(
                    f"{path} and {first_path} differ in {name} ({_shown(_at(data, key))} vs "
                    f"{_shown(_at(first, key))}): they are not shards of one suite"
                )
    count = first["selection"]["shard"]["count"]
    seen: dict[int, Path] = {}
    for path, data in shards:
        shard = data["selection"]["shard"]
        if shard["count"] != count:
            raise ReportError(
                f"{path} is shard {shard['index']}/{shard['count']}, {first_path} one of {count}: shards of "
                "one suite share N"
            )
        if shard["index"] in seen:
            raise ReportError(
                f"shard {shard['index']}/{count} given twice ({seen[shard['index']]}, {path}): give each once"
            )
        seen[shard["index"]] = path
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        raise ReportError(
            f"missing shard{'s' if len(missing) > 1 else ''} {', '.join(missing)}: give the JSON report of every "
            f"shard 1..{count}"
        )
    return sorted(shards, key=lambda pd: int(pd[1]["selection"]["shard"]["index"]))


def _outcome(result: dict[str, Any]) -> ItemOutcome:
    return ItemOutcome(
        nodeid=result["id"],
        clause=result["clause"],
        scenario=result["scenario"],
        profile=result["profile"],
        level=result["level"],
        status=result["outcome"],
        message=result["message"],
        duration_s=float(result.get("duration_s", 0.0)),
        requires=frozenset(result.get("requires", ())),
        baseline_reason=result.get("baseline_reason", ""),
        cause=result.get("cause", ""),
        servers=frozenset(result.get("servers", ())),
        happening=result.get("happening", ""),
    )


def merge_reports(paths: list[Path]) -> dict[str, Any]:
    """The report of the whole suite from its shards' reports (``load_shards``)."""
    shards = load_shards(paths)
    log = OutcomeLog()
    owner: dict[str, Path] = {}
    for path, data in shards:
        for result in data["results"]:
            if result["id"] in owner:  # the shards of one plan never share a check
                raise ReportError(
                    f"{result['id']} is in both {owner[result['id']]} and {path}: shards overlap"
                )
            owner[result["id"]] = path
            log.record(_outcome(result))
        log.gate_errors.extend(e for e in data["gate_errors"] if e not in log.gate_errors)
        log.notes.extend(n for n in data["notes"] if n not in log.notes)
    first = shards[0][1]
    narrowed = any(data["selection"].get("narrowed") for _, data in shards)
    stopped = any(e.startswith(STOPPED) for e in log.gate_errors)
    log.gate_errors.extend(
        session_errors(
            log, frozenset(first["adapter"]["capabilities"]), everything_selected=not narrowed and not stopped
        )
    )
    strict = bool(first["strict"])
    settings = {dest: value for dest, value in first["settings"].items() if dest != "helix_shard"}
    selection = {
        "shard": None,
        "narrowed": narrowed,
        "last_failed": any(data["selection"].get("last_failed") for _, data in shards),
        "merged": {"shards": len(shards), "from": [str(path) for path, _ in shards]},
    }
    return report_data(
        log,
        first["adapter"],
        settings,
        strict=strict,
        exitstatus=1 if log.fails_gate(strict=strict) else 0,
        baseline=first["baseline"],
        selection=selection,
    )
