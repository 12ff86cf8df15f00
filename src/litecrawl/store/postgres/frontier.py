"""The frontier on PostgreSQL (work in progress, issue 13: not reachable from ``open_frontier``
until the index, search and sites are on PostgreSQL too).

The statements are the SQLite frontier's, in PostgreSQL's dialect: batches as arrays
(``unnest``) instead of ``executemany``, claims as one ``UPDATE ... WHERE norm_url IN (SELECT
... FOR UPDATE SKIP LOCKED)`` so concurrent workers never wait on each other's rows, and new
rows counted with ``RETURNING (xmax = 0)`` where SQLite counts ``total_changes``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import psycopg

from litecrawl.errors import FrontierError
from litecrawl.frontier.base import (
    PARKED,
    ClaimedPage,
    ClaimFocus,
    FinalizeResult,
    Frontier,
    FrontierSummary,
    HostRules,
    NewLink,
    PageUpdate,
    StrategyWrites,
    WorkerIdentity,
    WorkerRecord,
)
from litecrawl.index.document import IndexDocument
from litecrawl.schedule import Schedule
from litecrawl.store.postgres import claims, leases
from litecrawl.store.postgres.connection import Conn, Database
from litecrawl.store.postgres.index import remove_documents, write_documents
from litecrawl.store.postgres.summary import read_partitions, read_summary
from litecrawl.store.sqlite.links import MAX_LINKS_PER_PAGE, link_key
from litecrawl.strategy.domain import partition_hash

__all__ = ["PostgresFrontier"]

T = TypeVar("T")

_CLAIM_COLUMNS = claims.CLAIM_COLUMNS
_NEW_LINKS = """
INSERT INTO pages (norm_url, host, depth, source, score, kind, part)
SELECT * FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[], %s::float8[], %s::text[],
                     %s::bigint[])
ON CONFLICT (norm_url) DO UPDATE SET depth = excluded.depth WHERE excluded.depth < pages.depth
RETURNING norm_url, (xmax = 0)
"""
_UPSERT_PAGE = """
INSERT INTO pages (norm_url, host, last_crawl_time, next_crawl_time, processing_time, content_hash,
                   depth, state, status, error, content_type, etag, last_modified, fetch_count,
                   response_ms, kind, part)
VALUES (%(norm_url)s, %(host)s, %(last_crawl_time)s, %(next_crawl_time)s, NULL,
        coalesce(%(content_hash)s, ''), %(depth)s, %(state)s, %(status)s, %(error)s,
        %(content_type)s, %(etag)s, %(last_modified)s, 1, %(response_ms)s,
        coalesce(%(kind)s, 'page'), %(part)s)
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
        self.db = Database(url, pool_size)
        self.shown = self.db.shown  # never the password, in messages and logs
        self._worker: tuple[WorkerIdentity, float] | None = None  # identity, started_at
        self._beat_conn: psycopg.Connection[Any] | None = None  # the heartbeat thread's
        self._reader: psycopg.Connection[Any] | None = None  # a strategy's synchronous reads
        self.host_slots = {}

    # -- life cycle -------------------------------------------------------------------------

    async def open(self) -> None:
        await self.db.open()

    async def close(self) -> None:
        for conn in (self._beat_conn, self._reader):
            if conn is not None:
                conn.close()
        self._beat_conn = self._reader = None
        await self.db.close()

    async def _transaction(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        return await self.db.transaction(work)

    async def _fetch(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        async def work(conn: Conn) -> list[tuple[Any, ...]]:
            cur = await conn.execute(sql.encode(), params)
            return await cur.fetchall() if cur.description else []

        return await self.db.read(work)

    async def _rowcount(self, sql: str, params: Any = None) -> int:
        async def work(conn: Conn) -> int:
            cur = await conn.execute(sql.encode(), params)
            return max(cur.rowcount, 0)

        return await self.db.read(work)

    # -- frontier operations ----------------------------------------------------------------

    async def add(self, links: Iterable[NewLink]) -> int:
        rows = list(links)
        if not rows:
            return 0
        return await self._rowcount(
            "INSERT INTO pages (norm_url, host, depth, source, score, kind, part) "
            "SELECT * FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[], %s::float8[],"
            " %s::text[], %s::bigint[]) ON CONFLICT (norm_url) DO NOTHING",
            _columns(rows),
        )

    async def recover_stale(
        self, older_than: int, now: int, schedule: Schedule, retry_uncrawled: bool = False
    ) -> int:
        async def work(conn: Conn) -> int:
            rows = await leases.claims_older_than(conn, older_than)
            return await leases.reset_claims(conn, rows, now, schedule, retry_uncrawled)

        return await self._transaction(work)

    async def claim(
        self,
        limit: int,
        now: int,
        by_score: bool = False,
        partition: tuple[int, int] | None = None,
        focus: ClaimFocus | None = None,
        hosts: HostRules | None = None,
    ) -> list[ClaimedPage]:
        async def work(conn: Conn) -> tuple[list[ClaimedPage], dict[str, int]]:
            return await claims.claim_pages(
                conn, self.worker_id, limit, now, by_score, partition, focus, hosts
            )

        # a plain claim is one statement: no transaction around it
        run = self.db.read if hosts is None else self.db.transaction
        pages, slots = await run(work)
        self.host_slots.update(slots)
        return pages

    async def release_hosts(self, hosts: Sequence[str]) -> None:
        if not hosts:
            return
        worker_id = self.worker_id
        await self._transaction(lambda conn: claims.release_hosts(conn, worker_id, hosts))
        for host in hosts:
            self.host_slots.pop(host, None)

    async def claim_url(self, url: str, host: str, depth: int, now: int) -> ClaimedPage | None:
        async def work(conn: Conn) -> ClaimedPage | None:
            await conn.execute(
                "INSERT INTO pages (norm_url, host, depth, part) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (norm_url) DO NOTHING",
                (url, host, depth, partition_hash(url, host=host)),
            )
            cur = await conn.execute(
                f"UPDATE pages SET processing_time = %s, state = 1, worker_id = %s "
                f"WHERE norm_url = %s AND processing_time IS NULL RETURNING {_CLAIM_COLUMNS}",
                (now, self.worker_id, url),
            )
            row = await cur.fetchone()
            return ClaimedPage(*row) if row else None

        return await self._transaction(work)

    async def next_claimable(
        self,
        now: float,
        horizon: float,
        partition: tuple[int, int] | None = None,
        focus: ClaimFocus | None = None,
    ) -> float | None:
        return await self.db.read(
            lambda conn: claims.next_claimable(conn, now, horizon, partition, focus)
        )

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
        listed = [link for u in updates for link in u.links if link.lastmod is not None]
        now = max(u.last_crawl_time for u in updates)
        documents = [u.document for u in updates if isinstance(u.document, IndexDocument)]
        # Gone for good (404/410): the page leaves the index (its frontier row stays).
        gone = [u.norm_url for u in updates if u.status in (404, 410)]
        pages = [u.page_row() for u in updates]
        graph = [(u.norm_url, u.links_out) for u in updates if u.links_out is not None]

        links, first_seen_on = _batch_links(updates)
        inserted: list[tuple[str, bool]] = []
        if links:
            # In a short transaction of its own, in key order: a new row stays locked until
            # commit, and inside the finalize (a second or more of tsvectors) other workers
            # finding the same URL waited for all of it
            links.sort(key=lambda link: link.url)
            inserted = await self._transaction(lambda conn: _insert_links(conn, links))

        async def work(conn: Conn) -> FinalizeResult:
            new_links = fresh_by_links = 0
            if inserted:
                # a new URL counts for the first page of the batch that links to it, as when
                # the pages are written one by one
                new = Counter(first_seen_on[url] for url, is_new in inserted if is_new)
                new_links = sum(new.values())
                for i, update in enumerate(updates):
                    if new[i] and update.next_crawl_time_if_new_links is not None:
                        pages[i]["next_crawl_time"] = update.next_crawl_time_if_new_links
                        fresh_by_links += 1
            if listed:
                new_links += await _insert_listed(conn, listed, now)
            async with conn.cursor() as cur:
                await cur.executemany(_UPSERT_PAGE, pages)
            if graph:
                await write_links(conn, graph)
            for update in updates:
                if update.strategy is not None:
                    new_links += await _write_strategy(conn, update.strategy)
            if documents:
                await write_documents(conn, documents)
            if gone:
                await remove_documents(conn, gone)
            return FinalizeResult(new_links, fresh_by_links)

        return await self._transaction(work)

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
        return await self._transaction(lambda conn: _insert_listed(conn, links, now))

    # -- leases -------------------------------------------------------------------------------

    async def register_worker(self, identity: WorkerIdentity, now: float) -> int:
        rows = await self._fetch(
            leases.INSERT_WORKER, leases.insert_worker_params(identity, now, now)
        )
        self.worker_id = int(rows[0][0])
        self._worker = (identity, now)
        return self.worker_id

    def beat(self, now: float, pages: int | None = None) -> bool:
        if self.worker_id is None or self._worker is None:
            return True
        try:
            if self._beat_conn is None:  # the heartbeat thread's own connection
                self._beat_conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            return leases.beat(self._beat_conn, self.worker_id, *self._worker, now, pages)
        except psycopg.Error as exc:
            if self._beat_conn is not None:
                self._beat_conn.close()
                self._beat_conn = None  # a new connection at the next beat
            raise FrontierError(f"{self.shown}: heartbeat: {exc}") from exc

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
        await self._rowcount("DELETE FROM host_leases WHERE worker_id = %s", (worker_id,))
        self.worker_id = self._worker = None
        return released

    async def workers(self) -> list[WorkerRecord]:
        return await self.db.read(leases.read_workers)

    async def recover_lost(
        self,
        is_dead: Callable[[WorkerRecord], bool],
        now: int,
        schedule: Schedule,
        retry_uncrawled: bool = False,
    ) -> int:
        return await self._transaction(
            lambda conn: leases.recover_lost(conn, is_dead, now, schedule, retry_uncrawled)
        )

    # -- crawling strategies --------------------------------------------------------------------

    async def write_strategy(self, writes: StrategyWrites) -> int:
        return await self._transaction(lambda conn: _write_strategy(conn, writes))

    def _read_conn(self) -> psycopg.Connection[Any]:
        if self._reader is None:
            self._reader = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        return self._reader

    def read_states(self, urls: list[str]) -> dict[str, tuple[int, float, str | None]]:
        try:
            rows = (
                self._read_conn()
                .execute(
                    "SELECT norm_url, state, score, meta FROM pages WHERE norm_url = ANY(%s)",
                    (list(set(urls)),),
                )
                .fetchall()
            )
        except psycopg.Error as exc:
            raise FrontierError(f"{self.shown}: {exc}") from exc
        return {url: (state, score, meta) for url, state, score, meta in rows}

    def read_domain(self, domain: str) -> str | None:
        try:
            row = (
                self._read_conn()
                .execute("SELECT data FROM domain_metadata WHERE domain = %s", (domain,))
                .fetchone()
            )
        except psycopg.Error as exc:
            raise FrontierError(f"{self.shown}: {exc}") from exc
        return str(row[0]) if row else None

    async def partitions(self, n: int, now: int) -> dict[int, dict[str, int]]:
        return await self.db.read(lambda conn: read_partitions(conn, n, now))

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

    async def claim_robots(self, origin: str, now: float, hold: float) -> bool:
        # as the SQLite store's: an empty record claims the fetch until it expires
        rows = await self._fetch(
            "INSERT INTO robots (origin, record, expires_at) VALUES (%(origin)s, '', %(until)s) "
            "ON CONFLICT (origin) DO UPDATE SET record = '', expires_at = excluded.expires_at "
            "WHERE robots.expires_at <= %(now)s RETURNING origin",
            {"origin": origin, "until": now + hold, "now": now},
        )
        return bool(rows)

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

    async def reserve_start(self, host: str, interval: float, earliest: float) -> float:
        # as the SQLite store's: the later of earliest, a Retry-After and the previous end
        rows = await self._fetch(
            "INSERT INTO hosts (host, next_start) VALUES (%(host)s, %(earliest)s + %(interval)s) "
            "ON CONFLICT (host) DO UPDATE SET next_start = greatest(hosts.next_start, "
            "hosts.slowed_until, %(earliest)s) + %(interval)s RETURNING next_start",
            {"host": host, "earliest": earliest, "interval": interval},
        )
        return float(rows[0][0]) - interval

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
        return await self.db.read(lambda conn: read_summary(conn, now, hosts))


# A strategy's change to one URL, as the SQLite store's: inserted if unknown (due now when
# queued, else parked), then only the values it changed are set.
_INSERT_STRATEGY_LINK = """
INSERT INTO pages (norm_url, host, depth, source, score, kind, state, meta, next_crawl_time,
                   part)
VALUES (%(url)s, %(host)s, %(depth)s, 'link', coalesce(%(score)s, 0.5), 'page',
        coalesce(%(state)s, 0), %(meta)s, CASE WHEN %(queue)s THEN NULL ELSE %(parked)s END,
        %(part)s)
ON CONFLICT (norm_url) DO NOTHING
"""
_UPDATE_STRATEGY_LINK = """
UPDATE pages SET score = coalesce(%(score)s, score), state = coalesce(%(state)s, state),
  meta = coalesce(%(meta)s, meta),
  part = CASE WHEN %(meta)s::text IS NULL THEN part ELSE %(part)s END,
  next_crawl_time = CASE WHEN %(queue)s AND next_crawl_time = %(parked)s THEN NULL
                    ELSE next_crawl_time END
WHERE norm_url = %(url)s
"""


async def _write_strategy(conn: Conn, writes: StrategyWrites) -> int:
    """A strategy's link writes and domain metadata; returns how many URLs were new."""
    rows = [
        {
            "url": w.url,
            "host": w.host,
            "depth": w.depth,
            "state": w.state,
            "meta": w.meta,
            "score": w.score,
            "queue": w.queue,
            "parked": PARKED,
            "part": partition_hash(w.url, w.meta, w.host),
        }
        for w in writes.links
    ]
    new = 0
    async with conn.cursor() as cur:
        if rows:
            await cur.executemany(_INSERT_STRATEGY_LINK, rows)
            new = max(cur.rowcount, 0)  # summed over the rows (psycopg >= 3.1)
            await cur.executemany(_UPDATE_STRATEGY_LINK, rows)
        for domain, data in writes.domains:
            if data is None:
                await cur.execute("DELETE FROM domain_metadata WHERE domain = %s", (domain,))
            else:
                await cur.execute(
                    "INSERT INTO domain_metadata (domain, data) VALUES (%s, %s) "
                    "ON CONFLICT (domain) DO UPDATE SET data = excluded.data",
                    (domain, data),
                )
    return new


async def _insert_listed(conn: Conn, links: Sequence[NewLink], now: int) -> int:
    """Sitemap/feed entries (as the SQLite store's ``_insert_listed``): new ones inserted; a
    listed lastmod newer than our last fetch makes a known page due now."""
    cols = _columns(links)
    cur = await conn.execute(
        "INSERT INTO pages (norm_url, host, depth, source, score, kind, part, lastmod) "
        "SELECT * FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[], %s::float8[],"
        " %s::text[], %s::bigint[], %s::bigint[]) ON CONFLICT (norm_url) DO NOTHING",
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


def _batch_links(updates: Sequence[PageUpdate]) -> tuple[list[NewLink], dict[str, int]]:
    """The batch's followed links, one per URL at its smallest depth, and for each URL the
    index of the first page that links to it."""
    kept: dict[str, NewLink] = {}
    first_seen_on: dict[str, int] = {}
    for i, update in enumerate(updates):
        for link in update.links:
            if link.lastmod is not None:
                continue
            old = kept.get(link.url)
            if old is None:
                kept[link.url] = link
                first_seen_on[link.url] = i
            elif link.depth < old.depth:
                kept[link.url] = link
    return list(kept.values()), first_seen_on


async def write_links(conn: Conn, graph: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Replace the stored outgoing links of each page (as the SQLite store's ``write_links``)."""
    await conn.execute("DELETE FROM page_links WHERE src = ANY(%s)", ([src for src, _ in graph],))
    rows: list[tuple[str, str, int]] = []
    for src, dsts in graph:
        unique = dict.fromkeys(dsts)
        unique.pop(src, None)
        rows += [(src, dst, link_key(dst)) for dst in list(unique)[:MAX_LINKS_PER_PAGE]]
    if rows:
        await conn.execute(
            "INSERT INTO page_links (src, dst, dst_key) "
            "SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[])",
            tuple(list(column) for column in zip(*rows, strict=True)),
        )


async def _insert_links(conn: Conn, links: Sequence[NewLink]) -> list[tuple[str, bool]]:
    """Links into the frontier, one statement each for the batch (a round trip per page cost
    3x): URLs not yet known inserted, with whether this worker's statement was the one that
    inserted them; known URLs only get a smaller depth. Known URLs are found by a plain read
    first: an upsert of a row waits for any other transaction writing it, and other workers'
    finalizes are writing the rows of their pages (most of which some page links to); with 2
    workers that wait was 27 s of a 50 s crawl."""
    cur = await conn.execute(
        b"SELECT norm_url, depth FROM pages WHERE norm_url = ANY(%s)", ([k.url for k in links],)
    )
    known: dict[str, int] = dict(await cur.fetchall())
    shallower = [k for k in links if k.url in known and k.depth < known[k.url]]
    if shallower:
        await conn.execute(
            b"UPDATE pages SET depth = v.depth FROM unnest(%s::text[], %s::int[]) AS v(url, depth)"
            b" WHERE pages.norm_url = v.url AND v.depth < pages.depth",
            ([k.url for k in shallower], [k.depth for k in shallower]),
        )
    unknown = [k for k in links if k.url not in known]
    if not unknown:
        return []
    cur = await conn.execute(_NEW_LINKS.encode(), _columns(unknown))
    return [(url, bool(is_new)) for url, is_new in await cur.fetchall()]


def _columns(links: Sequence[NewLink]) -> tuple[list[Any], ...]:
    """Links as one array per column (what ``unnest`` takes)."""
    return (
        [link.url for link in links],
        [link.host for link in links],
        [link.depth for link in links],
        [link.source for link in links],
        [link.score for link in links],
        [link.kind for link in links],
        [partition_hash(link.url, host=link.host) for link in links],
    )
