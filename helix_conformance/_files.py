"""Writing files so that a reader (a pipeline, another run) never sees half of one."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it into place, with the mode a plain
    ``open(path, "w")`` gives (0644 under the usual umask): reports and badges are CI artifacts other jobs
    read, and ``mkstemp`` alone would leave them 0600. A lone surrogate (text decoded with
    ``surrogateescape``) is written as its escape: a report is never lost to one character."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def umask() -> int:
    """The process's umask, read without changing it where the system says it (``os.umask`` sets one to
    read it: another thread creating a file meanwhile would get the wrong mode)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
        found = re.search(r"^Umask:\s*([0-7]+)$", status, re.M)
        if found:
            return int(found.group(1), 8)
    except OSError:
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current
