"""Connections to a SQLite file: the settings every litecrawl connection needs (WAL, busy
timeout, foreign keys), and read-only ones that never write (``stats``, search, the dashboard)."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

from litecrawl.errors import FrontierError
from litecrawl.index.hamming import hamming
from litecrawl.store.sqlite.failures import translate
from litecrawl.store.sqlite.migrations import MIGRATIONS, migrate

__all__ = ["WRITER_CACHE_KIB", "connect", "connect_readonly", "for_writing"]

# The page cache of a frontier's connection, which writes the crawl's batches (SQLite's own:
# 2 MB). A batch changes ~1.5 MB of text pages alone (64 kit pages), and the pages the cache
# writes out before the commit while a statement that keeps a journal runs (the documents'
# upserts: their foreign key) go into that statement's journal too, to a temporary file past
# 64 KiB (store/sqlite/index.py; bench/README.md, issue 33, session 9). With 8 MiB a kit crawl
# journals 2.6 KiB a page there instead of 25 (60 before the one-row inserts).
WRITER_CACHE_KIB = 8192
log = logging.getLogger("litecrawl")


def connect(path: str | Path) -> sqlite3.Connection:
    """A connection with the settings every litecrawl connection needs (WAL, busy timeout)."""
    try:
        conn = sqlite3.connect(
            str(path), timeout=30.0, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA journal_mode = WAL")
        # NORMAL in WAL survives a process crash (kill -9); only an OS crash may drop the last
        # commits, never corrupt the file.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA foreign_keys = ON")
        # the near-duplicate look-up's distance, checked in SQL (store/sql.py near_resources)
        conn.create_function("hamming", 2, hamming, deterministic=True)
    except sqlite3.Error as exc:
        raise translate(str(path), exc, "cannot open SQLite database ") from exc
    return conn


def for_writing(conn: sqlite3.Connection) -> sqlite3.Connection:
    """``conn`` (from :func:`connect`) set up for a crawl's batches of writes."""
    conn.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
    return conn


def connect_readonly(path: str | Path, current: bool = True) -> sqlite3.Connection:
    """A connection that never writes (``mode=ro``). Where the file or its directory cannot be
    written (a read-only file system or mount), also ``immutable=1``: SQLite then takes no lock
    and makes no shared-memory file, which it could not, and reads the file as it is (a crawl
    that ended leaves its writes in it, not in a write-ahead log). ``current``: the schema must
    be this version's (nothing can be migrated here)."""
    p = Path(path)
    query = "mode=ro"
    if not (os.access(p, os.W_OK) and os.access(p.parent, os.W_OK)):
        query += "&immutable=1"
    try:
        conn = sqlite3.connect(
            f"{p.resolve().as_uri()}?{query}",
            uri=True,
            timeout=30.0,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute("PRAGMA busy_timeout = 30000")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        raise translate(str(path), exc, "cannot open SQLite database ") from exc
    if current and version < len(MIGRATIONS):
        conn.close()
        if "immutable" in query:
            raise FrontierError(
                f"{path} was written by an older litecrawl and cannot be written here to bring "
                "it up to date: copy it somewhere writable and read the copy"
            )
        _bring_up_to_date(p)  # a reader of a file this version has not migrated yet
        return connect_readonly(path, current)
    return conn


def _bring_up_to_date(path: Path) -> None:
    """Apply the migrations this version has to ``path`` (the crawl does so when it opens a
    database; a reader that comes first does it here, once)."""
    log.info("%s: bringing the database up to this litecrawl's version", path)
    conn = connect(path)
    try:
        migrate(conn)
    except sqlite3.Error as exc:
        raise translate(str(path), exc, "cannot bring the database up to date: ") from exc
    finally:
        conn.close()
