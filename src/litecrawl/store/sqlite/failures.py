"""SQLite's errors as litecrawl's: a damaged file and a full disk are told apart from the rest,
since no retry and no other page can get past them (see ``DatabaseUnusable``)."""

from __future__ import annotations

import sqlite3

from litecrawl.errors import DatabaseDamaged, DatabaseUnusable, DiskFull, FrontierError

__all__ = ["fatal", "translate"]

# primary result codes (the low byte of an extended one)
_SQLITE_CORRUPT = 11
_SQLITE_FULL = 13
_SQLITE_NOTADB = 26
_DAMAGED_WORDS = ("database disk image is malformed", "file is not a database")


def translate(path: str, exc: sqlite3.Error, doing: str = "") -> FrontierError:
    """The error to raise for ``exc`` met on the database at ``path`` (``doing``: what was
    being done, put before SQLite's words in an ordinary error)."""
    return fatal(path, exc) or FrontierError(f"{doing}{path}: {exc}")


def fatal(path: str, exc: sqlite3.Error) -> DatabaseUnusable | None:
    """A damaged file or a full disk behind ``exc``, else None."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB) or any(w in text for w in _DAMAGED_WORDS):
        return DatabaseDamaged(path, text)
    if primary == _SQLITE_FULL or "disk is full" in text:
        return DiskFull(path, text)
    return None
