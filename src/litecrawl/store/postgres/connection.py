"""Connections to PostgreSQL: a pool opened (and migrated) once, every piece of work retried
while the database is away.

A crawl must outlive a restarted server or a cut network: work that fails because the
connection is gone (``OperationalError`` of the classes in ``_TRANSIENT``: a closed connection, a
server shutting down, no connection to be had from the pool) is run again after a pause that
doubles up to 10 s, for as long as it takes, so pages fetched meanwhile wait in memory and are
written when the database is back. One log line says the database is away, one that it is back.
Any other database error is the caller's (``FrontierError``). Passwords never appear in
messages: the location is shown masked (``litecrawl.urls.shown_location``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool

from litecrawl.errors import DiskFull, FrontierError, without_passwords
from litecrawl.store.postgres.migrations import migrate
from litecrawl.urls import shown_location

__all__ = ["Database"]

log = logging.getLogger("litecrawl")
T = TypeVar("T")
Conn = psycopg.AsyncConnection[Any]

_MAX_PAUSE = 10.0
_CONNECT_TIMEOUT = 10


# SQLSTATE classes worth waiting out: the connection is gone (08), not enough resources for now
# (53: out of memory, too many connections), the server stopping or starting (57),
# a deadlock or serialization failure (40), an I/O error (58). Others under OperationalError
# are the statement's own and would fail again: a program limit (54, e.g. a tsvector over
# 1 MB) must name itself, not pass for a database that is away.
_TRANSIENT = ("08", "53", "57", "40", "58")
# ... except a full disk (53100), which no wait of ours empties: the crawl stops with one line
# and exit 1, as on SQLite (DiskFull; docs/crawling.md, "Damaged database, full disk").
_DISK_FULL = "53100"


def _transient(exc: psycopg.OperationalError) -> bool:
    state = exc.sqlstate
    # no SQLSTATE: the client lost the connection, or the pool had none to give (PoolTimeout)
    return state is None or state.startswith(_TRANSIENT) or state == "55P03"  # lock_not_available


class Database:
    def __init__(self, url: str, pool_size: int = 4) -> None:
        self.url = url
        self.shown = shown_location(url)
        self._pool_size = pool_size
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._away_since: float | None = None

    async def open(self) -> None:
        """Connect and migrate; FrontierError naming the server and the error when it cannot
        be reached (no retry at start-up: a wrong URL should fail at once)."""
        # the pool's own connection errors would repeat every few seconds while the database
        # is away: ours say it once
        logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)
        try:
            first = await psycopg.AsyncConnection.connect(
                self.url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT
            )
            async with first:
                await migrate(first)
        except psycopg.Error as exc:
            raise FrontierError(f"cannot open PostgreSQL database {self.shown}: {exc}") from exc
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self._pool_size,
            kwargs={"autocommit": True, "connect_timeout": _CONNECT_TIMEOUT},
            open=False,
        )
        await pool.open()
        self._pool = pool

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def transaction(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` in one transaction, run again from the start if the connection is lost."""
        return await self._retried(work, transaction=True)

    async def read(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """``work`` outside a transaction (autocommit: each statement its own)."""
        return await self._retried(work, transaction=False)

    async def _retried(self, work: Callable[[Conn], Awaitable[T]], transaction: bool) -> T:
        if self._pool is None:
            raise FrontierError(f"{self.shown}: the database is not open")
        pause = 0.5
        while True:
            try:
                async with self._pool.connection() as conn:
                    if not transaction:
                        result = await work(conn)
                    else:
                        async with conn.transaction():
                            result = await work(conn)
            except psycopg.OperationalError as exc:
                if exc.sqlstate == _DISK_FULL:
                    reason = (str(exc).strip().splitlines() or ["disk full"])[0]
                    raise DiskFull(f"PostgreSQL database {self.shown}", reason) from exc
                if not _transient(exc):
                    raise FrontierError(f"{self.shown}: {exc}") from exc
                self._away(exc)
                await asyncio.sleep(pause)
                pause = min(pause * 2, _MAX_PAUSE)
                continue
            except psycopg.Error as exc:
                raise FrontierError(f"{self.shown}: {exc}") from exc
            self._back()
            return result

    def _away(self, exc: psycopg.OperationalError) -> None:
        if self._away_since is None:
            self._away_since = time.monotonic()
            text = without_passwords(str(exc)).strip()  # drivers quote the URL they were given
            reason = text.splitlines()[0] if text else type(exc).__name__
            log.warning(
                "database %s unreachable (%s): retrying; fetched pages are kept until it is back",
                self.shown,
                reason,
            )

    def _back(self) -> None:
        if self._away_since is not None:
            log.warning(
                "database %s is back after %.0fs", self.shown, time.monotonic() - self._away_since
            )
            self._away_since = None
