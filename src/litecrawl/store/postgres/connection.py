"""Connections to PostgreSQL, all made here: one connect timeout, one retry policy, migrations
applied once when a store opens, one async pool (the frontier) and one sync pool (the site
store, the dashboard).

A crawl must outlive a restarted server or a cut network: work that fails because the
connection is gone (``OperationalError`` of the classes in ``_TRANSIENT``: a closed connection, a
server shutting down, no connection to be had from the pool) is run again after a pause that
doubles up to 10 s, for up to :data:`MAX_AWAY` seconds, so pages fetched meanwhile wait in
memory and are written when the database is back. One log line says the database is away, one
that it is back. Any other database error is the caller's (``FrontierError``), at once.
Passwords never appear in messages: the location is shown masked
(``litecrawl.urls.shown_location``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from litecrawl.errors import DiskFull, FrontierError
from litecrawl.store.index import reason
from litecrawl.store.postgres.migrations import migrate
from litecrawl.urls import shown_location

__all__ = [
    "CONNECT_TIMEOUT",
    "MAX_AWAY",
    "Conn",
    "Database",
    "Outage",
    "SyncConn",
    "SyncDatabase",
    "connect",
    "migrate_database",
]

log = logging.getLogger("litecrawl")
T = TypeVar("T")
Conn = psycopg.AsyncConnection[Any]
SyncConn = psycopg.Connection[Any]

CONNECT_TIMEOUT = 10  # seconds to establish a connection, everywhere
MAX_AWAY = 1800.0  # seconds work waits for a database that is away before it fails
_MAX_PAUSE = 10.0

# SQLSTATE classes worth waiting out: the connection is gone (08), not enough resources for now
# (53: out of memory, too many connections), the server stopping or starting (57),
# a deadlock or serialization failure (40), an I/O error (58). Others under OperationalError
# are the statement's own and would fail again: a program limit (54, e.g. a tsvector over
# 1 MB) or a cancelled statement (57014 is class 57 but the statement's) must name itself, not
# pass for a database that is away.
_TRANSIENT = ("08", "53", "57", "40", "58")
_NOT_TRANSIENT = ("57014",)  # query_canceled: a statement timeout
# ... and a full disk (53100), which no wait of ours empties: the crawl stops with one line
# and exit 1, as on SQLite (DiskFull; see
# docs/crawling.md, "A damaged database, a full disk, a read-only file").
_DISK_FULL = "53100"


def _transient(exc: psycopg.OperationalError) -> bool:
    state = exc.sqlstate
    # no SQLSTATE: the client lost the connection, or the pool had none to give (PoolTimeout)
    if state is None:
        return True
    if state in _NOT_TRANSIENT:
        return False
    return state.startswith(_TRANSIENT) or state == "55P03"  # lock_not_available


class Outage:
    """The one retry policy: which errors are waited out, for how long, and what is logged."""

    def __init__(self, shown: str, max_away: float = MAX_AWAY) -> None:
        self.shown = shown
        self.max_away = max_away
        self._since: float | None = None
        self._rolled_back = False  # a deadlock or serialization failure, not a database away

    def pause(self, exc: psycopg.OperationalError, attempt: int) -> float:
        """How long to wait before try ``attempt + 1`` (0.5 s, doubling up to 10 s);
        FrontierError when ``exc`` is not worth waiting out, or the database has been away
        for ``max_away`` seconds."""
        if exc.sqlstate == _DISK_FULL:
            raise DiskFull(f"PostgreSQL database {self.shown}", reason(exc) or "disk full") from exc
        if not _transient(exc):
            raise FrontierError(f"{self.shown}: {reason(exc)}") from exc
        now = time.monotonic()
        if self._since is None:
            self._since = now
            # class 40: the server is there and rolled this transaction back to end a deadlock
            # or a serialization conflict; the retry runs it again whole
            self._rolled_back = (exc.sqlstate or "").startswith("40")
            if self.max_away > 0 and self._rolled_back:
                log.warning(
                    "database %s rolled a transaction back (%s): running it again",
                    self.shown,
                    reason(exc),
                )
            elif self.max_away > 0:
                log.warning(
                    "database %s unreachable (%s): retrying; fetched pages are kept until it "
                    "is back",
                    self.shown,
                    reason(exc),
                )
        away = now - self._since
        if away >= self.max_away:
            self._since = None
            if self.max_away <= 0:
                raise FrontierError(f"cannot read {self.shown}: {reason(exc)}") from exc
            what = "rolling transactions back" if self._rolled_back else "unreachable"
            raise FrontierError(
                f"database {self.shown} {what} for {away:.0f}s: {reason(exc)}"
            ) from exc
        return min(0.5 * 2.0**attempt, _MAX_PAUSE)

    def back(self) -> None:
        """The work went through: say so if the database was away (or rolled it back)."""
        if self._since is not None:
            away = time.monotonic() - self._since
            if self._rolled_back:
                log.warning("database %s: the transaction went through again", self.shown)
            else:
                log.warning("database %s is back after %.0fs", self.shown, away)
            self._since = None


def _options(read_only: bool) -> dict[str, Any]:
    options: dict[str, Any] = {"autocommit": True, "connect_timeout": CONNECT_TIMEOUT}
    if read_only:  # the dashboard: under MVCC its reads never block a crawl's writes
        options["options"] = "-c default_transaction_read_only=on"
    return options


def connect(url: str, read_only: bool = False) -> SyncConn:
    """One connection a store holds for its life (a search's cursors, db copy's snapshot, the
    heartbeat thread's); FrontierError naming the server when it cannot be reached."""
    try:
        return psycopg.connect(url, **_options(read_only))
    except psycopg.Error as exc:
        raise FrontierError(
            f"cannot open PostgreSQL database {shown_location(url)}: {reason(exc)}"
        ) from exc


def migrate_database(url: str) -> int:
    """Bring the schema up to date (every migration under an advisory lock, so stores opening
    at once apply each step once); returns the version in force."""
    with connect(url) as conn:
        return _migrate(conn, shown_location(url))


def _migrate(conn: SyncConn, shown: str) -> int:
    try:
        return migrate(conn)
    except psycopg.Error as exc:
        raise FrontierError(f"cannot open PostgreSQL database {shown}: {reason(exc)}") from exc


# psycopg.pool logs each failed reconnection of a pool (every few seconds while the database is
# away) and each connection it discards: for our pools the Outage's two lines say it, so their
# records are dropped; other pools of the process (a host application's) keep theirs.
_POOL_PREFIX = "litecrawl-"
_pool_numbers = itertools.count(1)


class _OurConn(psycopg.Connection[Any]):
    """A connection of one of our sync pools (psycopg.pool's records about it are dropped)."""


class _OurAsyncConn(psycopg.AsyncConnection[Any]):
    """A connection of one of our async pools."""


def _ours(value: object) -> bool:
    if isinstance(value, str):
        return value.startswith(_POOL_PREFIX)
    return isinstance(value, _OurConn | _OurAsyncConn)


class _OurPoolsQuiet(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not any(_ours(arg) for arg in args)


_QUIET = _OurPoolsQuiet()


def _pool_name() -> str:
    logger = logging.getLogger("psycopg.pool")
    if _QUIET not in logger.filters:
        logger.addFilter(_QUIET)
    return f"{_POOL_PREFIX}{next(_pool_numbers)}"


class Database:
    """The async pool (the frontier): every piece of work retried while the database is away."""

    def __init__(self, url: str, pool_size: int = 4) -> None:
        self.url = url
        self.shown = shown_location(url)
        self._pool_size = pool_size
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._outage = Outage(self.shown)

    async def open(self) -> None:
        """Migrate and connect; FrontierError naming the server and the error when it cannot
        be reached (no retry at start-up: a wrong URL should fail at once)."""
        await asyncio.to_thread(migrate_database, self.url)
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self._pool_size,
            kwargs=_options(False),
            connection_class=_OurAsyncConn,
            name=_pool_name(),
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
        attempt = 0
        while True:
            try:
                async with self._pool.connection() as conn:
                    if not transaction:
                        result = await work(conn)
                    else:
                        async with conn.transaction():
                            result = await work(conn)
            except psycopg.OperationalError as exc:
                await asyncio.sleep(self._outage.pause(exc, attempt))
                attempt += 1
                continue
            except psycopg.Error as exc:
                raise FrontierError(f"{self.shown}: {reason(exc)}") from exc
            self._outage.back()
            return result


class SyncDatabase:
    """The sync pool (the site store, the dashboard), safe from any thread, with the same
    retry policy; ``max_away=0``: fail at once instead (a dashboard page)."""

    def __init__(
        self, url: str, pool_size: int = 2, read_only: bool = False, max_away: float = MAX_AWAY
    ) -> None:
        self.url = url
        self.shown = shown_location(url)
        self._pool_size = pool_size
        self._read_only = read_only
        self._pool: ConnectionPool[SyncConn] | None = None
        self._outage = Outage(self.shown, max_away)

    def open(self, migrate: bool = True) -> None:
        """Migrate (unless ``migrate`` is False: a reader never changes the database) and
        connect; FrontierError naming the server when it cannot be reached (no retry at
        start-up: a wrong URL should fail at once)."""
        # a first connection fails at once with the server's reason (a pool would retry it)
        with connect(self.url, self._read_only) as first:
            if migrate:
                _migrate(first, self.shown)
        pool: ConnectionPool[SyncConn] = ConnectionPool(
            self.url,
            min_size=1,
            max_size=self._pool_size,
            timeout=CONNECT_TIMEOUT,
            kwargs=_options(self._read_only),
            connection_class=_OurConn,
            name=_pool_name(),
            open=False,
        )
        try:
            pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except psycopg.Error as exc:  # PoolTimeout among them
            pool.close()
            raise FrontierError(
                f"cannot open PostgreSQL database {self.shown}: {reason(exc)}"
            ) from exc
        self._pool = pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def transaction(self, work: Callable[[SyncConn], T]) -> T:
        def run(conn: SyncConn) -> T:
            with conn.transaction():
                return work(conn)

        return self.read(run)

    def read(self, work: Callable[[SyncConn], T]) -> T:
        if self._pool is None:
            raise FrontierError(f"{self.shown}: the database is not open")
        attempt = 0
        while True:
            try:
                with self._pool.connection() as conn:
                    result = work(conn)
            except psycopg.OperationalError as exc:
                time.sleep(self._outage.pause(exc, attempt))
                attempt += 1
                continue
            except psycopg.Error as exc:
                raise FrontierError(f"{self.shown}: {reason(exc)}") from exc
            self._outage.back()
            return result
