"""A red run a reviewer understands in ten seconds (issue 33): the HTML report looked at in headless Chromium at
1400×900, red and green, and the Markdown of a red run with one cause pinned as a snapshot.

The runs are real (``run_conformance`` on a crashing adapter and on the reference, over a slice of the
scenarios); what is asserted is what a reviewer sees: the verdict banner's colour, the failing clauses and the
causes within the first 900 pixels, no page-wide horizontal scrolling, the matrix's failing cells linked.
Set ``HELIX_SCREENSHOT_DIR`` to keep the screenshots."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from broken_adapters.crashes import TOOL_CALL_ASSEMBLY
from browser import HEIGHT, WIDTH, colour_share, layout, pixels, screenshot

from helix_conformance.reporting.html import render_html
from helix_conformance.reporting.markdown import render_markdown
from helix_conformance.testing import run_conformance
from reference_adapters.openai_chat import spec as reference

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = Path(__file__).parent / "snapshots" / "red_run_one_cause.md"
SCENARIOS = (
    "text_basic",
    "text_unicode",
    "system_multiturn",
    "tool_call",
    "tool_call_parallel",
    "text_and_tool_call",
    "finish_tool",
    "thinking_text",
    "stop_max_tokens",
    "stop_content_filter",
    "http_401",
    "http_429",
    "http_500",
    "midstream_error",
    "truncated_stream",
    "retry_429_then_success",
    "compat_reasoning_field",
    "compat_duplicate_tool_ids",
    "random_histories",
)
RED_BANNER = (0xFF, 0xEB, 0xE9)
GREEN_BANNER = (0xDA, 0xFB, 0xE1)


def _run(spec: Any) -> dict[str, Any]:
    return run_conformance(spec, scenarios=SCENARIOS, timeout=5.0, examples=2, in_process=True)


@pytest.fixture(scope="module")
def red() -> dict[str, Any]:
    return _run(TOOL_CALL_ASSEMBLY.spec)


@pytest.fixture(scope="module")
def green() -> dict[str, Any]:
    return _run(reference)


def _page(tmp_path: Path, data: dict[str, Any], name: str) -> Path:
    page = tmp_path / f"{name}.html"
    page.write_text(render_html(data), encoding="utf-8")
    return page


def _keep(png: Path) -> None:
    where = os.environ.get("HELIX_SCREENSHOT_DIR")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(where) / png.name)


SELECTORS = {
    "banner": "header.banner",
    "broken": "header.banner a[href^='#clause-']",
    "causes": "#causes h2",
    "cause": "ol.causes > li",
    "failing_clauses": "#failing-clauses th a",
    "matrix": "div.matrix",
    "failing_cells": "div.matrix td.failed",
    "hidden_rows": "div.matrix tr.holds",
}


@pytest.mark.slow  # headless Chromium screenshots
def test_a_red_report_names_its_failing_clauses_and_causes_above_the_fold(
    red: dict[str, Any], tmp_path: Path
) -> None:
    assert red["verdict"] == "fail"
    assert len(red["causes"]) == 1, red["causes"]
    page = _page(tmp_path, red, "report-red")
    png = screenshot(page, tmp_path / "report-red.png")
    _keep(png)
    width, height, rows = pixels(png, rows_wanted=60)
    assert (width, height) == (WIDTH, HEIGHT)
    assert colour_share(rows, 5, 55, RED_BANNER) > 0.6, "the top of the page is the red verdict banner"

    boxes = layout(page, SELECTORS)
    broken = [box["text"] for box in boxes["broken"]]
    assert broken == ["RES-02", "FIN-01"]
    for name in ("broken", "causes", "cause", "failing_clauses"):
        assert boxes[name], f"nothing found for {name}"
        for box in boxes[name]:
            assert float(box["bottom"]) <= HEIGHT, (
                f"{name} {box['text']!r} is below the fold ({box['bottom']})"
            )
            assert float(box["right"]) <= WIDTH, f"{name} {box['text']!r} is off-screen to the right"
    assert boxes["page"][0]["width"] <= WIDTH, "the page scrolls sideways: the matrix must scroll in its box"
    # The matrix starts filtered to what fails: every failing cell shown, the rows that hold hidden.
    assert boxes["failing_cells"]
    assert all(float(box["right"]) <= WIDTH for box in boxes["failing_cells"])
    assert all(box["bottom"] == box["top"] == 0 for box in boxes["hidden_rows"])  # display: none


@pytest.mark.slow  # headless Chromium screenshots
def test_a_green_report_says_pass_in_green(green: dict[str, Any], tmp_path: Path) -> None:
    assert green["verdict"] == "pass", green["causes"]
    page = _page(tmp_path, green, "report-green")
    png = screenshot(page, tmp_path / "report-green.png")
    _keep(png)
    _, _, rows = pixels(png, rows_wanted=60)
    assert colour_share(rows, 5, 55, GREEN_BANNER) > 0.6, "the top of the page is the green verdict banner"
    boxes = layout(page, SELECTORS)
    assert not boxes["broken"]
    assert not boxes["causes"]
    assert boxes["banner"][0]["text"].startswith("PASS")
    assert boxes["page"][0]["width"] <= WIDTH
    assert float(boxes["matrix"][0]["top"]) < 2 * HEIGHT, "with nothing failing, the matrix comes early"


def test_every_failing_cell_links_to_its_failure_and_back(red: dict[str, Any], tmp_path: Path) -> None:
    html = render_html(red)
    failing = [(r["clause"], r["scenario"]) for r in red["results"] if r["outcome"] == "failed"]
    assert failing
    for clause, scenario in failing:
        anchor = f"{clause}--{scenario}".lower()
        assert f'<a href="#{anchor}">' in html  # the cell (and the cause) link to the failure
        assert f'id="{anchor}"' in html
        assert f'href="#cell-{anchor}"' in html  # and the failure back to its cell
    # The clause text is said once per clause, not in every failure block.
    text = red["clauses"]["RES-02"]["text"]
    section = html.split('id="clause-res-02"', 1)[1].split("</section>", 1)[0]
    assert section.count(text.replace("'", "&#x27;")) == 1


def _stable(data: dict[str, Any]) -> dict[str, Any]:
    """The report without what differs between machines and runs: time, versions, paths, line numbers."""
    text = json.dumps(data).replace(str(ROOT), "<checkout>")
    text = re.sub(r"\.py:\d+ in ", ".py:N in ", text)
    stable: dict[str, Any] = json.loads(text)
    stable["created"] = "<created>"
    stable["tool"] = {**stable["tool"], "version": "<version>", "python": "<python>"}
    return stable


def test_the_markdown_of_a_red_run_with_one_cause(red: dict[str, Any]) -> None:
    """What a job summary or PR comment shows first is pinned: the verdict, the cause with its clause,
    scenario, expected/actual and reproduce line, the failing clauses. Set HELIX_UPDATE_SNAPSHOTS=1 to
    rewrite the snapshot after a deliberate change, and review the diff."""
    markdown = render_markdown(_stable(red))
    head, _, rest = markdown.partition("<details><summary>Every clause")  # the matrix is folded above it
    if os.environ.get("HELIX_UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(head, encoding="utf-8")
    assert head == SNAPSHOT.read_text(encoding="utf-8")
    # Below it, folded: the tables, then every failure grouped by clause.
    assert rest.startswith(", by contract area and scenario</summary>")
    assert "<details><summary>Every failure (" in rest
    assert markdown.count("### RES-02 (MUST): ") == 1
