"""Loading YAML we did not write (cassettes, baselines, foreign recordings) without letting it crash or hang us.

libyaml composes nodes recursively in C: a document nested 100,000 deep overflows the C stack and kills the
process (no exception to catch), and a few lines of anchors and aliases expand into billions of nodes (a
"billion laughs" bomb). None of our files needs anchors, aliases or deep nesting, so ``load_yaml`` walks the
parser's events first (iteratively, and it stops at the first offence) and refuses them, then loads. The walk
also refuses a key written twice in one mapping, which YAML loaders silently resolve to the last value (a
cassette or a baseline that says two things at once). Only regular files are read: a FIFO or a device would
block or never end.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 64 * 1024 * 1024
"""Largest file read: the biggest real recording we know is a few hundred KiB."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and sequences (a cassette needs about 8; pydantic-ai's parsed bodies ~20)."""
MAX_NODES = 2_000_000
"""Most mappings, sequences and scalars in one document."""


class YamlRefused(Exception):
    """The text is not YAML we load; the message says what is wrong (one line, without the file name)."""


def _loader_class() -> type[yaml.SafeLoader]:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class _Collection:
    """A mapping or sequence the walk is inside: a mapping's keys so far (by resolved tag and value)."""

    mapping: bool
    keys: dict[tuple[str, str], int] = field(default_factory=dict)
    at_key: bool = True
    """In a mapping: the next node is a key (else a value)."""


def check_structure(text: str) -> None:
    """Raise ``YamlRefused`` for anchors, aliases, a key written twice in one mapping, nesting deeper than
    ``MAX_DEPTH`` or more than ``MAX_NODES`` nodes. Syntax errors are left to the load, which reports them
    with a position."""
    loader = _loader_class()(text)
    open_: list[_Collection] = []
    nodes = 0
    try:
        while loader.check_event():
            event = loader.get_event()  # type: ignore[no-untyped-call]
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise YamlRefused(
                    f"uses YAML anchors or aliases ({_line(event)}); they are not allowed here: "
                    "write every value out"
                )
            if isinstance(event, yaml.ScalarEvent) and open_ and open_[-1].mapping and open_[-1].at_key:
                _check_key(loader, open_[-1], event)
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                open_.append(_Collection(isinstance(event, yaml.MappingStartEvent)))
                if len(open_) > MAX_DEPTH:
                    raise YamlRefused(f"is nested more than {MAX_DEPTH} levels deep ({_line(event)})")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                open_.pop()
            completes = isinstance(event, (yaml.ScalarEvent, yaml.MappingEndEvent, yaml.SequenceEndEvent))
            if completes and open_ and open_[-1].mapping:  # a node of the enclosing mapping is complete
                open_[-1].at_key = not open_[-1].at_key
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.ScalarEvent)):
                nodes += 1
                if nodes > MAX_NODES:
                    raise YamlRefused(f"has more than {MAX_NODES:,} values")
    except yaml.YAMLError as exc:
        if _is_nesting_limit(exc):
            raise YamlRefused(_too_deep(exc)) from None
        return  # the load says where the syntax is wrong
    finally:
        loader.dispose()


def _check_key(loader: Any, mapping: _Collection, event: yaml.ScalarEvent) -> None:
    """A key already in this mapping is refused: loaders keep the last value silently."""
    tag = event.tag or loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    line = event.start_mark.line + 1 if event.start_mark is not None else 0
    first = mapping.keys.get((tag, event.value))
    mapping.keys[(tag, event.value)] = line
    if first is not None:
        raise YamlRefused(
            f"has the key {event.value[:80]!r} twice in one mapping (lines {first} and {line}); a YAML "
            "loader keeps only the last value: remove one"
        )


def _is_nesting_limit(exc: yaml.YAMLError) -> bool:
    """libyaml 0.2.6 (in PyYAML 6.0.4's wheels) stops scanning at 1,000 levels, before the first event."""
    return "nesting depth" in str(getattr(exc, "problem", "") or "")


def _too_deep(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1})" if mark is not None else ""
    return f"is nested more than {MAX_DEPTH} levels deep{where}"


def _line(event: yaml.Event) -> str:
    mark = event.start_mark
    return f"line {mark.line + 1}" if mark is not None else "position unknown"


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"


def load_yaml_text(text: str) -> Any:
    """Parse ``text`` as one safe YAML document; ``YamlRefused`` for anything ``check_structure`` refuses
    and for invalid YAML (the message in one line)."""
    check_structure(text)
    try:
        return yaml.load(text, Loader=_loader_class())
    except yaml.YAMLError as exc:
        if _is_nesting_limit(exc):
            raise YamlRefused(_too_deep(exc)) from None
        raise YamlRefused(f"is not valid YAML ({' '.join(str(exc).split())})") from None
    except RecursionError:  # the pure-Python loader, where libyaml is missing
        raise YamlRefused(f"is nested more than {MAX_DEPTH} levels deep") from None


def read_yaml_file(path: Path) -> Any:
    """Read and parse one file: ``YamlRefused`` when it is too large, unreadable, not UTF-8 text (a binary
    file), or refused by ``load_yaml_text``. ``FileNotFoundError`` passes through for the caller to word."""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise YamlRefused(f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(status.st_mode):
        raise YamlRefused(f"is not a regular file ({_kind(status.st_mode)}): give the path of a YAML file")
    size = status.st_size
    if size > MAX_BYTES:
        raise YamlRefused(f"is {size:,} bytes; files over {MAX_BYTES // (1024 * 1024)} MiB are not read")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise YamlRefused(f"cannot be read ({exc.strerror or exc})") from None
    if b"\x00" in raw:
        raise YamlRefused("is a binary file, not YAML text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlRefused(f"is not UTF-8 text (byte {exc.start}): a binary file?") from None
    return load_yaml_text(text)
