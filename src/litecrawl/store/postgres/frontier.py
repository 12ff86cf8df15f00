"""The frontier on PostgreSQL: the SQLite frontier's operations in PostgreSQL's dialect, for
any number of workers on several machines.

Claims are one ``UPDATE ... WHERE norm_url IN (SELECT ... FOR UPDATE SKIP LOCKED)`` so
concurrent workers never wait on each other's rows (``claims.py``); what a finalize writes is in
``writes.py``, worker leases and their recovery in ``leases.py``. Every piece of work goes
through :class:`~litecrawl.store.postgres.connection.Database`, which waits out a database that
is away.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import psycopg

from litecrawl.errors import FrontierError
from litecrawl.index.document import IndexDocument
from litecrawl.schedule import Schedule
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.frontier_sql import SQLFrontier
from litecrawl.store.leases_sql import worker_row
from litecrawl.store.postgres import claims, index, leases, statistics
from litecrawl.store.postgres import writes as writing
from litecrawl.store.postgres.connection import Conn, Database, connect
from litecrawl.store.postgres.summary import read_partitions, read_summary
from litecrawl.store.queue import (
    Claim,
    ClaimedPage,
    ClaimFocus,
    FinalizeResult,
    NewLink,
    PageUpdate,
)
from litecrawl.store.runs import FrontierSummary
from litecrawl.store.states import RELEASED_STATE, PageState
from litecrawl.store.strategies import StrategyWrites
from litecrawl.store.workers import WorkerIdentity, WorkerRecord
from litecrawl.strategy.domain import partition_hash

__all__ = ["PostgresFrontier"]

T = TypeVar("T")

_CLAIM_COLUMNS = claims.CLAIM_COLUMNS


class PostgresFrontier(SQLFrontier):
    dialect = POSTGRES

    def __init__(self, url: str, pool_size: int = 4) -> None:
        self.url = url
        self.db = Database(url, pool_size)
        self.shown = self.db.shown  # never the password, in messages and logs
        self._worker: tuple[WorkerIdentity, float] | None = None  # identity, started_at
        self._beat_conn: psycopg.Connection[Any] | None = None  # the heartbeat thread's
        self._reader: psycopg.Connection[Any] | None = None  # a strategy's synchronous reads
        self.host_slots = {}
        self._growth = statistics.Growth()

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

    async def _query(
        self, sql: str, params: Any = (), *, write: bool = False
    ) -> list[tuple[Any, ...]]:
        return await self._fetch(self.dialect.sql(sql), params)  # one statement: atomic

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
            writing.columns(rows),
        )

    async def recover_stale(
        self, older_than: int, now: int, schedule: Schedule, retry_uncrawled: bool = False
    ) -> int:
        async def work(conn: Conn) -> int:
            rows = await leases.claims_older_than(conn, older_than)
            return await leases.reset_claims(conn, rows, now, schedule, retry_uncrawled)

        return await self._transaction(work)

    async def _claim(self, claim: Claim) -> tuple[list[ClaimedPage], dict[str, int]]:
        # a plain claim is one statement, and one with hosts commits its own transaction
        return await self.db.read(lambda conn: claims.claim_pages(conn, claim))

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
                f"UPDATE pages SET processing_time = %s, state = {PageState.QUEUED:d}, "
                "worker_id = %s "
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
        batch = writing.Batch.of(updates)
        inserted: list[tuple[str, bool]] = []
        if batch.links:
            # In a short transaction of its own, in key order: a new row stays locked until
            # commit, and inside the finalize (a second or more of tsvectors) other workers
            # finding the same URL waited for all of it
            inserted = await self._transaction(lambda conn: writing.insert_links(conn, batch.links))
        result = await self._transaction(
            lambda conn: _planned_once(conn, writing.write_batch(conn, batch, inserted))
        )
        if self._growth.add(len(updates) + result.new_links):
            await self._transaction(statistics.analyze_grown)
        return result

    async def delete(self, urls: Sequence[str]) -> None:
        await self._rowcount("DELETE FROM pages WHERE norm_url = ANY(%s)", (list(urls),))

    async def release(self, urls: Sequence[str], not_before: int | None = None) -> None:
        await self._rowcount(
            "UPDATE pages SET processing_time = NULL, worker_id = NULL, "
            "next_crawl_time = coalesce(%s, next_crawl_time), "
            f"state = {RELEASED_STATE} "
            "WHERE norm_url = ANY(%s)",
            (not_before, list(urls)),
        )

    async def make_due(self, urls: Sequence[str], now: int) -> int:
        return await self._rowcount(
            "UPDATE pages SET next_crawl_time = %(now)s WHERE norm_url = ANY(%(urls)s) "
            "AND processing_time IS NULL AND coalesce(next_crawl_time, 0) > %(now)s",
            {"now": now, "urls": list(urls)},
        )

    # -- leases -------------------------------------------------------------------------------

    async def register_worker(self, identity: WorkerIdentity, now: float) -> int:
        rows = await self._fetch(leases.INSERT_WORKER, worker_row(identity, now, now))
        self.worker_id = int(rows[0][0])
        self._worker = (identity, now)
        return self.worker_id

    def beat(self, now: float, pages: int | None = None) -> bool:
        if self.worker_id is None or self._worker is None:
            return True
        try:
            if self._beat_conn is None:  # the heartbeat thread's own connection
                self._beat_conn = connect(self.url)
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
            f"state = {RELEASED_STATE} WHERE worker_id = %s",
            (worker_id,),
        )
        await self._rowcount("DELETE FROM workers WHERE id = %s", (worker_id,))
        await self._rowcount("DELETE FROM host_leases WHERE worker_id = %s", (worker_id,))
        self.worker_id = self._worker = None
        return released

    async def workers(self) -> list[WorkerRecord]:
        return await self.db.read(leases.read_workers)

    async def recover_lost(self, is_dead: Callable[[WorkerRecord], bool], now: int) -> int:
        return await self._transaction(lambda conn: leases.recover_lost(conn, is_dead, now))

    # -- crawling strategies --------------------------------------------------------------------

    async def write_strategy(self, writes: StrategyWrites) -> int:
        return await self._transaction(lambda conn: writing.write_strategy(conn, writes))

    # -- the index ------------------------------------------------------------------------------

    async def write_documents(self, docs: Sequence[IndexDocument]) -> None:
        await self._transaction(lambda conn: index.write_documents(conn, docs))

    async def remove_documents(self, urls: Sequence[str]) -> None:
        await self._transaction(lambda conn: index.remove_documents(conn, urls))

    def _read_conn(self) -> psycopg.Connection[Any]:
        if self._reader is None:
            self._reader = connect(self.url)
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

    # -- observability --------------------------------------------------------------------------

    async def summary(self, now: int, hosts: int | None = 10) -> FrontierSummary:
        return await self.db.read(lambda conn: read_summary(conn, now, hosts))


async def _planned_once(conn: Conn, work: Awaitable[T]) -> T:
    """A batch's writes, once prepared on a connection (psycopg prepares a statement at its
    fifth run there), run on one plan: their arrays' lengths do not change the best plan (index
    look-ups, a row at a time), and planning each anew cost about a tenth of a millisecond a
    page with 4 workers (bench/README.md, issue 29 on PostgreSQL, session 9). Not the links'
    look-up before (``insert_links``): its generic plan read every page on a small table."""
    await conn.execute(b"SET LOCAL plan_cache_mode = force_generic_plan")
    return await work
