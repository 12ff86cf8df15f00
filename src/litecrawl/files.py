"""Files written whole or not at all: a temporary file beside the target, renamed over it when
complete, so a reader (and a crash, a kill, a failed export) sees the old file or the new one,
never half of one, and a failure leaves the old file as it was."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["replacing"]


@contextlib.contextmanager
def replacing(path: Path, *, fsync: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content to: renamed over ``path`` when the block
    ends normally, removed when it raises. Parent directories are created; ``fsync`` flushes the
    data to disk before the rename. A ``path`` that exists and is not a regular file (a pipe,
    ``/dev/stdout``) is written directly: there is nothing to replace."""
    try:
        special = not stat.S_ISREG(path.stat().st_mode)
    except OSError:
        special = False
    if special:
        with path.open("wb") as handle:
            yield handle
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
