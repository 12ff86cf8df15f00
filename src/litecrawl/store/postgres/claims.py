"""Claims on PostgreSQL: due pages stamped for this worker in one statement (``FOR UPDATE SKIP
LOCKED`` on ``idx_pages_claim``), and, for claims that know hosts
(:class:`~litecrawl.store.queue.HostRules`), the host leases taken with them.

Claims that know hosts run one at a time across the database (a transaction-level advisory
lock): what a claim reads of the other workers' leases then cannot change before it has taken
its own, so the workers' shares of a host never add up to more than its slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from litecrawl.frontier.lost import claim_terms
from litecrawl.store import host_shares
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.postgres.connection import Conn
from litecrawl.store.queue import Claim, ClaimedPage, ClaimFocus
from litecrawl.store.states import PageState

__all__ = ["CLAIM_COLUMNS", "claim_pages", "next_claimable", "release_hosts"]

CLAIM_COLUMNS = (
    "norm_url, last_crawl_time, next_crawl_time, content_hash, depth, source, etag, last_modified,"
    " kind, lastmod, score, meta, change_history, recrawl_interval"
)
_ORDER = "next_crawl_time NULLS FIRST, depth, score DESC"
_ORDER_BY_SCORE = "score DESC, next_crawl_time NULLS FIRST, depth"
_DUE = "processing_time IS NULL AND (next_crawl_time IS NULL OR next_crawl_time <= %(now)s)"
_CLAIMS_LOCK = 0x6C6974656372  # pg_advisory_xact_lock key of claims that take host leases
# Hosts no claim that knows hosts takes: full here, held back by the shared pacing (a
# Retry-After, or starts reserved beyond the horizon), or whose slots other workers hold.
_NOT_HELD_BACK = """
  AND host NOT IN (SELECT host FROM hosts
                   WHERE slowed_until > %(now)s OR next_start > %(horizon)s)"""
_HOSTS_ALLOWED = (
    """
  AND host <> ALL(%(full)s)"""
    + _NOT_HELD_BACK
    + """
  AND host NOT IN (SELECT host FROM host_leases WHERE worker_id <> %(worker)s
                   GROUP BY host HAVING sum(slots) >= %(per_host)s)"""
)
# The claim and this worker's leases in one statement (store/host_shares.py says what each
# part does; SQLite runs them as statements in turn): the hosts it asks a part of (``wanted``:
# only when its last claim brought nothing), its leases of hosts it holds nothing of, takes
# nothing of now and asks nothing of dropped (``unheld``), those it holds or takes pages of set
# to its part (``shares``; written by ``reshared`` only where that changes them), a new lease
# of each other host it takes pages of (``leased``), a lease of none of each host asked for
# (``asked``); what it may now start of each host read from ``shares``, their RETURNING and
# the asks it still holds (``waiting``). A claim reads only the
# other workers' leases, so none of these changes what it takes; their rows are disjoint (a
# statement changes a row once). Two statements a claim instead of five or six (with 4
# workers ~0.5 a page; bench/README.md, issue 29 on PostgreSQL, session 9).
_MINE = POSTGRES.sql(host_shares.part(POSTGRES, "host_leases.host"))
# A lease held, reshared: the other workers' leases of its host counted once (a join), not
# looked up by each of the three formulas, and a lease whose slots stay the same not written
# (most claims change none: a claim read ~160 of its ~420 blocks setting 13 leases to what
# they were; bench/README.md, "Issue 29: PostgreSQL (session 11)").
_COUNTED = ("others.workers", "others.taken")
_RESHARED = POSTGRES.sql(host_shares.reshared(POSTGRES, "l.host", _COUNTED))
_PART = POSTGRES.sql(host_shares.part(POSTGRES, "l.host", _COUNTED))
_IN_USE = "(SELECT key FROM json_each_text(%(in_use)s::json))"
_HELD = "(SELECT host FROM host_leases WHERE worker_id = %(worker)s)"
_CLAIM_WITH_LEASES = f"""
WITH claimed AS ({{claim}}),
wanted AS ({{wanted}}),
unheld AS (
  DELETE FROM host_leases WHERE worker_id = %(worker)s AND host NOT IN {_IN_USE}
    AND host NOT IN (SELECT host FROM claimed) AND host NOT IN (SELECT host FROM wanted)
),
shares AS (
  SELECT l.host, l.slots AS held, {_RESHARED} AS slots, {_PART} AS part
  FROM host_leases l CROSS JOIN LATERAL (
    SELECT count(*) AS workers, coalesce(sum(o.slots), 0) AS taken FROM host_leases o
    WHERE o.host = l.host AND o.worker_id <> %(worker)s) AS others
  WHERE l.worker_id = %(worker)s
    AND (l.host IN {_IN_USE} OR l.host IN (SELECT host FROM claimed))
),
reshared AS (
  UPDATE host_leases SET slots = s.slots FROM shares s
  WHERE host_leases.worker_id = %(worker)s AND host_leases.host = s.host AND s.slots <> s.held
),
leased AS (
  INSERT INTO host_leases (host, worker_id, slots)
  SELECT h, %(worker)s, {POSTGRES.sql(host_shares.new_lease(POSTGRES, "h"))}
  FROM (SELECT DISTINCT host FROM claimed) AS c(h) WHERE h NOT IN {_HELD} ORDER BY h
  ON CONFLICT (host, worker_id) DO NOTHING
  RETURNING host, least(slots, {_MINE})
),
asked AS (
  INSERT INTO host_leases (host, worker_id, slots)
  SELECT host, %(worker)s, 0 FROM wanted WHERE host NOT IN {_HELD}
  ON CONFLICT (host, worker_id) DO NOTHING
  RETURNING host, slots
),
waiting AS (
  SELECT host, 0 FROM host_leases WHERE worker_id = %(worker)s AND host IN (SELECT host FROM wanted)
    AND host NOT IN {_IN_USE} AND host NOT IN (SELECT host FROM claimed)
)
SELECT c.*, CASE WHEN row_number() OVER () = 1 THEN m.mine END FROM
  (SELECT coalesce(json_object_agg(host, n), '{{{{}}}}') AS mine FROM
    (SELECT host, least(slots, part) FROM shares UNION ALL SELECT * FROM leased
     UNION ALL SELECT * FROM asked
     UNION ALL SELECT * FROM waiting) AS l(host, n)) AS m
  LEFT JOIN claimed c ON true
"""


def _nulls_first(value: int | None) -> tuple[bool, int]:
    return (value is not None, value or 0)


async def claim_pages(conn: Conn, claim: Claim) -> tuple[list[ClaimedPage], dict[str, int]]:
    """Claim up to ``limit`` due pages, in claim order (one statement; with ``hosts`` a
    transaction of its own, committed in the same round trip); with ``hosts`` also the slots
    this worker now leases of every host it holds a lease of."""
    worker_id, limit, now, by_score = claim.worker_id, claim.limit, claim.now, claim.by_score
    partition, focus, hosts, kind = claim.partition, claim.focus, claim.hosts, claim.kind
    order = _ORDER_BY_SCORE if by_score else _ORDER
    params: dict[str, Any] = {"now": now, "limit": limit, "worker": worker_id}
    lost, order = claim_terms(kind, order, params, hosts is not None)
    narrow = _narrow(params, partition, focus) + lost
    if hosts is None:
        # SKIP LOCKED: rows another worker is claiming this instant are passed over, not
        # waited for; idx_pages_claim serves the order, so the cost stays flat as it grows
        chosen = f"""SELECT norm_url FROM pages WHERE {_DUE} {narrow}
            ORDER BY {order} LIMIT %(limit)s FOR UPDATE SKIP LOCKED"""
        cur = await conn.execute(_claim_statement(chosen).encode(), params)
        return _in_order(await cur.fetchall(), by_score), {}
    room = dict(hosts.room)
    params.update(
        host_shares.share_params(hosts),
        full=[h for h, n in room.items() if n <= 0],
        room_hosts=list(room),
        room_n=list(room.values()),
        new_room=hosts.new_host_room,
        horizon=now + hosts.horizon,
        # a few pages of each host more than can be taken: the window's first ones per host
        # then fill the claim unless most due pages belong to one or two hosts
        scan=limit * 4,
    )
    # The window is read without locks; only the pages taken are locked (SKIP LOCKED: one a
    # claim that knows no hosts is taking, or a finalize is writing, is passed over; one
    # claimed since this statement began is seen claimed and left). Locking the whole window
    # wrote four rows a page taken (bench/README.md, issue 29 on PostgreSQL, session 9).
    window = f"""SELECT norm_url FROM (
          SELECT c.norm_url, c.next_crawl_time, c.depth, c.score,
            row_number() OVER (PARTITION BY c.host ORDER BY {order}) AS nth,
            coalesce(r.room, %(new_room)s) AS room
          FROM (SELECT norm_url, host, next_crawl_time, depth, score FROM pages
                WHERE {_DUE} {narrow} {_HOSTS_ALLOWED}
                ORDER BY {order} LIMIT %(scan)s) c
          LEFT JOIN unnest(%(room_hosts)s::text[], %(room_n)s::int[]) AS r(host, room)
            ON r.host = c.host) w
        WHERE nth <= room ORDER BY {order} LIMIT %(limit)s"""
    chosen = f"""SELECT norm_url FROM pages WHERE norm_url IN ({window})
        AND {_DUE} FOR UPDATE SKIP LOCKED"""
    wanted = "SELECT NULL::text AS host WHERE false"  # asks nothing
    if hosts.wants_more:
        window = f"""SELECT host FROM (SELECT host FROM pages WHERE {_DUE} {narrow}
            {_NOT_HELD_BACK} ORDER BY {order} LIMIT %(scan)s) AS next_due"""
        wanted = host_shares.wanted(POSTGRES, window)
    statement = _CLAIM_WITH_LEASES.format(claim=_claim_statement(chosen), wanted=wanted)
    # The lock and the claim sent together, the transaction opened and committed with them: the
    # lock is held while the server works, not while this worker's process waits for a core
    # between statements (with 4 workers on 2 cores, claims waited 40 s in all for the lock
    # when each statement was a round trip, and 18-29 s over 430-920 claims when the commit
    # was one).
    async with conn.pipeline(), conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CLAIMS_LOCK,))
        # planned for its own values each time (~1 ms): once prepared (psycopg's fifth run on a
        # connection) the server switched it to its generic plan, which cannot tell how many
        # pages are due nor how many the window takes, and read every page and sorted them (7 ms
        # and ~800 blocks a claim against 1.2 ms and ~400; bench/README.md, "Issue 29:
        # PostgreSQL (session 10)")
        await conn.execute(b"SET LOCAL plan_cache_mode = force_custom_plan")
        cur = await conn.execute(statement.encode(), params)
    rows = await cur.fetchall()
    mine: dict[str, int] = rows[0][-1] if rows else {}
    return _in_order([row[:-1] for row in rows if row[0] is not None], by_score), mine


def _claim_statement(chosen: str) -> str:
    return f"""UPDATE pages SET processing_time = %(now)s, state = {PageState.QUEUED:d},
        worker_id = %(worker)s
        WHERE norm_url IN ({chosen}) RETURNING {CLAIM_COLUMNS}, host"""


def _in_order(rows: Sequence[Sequence[Any]], by_score: bool) -> list[ClaimedPage]:
    """Claimed pages in claim order (RETURNING does not keep the subquery's)."""
    pages = [ClaimedPage(*row[:-1]) for row in rows]
    if by_score:
        pages.sort(key=lambda p: (-p.score, _nulls_first(p.next_crawl_time), p.depth))
    else:
        pages.sort(key=lambda p: (_nulls_first(p.next_crawl_time), p.depth, -p.score))
    return pages


async def next_claimable(
    conn: Conn,
    now: float,
    horizon: float,
    partition: tuple[int, int] | None,
    focus: ClaimFocus | None,
) -> float | None:
    params: dict[str, Any] = {"now": now, "horizon": now + horizon, "ahead": horizon}
    narrow = _narrow(params, partition, focus)
    held_back = "SELECT host FROM hosts WHERE slowed_until > %(now)s OR next_start > %(horizon)s"
    cur = await conn.execute(  # the first entry of idx_pages_claim of a host free now
        "SELECT coalesce(next_crawl_time, 0) FROM pages WHERE processing_time IS NULL "
        f"{narrow} AND host NOT IN ({held_back}) "
        "ORDER BY next_crawl_time NULLS FIRST LIMIT 1".encode(),
        params,
    )
    free = await cur.fetchone()
    # the few hosts held back: each one's first page, once the host is free (idx_pages_host)
    cur = await conn.execute(
        f"""SELECT min(greatest(h.slowed_until, h.next_start - %(ahead)s, f.first))
        FROM hosts h CROSS JOIN LATERAL (
          SELECT min(coalesce(next_crawl_time, 0)) AS first FROM pages
          WHERE host = h.host AND processing_time IS NULL {narrow}) f
        WHERE h.host IN ({held_back}) AND f.first IS NOT NULL""".encode(),
        params,
    )
    later = await cur.fetchone()
    times = [float(t) for t in (free and free[0], later and later[0]) if t is not None]
    return min(times, default=None)


def _narrow(
    params: dict[str, Any], partition: tuple[int, int] | None, focus: ClaimFocus | None
) -> str:
    """The conditions (and their ``params``) of a site crawl's focus and of a partition."""
    narrow = ""
    if focus is not None:
        params["hosts"] = list(focus.hosts)
        narrow = "AND host = ANY(%(hosts)s)"
        if focus.urls is not None:
            params["urls"] = list(focus.urls)
            narrow += " AND norm_url = ANY(%(urls)s)"
    if partition is not None:
        params["k"], params["n"] = partition
        narrow += " AND coalesce(part, 0) %% %(n)s = %(k)s"  # NULL: a row an older version wrote
    return narrow


async def release_hosts(conn: Conn, worker_id: int | None, hosts: Sequence[str]) -> None:
    await conn.execute(
        "DELETE FROM host_leases WHERE worker_id = %s AND host = ANY(%s)",
        (worker_id, list(hosts)),
    )
