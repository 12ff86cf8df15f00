"""The dashboard's reads on a PostgreSQL crawl database (the statements:
``store/dashboard_sql.py``).

Connections come from a small pool (``connection.SyncDatabase``) and run read-only transactions
(``default_transaction_read_only``): the dashboard never writes through here, and under MVCC its
reads never block the crawl's writes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from psycopg.rows import dict_row

from litecrawl.store.dashboard_sql import SQLDashboard
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.postgres.connection import SyncConn, SyncDatabase
from litecrawl.store.site_reads import SiteReads
from litecrawl.urls import shown_location

__all__ = ["PostgresDashboardQueries"]

T = TypeVar("T")


class PostgresDashboardQueries(SQLDashboard):
    dialect = POSTGRES
    site_reads = SiteReads(POSTGRES)

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = shown_location(url)
        # read-only connections; a page view fails at once when the database is away (the next
        # one tries again), it does not wait for it
        self._db = SyncDatabase(url, pool_size=4, read_only=True, max_away=0)
        self._opened = False
        self._lock = threading.Lock()

    def _read(self, fn: Callable[[Any], T]) -> T:
        with self._lock:
            if not self._opened:
                self._db.open(migrate=False)  # serve never changes the database
                self._opened = True
        return self._db.read(fn)

    def _record(
        self, conn: SyncConn, sql: str, params: tuple[object, ...]
    ) -> dict[str, Any] | None:
        with conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(sql.encode(), params).fetchone()
