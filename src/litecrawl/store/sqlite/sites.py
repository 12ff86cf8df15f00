"""The site queue and annotations in SQLite (docs/sites.md; the statements:
``store/sites_sql.py``)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from litecrawl.errors import FrontierError
from litecrawl.store.dialect import SQLITE
from litecrawl.store.site_reads import SiteReads
from litecrawl.store.sites_sql import SQLSites
from litecrawl.store.sqlite.connection import connect
from litecrawl.store.sqlite.failures import translate
from litecrawl.store.sqlite.migrations import migrate
from litecrawl.urls import host_of

__all__ = ["SQLiteSites"]

T = TypeVar("T")


class SQLiteSites(SQLSites):
    dialect = SQLITE
    reads = SiteReads(SQLITE)

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._conn: sqlite3.Connection | None = None
        # one connection, used from worker threads (asyncio.to_thread): one call at a time
        self._lock = threading.RLock()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise FrontierError(f"{self.path}: the site store is not open")
        return self._conn

    def open(self) -> None:
        self._conn = connect(self.path)
        try:
            migrate(self._conn)
        except sqlite3.Error as exc:
            raise translate(self.path, exc, "cannot migrate ") from exc

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return work(self.conn)
            except sqlite3.Error as exc:
                raise translate(self.path, exc) from exc

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = work(conn)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise translate(self.path, exc) from exc
            return result

    def _insert_sites(
        self, conn: sqlite3.Connection, base_urls: Sequence[str], now: float, source: str
    ) -> int:
        before = conn.total_changes
        conn.executemany(
            "INSERT OR IGNORE INTO sites (base_url, host, added_at, source) VALUES (?, ?, ?, ?)",
            [(u, host_of(u), now, source) for u in base_urls],
        )
        return conn.total_changes - before
