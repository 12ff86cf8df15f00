"""The dashboard's reads on an SQLite crawl database (the statements: ``store/dashboard_sql.py``).

Every call opens its own connection with ``query_only`` on: in WAL mode readers never block the
crawl's writer (nor wait for it), and a connection per call is safe from any thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from litecrawl.errors import ConfigError
from litecrawl.store.dashboard_sql import SQLDashboard
from litecrawl.store.dialect import SQLITE
from litecrawl.store.site_reads import SiteReads
from litecrawl.store.sqlite.connection import connect_readonly
from litecrawl.store.sqlite.failures import translate

__all__ = ["SQLiteDashboardQueries"]

T = TypeVar("T")


class SQLiteDashboardQueries(SQLDashboard):
    dialect = SQLITE
    site_reads = SiteReads(SQLITE)

    def __init__(self, path: str | Path) -> None:
        if not Path(path).is_file():
            raise ConfigError(f"no database at {path}")
        self.path = str(path)

    def _read(self, fn: Callable[[Any], T]) -> T:
        conn = connect_readonly(self.path, current=False)  # serve never migrates
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("PRAGMA busy_timeout = 30000")
            return fn(conn)
        except sqlite3.Error as exc:
            raise translate(self.path, exc, "cannot read ") from exc
        finally:
            conn.close()

    def _record(self, conn: Any, sql: str, params: tuple[object, ...]) -> dict[str, Any] | None:
        cur = conn.execute(sql, params)
        row = cur.fetchone()
        return None if row is None else dict(zip([c[0] for c in cur.description], row, strict=True))

    def _missing(self, read: Callable[[], T]) -> T | None:
        try:
            return read()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise
