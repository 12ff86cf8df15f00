"""The embedded frontier: one SQLite file in WAL mode, claims in ``BEGIN IMMEDIATE``
(``claims.py``), what a finalize writes in ``writes.py``, worker leases in ``leases.py``.

All database work runs on one dedicated thread (sqlite3 is blocking); the event loop only awaits.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from litecrawl.errors import FrontierError
from litecrawl.index.document import IndexDocument
from litecrawl.schedule import Schedule
from litecrawl.store.dialect import SQLITE
from litecrawl.store.frontier_sql import SQLFrontier
from litecrawl.store.queue import (
    Claim,
    ClaimedPage,
    ClaimFocus,
    FinalizeResult,
    NewLink,
    PageUpdate,
)
from litecrawl.store.runs import FrontierSummary
from litecrawl.store.sqlite import claims, index, leases
from litecrawl.store.sqlite import writes as writing
from litecrawl.store.sqlite.connection import connect, connect_readonly, for_writing
from litecrawl.store.sqlite.failures import translate
from litecrawl.store.sqlite.migrations import migrate
from litecrawl.store.sqlite.summary import read_partitions, read_summary
from litecrawl.store.sqlite.waits import LockWatch
from litecrawl.store.states import RELEASED_STATE, PageState
from litecrawl.store.strategies import StrategyWrites
from litecrawl.store.workers import WorkerIdentity, WorkerRecord
from litecrawl.strategy.domain import partition_hash

__all__ = ["SQLiteFrontier"]

T = TypeVar("T")

_CLAIM_COLUMNS = claims.CLAIM_COLUMNS
_BUSY_RETRIES = 8


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back what is open, if anything is: SQLite has already rolled back a transaction that
    a full disk or an I/O error ended, and a ROLLBACK then would fail in turn."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


class SQLiteFrontier(SQLFrontier):
    dialect = SQLITE

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        self.path = str(path)
        self.read_only = read_only  # stats: no migration, no write, works on a read-only disk
        self._conn: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None  # for a strategy's synchronous reads
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="litecrawl-sqlite")
        self._worker: tuple[WorkerIdentity, float] | None = None  # identity, started_at
        self._beat_conn: sqlite3.Connection | None = None  # the heartbeat thread's own
        self._locks = LockWatch(self.path)
        self.host_slots = {}

    # -- plumbing ---------------------------------------------------------------------------

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._with_retry, fn)

    def _with_retry(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._conn is None:
            raise FrontierError("frontier is not open")
        self._locks.begin(self._conn)  # a long wait for another process's lock is told
        try:
            return self._attempts(self._conn, fn)
        finally:
            self._locks.end()

    def _attempts(self, conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
        delay = 0.05
        for attempt in range(_BUSY_RETRIES):
            try:
                return fn(conn)
            except sqlite3.OperationalError as exc:
                _rollback(conn)
                locked = "locked" in str(exc) or "busy" in str(exc)
                if not locked or attempt == _BUSY_RETRIES - 1:
                    raise translate(self.path, exc) from exc
                time.sleep(delay)  # on the database thread, not the event loop
                delay = min(delay * 2, 2.0)
            except sqlite3.Error as exc:
                _rollback(conn)
                raise translate(self.path, exc) from exc
        raise AssertionError("unreachable")

    @staticmethod
    def _transaction(conn: sqlite3.Connection, work: Callable[[], T]) -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = work()
        except BaseException:
            _rollback(conn)
            raise
        conn.execute("COMMIT")
        return result

    async def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` in one write transaction, on the database thread."""
        return await self._run(lambda conn: self._transaction(conn, lambda: fn(conn)))

    async def _query(
        self, sql: str, params: Any = (), *, write: bool = False
    ) -> list[tuple[Any, ...]]:
        def query(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return list(conn.execute(sql, params).fetchall())

        return await (self._write if write else self._run)(query)

    # -- life cycle -------------------------------------------------------------------------

    async def open(self) -> None:
        def _open(_: object) -> None:
            if self.read_only:
                self._conn = connect_readonly(self.path)
                return
            conn = for_writing(connect(self.path))
            try:
                migrate(conn)
            except sqlite3.Error as exc:
                conn.close()
                raise translate(self.path, exc, "cannot migrate ") from exc
            self._conn = conn

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, _open, None)

    async def close(self) -> None:
        def _close(_: object) -> None:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._beat_conn is not None:
                self._beat_conn.close()
                self._beat_conn = None

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, _close, None)
        self._thread.shutdown(wait=True)
        await asyncio.to_thread(self._locks.close)

    # -- frontier operations ----------------------------------------------------------------

    async def add(self, links: Iterable[NewLink]) -> int:
        rows = [writing.link_row(link) for link in links]

        def _add(conn: sqlite3.Connection) -> int:
            def work() -> int:
                before = conn.total_changes
                conn.executemany(
                    "INSERT OR IGNORE INTO pages (norm_url, host, depth, source, score, kind, "
                    "part) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                return conn.total_changes - before

            return self._transaction(conn, work)

        return await self._run(_add)

    async def recover_stale(
        self, older_than: int, now: int, schedule: Schedule, retry_uncrawled: bool = False
    ) -> int:
        def _recover(conn: sqlite3.Connection) -> int:
            rows = leases.claims_older_than(conn, older_than)
            return leases.reset_claims(conn, rows, now, schedule, retry_uncrawled)

        return await self._write(_recover)

    async def _claim(self, claim: Claim) -> tuple[list[ClaimedPage], dict[str, int]]:
        return await self._write(lambda conn: claims.claim_pages(conn, claim))

    async def release_hosts(self, hosts: Sequence[str]) -> None:
        if not hosts:
            return
        await self._run(lambda conn: claims.release_hosts(conn, self.worker_id, hosts))
        for host in hosts:
            self.host_slots.pop(host, None)

    async def claim_url(self, url: str, host: str, depth: int, now: int) -> ClaimedPage | None:
        def _claim_url(conn: sqlite3.Connection) -> ClaimedPage | None:
            def work() -> ClaimedPage | None:
                conn.execute(
                    "INSERT OR IGNORE INTO pages (norm_url, host, depth, part) VALUES (?, ?, ?, ?)",
                    (url, host, depth, partition_hash(url, host=host)),
                )
                row = conn.execute(
                    f"UPDATE pages SET processing_time = ?, state = {PageState.QUEUED:d}, "
                    "worker_id = ? "
                    f"WHERE norm_url = ? AND processing_time IS NULL RETURNING {_CLAIM_COLUMNS}",
                    (now, self.worker_id, url),
                ).fetchone()
                return ClaimedPage(*row) if row else None

            return self._transaction(conn, work)

        return await self._run(_claim_url)

    async def next_claimable(
        self,
        now: float,
        horizon: float,
        partition: tuple[int, int] | None = None,
        focus: ClaimFocus | None = None,
    ) -> float | None:
        return await self._run(
            lambda conn: claims.next_claimable(conn, now, horizon, partition, focus)
        )

    async def known(self, urls: Sequence[str]) -> set[str]:
        if not urls:
            return set()
        unique = list(dict.fromkeys(urls))

        def _known(conn: sqlite3.Connection) -> set[str]:
            found: set[str] = set()
            for i in range(0, len(unique), 500):  # stay under SQLite's variable limit
                chunk = unique[i : i + 500]
                marks = ",".join("?" * len(chunk))
                found.update(
                    row[0]
                    for row in conn.execute(
                        f"SELECT norm_url FROM pages WHERE norm_url IN ({marks})", chunk
                    )
                )
            return found

        return await self._run(_known)

    async def finalize(self, updates: Sequence[PageUpdate]) -> FinalizeResult:
        if not updates:
            return FinalizeResult()
        return await self._write(lambda conn: writing.write_batch(conn, updates))

    async def delete(self, urls: Sequence[str]) -> None:
        def _delete(conn: sqlite3.Connection) -> None:
            self._transaction(
                conn,
                lambda: conn.executemany(
                    "DELETE FROM pages WHERE norm_url = ?", [(u,) for u in urls]
                ),
            )

        await self._run(_delete)

    async def release(self, urls: Sequence[str], not_before: int | None = None) -> None:
        def _release(conn: sqlite3.Connection) -> None:
            self._transaction(
                conn,
                lambda: conn.executemany(
                    "UPDATE pages SET processing_time = NULL, worker_id = NULL, "
                    "next_crawl_time = coalesce(?, next_crawl_time), "
                    f"state = {RELEASED_STATE} "
                    "WHERE norm_url = ?",
                    [(not_before, u) for u in urls],
                ),
            )

        await self._run(_release)

    async def make_due(self, urls: Sequence[str], now: int) -> int:
        def _make_due(conn: sqlite3.Connection) -> int:
            def work() -> int:
                before = conn.total_changes
                conn.executemany(
                    "UPDATE pages SET next_crawl_time = ? WHERE norm_url = ? "
                    "AND processing_time IS NULL AND coalesce(next_crawl_time, 0) > ?",
                    [(now, u, now) for u in urls],
                )
                return conn.total_changes - before

            return self._transaction(conn, work)

        return await self._run(_make_due)

    # -- leases -------------------------------------------------------------------------------

    async def register_worker(self, identity: WorkerIdentity, now: float) -> int:
        def _register(conn: sqlite3.Connection) -> int:
            return leases.insert_worker(conn, identity, now, now)

        self.worker_id = await self._run(_register)
        self._worker = (identity, now)
        return self.worker_id

    def beat(self, now: float, pages: int | None = None) -> bool:
        if self.worker_id is None or self._worker is None:
            return True
        try:
            if self._beat_conn is None:
                self._beat_conn = connect(self.path)
            return leases.beat(self._beat_conn, self.worker_id, *self._worker, now, pages)
        except sqlite3.Error as exc:
            raise translate(self.path, exc, "heartbeat: ") from exc

    async def unregister_worker(self) -> int:
        worker_id = self.worker_id
        if worker_id is None:
            return 0

        released = await self._write(lambda conn: leases.remove_worker(conn, worker_id))
        self.worker_id = self._worker = None
        return released

    async def workers(self) -> list[WorkerRecord]:
        return await self._run(leases.read_workers)

    async def recover_lost(self, is_dead: Callable[[WorkerRecord], bool], now: int) -> int:
        return await self._write(lambda conn: leases.recover_lost(conn, is_dead, now))

    # -- crawling strategies --------------------------------------------------------------------

    async def write_strategy(self, writes: StrategyWrites) -> int:
        return await self._write(lambda conn: writing.write_strategy(conn, writes))

    # -- the index ------------------------------------------------------------------------------

    async def write_documents(self, docs: Sequence[IndexDocument]) -> None:
        await self._write(lambda conn: index.write_documents(conn, docs))

    async def remove_documents(self, urls: Sequence[str]) -> None:
        await self._write(lambda conn: index.remove_documents(conn, urls))

    def _read_conn(self) -> sqlite3.Connection:
        if self._reader is None:
            self._reader = connect(self.path)
        return self._reader

    def read_states(self, urls: list[str]) -> dict[str, tuple[int, float, str | None]]:
        found: dict[str, tuple[int, float, str | None]] = {}
        unique = list(dict.fromkeys(urls))
        try:
            conn = self._read_conn()
            for i in range(0, len(unique), 500):  # stay under SQLite's variable limit
                chunk = unique[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for url, state, score, meta in conn.execute(
                    f"SELECT norm_url, state, score, meta FROM pages WHERE norm_url IN ({marks})",
                    chunk,
                ):
                    found[url] = (state, score, meta)
        except sqlite3.Error as exc:
            raise translate(self.path, exc) from exc
        return found

    def read_domain(self, domain: str) -> str | None:
        try:
            row = (
                self._read_conn()
                .execute("SELECT data FROM domain_metadata WHERE domain = ?", (domain,))
                .fetchone()
            )
        except sqlite3.Error as exc:
            raise translate(self.path, exc) from exc
        return str(row[0]) if row else None

    async def partitions(self, n: int, now: int) -> dict[int, dict[str, int]]:
        return await self._run(lambda conn: read_partitions(conn, n, now))

    # -- observability --------------------------------------------------------------------------

    async def summary(self, now: int, hosts: int | None = 10) -> FrontierSummary:
        return await self._run(lambda conn: read_summary(conn, now, hosts))
