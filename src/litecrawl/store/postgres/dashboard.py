"""The dashboard's reads on a PostgreSQL crawl database, as the SQLite store's
(``store/sqlite/dashboard.py``).

Connections come from a small pool (``connection.SyncDatabase``) and run read-only transactions
(``default_transaction_read_only``): the dashboard never writes through here, and under MVCC its
reads never block the crawl's writes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from litecrawl.sites.model import Annotation, Site
from litecrawl.store.dashboard import (
    ActivityBucket,
    DashboardQueries,
    LinkList,
    LinkRow,
    PageDetail,
    PageFilter,
    PageList,
    PageRow,
    SiteActivity,
)
from litecrawl.store.postgres.connection import SyncDatabase
from litecrawl.store.postgres.sites import (
    read_annotations,
    read_crawls,
    read_feeds,
    read_site,
    read_site_links,
    read_sites,
)
from litecrawl.store.postgres.summary import read_summary_sync
from litecrawl.store.runs import FrontierSummary
from litecrawl.store.sql import like_prefix, link_key
from litecrawl.store.states import STATE_NAMES, STATES
from litecrawl.urls import shown_location

__all__ = ["PostgresDashboardQueries"]

T = TypeVar("T")
Conn = psycopg.Connection[Any]
_PAGE_COLUMNS = """p.norm_url, p.host, p.state, p.status, p.error, p.content_type,
       p.last_crawl_time, p.next_crawl_time, p.depth, d.title"""


class PostgresDashboardQueries(DashboardQueries):
    def __init__(self, url: str) -> None:
        self.url = url
        self.location = shown_location(url)
        # read-only connections; a page view fails at once when the database is away (the next
        # one tries again), it does not wait for it
        self._db = SyncDatabase(url, pool_size=4, read_only=True, max_away=0)
        self._opened = False
        self._lock = threading.Lock()

    def _read(self, fn: Callable[[Conn], T]) -> T:
        with self._lock:
            if not self._opened:
                self._db.open(migrate=False)  # serve never changes the database
                self._opened = True
        return self._db.read(fn)

    def summary(self, now: int, hosts: int | None) -> FrontierSummary:
        return self._read(lambda conn: read_summary_sync(conn, now, hosts))

    def robots_records(self, origins: list[str]) -> dict[str, tuple[str, float]]:
        if not origins:
            return {}
        rows = self._read(
            lambda c: c.execute(
                "SELECT origin, record, expires_at FROM robots WHERE origin = ANY(%s)", (origins,)
            ).fetchall()
        )
        return {origin: (record, expires) for origin, record, expires in rows}

    def activity(self, since: int, width: int) -> list[ActivityBucket]:
        rows = self._read(
            lambda c: c.execute(
                "SELECT (last_crawl_time - %(since)s) / %(width)s AS b, error, count(*) "
                "FROM pages WHERE last_crawl_time >= %(since)s GROUP BY b, error ORDER BY b",
                {"since": since, "width": width},
            ).fetchall()
        )
        buckets: dict[int, dict[str | None, int]] = {}
        for b, error, n in rows:
            buckets.setdefault(since + int(b) * width, {})[error] = n
        return [ActivityBucket(start, counts) for start, counts in buckets.items()]

    def pages(self, where: PageFilter, limit: int, offset: int) -> PageList:
        clauses: list[str] = []
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if where.host:
            clauses.append("p.host = %(host)s")
            params["host"] = where.host
        if where.state in STATES:
            clauses.append("p.state = %(state)s")
            params["state"] = STATES[where.state]
        if where.error == "any":
            clauses.append("p.error IS NOT NULL")
        elif where.error:
            clauses.append("p.error = %(error)s")
            params["error"] = where.error
        # ILIKE: SQLite's LIKE ignores ASCII case, the dashboard's filters too
        if where.content_type:
            clauses.append("p.content_type ILIKE %(ctype)s ESCAPE '\\'")
            params["ctype"] = like_prefix(where.content_type)
        if where.text:
            clauses.append(
                "(p.norm_url ILIKE %(text)s ESCAPE '\\' OR d.title ILIKE %(text)s ESCAPE '\\')"
            )
            params["text"] = "%" + like_prefix(where.text)
        sql_where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        base = f"FROM pages AS p LEFT JOIN documents AS d ON d.url = p.norm_url {sql_where}"

        def read(c: Conn) -> PageList:
            total = c.execute(f"SELECT count(*) {base}".encode(), params).fetchone()
            rows = c.execute(
                f"SELECT {_PAGE_COLUMNS} {base} ORDER BY p.last_crawl_time IS NULL, "
                "p.last_crawl_time DESC, p.norm_url LIMIT %(limit)s OFFSET %(offset)s".encode(),
                params,
            ).fetchall()
            return PageList(
                int(total[0]) if total else 0, [PageRow.from_row(r, STATE_NAMES) for r in rows]
            )

        return self._read(read)

    def facets(self) -> dict[str, list[str]]:
        def read(c: Conn) -> dict[str, list[str]]:
            def values(sql: str) -> list[str]:
                return [r[0] for r in c.execute(sql.encode()).fetchall() if r[0]]

            return {
                "hosts": values("SELECT DISTINCT host FROM pages ORDER BY host"),
                "errors": values(
                    "SELECT DISTINCT error FROM pages WHERE error IS NOT NULL ORDER BY error"
                ),
                # "text/html; charset=utf-8" and "text/html" are one choice: the main type
                "content_types": values(
                    "SELECT DISTINCT lower(trim(split_part(content_type, ';', 1))) AS t "
                    "FROM pages WHERE content_type IS NOT NULL ORDER BY t"
                ),
            }

        return self._read(read)

    def page(self, url: str) -> PageDetail | None:
        def read(c: Conn) -> PageDetail | None:
            with c.cursor(row_factory=dict_row) as cur:
                record = cur.execute("SELECT * FROM pages WHERE norm_url = %s", (url,)).fetchone()
                if record is None:
                    return None
                found = dict(record)
                found["state"] = STATE_NAMES.get(found["state"], str(found["state"]))
                doc = cur.execute("SELECT * FROM documents WHERE url = %s", (url,)).fetchone()
            if doc is None or doc["resource_id"] is None:
                return PageDetail(found, None if doc is None else dict(doc), None)
            language = c.execute(
                "SELECT language FROM resources WHERE id = %s", (doc["resource_id"],)
            ).fetchone()
            duplicates = c.execute(
                "SELECT url, title FROM documents WHERE resource_id = %s AND url <> %s "
                "ORDER BY crawled_at, id",
                (doc["resource_id"], url),
            ).fetchall()
            return PageDetail(
                found,
                dict(doc),
                None if language is None else language[0],
                [(u, t) for u, t in duplicates],
            )

        return self._read(read)

    def links(self, url: str, inbound: bool, limit: int, offset: int) -> LinkList | None:
        params: tuple[object, ...]
        if inbound:
            other, where, params = "src", "l.dst_key = %s AND l.dst = %s", (link_key(url), url)
        else:
            other, where, params = "dst", "l.src = %s", (url,)

        def read(c: Conn) -> LinkList:
            total = c.execute(
                f"SELECT count(*) FROM page_links l WHERE {where}".encode(), params
            ).fetchone()
            rows = c.execute(
                f"""SELECT l.{other}, p.state, p.status FROM page_links l
                LEFT JOIN pages p ON p.norm_url = l.{other}
                WHERE {where} ORDER BY l.{other} LIMIT %s OFFSET %s""".encode(),
                (*params, limit, offset),
            ).fetchall()
            return LinkList(
                int(total[0]) if total else 0,
                [
                    LinkRow(u, None if s is None else STATE_NAMES.get(s, str(s)), st)
                    for u, s, st in rows
                ],
            )

        return self._read(read)

    def sites(self, status: str | None) -> list[Site] | None:
        return self._read(lambda c: read_sites(c, status, None))

    def site(self, base_url: str) -> tuple[Site | None, list[Annotation]] | None:
        return self._read(lambda c: (read_site(c, base_url), read_annotations(c, base_url)))

    def site_activity(self, site_id: int, limit: int) -> SiteActivity:
        return self._read(
            lambda c: SiteActivity(
                read_crawls(c, site_id, limit),
                read_site_links(c, site_id, False, limit),
                read_site_links(c, site_id, True, limit),
                read_feeds(c, site_id),
            )
        )
