"""The frontier on PostgreSQL (work in progress, issue 13: not reachable from ``open_frontier``
until the index, search and sites are on PostgreSQL too).

The statements are the SQLite frontier's, in PostgreSQL's dialect: batches as arrays
(``unnest``) instead of ``executemany``, claims as one ``UPDATE ... WHERE norm_url IN (SELECT
... FOR UPDATE SKIP LOCKED)`` so concurrent workers never wait on each other's rows, and new
rows counted with ``RETURNING (xmax = 0)`` where SQLite counts ``total_changes``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from litecrawl.errors import FrontierError
from litecrawl.frontier.base import (
    ClaimedPage,
    ClaimFocus,
    FinalizeResult,
    Frontier,
    FrontierSummary,
    NewLink,
    PageUpdate,
    StrategyWrites,
    WorkerIdentity,
    WorkerRecord,
)
from litecrawl.index.document import IndexDocument
from litecrawl.schedule import Schedule
from litecrawl.store.postgres.migrations import migrate
from litecrawl.urls import shown_location

__all__ = ["PostgresFrontier"]

_CLAIM_COLUMNS = (
    "norm_url, last_crawl_time, next_crawl_time, content_hash, depth, source, etag, last_modified,"
    " kind, lastmod, score, meta"
)
_NEW_LINKS = """
INSERT INTO pages (norm_url, host, depth, source, score, kind)
SELECT * FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[], %s::float8[], %s::text[])
ON CONFLICT (norm_url) DO UPDATE SET depth = excluded.depth WHERE excluded.depth < pages.depth
RETURNING (xmax = 0)
"""
_UPSERT_PAGE = """
INSERT INTO pages (norm_url, host, last_crawl_time, next_crawl_time, processing_time, content_hash,
                   depth, state, status, error, content_type, etag, last_modified, fetch_count,
                   response_ms, kind)
VALUES (%(norm_url)s, %(host)s, %(last_crawl_time)s, %(next_crawl_time)s, NULL,
        coalesce(%(content_hash)s, ''), %(depth)s, %(state)s, %(status)s, %(error)s,
        %(content_type)s, %(etag)s, %(last_modified)s, 1, %(response_ms)s,
        coalesce(%(kind)s, 'page'))
ON CONFLICT (norm_url) DO UPDATE SET
  last_crawl_time = excluded.last_crawl_time,
  next_crawl_time = CASE
    WHEN %(recheck_lastmod)s AND pages.lastmod > coalesce(pages.last_crawl_time, 0)
    THEN excluded.last_crawl_time ELSE excluded.next_crawl_time END,
  processing_time = NULL,
  worker_id = NULL,
  content_hash = coalesce(%(content_hash)s, pages.content_hash),
  state = excluded.state,
  status = excluded.status,
  error = excluded.error,
  content_type = coalesce(excluded.content_type, pages.content_type),
  etag = coalesce(excluded.etag, pages.etag),
  last_modified = coalesce(excluded.last_modified, pages.last_modified),
  fetch_count = pages.fetch_count + 1,
  response_ms = coalesce(excluded.response_ms, pages.response_ms),
  kind = coalesce(%(kind)s, pages.kind)
"""


class PostgresFrontier(Frontier):
    def __init__(self, url: str, pool_size: int = 4) -> None:
        self.url = url
        self.shown = shown_location(url)  # never the password, in messages and logs
        self._pool_size = pool_size
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] | None = None

    @property
    def pool(self) -> AsyncConnectionPool[psycopg.AsyncConnection[Any]]:
        if self._pool is None:
            raise FrontierError(f"{self.shown}: the frontier is not open")
        return self._pool

    # -- life cycle -------------------------------------------------------------------------

    async def open(self) -> None:
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self._pool_size,
            kwargs={"autocommit": True},
            open=False,
        )
        try:
            await pool.open(wait=True, timeout=10)
            async with pool.connection() as conn:
                await migrate(conn)
        except (psycopg.Error, TimeoutError) as exc:
            await pool.close()
            raise FrontierError(f"cannot open PostgreSQL database {self.shown}: {exc}") from exc
        self._pool = pool

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def _fetch(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        try:
            async with self.pool.connection() as conn:
                cur = await conn.execute(sql.encode(), params)
                return await cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise FrontierError(f"{self.shown}: {exc}") from exc

    async def _rowcount(self, sql: str, params: Any = None) -> int:
        try:
            async with self.pool.connection() as conn:
                cur = await conn.execute(sql.encode(), params)
                return max(cur.rowcount, 0)
        except psycopg.Error as exc:
            raise FrontierError(f"{self.shown}: {exc}") from exc

    # -- frontier operations ----------------------------------------------------------------

    async def add(self, links: Iterable[NewLink]) -> int:
        rows = list(links)
        if not rows:
            return 0
        return await self._rowcount(
            "INSERT INTO pages (norm_url, host, depth, source, score, kind) "
            "SELECT * FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[], %s::float8[],"
            " %s::text[]) ON CONFLICT (norm_url) DO NOTHING",
            _columns(rows),
        )

    async def recover_stale(
        self, older_than: int, now: int, schedule: Schedule, retry_uncrawled: bool = False
    ) -> int:
        raise FrontierError(f"{self.shown}: recovery on PostgreSQL is not built yet")

    async def claim(
        self,
        limit: int,
        now: int,
        by_score: bool = False,
        partition: tuple[int, int] | None = None,
        focus: ClaimFocus | None = None,
    ) -> list[ClaimedPage]:
        if partition is not None:
            raise FrontierError(f"{self.shown}: --partition on PostgreSQL is not built yet")
        narrow = ""
        params: dict[str, Any] = {"now": now, "limit": limit, "worker": self.worker_id}
        if focus is not None:
            narrow = "AND host = ANY(%(hosts)s)"
            params["hosts"] = list(focus.hosts)
            if focus.urls is not None:
                narrow += " AND norm_url = ANY(%(urls)s)"
                params["urls"] = list(focus.urls)
        order = (
            "score DESC, next_crawl_time NULLS FIRST, depth"
            if by_score
            else "next_crawl_time NULLS FIRST, depth, score DESC"
        )
        # SKIP LOCKED: rows another worker is claiming this instant are passed over, not waited
        # for; idx_pages_claim serves the order, so the cost stays flat as the frontier grows
        rows = await self._fetch(
            f"""UPDATE pages SET processing_time = %(now)s, state = 1, worker_id = %(worker)s
            WHERE norm_url IN (
              SELECT norm_url FROM pages
              WHERE processing_time IS NULL
                AND (next_crawl_time IS NULL OR next_crawl_time <= %(now)s) {narrow}
              ORDER BY {order}
              LIMIT %(limit)s
              FOR UPDATE SKIP LOCKED)
            RETURNING {_CLAIM_COLUMNS}""",
            params,
        )
        pages = [ClaimedPage(*row) for row in rows]
        # RETURNING does not keep the subquery's order: put it back
        if by_score:
            pages.sort(key=lambda p: (-p.score, _nulls_first(p.next_crawl_time), p.depth))
        else:
            pages.sort(key=lambda p: (_nulls_first(p.next_crawl_time), p.depth, -p.score))
        return pages

    async def claim_url(self, url: str, host: str, depth: int, now: int) -> ClaimedPage | None:
        try:
            async with self.pool.connection() as conn, conn.transaction():
                await conn.execute(
                    "INSERT INTO pages (norm_url, host, depth) VALUES (%s, %s, %s) "
                    "ON CONFLICT (norm_url) DO NOTHING",
                    (url, host, depth),
                )
                cur = await conn.execute(
                    f"UPDATE pages SET processing_time = %s, state = 1, worker_id = %s "
                    f"WHERE norm_url = %s AND processing_time IS NULL RETURNING {_CLAIM_COLUMNS}",
                    (now, self.worker_id, url),
                )
                row = await cur.fetchone()
        except psycopg.Error as exc:
            raise FrontierError(f"{self.shown}: {exc}") from exc
        return ClaimedPage(*row) if row else None

    async def known(self, urls: Sequence[str]) -> set[str]:
        if not urls:
            return set()
        rows = await self._fetch(
            "SELECT norm_url FROM pages WHERE norm_url = ANY(%s)", (list(set(urls)),)
        )
        return {r[0] for r in rows}

    async def finalize(self, updates: Sequence[PageUpdate]) -> FinalizeResult:
        if not updates:
            return FinalizeResult()
        if any(isinstance(u.document, IndexDocument) for u in updates):
            raise FrontierError(f"{self.shown}: the index on PostgreSQL is not built yet")
        if any(u.strategy is not None or u.links_out is not None for u in updates):
            raise FrontierError(f"{self.shown}: strategies and link graph: not built yet")
        listed = [link for u in updates for link in u.links if link.lastmod is not None]
        now = max(u.last_crawl_time for u in updates)
        new_links = fresh_by_links = 0
        try:
            async with self.pool.connection() as conn, conn.transaction():
                for u in updates:
                    page = u.page_row()
                    links = [link for link in u.links if link.lastmod is None]
                    if links:
                        cur = await conn.execute(_NEW_LINKS.encode(), _columns(links))
                        new = sum(1 for (inserted,) in await cur.fetchall() if inserted)
                        new_links += new
                        if new and u.next_crawl_time_if_new_links is not None:
                            page["next_crawl_time"] = u.next_crawl_time_if_new_links
                            fresh_by_links += 1
                    await conn.execute(_UPSERT_PAGE.encode(), page)
                if listed:
                    new_links += await _insert_listed(conn, listed, now)
        except psycopg.Error as exc:
            raise FrontierError(f"{self.shown}: {exc}") from exc
        return FinalizeResult(new_links, fresh_by_links)

    async def delete(self, urls: Sequence[str]) -> None:
        await self._rowcount("DELETE FROM pages WHERE norm_url = ANY(%s)", (list(urls),))

    async def release(self, urls: Sequence[str], not_before: int | None = None) -> None:
        await self._rowcount(
            "UPDATE pages SET processing_time = NULL, worker_id = NULL, "
            "next_crawl_time = coalesce(%s, next_crawl_time), "
            "state = CASE WHEN last_crawl_time IS NULL THEN 0 ELSE 2 END "
            "WHERE norm_url = ANY(%s)",
            (not_before, list(urls)),
        )

    async def make_due(self, urls: Sequence[str], now: int) -> int:
        return await self._rowcount(
            "UPDATE pages SET next_crawl_time = %(now)s WHERE norm_url = ANY(%(urls)s) "
            "AND processing_time IS NULL AND coalesce(next_crawl_time, 0) > %(now)s",
            {"now": now, "urls": list(urls)},
        )

    async def add_listed(self, links: Sequence[NewLink], now: int) -> int:
        try:
            async with self.pool.connection() as conn, conn.transaction():
                return await _insert_listed(conn, links, now)
        except psycopg.Error as exc:
            raise FrontierError(f"{self.shown}: {exc}") from exc

    # -- leases -------------------------------------------------------------------------------

    async def register_worker(self, identity: WorkerIdentity, now: float) -> int:
        rows = await self._fetch(
            "INSERT INTO workers (hostname, pid, pid_scope, proc_start, command, started_at,"
            " heartbeat_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                identity.hostname,
                identity.pid,
                identity.pid_scope,
                identity.proc_start,
                identity.command,
                now,
                now,
            ),
        )
        self.worker_id = int(rows[0][0])
        return self.worker_id

    def beat(self, now: float) -> bool:
        raise FrontierError(f"{self.shown}: heartbeats on PostgreSQL are not built yet")

    async def unregister_worker(self) -> int:
        worker_id = self.worker_id
        if worker_id is None:
            return 0
        released = await self._rowcount(
            "UPDATE pages SET processing_time = NULL, worker_id = NULL, "
            "state = CASE WHEN last_crawl_time IS NULL THEN 0 ELSE 2 END WHERE worker_id = %s",
            (worker_id,),
        )
        await self._rowcount("DELETE FROM workers WHERE id = %s", (worker_id,))
        self.worker_id = None
        return released

    async def workers(self) -> list[WorkerRecord]:
        rows = await self._fetch(
            "SELECT w.id, w.hostname, w.pid, w.pid_scope, w.proc_start, w.command, w.started_at,"
            " w.heartbeat_at, (SELECT count(*) FROM pages p WHERE p.worker_id = w.id)"
            " FROM workers w ORDER BY w.id"
        )
        return [WorkerRecord.from_row(r) for r in rows]

    async def recover_lost(
        self,
        is_dead: Callable[[WorkerRecord], bool],
        now: int,
        schedule: Schedule,
        retry_uncrawled: bool = False,
    ) -> int:
        raise FrontierError(f"{self.shown}: recovery on PostgreSQL is not built yet")

    # -- crawling strategies --------------------------------------------------------------------

    async def write_strategy(self, writes: StrategyWrites) -> int:
        raise FrontierError(f"{self.shown}: strategies on PostgreSQL are not built yet")

    def read_states(self, urls: list[str]) -> dict[str, tuple[int, float, str | None]]:
        raise FrontierError(f"{self.shown}: strategies on PostgreSQL are not built yet")

    def read_domain(self, domain: str) -> str | None:
        raise FrontierError(f"{self.shown}: strategies on PostgreSQL are not built yet")

    async def partitions(self, n: int, now: int) -> dict[int, dict[str, int]]:
        raise FrontierError(f"{self.shown}: partitions on PostgreSQL are not built yet")

    async def domain_metadata(self) -> dict[str, str]:
        rows = await self._fetch("SELECT domain, data FROM domain_metadata ORDER BY domain")
        return {domain: data for domain, data in rows}

    # -- per-host state -----------------------------------------------------------------------

    async def get_robots(self, origin: str) -> tuple[str, float] | None:
        rows = await self._fetch(
            "SELECT record, expires_at FROM robots WHERE origin = %s", (origin,)
        )
        return (rows[0][0], rows[0][1]) if rows else None

    async def put_robots(self, origin: str, record: str, expires_at: float) -> None:
        await self._rowcount(
            "INSERT INTO robots (origin, record, expires_at) VALUES (%s, %s, %s) "
            "ON CONFLICT (origin) DO UPDATE SET record = excluded.record, "
            "expires_at = excluded.expires_at",
            (origin, record, expires_at),
        )

    async def slow_host(self, host: str, until: float, crawl_delay: float | None = None) -> None:
        await self._rowcount(
            "INSERT INTO hosts (host, slowed_until, crawl_delay) VALUES (%s, %s, %s) "
            "ON CONFLICT (host) DO UPDATE SET "
            "slowed_until = greatest(hosts.slowed_until, excluded.slowed_until), "
            "crawl_delay = coalesce(excluded.crawl_delay, hosts.crawl_delay)",
            (host, until, crawl_delay),
        )

    async def host_slowdowns(self, now: float) -> dict[str, float]:
        rows = await self._fetch(
            "SELECT host, slowed_until FROM hosts WHERE slowed_until > %s", (now,)
        )
        return {host: until for host, until in rows}

    # -- observability --------------------------------------------------------------------------

    async def start_run(self, command: str, now: int) -> int:
        rows = await self._fetch(
            "INSERT INTO runs (started_at, command, worker_id) VALUES (%s, %s, %s) RETURNING id",
            (now, command, self.worker_id),
        )
        return int(rows[0][0])

    async def finish_run(self, run_id: int, stats: str, now: int) -> None:
        await self._rowcount(
            "UPDATE runs SET finished_at = %s, stats = %s WHERE id = %s", (now, stats, run_id)
        )

    async def summary(self, now: int, hosts: int | None = 10) -> FrontierSummary:
        raise FrontierError(f"{self.shown}: the summary on PostgreSQL is not built yet")


async def _insert_listed(
    conn: psycopg.AsyncConnection[Any], links: Sequence[NewLink], now: int
) -> int:
    """Sitemap/feed entries (as the SQLite store's ``_insert_listed``): new ones inserted; a
    listed lastmod newer than our last fetch makes a known page due now."""
    cols = _columns(links)
    cur = await conn.execute(
        "INSERT INTO pages (norm_url, host, depth, source, score, kind, lastmod) "
        "SELECT * FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[], %s::float8[],"
        " %s::text[], %s::bigint[]) ON CONFLICT (norm_url) DO NOTHING",
        (*cols, [link.lastmod for link in links]),
    )
    new = max(cur.rowcount, 0)
    await conn.execute(
        "UPDATE pages SET lastmod = l.lastmod, next_crawl_time = CASE "
        "  WHEN l.lastmod > coalesce(pages.last_crawl_time, 0) AND pages.next_crawl_time > %s "
        "  THEN %s ELSE pages.next_crawl_time END "
        "FROM unnest(%s::text[], %s::bigint[]) AS l(url, lastmod) "
        "WHERE pages.norm_url = l.url AND l.lastmod IS NOT NULL "
        "AND pages.lastmod IS DISTINCT FROM l.lastmod",
        (now, now, cols[0], [link.lastmod for link in links]),
    )
    return new


def _columns(links: Sequence[NewLink]) -> tuple[list[Any], ...]:
    """Links as one array per column (what ``unnest`` takes)."""
    return (
        [link.url for link in links],
        [link.host for link in links],
        [link.depth for link in links],
        [link.source for link in links],
        [link.score for link in links],
        [link.kind for link in links],
    )


def _nulls_first(when: int | None) -> tuple[bool, int]:
    return (when is not None, when or 0)
