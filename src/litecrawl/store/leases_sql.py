"""Worker leases' statements and decisions, written once for both backends (in SQLite's
spelling, :mod:`litecrawl.store.dialect`); each backend's ``leases.py`` runs them its way
(SQLite row by row, PostgreSQL with arrays)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from litecrawl.frontier.lost import LostClaim, LostReset, reset_lost
from litecrawl.schedule import Schedule
from litecrawl.store.dialect import Dialect
from litecrawl.store.workers import CLAIM_TIMEOUT, WorkerIdentity

__all__ = [
    "BEAT",
    "Recovered",
    "beat_params",
    "orphaned_claims",
    "recoverable",
    "resets_of",
    "split_recovered",
    "worker_row",
]

BEAT = (
    "UPDATE workers SET heartbeat_at = ?, pages = coalesce(?, pages) "
    "WHERE id = ? AND hostname = ? AND pid = ?"
)

Recovered = tuple[str, int | None, int | None, str | None]  # url, last and next crawl, error


def worker_row(
    identity: WorkerIdentity, started_at: float, now: float, worker_id: int | None = None
) -> tuple[Any, ...]:
    """A workers row: id (None: the next one), hostname, pid, pid_scope, proc_start, command,
    started_at, heartbeat_at."""
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


def beat_params(
    worker_id: int, identity: WorkerIdentity, now: float, pages: int | None
) -> tuple[Any, ...]:
    return (now, pages, worker_id, identity.hostname, identity.pid)


def orphaned_claims(dialect: Dialect) -> str:
    """Claims naming a worker that has no row any more (PostgreSQL: locked, passing over rows
    another recovery holds)."""
    return dialect.sql(
        "SELECT norm_url, worker_id, lost, lost_alone, last_crawl_time IS NOT NULL FROM pages "
        "WHERE worker_id IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.id = pages.worker_id)"
        + dialect.skip_locked
    )


def recoverable(dialect: Dialect) -> str:
    """docs/python-api.md, step 2: claims stamped before a time, whoever holds them."""
    return dialect.sql(
        "SELECT norm_url, last_crawl_time, next_crawl_time, error FROM pages "
        "WHERE processing_time IS NOT NULL AND processing_time < ?" + dialect.skip_locked
    )


def resets_of(rows: Sequence[Sequence[Any]], dead: Mapping[int, int], now: int) -> list[LostReset]:
    """What :mod:`litecrawl.frontier.lost` does with :func:`orphaned_claims`' rows; ``dead``:
    the pages each worker just found dead held."""
    claims = [LostClaim(u, w, n, a, bool(c), dead.get(w, 0)) for u, w, n, a, c in rows]
    return reset_lost(claims, now)


def split_recovered(
    rows: Sequence[Recovered], now: int, schedule: Schedule, retry_uncrawled: bool
) -> tuple[list[str], list[tuple[str, int]]]:
    """Step 2 of docs/python-api.md for recovered claims: the pages due again at once (with
    ``retry_uncrawled``, a never-crawled page the first time only), and the others with their
    next crawl time, rescheduled as stale."""
    again = [
        url
        for url, last, _, error in rows
        if retry_uncrawled and last is None and error != CLAIM_TIMEOUT
    ]
    retried = set(again)
    stale = [
        (url, now + schedule.next_interval(last, nxt, False))
        for url, last, nxt, _ in rows
        if url not in retried
    ]
    return again, stale
