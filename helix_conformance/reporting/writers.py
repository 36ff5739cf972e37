"""Writing the report in the format its path asks for, and the badge; shared by the plugin and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .._files import write_atomic

FORMATS: dict[str, str] = {".json": "json", ".md": "md", ".html": "html", ".htm": "html"}
"""File extension -> report format."""


def renderer(fmt: str) -> Callable[[dict[str, Any]], str]:
    if fmt == "json":
        from .json_report import render_json

        return render_json
    if fmt == "md":
        from .markdown import render_markdown

        return render_markdown
    if fmt == "html":
        from .html import render_html

        return render_html
    if fmt == "badge":
        from .badge import render_badge

        return render_badge
    raise ValueError(f"unknown report format {fmt!r}")


def format_of(path: Path) -> str | None:
    return FORMATS.get(path.suffix.lower())


def write_reports(paths: Iterable[Path], data: dict[str, Any]) -> None:
    for path in paths:
        fmt = format_of(path)
        if fmt is None:
            raise ValueError(f"cannot tell the report format of {path} from its extension")
        write_atomic(path, renderer(fmt)(data))


def write_badge(path: Path, data: dict[str, Any]) -> None:
    write_atomic(path, renderer("badge")(data))
