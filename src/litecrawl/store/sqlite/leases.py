"""Leases in SQLite: worker rows, heartbeats, and the recovery of claims that lost their worker.

Plain functions on a connection, called inside :class:`SQLiteFrontier`'s
transactions; the statements are portable SQL so the PostgreSQL backend can share their shape.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from litecrawl.schedule import Schedule
from litecrawl.store import leases_sql as shared
from litecrawl.store.dialect import SQLITE
from litecrawl.store.leases_sql import Recovered
from litecrawl.store.states import RELEASED_STATE, PageState
from litecrawl.store.workers import CLAIM_TIMEOUT, WORKERS, WorkerIdentity, WorkerRecord

__all__ = [
    "beat",
    "claims_older_than",
    "insert_worker",
    "read_workers",
    "recover_lost",
    "remove_worker",
    "reset_claims",
]


def insert_worker(
    conn: sqlite3.Connection,
    identity: WorkerIdentity,
    started_at: float,
    now: float,
    worker_id: int | None = None,
) -> int:
    cur = conn.execute(
        "INSERT INTO workers (id, hostname, pid, pid_scope, proc_start, command, started_at,"
        " heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        shared.worker_row(identity, started_at, now, worker_id),
    )
    return int(worker_id if worker_id is not None else cur.lastrowid or 0)


def beat(
    conn: sqlite3.Connection,
    worker_id: int,
    identity: WorkerIdentity,
    started_at: float,
    now: float,
    pages: int | None = None,
) -> bool:
    """Renew the lease; False if the row was gone (then it is put back under the same id)."""
    cur = conn.execute(shared.BEAT, shared.beat_params(worker_id, identity, now, pages))
    if cur.rowcount:
        return True
    insert_worker(conn, identity, started_at, now, worker_id)
    return False


def remove_worker(conn: sqlite3.Connection, worker_id: int) -> int:
    """Clean exit: claims still held go back unprocessed (due as before), then the row goes."""
    cur = conn.execute(
        "UPDATE pages SET processing_time = NULL, worker_id = NULL, "
        f"state = {RELEASED_STATE} WHERE worker_id = ?",
        (worker_id,),
    )
    conn.execute("DELETE FROM workers WHERE id = ?", (worker_id,))
    conn.execute("DELETE FROM host_leases WHERE worker_id = ?", (worker_id,))
    return cur.rowcount


def read_workers(conn: sqlite3.Connection) -> list[WorkerRecord]:
    rows = conn.execute(WORKERS).fetchall()
    return [WorkerRecord.from_row(r) for r in rows]


def recover_lost(
    conn: sqlite3.Connection, is_dead: Callable[[WorkerRecord], bool], now: int
) -> int:
    """Remove dead workers; recover the claims naming a worker that has no row any more, as
    :mod:`litecrawl.frontier.lost` says."""
    dead = {w.id: w.pages for w in read_workers(conn) if is_dead(w)}
    conn.executemany("DELETE FROM workers WHERE id = ?", [(w,) for w in dead])
    # their host leases go with them: the hosts' slots are free for the others
    conn.execute("DELETE FROM host_leases WHERE worker_id NOT IN (SELECT id FROM workers)")
    resets = shared.resets_of(conn.execute(shared.orphaned_claims(SQLITE)).fetchall(), dead, now)
    conn.executemany(
        "UPDATE pages SET processing_time = NULL, worker_id = NULL, lost = ?, lost_alone = ?, "
        "state = ?, next_crawl_time = coalesce(?, next_crawl_time), error = coalesce(?, error) "
        "WHERE norm_url = ?",
        [(r.lost, r.lost_alone, r.state, r.next_crawl_time, r.error, r.url) for r in resets],
    )
    return len(resets)


def claims_older_than(conn: sqlite3.Connection, older_than: int) -> list[Recovered]:
    """docs/python-api.md, step 2: claims stamped before ``older_than``, whoever holds them."""
    return conn.execute(shared.recoverable(SQLITE), (older_than,)).fetchall()


def reset_claims(
    conn: sqlite3.Connection,
    rows: list[Recovered],
    now: int,
    schedule: Schedule,
    retry_uncrawled: bool,
) -> int:
    """Recovered claims rescheduled (:func:`litecrawl.store.leases_sql.split_recovered`)."""
    again, stale = shared.split_recovered(rows, now, schedule, retry_uncrawled)
    conn.executemany(
        "UPDATE pages SET processing_time = NULL, worker_id = NULL, error = ?, "
        f"state = {PageState.NOT_CRAWLED:d} "
        "WHERE norm_url = ?",
        [(CLAIM_TIMEOUT, url) for url in again],
    )
    conn.executemany(
        "UPDATE pages SET processing_time = NULL, worker_id = NULL, last_crawl_time = ?, "
        f"next_crawl_time = ?, error = ?, state = {PageState.ERROR:d} WHERE norm_url = ?",
        [(now, nxt, CLAIM_TIMEOUT, url) for url, nxt in stale],
    )
    return len(rows)
