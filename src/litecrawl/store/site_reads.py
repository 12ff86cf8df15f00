"""The site queue's reads, written once for both backends (:mod:`litecrawl.store.dialect`): the
site store and the dashboard use them on a connection of their own."""

from __future__ import annotations

from typing import Any

from litecrawl.sites.model import LISTINGS, Annotation, Site, SiteCrawl, SiteFeed
from litecrawl.store.dialect import Dialect
from litecrawl.store.sites import CRAWL_COLUMNS, SITE_COLUMNS

__all__ = ["LISTING", "SiteReads"]

# the latest whitelist or blacklist annotation of a site decides its listing (relevance.listing)
LISTING = """(SELECT a.kind FROM site_annotations a
  WHERE a.base_url = sites.base_url AND a.kind IN ('whitelist', 'blacklist')
  ORDER BY a.created_at DESC, a.id DESC LIMIT 1)"""


class SiteReads:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def _rows(self, conn: Any, sql: str, params: Any) -> list[Any]:
        return list(conn.execute(self.dialect.sql(sql), params).fetchall())

    def read_annotations(self, conn: Any, base_url: str) -> list[Annotation]:
        rows = self._rows(
            conn,
            "SELECT id, base_url, site_id, kind, text, created_at FROM site_annotations "
            "WHERE base_url = ? ORDER BY created_at, id",
            (base_url,),
        )
        return [Annotation(*r) for r in rows]

    def read_site(self, conn: Any, base_url: str) -> Site | None:
        rows = self._rows(conn, f"SELECT {SITE_COLUMNS} FROM sites WHERE base_url = ?", (base_url,))
        return Site.from_row(rows[0]) if rows else None

    def read_sites(self, conn: Any, status: str | None, limit: int | None) -> list[Site]:
        """Sites with ``status`` (one of STATUSES), or ``whitelisted`` / ``blacklisted``."""
        value: str | None = status
        if status in LISTINGS:
            where, value = f"{LISTING} = :status", status.removesuffix("ed")
        else:
            where = "(CAST(:status AS TEXT) IS NULL OR status = :status)"
        rows = self._rows(
            conn,
            f"SELECT {SITE_COLUMNS} FROM sites WHERE {where} ORDER BY base_url LIMIT :limit",
            {"status": value, "limit": self.dialect.no_limit(limit)},
        )
        return [Site.from_row(r) for r in rows]

    def read_crawls(self, conn: Any, site_id: int, limit: int) -> list[SiteCrawl]:
        rows = self._rows(
            conn,
            f"SELECT {CRAWL_COLUMNS} FROM site_crawls WHERE site_id = ? "
            "ORDER BY started_at DESC, id DESC LIMIT ?",
            (site_id, limit),
        )
        return [SiteCrawl.from_row(r) for r in rows]

    def read_site_links(
        self, conn: Any, site_id: int, inbound: bool, limit: int
    ) -> list[tuple[str, int]]:
        mine, other = ("to_site", "from_site") if inbound else ("from_site", "to_site")
        rows = self._rows(
            conn,
            f"SELECT s.base_url, l.count FROM site_links l JOIN sites s ON s.id = l.{other} "
            f"WHERE l.{mine} = ? ORDER BY l.count DESC, s.base_url LIMIT ?",
            (site_id, limit),
        )
        return [(u, n) for u, n in rows]

    def read_feeds(self, conn: Any, site_id: int) -> list[SiteFeed]:
        rows = self._rows(
            conn,
            """SELECT f.url, f.first_seen, p.last_crawl_time, p.status, p.etag, p.last_modified,
              (SELECT count(*) FROM page_links l WHERE l.src = f.url)
            FROM site_feeds f LEFT JOIN pages p ON p.norm_url = f.url
            WHERE f.site_id = ? ORDER BY f.url""",
            (site_id,),
        )
        return [SiteFeed(*r) for r in rows]
