"""The site queue and annotations in SQLite (docs/sites.md)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from litecrawl.errors import FrontierError
from litecrawl.sites.model import (
    Annotation,
    Site,
    SiteCrawl,
    SiteFeed,
    SiteSchedule,
    StartPage,
)
from litecrawl.store.dialect import SQLITE
from litecrawl.store.site_reads import SiteReads
from litecrawl.store.sites import CRAWL_COLUMNS, SITE_COLUMNS, SiteStore
from litecrawl.store.sqlite.connection import connect
from litecrawl.store.sqlite.failures import translate
from litecrawl.store.sqlite.migrations import migrate
from litecrawl.urls import host_of

__all__ = [
    "CRAWL_COLUMNS",
    "SITE_COLUMNS",
    "SQLiteSites",
    "read_annotations",
    "read_crawls",
    "read_feeds",
    "read_site",
    "read_site_links",
    "read_sites",
]

T = TypeVar("T")


# the site queue's reads, written once (store/site_reads.py)
READS = SiteReads(SQLITE)
read_annotations = READS.read_annotations
read_site = READS.read_site
read_sites = READS.read_sites
read_crawls = READS.read_crawls
read_site_links = READS.read_site_links
read_feeds = READS.read_feeds


class SQLiteSites(SiteStore):
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

    def _transaction(self, work: Callable[[], T]) -> T:
        with self._lock:
            return self._transaction_locked(work)

    def _read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return work(self.conn)
            except sqlite3.Error as exc:
                raise translate(self.path, exc) from exc

    def _transaction_locked(self, work: Callable[[], T]) -> T:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                result = work()
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise translate(self.path, exc) from exc
        return result

    def _write(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> None:
        self._transaction(lambda: self.conn.execute(sql, params))

    def add(self, base_urls: Sequence[str], now: float) -> int:
        def work() -> int:
            before = self.conn.total_changes
            self.conn.executemany(
                "INSERT OR IGNORE INTO sites (base_url, host, added_at) VALUES (?, ?, ?)",
                [(u, host_of(u), now) for u in base_urls],
            )
            added = self.conn.total_changes - before
            # annotations made before their site existed now name it
            self.conn.execute(
                "UPDATE site_annotations SET site_id = "
                "(SELECT id FROM sites WHERE sites.base_url = site_annotations.base_url) "
                "WHERE site_id IS NULL"
            )
            return added

        return self._transaction(work)

    def annotate(self, base_url: str, kind: str, text: str | None, now: float) -> Annotation:
        def work() -> Annotation:
            row = self.conn.execute(
                "INSERT INTO site_annotations (base_url, site_id, kind, text, created_at) "
                "VALUES (?, (SELECT id FROM sites WHERE base_url = ?), ?, ?, ?) "
                "RETURNING id, base_url, site_id, kind, text, created_at",
                (base_url, base_url, kind, text, now),
            ).fetchone()
            if kind != "note":
                _recheck(self.conn, base_url)
            return Annotation(*row)

        return self._transaction(work)

    def remove_annotations(self, base_url: str, kind: str) -> int:
        def work() -> int:
            removed = self.conn.execute(
                "DELETE FROM site_annotations WHERE base_url = ? AND kind = ?", (base_url, kind)
            ).rowcount
            if removed and kind != "note":
                _recheck(self.conn, base_url)
            return removed

        return self._transaction(work)

    def annotations(self, base_url: str) -> list[Annotation]:
        return self._read(lambda c: read_annotations(c, base_url))

    def site(self, base_url: str) -> Site | None:
        return self._read(lambda c: read_site(c, base_url))

    def sites(self, status: str | None, limit: int | None = None) -> list[Site]:
        return self._read(lambda c: read_sites(c, status, limit))

    def due_checks(
        self, checked_before: float, limit: int, unreachable_before: float | None = None
    ) -> list[Site]:
        # never checked first (NULL sorts first), then the longest unchecked: idx_sites_check
        unreached = checked_before if unreachable_before is None else unreachable_before
        rows = self._read(
            lambda c: c.execute(
                f"SELECT {SITE_COLUMNS} FROM sites "
                "WHERE checked_at IS NULL OR checked_at < ? OR recheck = 1 "
                "OR (status = 'unreachable' AND checked_at < ?) "
                "ORDER BY checked_at, id LIMIT ?",
                (checked_before, unreached, limit),
            ).fetchall()
        )
        return [Site.from_row(r) for r in rows]

    def record_check(
        self, site_id: int, status: str, reason: str, page: StartPage | None, now: float
    ) -> None:
        def work() -> None:
            self._record_check(site_id, status, reason, page, now)
            if page is not None:
                _add_feeds(self.conn, site_id, page.feeds, now)

        self._transaction(work)

    def _record_check(
        self, site_id: int, status: str, reason: str, page: StartPage | None, now: float
    ) -> None:
        self.conn.execute(
            """UPDATE sites SET status = :status, reason = :reason, checked_at = :now, recheck = 0,
              final_url = coalesce(:final_url, final_url), title = coalesce(:title, title),
              language = coalesce(:language, language), feeds = coalesce(:feeds, feeds),
              sitemaps = coalesce(:sitemaps, sitemaps)
            WHERE id = :id""",
            {
                "id": site_id,
                "status": status,
                "reason": reason,
                "now": now,
                "final_url": page.base_url if page else None,
                "title": page.title if page else None,
                "language": page.language if page else None,
                "feeds": json.dumps(page.feeds) if page else None,
                "sitemaps": json.dumps(page.sitemaps) if page else None,
            },
        )

    def checkout(self, worker: str, due_by: float, now: float, lock_sec: float) -> Site | None:
        def work() -> Site | None:
            # due for a full crawl (never crawled first) or a feed crawl, the longest due first
            row = self.conn.execute(
                f"""UPDATE sites SET locked_by = :worker, locked_until = :until
                WHERE id = (
                  SELECT id FROM sites
                  WHERE status = 'relevant'
                    AND (coalesce(next_crawl, 0) <= :due OR (next_feed_crawl <= :due
                      AND EXISTS (SELECT 1 FROM site_feeds f WHERE f.site_id = sites.id)))
                    AND (locked_until IS NULL OR locked_until < :now)
                  ORDER BY min(coalesce(next_crawl, 0), coalesce(next_feed_crawl, :due)), id
                  LIMIT 1)
                RETURNING {SITE_COLUMNS}""",
                {"worker": worker, "until": now + lock_sec, "now": now, "due": due_by},
            ).fetchone()
            return None if row is None else Site.from_row(row)

        return self._transaction(work)

    def renew(self, site_id: int, worker: str, until: float) -> bool:
        def work() -> bool:
            return bool(
                self.conn.execute(
                    "UPDATE sites SET locked_until = ? WHERE id = ? AND locked_by = ?",
                    (until, site_id, worker),
                ).rowcount
            )

        return self._transaction(work)

    def checkin(
        self, crawl: SiteCrawl, schedule: SiteSchedule, links: dict[str, int], now: float
    ) -> int:
        def work() -> int:
            self.conn.execute(
                "UPDATE sites SET locked_by = NULL, locked_until = NULL, next_crawl = ?, "
                "next_feed_crawl = ? WHERE id = ? AND locked_by = ?",
                (schedule.next_crawl, schedule.next_feed_crawl, crawl.site_id, crawl.worker),
            )
            # feeds found while crawling the site (links that turned out to be feeds too)
            self.conn.execute(
                "INSERT OR IGNORE INTO site_feeds (site_id, url, first_seen) "
                "SELECT s.id, p.norm_url, :now FROM sites s JOIN pages p ON p.host = s.host "
                "WHERE s.id = :site AND p.kind = 'feed'",
                {"site": crawl.site_id, "now": now},
            )
            self.conn.execute(
                f"INSERT INTO site_crawls ({CRAWL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                crawl.row(),
            )
            before = self.conn.total_changes
            self.conn.executemany(
                "INSERT OR IGNORE INTO sites (base_url, host, added_at, source) "
                "VALUES (?, ?, ?, 'link')",
                [(u, host_of(u), now) for u in links],
            )
            queued = self.conn.total_changes - before
            self.conn.executemany(
                """INSERT INTO site_links (from_site, to_site, count, first_seen, last_seen)
                SELECT :site, id, :count, :now, :now FROM sites WHERE base_url = :url
                ON CONFLICT (from_site, to_site) DO UPDATE SET
                  count = excluded.count, last_seen = excluded.last_seen""",
                [
                    {"site": crawl.site_id, "count": n, "now": now, "url": u}
                    for u, n in links.items()
                ],
            )
            return queued

        return self._transaction(work)

    def outlinks(self, host: str) -> list[str]:
        return self._read(
            lambda c: [
                r[0]
                for r in c.execute(
                    "SELECT l.dst FROM pages p JOIN page_links l ON l.src = p.norm_url "
                    "WHERE p.host = ?",
                    (host,),
                )
            ]
        )

    def feeds(self, site_id: int) -> list[SiteFeed]:
        return self._read(lambda c: read_feeds(c, site_id))

    def listed(self, listings: Sequence[str]) -> list[str]:
        return self._read(
            lambda c: [
                r[0]
                for r in c.execute(
                    "SELECT DISTINCT dst FROM page_links "
                    "WHERE src IN (SELECT value FROM json_each(?))",
                    (json.dumps(list(listings)),),
                )
            ]
        )

    def crawls(self, site_id: int, limit: int) -> list[SiteCrawl]:
        return self._read(lambda c: read_crawls(c, site_id, limit))

    def site_links(self, site_id: int, inbound: bool, limit: int) -> list[tuple[str, int]]:
        return self._read(lambda c: read_site_links(c, site_id, inbound, limit))

    def counts(self) -> dict[str, int]:
        rows = self._read(
            lambda c: c.execute("SELECT status, count(*) FROM sites GROUP BY status").fetchall()
        )
        return {status: n for status, n in rows}


def _add_feeds(conn: sqlite3.Connection, site_id: int, feeds: Sequence[str], now: float) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO site_feeds (site_id, url, first_seen) VALUES (?, ?, ?)",
        [(site_id, url, now) for url in feeds],
    )


def _recheck(conn: sqlite3.Connection, base_url: str) -> None:
    """A white/blacklisting changed: the site is checked again at the next queue pass."""
    conn.execute("UPDATE sites SET recheck = 1 WHERE base_url = ?", (base_url,))
