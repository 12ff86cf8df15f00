"""Leases on PostgreSQL: the SQLite store's ``leases`` in PostgreSQL's dialect (arrays instead
of ``executemany``); called inside :class:`PostgresFrontier`'s transactions, except ``beat``,
which runs on the heartbeat thread with its own synchronous connection."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from litecrawl.schedule import Schedule
from litecrawl.store import leases_sql as shared
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.leases_sql import Recovered
from litecrawl.store.states import PageState
from litecrawl.store.workers import CLAIM_TIMEOUT, WORKERS, WorkerIdentity, WorkerRecord

__all__ = [
    "INSERT_WORKER",
    "beat",
    "claims_older_than",
    "read_workers",
    "recover_lost",
    "reset_claims",
]

INSERT_WORKER = (
    "INSERT INTO workers (id, hostname, pid, pid_scope, proc_start, command, started_at,"
    " heartbeat_at) VALUES (coalesce(%s, nextval(pg_get_serial_sequence('workers', 'id'))),"
    " %s, %s, %s, %s, %s, %s, %s) RETURNING id"
)


def beat(
    conn: psycopg.Connection[Any],
    worker_id: int,
    identity: WorkerIdentity,
    started_at: float,
    now: float,
    pages: int | None = None,
) -> bool:
    """Renew the lease; False if the row was gone (then it is put back under the same id)."""
    with conn.transaction():
        cur = conn.execute(
            POSTGRES.sql(shared.BEAT), shared.beat_params(worker_id, identity, now, pages)
        )
        if cur.rowcount:
            return True
        conn.execute(INSERT_WORKER, shared.worker_row(identity, started_at, now, worker_id))
        return False


async def read_workers(conn: psycopg.AsyncConnection[Any]) -> list[WorkerRecord]:
    cur = await conn.execute(WORKERS)
    return [WorkerRecord.from_row(r) for r in await cur.fetchall()]


async def recover_lost(
    conn: psycopg.AsyncConnection[Any], is_dead: Callable[[WorkerRecord], bool], now: int
) -> int:
    """Remove dead workers; recover the claims naming a worker that has no row any more, as
    :mod:`litecrawl.frontier.lost` says."""
    dead = {w.id: w.pages for w in await read_workers(conn) if is_dead(w)}
    if dead:
        await conn.execute("DELETE FROM workers WHERE id = ANY(%s)", (list(dead),))
    # their host leases go with them: the hosts' slots are free for the others
    await conn.execute("DELETE FROM host_leases WHERE worker_id NOT IN (SELECT id FROM workers)")
    cur = await conn.execute(shared.orphaned_claims(POSTGRES))
    resets = shared.resets_of(await cur.fetchall(), dead, now)
    if resets:
        await conn.execute(
            "UPDATE pages SET processing_time = NULL, worker_id = NULL, lost = s.lost, "
            "lost_alone = s.alone, state = s.state, "
            "next_crawl_time = coalesce(s.next, pages.next_crawl_time), "
            "error = coalesce(s.error, pages.error) "
            "FROM unnest(%s::text[], %s::int[], %s::int[], %s::int[], %s::bigint[], %s::text[]) "
            "AS s(url, lost, alone, state, next, error) WHERE norm_url = s.url",
            (
                [r.url for r in resets],
                [r.lost for r in resets],
                [r.lost_alone for r in resets],
                [r.state for r in resets],
                [r.next_crawl_time for r in resets],
                [r.error for r in resets],
            ),
        )
    return len(resets)


async def claims_older_than(conn: psycopg.AsyncConnection[Any], older_than: int) -> list[Recovered]:
    """docs/python-api.md, step 2: claims stamped before ``older_than``, whoever holds them."""
    cur = await conn.execute(shared.recoverable(POSTGRES), (older_than,))
    return [(u, last, nxt, error) for u, last, nxt, error in await cur.fetchall()]


async def reset_claims(
    conn: psycopg.AsyncConnection[Any],
    rows: Sequence[Recovered],
    now: int,
    schedule: Schedule,
    retry_uncrawled: bool,
) -> int:
    """Recovered claims rescheduled (:func:`litecrawl.store.leases_sql.split_recovered`)."""
    again, stale = shared.split_recovered(rows, now, schedule, retry_uncrawled)
    if again:
        await conn.execute(
            "UPDATE pages SET processing_time = NULL, worker_id = NULL, error = %s, "
            f"state = {PageState.NOT_CRAWLED:d} "
            "WHERE norm_url = ANY(%s)",
            (CLAIM_TIMEOUT, again),
        )
    if stale:
        await conn.execute(
            "UPDATE pages SET processing_time = NULL, worker_id = NULL, last_crawl_time = %s, "
            f"next_crawl_time = s.next, error = %s, state = {PageState.ERROR:d} "
            "FROM unnest(%s::text[], %s::bigint[]) AS s(url, next) WHERE norm_url = s.url",
            (now, CLAIM_TIMEOUT, [u for u, _ in stale], [n for _, n in stale]),
        )
    return len(rows)
