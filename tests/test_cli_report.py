"""``helix-conformance report``: bad input is one clear line and exit status 2, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helix_conformance.cli import main


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("{not json", "is not JSON"),
        ('{"hello": 1}', "is not a helix-conformance report (no schema_version)"),
        ('{"schema_version": 1}', "has report schema 1; this helix-conformance"),
        ('{"schema_version": 2, "adapter": {}}', "is missing 'verdict'"),
        (
            '{"schema_version": 2, "adapter": {}, "verdict": "pass", "clauses": {}, "results": []}',
            "is not a complete helix-conformance report (missing or malformed 'name')",
        ),
    ],
    ids=["missing", "not-json", "foreign", "old-schema", "truncated", "malformed"],
)
def test_a_bad_report_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["report", str(path), "--format", "html"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("helix-conformance report: error: ")
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_the_console_script_and_module_entry_points(tmp_path: Path) -> None:
    """``python -m helix_conformance`` is the same command; no subcommand prints the help and exits 2."""
    done = subprocess.run(
        [sys.executable, "-m", "helix_conformance"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert "report" in done.stdout
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema_version": 2}), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "helix_conformance", "report", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
