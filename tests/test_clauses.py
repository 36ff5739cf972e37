"""The clause catalogue: well-formed, documented, and in step with the product specification."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helix_conformance.clauses import ADDED_SINCE_SPECIFICATION, AREAS, CLAUSES, get_clause

DOCS = Path(__file__).parent.parent / "docs/contract.md"
SPEC = Path(__file__).resolve().parents[2] / "shared" / "CONTRACT.md"

ID_RE = re.compile(r"^[A-Z]+-\d\d$")
# "- RES-01 MUST seed: ...", "- CACHE-02 MUST seed (Anthropic): ...", "- HARN-01 MUST: ..."
SPEC_LINE_RE = re.compile(r"^- ([A-Z]+-\d\d) (MUST|SHOULD)(?: ([a-z-]+))?(?: \([^)]*\))?:")


def test_every_clause_has_a_heading_in_the_docs() -> None:
    headings = set(re.findall(r"^### ([A-Z]+-\d\d) — \S", DOCS.read_text(encoding="utf-8"), re.MULTILINE))
    missing = [clause_id for clause_id in CLAUSES if clause_id not in headings]
    assert not missing, f"clauses without a '### ID — title' heading in {DOCS}: {missing}"
    unknown = sorted(headings - set(CLAUSES))
    assert not unknown, f"headings in {DOCS} that are not clauses: {unknown}"


def test_ids_are_unique_and_well_formed() -> None:
    assert CLAUSES, "the catalogue is empty"
    ids = [clause.id for clause in CLAUSES.values()]
    assert len(ids) == len(set(ids))
    for key, clause in CLAUSES.items():
        assert key == clause.id
        assert ID_RE.match(clause.id), clause.id
        assert clause.id.split("-", maxsplit=1)[0] == clause.area, clause.id
        assert clause.area in AREAS, clause.id
        assert clause.level in ("MUST", "SHOULD"), clause.id
        assert clause.source in ("seed", "helix-later", "wire", "harness"), clause.id
        assert clause.is_must == (clause.level == "MUST")
        for field in (clause.text, clause.why, clause.common_mistakes):
            assert field.strip(), clause.id
            assert "\n" not in field, clause.id


def test_clauses_are_grouped_by_area_in_area_order() -> None:
    order = list(AREAS)
    positions = [order.index(clause.area) for clause in CLAUSES.values()]
    assert positions == sorted(positions)
    assert {clause.area for clause in CLAUSES.values()} == set(AREAS)


@pytest.mark.skipif(not SPEC.exists(), reason=f"the product specification {SPEC} is absent in this checkout")
def test_catalogue_matches_the_specification() -> None:
    spec: list[tuple[str, str, str]] = []
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        match = SPEC_LINE_RE.match(line)
        if match:
            clause_id, level, source = match.groups()
            spec.append((clause_id, level, source or "harness"))
    assert spec, f"no clause lines found in {SPEC}"
    catalogue = [
        (clause.id, clause.level, clause.source)
        for clause in CLAUSES.values()
        if clause.id not in ADDED_SINCE_SPECIFICATION
    ]
    assert catalogue == spec
    assert not set(ADDED_SINCE_SPECIFICATION) & {clause_id for clause_id, _, _ in spec}


def test_clauses_added_since_the_specification_say_why() -> None:
    for clause_id, why in ADDED_SINCE_SPECIFICATION.items():
        assert clause_id in CLAUSES, clause_id
        assert "issue" in why, (clause_id, why)
        assert "docs/contract.md#" in why, (clause_id, why)


def test_get_clause() -> None:
    assert get_clause("RES-06") is CLAUSES["RES-06"]
    with pytest.raises(KeyError, match="RES") as excinfo:
        get_clause("NOPE-01")
    assert "NOPE-01" in str(excinfo.value)
