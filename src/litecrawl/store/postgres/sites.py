"""The site queue and annotations in PostgreSQL (docs/sites.md; the statements:
``store/sites_sql.py``), on a pool that waits out a restart (a ``sites run`` outlives one)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from litecrawl.store.dialect import POSTGRES
from litecrawl.store.postgres.connection import SyncDatabase
from litecrawl.store.site_reads import SiteReads
from litecrawl.store.sites_sql import SQLSites
from litecrawl.urls import host_of, shown_location

__all__ = ["PostgresSites"]

T = TypeVar("T")
Conn = psycopg.Connection[Any]


class PostgresSites(SQLSites):
    dialect = POSTGRES
    reads = SiteReads(POSTGRES)

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = shown_location(url)
        # its pool, safe from the CLI's worker threads
        self.db = SyncDatabase(url)

    def open(self) -> None:
        self.db.open()

    def close(self) -> None:
        self.db.close()

    def _transaction(self, work: Callable[[Conn], T]) -> T:
        return self.db.transaction(work)

    def _read(self, work: Callable[[Conn], T]) -> T:
        return self.db.read(work)

    def _insert_sites(self, conn: Conn, base_urls: Sequence[str], now: float, source: str) -> int:
        if not base_urls:
            return 0
        rows = conn.execute(
            "INSERT INTO sites (base_url, host, added_at, source) "
            "SELECT u, h, %s, %s FROM unnest(%s::text[], %s::text[]) AS t(u, h) "
            "ON CONFLICT (base_url) DO NOTHING RETURNING id",
            (now, source, list(base_urls), [host_of(u) for u in base_urls]),
        ).fetchall()
        return len(rows)
