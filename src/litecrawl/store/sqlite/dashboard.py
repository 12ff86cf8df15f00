"""The dashboard's reads on an SQLite crawl database.

Every call opens its own connection with ``query_only`` on: in WAL mode readers never block the
crawl's writer (nor wait for it), and a connection per call is safe from any thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from litecrawl.errors import ConfigError
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
from litecrawl.store.runs import FrontierSummary
from litecrawl.store.sql import like_prefix
from litecrawl.store.sqlite.connection import connect_readonly
from litecrawl.store.sqlite.failures import translate
from litecrawl.store.sqlite.links import read_links
from litecrawl.store.sqlite.sites import (
    read_annotations,
    read_crawls,
    read_feeds,
    read_site,
    read_site_links,
    read_sites,
)
from litecrawl.store.sqlite.summary import read_summary
from litecrawl.store.states import STATE_NAMES, STATES

__all__ = ["SQLiteDashboardQueries"]

T = TypeVar("T")

_PAGE_COLUMNS = """p.norm_url, p.host, p.state, p.status, p.error, p.content_type,
       p.last_crawl_time, p.next_crawl_time, p.depth, d.title"""


class SQLiteDashboardQueries(DashboardQueries):
    def __init__(self, path: str | Path) -> None:
        if not Path(path).is_file():
            raise ConfigError(f"no database at {path}")
        self.path = str(path)

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        conn = connect_readonly(self.path, current=False)  # serve never migrates
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("PRAGMA busy_timeout = 30000")
            yield conn
        except sqlite3.Error as exc:
            raise translate(self.path, exc, "cannot read ") from exc
        finally:
            conn.close()

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._conn() as conn:
            return fn(conn)

    def summary(self, now: int, hosts: int | None) -> FrontierSummary:
        return self._read(lambda conn: read_summary(conn, now, hosts))

    def robots_records(self, origins: list[str]) -> dict[str, tuple[str, float]]:
        if not origins:
            return {}
        marks = ",".join("?" * len(origins))
        rows = self._read(
            lambda c: c.execute(
                f"SELECT origin, record, expires_at FROM robots WHERE origin IN ({marks})",
                origins,
            ).fetchall()
        )
        return {origin: (record, expires) for origin, record, expires in rows}

    def activity(self, since: int, width: int) -> list[ActivityBucket]:
        rows = self._read(
            lambda c: c.execute(
                "SELECT (last_crawl_time - :since) / :width AS b, error, count(*) FROM pages "
                "WHERE last_crawl_time >= :since GROUP BY b, error ORDER BY b",
                {"since": since, "width": width},
            ).fetchall()
        )
        buckets: dict[int, dict[str | None, int]] = {}
        for b, error, n in rows:
            buckets.setdefault(since + b * width, {})[error] = n
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
        if where.content_type:
            clauses.append("p.content_type LIKE :ctype ESCAPE '\\'")
            params["ctype"] = like_prefix(where.content_type)
        if where.text:
            clauses.append("(p.norm_url LIKE :text ESCAPE '\\' OR d.title LIKE :text ESCAPE '\\')")
            params["text"] = "%" + like_prefix(where.text)
        sql_where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        base = f"FROM pages AS p LEFT JOIN documents AS d ON d.url = p.norm_url {sql_where}"

        def read(c: sqlite3.Connection) -> PageList:
            total = c.execute(f"SELECT count(*) {base}", params).fetchone()[0]
            rows = c.execute(
                f"SELECT {_PAGE_COLUMNS} {base} ORDER BY p.last_crawl_time IS NULL, "
                "p.last_crawl_time DESC, p.norm_url LIMIT :limit OFFSET :offset",
                params,
            ).fetchall()
            return PageList(total, [PageRow.from_row(r, STATE_NAMES) for r in rows])

        return self._read(read)

    def facets(self) -> dict[str, list[str]]:
        def read(c: sqlite3.Connection) -> dict[str, list[str]]:
            def values(sql: str) -> list[str]:
                return [r[0] for r in c.execute(sql) if r[0]]

            return {
                "hosts": values("SELECT DISTINCT host FROM pages ORDER BY host"),
                "errors": values(
                    "SELECT DISTINCT error FROM pages WHERE error IS NOT NULL ORDER BY error"
                ),
                # "text/html; charset=utf-8" and "text/html" are one choice: the main type
                "content_types": values(
                    "SELECT DISTINCT lower(trim(CASE WHEN instr(content_type, ';') "
                    "THEN substr(content_type, 1, instr(content_type, ';') - 1) "
                    "ELSE content_type END)) AS t FROM pages "
                    "WHERE content_type IS NOT NULL ORDER BY t"
                ),
            }

        return self._read(read)

    def page(self, url: str) -> PageDetail | None:
        def read(c: sqlite3.Connection) -> PageDetail | None:
            c.row_factory = sqlite3.Row
            record = c.execute("SELECT * FROM pages WHERE norm_url = ?", (url,)).fetchone()
            if record is None:
                return None
            found = dict(record)
            found["state"] = STATE_NAMES.get(found["state"], str(found["state"]))
            doc = c.execute("SELECT * FROM documents WHERE url = ?", (url,)).fetchone()
            if doc is None or doc["resource_id"] is None:
                return PageDetail(found, None if doc is None else dict(doc), None)
            language = c.execute(
                "SELECT language FROM resources WHERE id = ?", (doc["resource_id"],)
            ).fetchone()
            duplicates = c.execute(
                "SELECT url, title FROM documents WHERE resource_id = ? AND url != ? "
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
        def read(c: sqlite3.Connection) -> LinkList | None:
            found = _unless_missing(lambda: read_links(c, url, inbound, limit, offset))
            if found is None:
                return None
            total, rows = found
            return LinkList(
                total,
                [
                    LinkRow(u, None if s is None else STATE_NAMES.get(s, str(s)), st)
                    for u, s, st in rows
                ],
            )

        return self._read(read)

    def sites(self, status: str | None) -> list[Site] | None:
        return self._read(lambda c: _unless_missing(lambda: read_sites(c, status, None)))

    def site(self, base_url: str) -> tuple[Site | None, list[Annotation]] | None:
        return self._read(
            lambda c: _unless_missing(
                lambda: (read_site(c, base_url), read_annotations(c, base_url))
            )
        )

    def site_activity(self, site_id: int, limit: int) -> SiteActivity:
        return self._read(
            lambda c: SiteActivity(
                read_crawls(c, site_id, limit),
                read_site_links(c, site_id, False, limit),
                read_site_links(c, site_id, True, limit),
                read_feeds(c, site_id),
            )
        )


def _unless_missing(read: Callable[[], T]) -> T | None:
    """None when a table is missing: serve never migrates (a newer litecrawl command does)."""
    try:
        return read()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
