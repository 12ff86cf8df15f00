"""Claims on SQLite: due pages stamped for this worker in one statement, and, for claims that
know hosts (:class:`~litecrawl.store.queue.HostRules`), the host leases taken with them.

Every write transaction on SQLite is serialized (``BEGIN IMMEDIATE``), so what one claim reads
of the other workers' leases cannot change before it has taken its own.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from litecrawl.frontier.lost import claim_terms
from litecrawl.store import host_shares
from litecrawl.store.dialect import SQLITE
from litecrawl.store.queue import Claim, ClaimedPage, ClaimFocus
from litecrawl.store.states import PageState

__all__ = ["CLAIM_COLUMNS", "claim_pages", "claim_statement", "next_claimable", "release_hosts"]

CLAIM_COLUMNS = (
    "norm_url, last_crawl_time, next_crawl_time, content_hash, depth, source, etag, last_modified,"
    " kind, lastmod, score, meta, change_history, recrawl_interval"
)
_ORDER = "next_crawl_time, depth, score DESC"  # SQLite sorts NULL first: never crawled first
_ORDER_BY_SCORE = "score DESC, next_crawl_time, depth"
_DUE = "processing_time IS NULL AND (next_crawl_time IS NULL OR next_crawl_time <= :now)"
# Hosts no claim that knows hosts takes: full here, held back by the shared pacing (a
# Retry-After, or starts reserved beyond the horizon), or whose slots other workers hold.
_HELD_BACK = "SELECT host FROM hosts WHERE slowed_until > :now OR next_start > :horizon"
_NOT_HELD_BACK = f"""
  AND host NOT IN ({_HELD_BACK})"""
_HOSTS_ALLOWED = (
    """
  AND host NOT IN (SELECT key FROM json_each(:room) WHERE value <= 0)"""
    + _NOT_HELD_BACK
    + """
  AND host NOT IN (SELECT host FROM host_leases WHERE worker_id <> :worker
                   GROUP BY host HAVING sum(slots) >= :per_host)"""
)
# A new lease takes the worker's part of the host's slots (store/host_shares.py); a lease held
# is kept as the statements before the claim set it.
_TAKE_LEASES = f"""
INSERT INTO host_leases (host, worker_id, slots)
SELECT h.value, :worker, {host_shares.new_lease(SQLITE, "h.value")}
FROM json_each(:hosts) h WHERE true
ON CONFLICT (host, worker_id) DO NOTHING
"""
_SHARES = host_shares.statements(SQLITE)


def claim_statement(claim: Claim) -> tuple[str, dict[str, object]]:
    """The statement that stamps the pages :func:`claim_pages` claims, and its parameters."""
    worker_id, limit, now, by_score = claim.worker_id, claim.limit, claim.now, claim.by_score
    partition, focus, hosts, kind = claim.partition, claim.focus, claim.hosts, claim.kind
    order = _ORDER_BY_SCORE if by_score else _ORDER
    params: dict[str, object] = {"now": now, "limit": limit, "worker": worker_id}
    lost, order = claim_terms(kind, order, params, hosts is not None)
    narrow = _narrow(params, partition, focus) + lost
    # In claim order, the pages are read from idx_pages_claim in order and the scan stops at
    # the limit. Left to itself (no statistics are kept) SQLite read every page not claimed
    # through idx_pages_processing and sorted them: 90 ms a claim with 200k pages known, a
    # quarter of the crawler's time (bench/README.md, issue 33).
    pages = "pages INDEXED BY idx_pages_claim" if order == _ORDER else "pages"
    if hosts is None:
        chosen = f"SELECT rowid FROM {pages} WHERE {_DUE} {narrow} ORDER BY {order} LIMIT :limit"
    else:
        params.update(
            room=json.dumps(dict(hosts.room)),
            new_room=hosts.new_host_room,
            horizon=now + hosts.horizon,
            **host_shares.share_params(hosts),
            # a few pages of each host more than can be taken: the window's first ones per host
            # then fill the claim unless most due pages belong to one or two hosts
            scan=limit * 4,
        )
        chosen = f"""SELECT id FROM (
              SELECT c.id, c.next_crawl_time, c.depth, c.score,
                row_number() OVER (PARTITION BY c.host ORDER BY {order}) AS nth,
                coalesce(r.value, :new_room) AS room
              FROM (SELECT rowid AS id, host, next_crawl_time, depth, score FROM {pages}
                    WHERE {_DUE} {narrow} {_HOSTS_ALLOWED}
                    ORDER BY {order} LIMIT :scan) c
              LEFT JOIN json_each(:room) r ON r.key = c.host)
            WHERE nth <= room ORDER BY {order} LIMIT :limit"""
    update = f"""UPDATE pages SET processing_time = :now, state = {PageState.QUEUED:d},
        worker_id = :worker
        WHERE rowid IN ({chosen})
        RETURNING {CLAIM_COLUMNS}, host"""
    return update, params


def claim_pages(conn: sqlite3.Connection, claim: Claim) -> tuple[list[ClaimedPage], dict[str, int]]:
    """Claim up to ``limit`` due pages (inside the caller's transaction); with ``hosts`` also
    the slots this worker now leases of the claimed pages' hosts."""
    hosts = claim.hosts
    statement, params = claim_statement(claim)
    if hosts is not None:
        conn.execute(_SHARES["unheld"], params)
        conn.execute(_SHARES["reshare"], params)
        if hosts.wants_more:
            conn.execute(host_shares.demand(SQLITE, next_due_hosts(claim)), params)
    rows = conn.execute(statement, params).fetchall()
    pages = [ClaimedPage(*row[:-1]) for row in rows]
    if hosts is None:
        return pages, {}
    if rows:
        claimed = json.dumps(sorted({row[-1] for row in rows}))
        conn.execute(_TAKE_LEASES, {**params, "hosts": claimed})
    mine = conn.execute(_SHARES["mine"], params).fetchall()
    return pages, {host: int(slots) for host, slots in mine}


def next_due_hosts(claim: Claim) -> str:
    """The hosts of the pages this claim would take next if no other worker held a host (the
    hosts it may ask a part of: :func:`litecrawl.store.host_shares.demand`)."""
    order = _ORDER_BY_SCORE if claim.by_score else _ORDER
    lost, order = claim_terms(claim.kind, order, {}, True)
    narrow = _narrow({}, claim.partition, claim.focus) + lost
    pages = "pages INDEXED BY idx_pages_claim" if order == _ORDER else "pages"
    return f"""SELECT host FROM (SELECT host FROM {pages} WHERE {_DUE} {narrow} {_NOT_HELD_BACK}
        ORDER BY {order} LIMIT :scan)"""


def first_free_statement(
    now: float, horizon: float, partition: tuple[int, int] | None, focus: ClaimFocus | None
) -> tuple[str, dict[str, object]]:
    """:func:`next_claimable`'s first look: the first entry of idx_pages_claim of a host free
    now (read in order, as a claim's: see :func:`claim_statement`), and its parameters."""
    params: dict[str, object] = {"now": now, "horizon": now + horizon, "ahead": horizon}
    narrow = _narrow(params, partition, focus)
    statement = (
        "SELECT coalesce(next_crawl_time, 0) FROM pages INDEXED BY idx_pages_claim"
        f" WHERE processing_time IS NULL {narrow} AND host NOT IN ({_HELD_BACK})"
        " ORDER BY next_crawl_time LIMIT 1"
    )
    return statement, params


def next_claimable(
    conn: sqlite3.Connection,
    now: float,
    horizon: float,
    partition: tuple[int, int] | None,
    focus: ClaimFocus | None,
) -> float | None:
    first_free, params = first_free_statement(now, horizon, partition, focus)
    narrow = _narrow({}, partition, focus)
    free = conn.execute(first_free, params).fetchone()
    # the few hosts held back: each one's first page, once the host is free (idx_pages_host;
    # SQLite's max() of a NULL is NULL: a host without pages counts for nothing)
    later = conn.execute(
        f"""SELECT min(max(h.slowed_until, h.next_start - :ahead, (
              SELECT min(coalesce(next_crawl_time, 0)) FROM pages
              WHERE host = h.host AND processing_time IS NULL {narrow})))
        FROM hosts h WHERE h.host IN ({_HELD_BACK})""",
        params,
    ).fetchone()
    times = [float(t) for t in (free and free[0], later and later[0]) if t is not None]
    return min(times, default=None)


def _narrow(
    params: dict[str, object], partition: tuple[int, int] | None, focus: ClaimFocus | None
) -> str:
    """The conditions (and their ``params``) of a site crawl's focus and of a partition."""
    narrow = ""
    if focus is not None:
        params["hosts"] = json.dumps(list(focus.hosts))
        narrow = "AND host IN (SELECT value FROM json_each(:hosts))"
        if focus.urls is not None:
            params["urls"] = json.dumps(list(focus.urls))
            narrow += " AND norm_url IN (SELECT value FROM json_each(:urls))"
    if partition is not None:
        params["k"], params["n"] = partition
        narrow += " AND coalesce(part, 0) % :n = :k"  # NULL: a row an older version wrote
    return narrow


def release_hosts(conn: sqlite3.Connection, worker_id: int | None, hosts: Sequence[str]) -> None:
    conn.execute(
        "DELETE FROM host_leases WHERE worker_id = ? AND host IN (SELECT value FROM json_each(?))",
        (worker_id, json.dumps(list(hosts))),
    )
