"""The dashboard's reads, written once for both backends (:mod:`litecrawl.store.dialect`).

A backend gives a read-only connection (:meth:`SQLDashboard._read`), one row as a dict, and the
site queue's reads; every statement here is the same on SQLite and PostgreSQL but for the few
spellings :class:`~litecrawl.store.dialect.Dialect` knows.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from litecrawl.sites.model import Annotation, Site, SiteCrawl, SiteFeed
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
from litecrawl.store.dialect import Dialect
from litecrawl.store.link_graph import IN_LINKS
from litecrawl.store.plans import run
from litecrawl.store.runs import FrontierSummary
from litecrawl.store.sql import like_prefix, link_key
from litecrawl.store.states import STATE_NAMES, STATES
from litecrawl.store.summary import summary_plan

__all__ = ["SQLDashboard"]

T = TypeVar("T")

_PAGE_COLUMNS = """p.norm_url, p.host, p.state, p.status, p.error, p.content_type,
       p.last_crawl_time, p.next_crawl_time, p.depth, d.title"""


class SiteReads(Protocol):
    """The site queue's reads a backend's ``sites`` module has (on a connection of its own)."""

    def read_sites(self, conn: Any, status: str | None, limit: int | None) -> list[Site]: ...

    def read_site(self, conn: Any, base_url: str) -> Site | None: ...

    def read_annotations(self, conn: Any, base_url: str) -> list[Annotation]: ...

    def read_crawls(self, conn: Any, site_id: int, limit: int) -> list[SiteCrawl]: ...

    def read_site_links(
        self, conn: Any, site_id: int, inbound: bool, limit: int
    ) -> list[tuple[str, int]]: ...

    def read_feeds(self, conn: Any, site_id: int) -> list[SiteFeed]: ...


class SQLDashboard(DashboardQueries):
    dialect: Dialect
    site_reads: SiteReads

    @abstractmethod
    def _read(self, fn: Callable[[Any], T]) -> T:
        """``fn`` on a read-only connection."""

    @abstractmethod
    def _record(self, conn: Any, sql: str, params: tuple[object, ...]) -> dict[str, Any] | None:
        """The first row of ``sql`` (this dialect's) by column name."""

    def _missing(self, read: Callable[[], T]) -> T | None:
        """None when a table ``read`` needs is missing (a database made before it existed)."""
        return read()

    def _rows(self, conn: Any, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        return list(conn.execute(self.dialect.sql(sql), params).fetchall())

    def summary(self, now: int, hosts: int | None) -> FrontierSummary:
        plan = summary_plan(self.dialect, now, hosts)
        return self._read(lambda c: run(plan, lambda sql, p: self._rows_as_is(c, sql, p)))

    def _rows_as_is(self, conn: Any, sql: str, params: Any) -> list[tuple[Any, ...]]:
        return list(conn.execute(sql, () if params is None else params).fetchall())

    def robots_records(self, origins: list[str]) -> dict[str, tuple[str, float]]:
        if not origins:
            return {}
        marks = ", ".join("?" * len(origins))
        sql = f"SELECT origin, record, expires_at FROM robots WHERE origin IN ({marks})"
        rows = self._read(lambda c: self._rows(c, sql, origins))
        return {origin: (record, expires) for origin, record, expires in rows}

    def activity(self, since: int, width: int) -> list[ActivityBucket]:
        rows = self._read(
            lambda c: self._rows(
                c,
                "SELECT (last_crawl_time - :since) / :width AS b, error, count(*) FROM pages "
                "WHERE last_crawl_time >= :since GROUP BY b, error ORDER BY b",
                {"since": since, "width": width},
            )
        )
        buckets: dict[int, dict[str | None, int]] = {}
        for b, error, n in rows:
            buckets.setdefault(since + int(b) * width, {})[error] = n
        return [ActivityBucket(start, counts) for start, counts in buckets.items()]

    def pages(self, where: PageFilter, limit: int, offset: int) -> PageList:
        clauses: list[str] = []
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if where.host:
            clauses.append("p.host = :host")
            params["host"] = where.host
        if where.state in STATES:
            clauses.append("p.state = :state")
            params["state"] = STATES[where.state]
        if where.error == "any":
            clauses.append("p.error IS NOT NULL")
        elif where.error:
            clauses.append("p.error = :error")
            params["error"] = where.error
        like = self.dialect.like_nocase
        if where.content_type:
            clauses.append(f"p.content_type {like} :ctype ESCAPE '\\'")
            params["ctype"] = like_prefix(where.content_type)
        if where.text:
            clauses.append(
                f"(p.norm_url {like} :text ESCAPE '\\' OR d.title {like} :text ESCAPE '\\')"
            )
            params["text"] = "%" + like_prefix(where.text)
        sql_where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        base = f"FROM pages AS p LEFT JOIN documents AS d ON d.url = p.norm_url {sql_where}"

        def read(c: Any) -> PageList:
            total = self._rows(c, f"SELECT count(*) {base}", params)
            rows = self._rows(
                c,
                f"SELECT {_PAGE_COLUMNS} {base} ORDER BY p.last_crawl_time IS NULL, "
                "p.last_crawl_time DESC, p.norm_url LIMIT :limit OFFSET :offset",
                params,
            )
            return PageList(
                int(total[0][0]) if total else 0, [PageRow.from_row(r, STATE_NAMES) for r in rows]
            )

        return self._read(read)

    def facets(self) -> dict[str, list[str]]:
        def read(c: Any) -> dict[str, list[str]]:
            def values(sql: str) -> list[str]:
                return [r[0] for r in self._rows(c, sql) if r[0]]

            main_type = self.dialect.before_semicolon("content_type")
            return {
                "hosts": values("SELECT DISTINCT host FROM pages ORDER BY host"),
                "errors": values(
                    "SELECT DISTINCT error FROM pages WHERE error IS NOT NULL ORDER BY error"
                ),
                # "text/html; charset=utf-8" and "text/html" are one choice: the main type
                "content_types": values(
                    f"SELECT DISTINCT lower(trim({main_type})) AS t FROM pages "
                    "WHERE content_type IS NOT NULL ORDER BY t"
                ),
            }

        return self._read(read)

    def page(self, url: str) -> PageDetail | None:
        def read(c: Any) -> PageDetail | None:
            record = self._record(
                c, self.dialect.sql("SELECT * FROM pages WHERE norm_url = ?"), (url,)
            )
            if record is None:
                return None
            record["state"] = STATE_NAMES.get(record["state"], str(record["state"]))
            doc = self._record(c, self.dialect.sql("SELECT * FROM documents WHERE url = ?"), (url,))
            if doc is None or doc["resource_id"] is None:
                return PageDetail(record, doc, None)
            language = self._rows(
                c, "SELECT language FROM resources WHERE id = ?", (doc["resource_id"],)
            )
            duplicates = self._rows(
                c,
                "SELECT url, title FROM documents WHERE resource_id = ? AND url <> ? "
                "ORDER BY crawled_at, id",
                (doc["resource_id"], url),
            )
            return PageDetail(
                record, doc, language[0][0] if language else None, [(u, t) for u, t in duplicates]
            )

        return self._read(read)

    def links(self, url: str, inbound: bool, limit: int, offset: int) -> LinkList | None:
        params: tuple[object, ...]
        if inbound:
            key = link_key(url)
            other, where, params = "src", IN_LINKS, (key, key, url)
        else:
            other, where, params = "dst", "l.src = ?", (url,)

        def read(c: Any) -> LinkList:
            total = self._rows(c, f"SELECT count(*) FROM page_links l WHERE {where}", params)
            rows = self._rows(
                c,
                f"""SELECT l.{other}, p.state, p.status FROM page_links l
                LEFT JOIN pages p ON p.norm_url = l.{other}
                WHERE {where} ORDER BY l.{other} LIMIT ? OFFSET ?""",
                (*params, limit, offset),
            )
            return LinkList(
                int(total[0][0]) if total else 0,
                [
                    LinkRow(str(u), None if s is None else STATE_NAMES.get(s, str(s)), st)
                    for u, s, st in rows
                ],
            )

        return self._read(lambda c: self._missing(lambda: read(c)))

    def sites(self, status: str | None) -> list[Site] | None:
        return self._read(
            lambda c: self._missing(lambda: self.site_reads.read_sites(c, status, None))
        )

    def site(self, base_url: str) -> tuple[Site | None, list[Annotation]] | None:
        reads = self.site_reads
        return self._read(
            lambda c: self._missing(
                lambda: (reads.read_site(c, base_url), reads.read_annotations(c, base_url))
            )
        )

    def site_activity(self, site_id: int, limit: int) -> SiteActivity:
        reads = self.site_reads
        return self._read(
            lambda c: SiteActivity(
                reads.read_crawls(c, site_id, limit),
                reads.read_site_links(c, site_id, False, limit),
                reads.read_site_links(c, site_id, True, limit),
                reads.read_feeds(c, site_id),
            )
        )
