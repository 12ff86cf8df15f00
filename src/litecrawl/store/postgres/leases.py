"""Leases on PostgreSQL: the SQLite store's ``leases`` in PostgreSQL's dialect (arrays instead
of ``executemany``); called inside :class:`PostgresFrontier`'s transactions, except ``beat``,
which runs on the heartbeat thread with its own synchronous connection."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from litecrawl.frontier.lost import LostClaim, reset_lost
from litecrawl.schedule import Schedule
from litecrawl.store.states import PageState
from litecrawl.store.workers import CLAIM_TIMEOUT, WORKERS, WorkerIdentity, WorkerRecord

__all__ = [
    "INSERT_WORKER",
    "beat",
    "claims_older_than",
    "insert_worker_params",
    "read_workers",
    "recover_lost",
    "reset_claims",
]

_RECOVERABLE = "SELECT norm_url, last_crawl_time, next_crawl_time, error FROM pages WHERE "
INSERT_WORKER = (
    "INSERT INTO workers (id, hostname, pid, pid_scope, proc_start, command, started_at,"
    " heartbeat_at) VALUES (coalesce(%s, nextval(pg_get_serial_sequence('workers', 'id'))),"
    " %s, %s, %s, %s, %s, %s, %s) RETURNING id"
)

_Claim = tuple[str, int | None, int | None, str | None]  # url, last and next crawl, error


def insert_worker_params(
    identity: WorkerIdentity, started_at: float, now: float, worker_id: int | None = None
) -> tuple[Any, ...]:
    return (
        worker_id,
        identity.hostname,
        identity.pid,
        identity.pid_scope,
        identity.proc_start,
        identity.command,
        started_at,
        now,
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
            "UPDATE workers SET heartbeat_at = %s, pages = coalesce(%s, pages) "
            "WHERE id = %s AND hostname = %s AND pid = %s",
            (now, pages, worker_id, identity.hostname, identity.pid),
        )
        if cur.rowcount:
            return True
        conn.execute(INSERT_WORKER, insert_worker_params(identity, started_at, now, worker_id))
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
    cur = await conn.execute(
        "SELECT norm_url, worker_id, lost, lost_alone, last_crawl_time IS NOT NULL FROM pages "
        "WHERE worker_id IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.id = pages.worker_id) "
        "FOR UPDATE SKIP LOCKED"
    )
    rows = await cur.fetchall()
    claims = [LostClaim(u, w, n, a, bool(c), dead.get(w, 0)) for u, w, n, a, c in rows]
    resets = reset_lost(claims, now)
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


async def claims_older_than(conn: psycopg.AsyncConnection[Any], older_than: int) -> list[_Claim]:
    """docs/python-api.md, step 2: claims stamped before ``older_than``, whoever holds them."""
    cur = await conn.execute(
        _RECOVERABLE + "processing_time IS NOT NULL AND processing_time < %s "
        "FOR UPDATE SKIP LOCKED",
        (older_than,),
    )
    return [tuple(r) for r in await cur.fetchall()]


async def reset_claims(
    conn: psycopg.AsyncConnection[Any],
    rows: Sequence[_Claim],
    now: int,
    schedule: Schedule,
    retry_uncrawled: bool,
) -> int:
    """Step 2 of docs/python-api.md for recovered claims (as SQLite's ``reset_claims``)."""
    again = [
        url
        for url, last, _, error in rows
        if retry_uncrawled and last is None and error != CLAIM_TIMEOUT
    ]
    if again:
        await conn.execute(
            "UPDATE pages SET processing_time = NULL, worker_id = NULL, error = %s, "
            f"state = {PageState.NOT_CRAWLED:d} "
            "WHERE norm_url = ANY(%s)",
            (CLAIM_TIMEOUT, again),
        )
    retried = set(again)
    stale = [(url, now + schedule.next_interval(last, nxt, False)) for url, last, nxt, _ in rows]
    stale = [(url, nxt) for url, nxt in stale if url not in retried]
    if stale:
        await conn.execute(
            "UPDATE pages SET processing_time = NULL, worker_id = NULL, last_crawl_time = %s, "
            f"next_crawl_time = s.next, error = %s, state = {PageState.ERROR:d} "
            "FROM unnest(%s::text[], %s::bigint[]) AS s(url, next) WHERE norm_url = s.url",
            (now, CLAIM_TIMEOUT, [u for u, _ in stale], [n for _, n in stale]),
        )
    return len(rows)
