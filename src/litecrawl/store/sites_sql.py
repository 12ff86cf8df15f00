"""The site queue and annotations (docs/sites.md), written once for both backends
(:mod:`litecrawl.store.dialect`). A backend gives its connections (:meth:`SQLSites._transaction`,
:meth:`SQLSites._read`) and the one write the databases do differently (new sites counted).
A checkout takes the site row ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so workers on several
machines never lock one site twice; SQLite's writer lock does that on one file."""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from litecrawl.sites.model import (
    Annotation,
    Site,
    SiteCrawl,
    SiteFeed,
    SiteSchedule,
    StartPage,
)
from litecrawl.store.dialect import Dialect
from litecrawl.store.site_reads import SiteReads
from litecrawl.store.sites import CRAWL_COLUMNS, SITE_COLUMNS, SiteStore

__all__ = ["SQLSites"]

T = TypeVar("T")

_ADD_FEED = (
    "INSERT INTO site_feeds (site_id, url, first_seen) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
)


class SQLSites(SiteStore):
    dialect: Dialect
    reads: SiteReads

    @abstractmethod
    def _transaction(self, work: Callable[[Any], T]) -> T:
        """``work(connection)`` in one write transaction."""

    @abstractmethod
    def _read(self, work: Callable[[Any], T]) -> T:
        """``work(connection)`` outside a write transaction."""

    @abstractmethod
    def _insert_sites(self, conn: Any, base_urls: Sequence[str], now: float, source: str) -> int:
        """Sites not known yet; returns how many were new."""

    def _run(self, conn: Any, sql: str, params: Any = ()) -> Any:
        return conn.execute(self.dialect.sql(sql), params)

    def _many(self, conn: Any, sql: str, rows: Sequence[Any]) -> None:
        if rows:  # psycopg's executemany is a cursor's
            conn.cursor().executemany(self.dialect.sql(sql), rows)

    def _rows(self, sql: str, params: Any = ()) -> list[Any]:
        return self._read(lambda c: list(self._run(c, sql, params).fetchall()))

    def add(self, base_urls: Sequence[str], now: float) -> int:
        def work(conn: Any) -> int:
            # in key order, as a checkin's: two adds never wait for each other in a cycle
            added = self._insert_sites(conn, sorted(set(base_urls)), now, "seed")
            # annotations made before their site existed now name it
            self._run(
                conn,
                "UPDATE site_annotations SET site_id = "
                "(SELECT id FROM sites WHERE sites.base_url = site_annotations.base_url) "
                "WHERE site_id IS NULL",
            )
            return added

        return self._transaction(work)

    def annotate(self, base_url: str, kind: str, text: str | None, now: float) -> Annotation:
        def work(conn: Any) -> Annotation:
            row = self._run(
                conn,
                "INSERT INTO site_annotations (base_url, site_id, kind, text, created_at) "
                "VALUES (?, (SELECT id FROM sites WHERE base_url = ?), ?, ?, ?) "
                "RETURNING id, base_url, site_id, kind, text, created_at",
                (base_url, base_url, kind, text, now),
            ).fetchone()
            if kind != "note":
                self._recheck(conn, base_url)
            return Annotation(*row)

        return self._transaction(work)

    def remove_annotations(self, base_url: str, kind: str) -> int:
        def work(conn: Any) -> int:
            cur = self._run(
                conn,
                "DELETE FROM site_annotations WHERE base_url = ? AND kind = ?",
                (base_url, kind),
            )
            removed = max(int(cur.rowcount), 0)
            if removed and kind != "note":
                self._recheck(conn, base_url)
            return removed

        return self._transaction(work)

    def _recheck(self, conn: Any, base_url: str) -> None:
        """A white/blacklisting changed: the site is checked again at the next queue pass."""
        self._run(conn, "UPDATE sites SET recheck = 1 WHERE base_url = ?", (base_url,))

    def annotations(self, base_url: str) -> list[Annotation]:
        return self._read(lambda c: self.reads.read_annotations(c, base_url))

    def site(self, base_url: str) -> Site | None:
        return self._read(lambda c: self.reads.read_site(c, base_url))

    def sites(self, status: str | None, limit: int | None = None) -> list[Site]:
        return self._read(lambda c: self.reads.read_sites(c, status, limit))

    def feeds(self, site_id: int) -> list[SiteFeed]:
        return self._read(lambda c: self.reads.read_feeds(c, site_id))

    def crawls(self, site_id: int, limit: int) -> list[SiteCrawl]:
        return self._read(lambda c: self.reads.read_crawls(c, site_id, limit))

    def site_links(self, site_id: int, inbound: bool, limit: int) -> list[tuple[str, int]]:
        return self._read(lambda c: self.reads.read_site_links(c, site_id, inbound, limit))

    def due_checks(
        self, checked_before: float, limit: int, unreachable_before: float | None = None
    ) -> list[Site]:
        # never checked first, then the longest unchecked: idx_sites_check
        unreached = checked_before if unreachable_before is None else unreachable_before
        rows = self._rows(
            f"SELECT {SITE_COLUMNS} FROM sites "
            "WHERE checked_at IS NULL OR checked_at < ? OR recheck = 1 "
            "OR (status = 'unreachable' AND checked_at < ?) "
            f"ORDER BY checked_at{self.dialect.nulls_first}, id LIMIT ?",
            (checked_before, unreached, limit),
        )
        return [Site.from_row(r) for r in rows]

    def record_check(
        self, site_id: int, status: str, reason: str, page: StartPage | None, now: float
    ) -> None:
        def work(conn: Any) -> None:
            self._run(
                conn,
                """UPDATE sites SET status = :status, reason = :reason, checked_at = :now,
                  recheck = 0, final_url = coalesce(:final_url, final_url),
                  title = coalesce(:title, title), language = coalesce(:language, language),
                  feeds = coalesce(:feeds, feeds), sitemaps = coalesce(:sitemaps, sitemaps)
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
            if page is not None:
                self._many(conn, _ADD_FEED, [(site_id, url, now) for url in page.feeds])

        self._transaction(work)

    def checkout(self, worker: str, due_by: float, now: float, lock_sec: float) -> Site | None:
        def work(conn: Any) -> Site | None:
            # due for a full crawl (never crawled first) or a feed crawl, the longest due first
            row = self._run(
                conn,
                f"""UPDATE sites SET locked_by = :worker, locked_until = :until
                WHERE id = (
                  SELECT id FROM sites
                  WHERE status = 'relevant'
                    AND (coalesce(next_crawl, 0) <= :due OR (next_feed_crawl <= :due
                      AND EXISTS (SELECT 1 FROM site_feeds f WHERE f.site_id = sites.id)))
                    AND (locked_until IS NULL OR locked_until < :now)
                  ORDER BY {self.dialect.least}(coalesce(next_crawl, 0),
                    coalesce(next_feed_crawl, :due)), id
                  LIMIT 1{self.dialect.skip_locked})
                RETURNING {SITE_COLUMNS}""",
                {"worker": worker, "until": now + lock_sec, "now": now, "due": due_by},
            ).fetchone()
            return None if row is None else Site.from_row(row)

        return self._transaction(work)

    def renew(self, site_id: int, worker: str, until: float) -> bool:
        def work(conn: Any) -> bool:
            cur = self._run(
                conn,
                "UPDATE sites SET locked_until = ? WHERE id = ? AND locked_by = ?",
                (until, site_id, worker),
            )
            return bool(cur.rowcount > 0)

        return self._transaction(work)

    def checkin(
        self, crawl: SiteCrawl, schedule: SiteSchedule, links: dict[str, int], now: float
    ) -> int:
        def work(conn: Any) -> int:
            # The sites found first (in key order) and the site's own row last: an insert of
            # a known site waits for a transaction that has written its row (PostgreSQL), so a
            # checkin that held its own row while it waited for another's (two sites linking to
            # each other, checked in at once) was a deadlock (docs/sites.md, "Site crawls")
            found = sorted(links)
            queued = self._insert_sites(conn, found, now, "link")
            self._many(
                conn,
                """INSERT INTO site_links (from_site, to_site, count, first_seen, last_seen)
                SELECT :site, id, :count, :now, :now FROM sites WHERE base_url = :url
                ON CONFLICT (from_site, to_site) DO UPDATE SET
                  count = excluded.count, last_seen = excluded.last_seen""",
                [{"site": crawl.site_id, "count": links[u], "now": now, "url": u} for u in found],
            )
            # feeds found while crawling the site (links that turned out to be feeds too)
            self._run(
                conn,
                "INSERT INTO site_feeds (site_id, url, first_seen) "
                "SELECT s.id, p.norm_url, :now FROM sites s JOIN pages p ON p.host = s.host "
                "WHERE s.id = :site AND p.kind = 'feed' ON CONFLICT DO NOTHING",
                {"site": crawl.site_id, "now": now},
            )
            self._run(
                conn,
                f"INSERT INTO site_crawls ({CRAWL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                crawl.row(),
            )
            self._run(
                conn,
                "UPDATE sites SET locked_by = NULL, locked_until = NULL, next_crawl = ?, "
                "next_feed_crawl = ? WHERE id = ? AND locked_by = ?",
                (schedule.next_crawl, schedule.next_feed_crawl, crawl.site_id, crawl.worker),
            )
            return queued

        return self._transaction(work)

    def outlinks(self, host: str) -> list[str]:
        rows = self._rows(
            "SELECT l.dst FROM pages p JOIN page_links l ON l.src = p.norm_url WHERE p.host = ?",
            (host,),
        )
        return [r[0] for r in rows]

    def listed(self, listings: Sequence[str]) -> list[str]:
        member, values = self.dialect.one_of(list(listings))
        rows = self._rows(f"SELECT DISTINCT dst FROM page_links WHERE src {member}", (values,))
        return [r[0] for r in rows]

    def counts(self) -> dict[str, int]:
        rows = self._rows("SELECT status, count(*) FROM sites GROUP BY status")
        return {status: int(n) for status, n in rows}
