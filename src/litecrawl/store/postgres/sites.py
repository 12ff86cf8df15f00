"""The site queue and annotations in PostgreSQL (docs/sites.md), as the SQLite store's
(``store/sqlite/sites.py``): the same tables and decisions, PostgreSQL's dialect. A checkout
takes the site row ``FOR UPDATE SKIP LOCKED``, so workers on several machines never lock one
site twice."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from litecrawl.sites.model import (
    Annotation,
    Site,
    SiteCrawl,
    SiteFeed,
    SiteSchedule,
    StartPage,
)
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.postgres.connection import SyncDatabase
from litecrawl.store.site_reads import SiteReads
from litecrawl.store.sites import CRAWL_COLUMNS, SITE_COLUMNS, SiteStore
from litecrawl.urls import host_of, shown_location

__all__ = [
    "PostgresSites",
    "read_annotations",
    "read_crawls",
    "read_feeds",
    "read_site",
    "read_site_links",
    "read_sites",
]

log = logging.getLogger("litecrawl")
T = TypeVar("T")
Conn = psycopg.Connection[Any]


# the site queue's reads, written once (store/site_reads.py)
READS = SiteReads(POSTGRES)
read_annotations = READS.read_annotations
read_site = READS.read_site
read_sites = READS.read_sites
read_crawls = READS.read_crawls
read_site_links = READS.read_site_links
read_feeds = READS.read_feeds


class PostgresSites(SiteStore):
    def __init__(self, url: str) -> None:
        self.url = url
        self.location = shown_location(url)
        # its pool, safe from the CLI's worker threads; a ``sites run`` outlives a restart
        self.db = SyncDatabase(url)

    def open(self) -> None:
        self.db.open()

    def close(self) -> None:
        self.db.close()

    def _transaction(self, work: Callable[[Conn], T]) -> T:
        return self.db.transaction(work)

    def _read(self, work: Callable[[Conn], T]) -> T:
        return self.db.read(work)

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        return self._read(lambda c: c.execute(sql, params).fetchall())

    def add(self, base_urls: Sequence[str], now: float) -> int:
        def work(conn: Conn) -> int:
            added = _insert_sites(conn, base_urls, now, "seed")
            # annotations made before their site existed now name it
            conn.execute(
                "UPDATE site_annotations SET site_id = "
                "(SELECT id FROM sites WHERE sites.base_url = site_annotations.base_url) "
                "WHERE site_id IS NULL"
            )
            return added

        return self._transaction(work)

    def annotate(self, base_url: str, kind: str, text: str | None, now: float) -> Annotation:
        def work(conn: Conn) -> Annotation:
            row = conn.execute(
                "INSERT INTO site_annotations (base_url, site_id, kind, text, created_at) "
                "VALUES (%s, (SELECT id FROM sites WHERE base_url = %s), %s, %s, %s) "
                "RETURNING id, base_url, site_id, kind, text, created_at",
                (base_url, base_url, kind, text, now),
            ).fetchone()
            assert row is not None
            if kind != "note":
                _recheck(conn, base_url)
            return Annotation(*row)

        return self._transaction(work)

    def remove_annotations(self, base_url: str, kind: str) -> int:
        def work(conn: Conn) -> int:
            cur = conn.execute(
                "DELETE FROM site_annotations WHERE base_url = %s AND kind = %s", (base_url, kind)
            )
            removed = max(cur.rowcount, 0)
            if removed and kind != "note":
                _recheck(conn, base_url)
            return removed

        return self._transaction(work)

    def annotations(self, base_url: str) -> list[Annotation]:
        return self._read(lambda c: read_annotations(c, base_url))

    def site(self, base_url: str) -> Site | None:
        return self._read(lambda c: read_site(c, base_url))

    def sites(self, status: str | None, limit: int | None = None) -> list[Site]:
        return self._read(lambda c: read_sites(c, status, limit))

    def feeds(self, site_id: int) -> list[SiteFeed]:
        return self._read(lambda c: read_feeds(c, site_id))

    def crawls(self, site_id: int, limit: int) -> list[SiteCrawl]:
        return self._read(lambda c: read_crawls(c, site_id, limit))

    def site_links(self, site_id: int, inbound: bool, limit: int) -> list[tuple[str, int]]:
        return self._read(lambda c: read_site_links(c, site_id, inbound, limit))

    def due_checks(
        self, checked_before: float, limit: int, unreachable_before: float | None = None
    ) -> list[Site]:
        unreached = checked_before if unreachable_before is None else unreachable_before
        rows = self._rows(
            f"SELECT {SITE_COLUMNS} FROM sites "
            "WHERE checked_at IS NULL OR checked_at < %s OR recheck = 1 "
            "OR (status = 'unreachable' AND checked_at < %s) "
            "ORDER BY checked_at NULLS FIRST, id LIMIT %s",
            (checked_before, unreached, limit),
        )
        return [Site.from_row(r) for r in rows]

    def record_check(
        self, site_id: int, status: str, reason: str, page: StartPage | None, now: float
    ) -> None:
        def work(conn: Conn) -> None:
            conn.execute(
                """UPDATE sites SET status = %(status)s, reason = %(reason)s,
                  checked_at = %(now)s, recheck = 0,
                  final_url = coalesce(%(final_url)s, final_url),
                  title = coalesce(%(title)s, title),
                  language = coalesce(%(language)s, language),
                  feeds = coalesce(%(feeds)s, feeds), sitemaps = coalesce(%(sitemaps)s, sitemaps)
                WHERE id = %(id)s""",
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
            if page is not None and page.feeds:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO site_feeds (site_id, url, first_seen) VALUES (%s, %s, %s) "
                        "ON CONFLICT DO NOTHING",
                        [(site_id, url, now) for url in page.feeds],
                    )

        self._transaction(work)

    def checkout(self, worker: str, due_by: float, now: float, lock_sec: float) -> Site | None:
        def work(conn: Conn) -> Site | None:
            # due for a full crawl (never crawled first) or a feed crawl, the longest due first
            row = conn.execute(
                f"""UPDATE sites SET locked_by = %(worker)s, locked_until = %(until)s
                WHERE id = (
                  SELECT id FROM sites
                  WHERE status = 'relevant'
                    AND (coalesce(next_crawl, 0) <= %(due)s OR (next_feed_crawl <= %(due)s
                      AND EXISTS (SELECT 1 FROM site_feeds f WHERE f.site_id = sites.id)))
                    AND (locked_until IS NULL OR locked_until < %(now)s)
                  ORDER BY least(coalesce(next_crawl, 0), coalesce(next_feed_crawl, %(due)s)), id
                  LIMIT 1
                  FOR UPDATE SKIP LOCKED)
                RETURNING {SITE_COLUMNS}""",
                {"worker": worker, "until": now + lock_sec, "now": now, "due": due_by},
            ).fetchone()
            return None if row is None else Site.from_row(row)

        return self._transaction(work)

    def renew(self, site_id: int, worker: str, until: float) -> bool:
        def work(conn: Conn) -> bool:
            cur = conn.execute(
                "UPDATE sites SET locked_until = %s WHERE id = %s AND locked_by = %s",
                (until, site_id, worker),
            )
            return cur.rowcount > 0

        return self._transaction(work)

    def checkin(
        self, crawl: SiteCrawl, schedule: SiteSchedule, links: dict[str, int], now: float
    ) -> int:
        def work(conn: Conn) -> int:
            conn.execute(
                "UPDATE sites SET locked_by = NULL, locked_until = NULL, next_crawl = %s, "
                "next_feed_crawl = %s WHERE id = %s AND locked_by = %s",
                (schedule.next_crawl, schedule.next_feed_crawl, crawl.site_id, crawl.worker),
            )
            # feeds found while crawling the site (links that turned out to be feeds too)
            conn.execute(
                "INSERT INTO site_feeds (site_id, url, first_seen) "
                "SELECT s.id, p.norm_url, %(now)s FROM sites s JOIN pages p ON p.host = s.host "
                "WHERE s.id = %(site)s AND p.kind = 'feed' ON CONFLICT DO NOTHING",
                {"site": crawl.site_id, "now": now},
            )
            conn.execute(
                f"INSERT INTO site_crawls ({CRAWL_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                crawl.row(),
            )
            queued = _insert_sites(conn, list(links), now, "link")
            if links:
                with conn.cursor() as cur:
                    cur.executemany(
                        """INSERT INTO site_links (from_site, to_site, count, first_seen, last_seen)
                        SELECT %(site)s, id, %(count)s, %(now)s, %(now)s FROM sites
                        WHERE base_url = %(url)s
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
        rows = self._rows(
            "SELECT l.dst FROM pages p JOIN page_links l ON l.src = p.norm_url WHERE p.host = %s",
            (host,),
        )
        return [r[0] for r in rows]

    def listed(self, listings: Sequence[str]) -> list[str]:
        rows = self._rows(
            "SELECT DISTINCT dst FROM page_links WHERE src = ANY(%s)", (list(listings),)
        )
        return [r[0] for r in rows]

    def counts(self) -> dict[str, int]:
        rows = self._rows("SELECT status, count(*) FROM sites GROUP BY status")
        return {status: int(n) for status, n in rows}


def _insert_sites(conn: Conn, base_urls: Sequence[str], now: float, source: str) -> int:
    """Sites not known yet; returns how many were new."""
    if not base_urls:
        return 0
    rows = conn.execute(
        "INSERT INTO sites (base_url, host, added_at, source) "
        "SELECT u, h, %s, %s FROM unnest(%s::text[], %s::text[]) AS t(u, h) "
        "ON CONFLICT (base_url) DO NOTHING RETURNING id",
        (now, source, list(base_urls), [host_of(u) for u in base_urls]),
    ).fetchall()
    return len(rows)


def _recheck(conn: Conn, base_url: str) -> None:
    """A white/blacklisting changed: the site is checked again at the next queue pass."""
    conn.execute("UPDATE sites SET recheck = 1 WHERE base_url = %s", (base_url,))
