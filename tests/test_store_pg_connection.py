"""PostgreSQL connections (store/postgres/connection.py): what is waited out, for how long, and
whose pool messages are dropped. A real server (the shared cluster) or a refused port."""

from __future__ import annotations

import asyncio
import logging
import socket
import time

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from litecrawl.errors import FrontierError
from litecrawl.store.postgres.connection import Conn, Database, Outage, SyncDatabase


def _refused_url() -> str:
    """A URL no server answers: a port this process bound and closed again."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://litecrawl@127.0.0.1:{port}/nowhere"


def _connection_error() -> psycopg.OperationalError:
    try:
        psycopg.connect(_refused_url(), connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        return exc
    raise AssertionError("a server answered on a closed port")


def test_a_cancelled_statement_fails_at_once_instead_of_waiting_for_the_database(
    pg_url: str,
) -> None:
    """A statement timeout (SQLSTATE 57014, class 57 like a server shutting down) is the
    statement's own error: it is raised, not retried as a database that is away."""

    async def go() -> None:
        db = Database(pg_url)
        await db.open()
        try:

            async def slow(conn: Conn) -> None:
                await conn.execute("SET LOCAL statement_timeout = 50")
                await conn.execute("SELECT pg_sleep(5)")

            with pytest.raises(FrontierError, match="statement timeout"):
                await asyncio.wait_for(db.transaction(slow), 30)
        finally:
            await db.close()

    asyncio.run(go())


def test_a_database_away_is_waited_for_a_bounded_time_then_named() -> None:
    error = _connection_error()
    outage = Outage("db.test", max_away=0.3)
    assert outage.pause(error, 0) == 0.5
    assert outage.pause(error, 3) == 4.0
    assert outage.pause(error, 9) == 10.0  # pauses grow to 10 s at the most
    time.sleep(0.35)
    with pytest.raises(FrontierError, match=r"database db\.test unreachable for 0s"):
        outage.pause(error, 4)


def test_a_deadlock_is_run_again_and_not_called_a_database_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # session 12's log said "database ... unreachable (deadlock detected)" and "back after 0s"
    caplog.set_level(logging.INFO)
    outage = Outage("db.test")
    assert outage.pause(psycopg.errors.DeadlockDetected("deadlock detected"), 0) == 0.5
    outage.back()
    said = [r.getMessage() for r in caplog.records if r.name == "litecrawl"]
    assert said == [
        "database db.test rolled a transaction back (deadlock detected): running it again",
        "database db.test: the transaction went through again",
    ]
    caplog.clear()
    outage.pause(_connection_error(), 0)  # a database away after it: named so again
    outage.back()
    said = [r.getMessage() for r in caplog.records if r.name == "litecrawl"]
    assert "unreachable" in said[0] and "is back after" in said[1], said


def test_a_reader_that_must_not_wait_fails_on_the_first_error() -> None:
    with pytest.raises(FrontierError, match=r"cannot read db\.test"):
        Outage("db.test", max_away=0).pause(_connection_error(), 0)


def test_a_connection_the_server_dropped_is_replaced_and_said_once(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The pool's own records about our broken connection are dropped: the outage's two lines
    say it."""
    caplog.set_level(logging.INFO)
    db = SyncDatabase(pg_url)
    db.open()
    try:
        pid = db.read(lambda c: c.info.backend_pid)
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert db.read(lambda c: (c.info.backend_pid, c.execute("SELECT 1").fetchall())) != (
            pid,
            [(1,)],
        )
    finally:
        db.close()
    ours = [r.getMessage() for r in caplog.records if r.name == "litecrawl"]
    assert len(ours) == 2 and "unreachable" in ours[0] and "is back" in ours[1], ours
    assert [r.getMessage() for r in caplog.records if r.name == "psycopg.pool"] == []


def test_the_pools_of_the_application_keep_their_log_records(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A pool of the application litecrawl runs in keeps its records (opening ours silenced the
    psycopg.pool logger for the whole process before)."""
    caplog.set_level(logging.INFO, logger="psycopg.pool")
    ours = SyncDatabase(pg_url)
    ours.open()
    ours.close()
    with pytest.raises(FrontierError, match="cannot open PostgreSQL database"):
        SyncDatabase(_refused_url()).open()  # at once, with the server's reason
    theirs = ConnectionPool(_refused_url(), name="app-pool", min_size=1, open=False)
    theirs.open(wait=False)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(
            "app-pool" in r.getMessage() for r in caplog.records
        ):
            time.sleep(0.05)
    finally:
        theirs.close()
    messages = [r.getMessage() for r in caplog.records if r.name == "psycopg.pool"]
    assert any("error connecting in 'app-pool'" in m for m in messages), messages
