"""The frontier at a glance on PostgreSQL: the SQLite store's ``summary`` in PostgreSQL's
dialect (``count(*) FILTER (WHERE ...)`` where SQLite sums booleans), written once as a plan
(:mod:`litecrawl.store.plans`) the frontier runs on its async pool and the dashboard on its
sync one."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from litecrawl.frontier.lost import PARK_AFTER
from litecrawl.store.plans import Plan, Rows, arun, run
from litecrawl.store.runs import ErrorSummary, FrontierSummary, HostSummary, RunSummary
from litecrawl.store.sql import CHANGE_BANDS, change_bands
from litecrawl.store.states import STATE_NAMES
from litecrawl.store.strategies import PARKED
from litecrawl.store.workers import WORKERS, WorkerRecord

__all__ = ["read_partitions", "read_summary", "read_summary_sync"]

_RUNS = 10
_DUE = "processing_time IS NULL AND (next_crawl_time IS NULL OR next_crawl_time <= %(now)s)"


async def read_summary(
    conn: psycopg.AsyncConnection[Any], now: int, hosts: int | None = 10
) -> FrontierSummary:
    """The summary as of ``now`` (epoch seconds); ``hosts`` top hosts (None: all)."""

    async def rows(sql: str, params: Any) -> Rows:
        cur = await conn.execute(sql.encode(), params)
        return await cur.fetchall()

    return await arun(_summary(now, hosts), rows)


def read_summary_sync(
    conn: psycopg.Connection[Any], now: int, hosts: int | None = 10
) -> FrontierSummary:
    """The same on a blocking connection (the dashboard's threads)."""
    return run(_summary(now, hosts), lambda sql, p: conn.execute(sql.encode(), p).fetchall())


def _summary(now: int, hosts: int | None) -> Plan[FrontierSummary]:
    p = {"now": now, "parked": PARKED}
    states: dict[int, int] = dict((yield "SELECT state, count(*) FROM pages GROUP BY state", None))
    kinds: dict[str, int] = dict((yield "SELECT kind, count(*) FROM pages GROUP BY kind", None))
    ((due, claimed, n_hosts, soonest),) = yield (
        f"SELECT count(*) FILTER (WHERE {_DUE}), "
        "count(*) FILTER (WHERE processing_time IS NOT NULL), count(DISTINCT host), "
        # a strategy's known-but-not-queued URLs are never due
        "min(next_crawl_time) FILTER (WHERE processing_time IS NULL "
        "AND next_crawl_time < %(parked)s) FROM pages",
        p,
    )
    errors = [
        ErrorSummary(category, pages, sample)
        for category, pages, sample in (
            yield (
                "SELECT error, count(*), min(norm_url) FROM pages WHERE error IS NOT NULL "
                "GROUP BY error ORDER BY count(*) DESC, error",
                None,
            )
        )
    ]
    ((parked, parked_next, suspects),) = yield (  # idx_pages_lost
        "SELECT count(*) FILTER (WHERE lost_alone >= %(p)s), "
        "min(next_crawl_time) FILTER (WHERE lost_alone >= %(p)s), "
        "count(*) FILTER (WHERE lost_alone < %(p)s) FROM pages "
        "WHERE lost > 0 AND processing_time IS NULL",
        {"p": PARK_AFTER},
    )
    runs = yield from _runs()
    top_hosts = yield from _hosts(now, hosts)
    workers = [WorkerRecord.from_row(r) for r in (yield WORKERS, None)]
    ((*bands,),) = yield CHANGE_BANDS, None
    return FrontierSummary(
        by_state={STATE_NAMES.get(k, str(k)): v for k, v in states.items()},
        by_kind=kinds,
        due_now=due,
        claimed=claimed,
        hosts=n_hosts,
        errors=errors,
        next_due=now if due else soonest,
        runs=runs,
        top_hosts=top_hosts,
        workers=workers,
        parked=parked,
        parked_next=parked_next,
        suspects=suspects,
        changes=change_bands(tuple(bands)),
    )


def _hosts(now: int, limit: int | None) -> Plan[list[HostSummary]]:
    if limit == 0:
        return []
    rows = yield (
        f"""SELECT p.host, p.pages, p.crawled, p.errors, p.due, p.claimed,
                  h.slowed_until, h.crawl_delay, p.avg_response_ms, h.next_start
        FROM (SELECT host, count(*) AS pages,
                     count(*) FILTER (WHERE last_crawl_time IS NOT NULL AND error IS NULL)
                       AS crawled,
                     count(*) FILTER (WHERE error IS NOT NULL) AS errors,
                     count(*) FILTER (WHERE {_DUE}) AS due,
                     count(*) FILTER (WHERE processing_time IS NOT NULL) AS claimed,
                     avg(response_ms)::float8 AS avg_response_ms
              FROM pages GROUP BY host) AS p
        LEFT JOIN hosts h ON h.host = p.host
        ORDER BY p.pages DESC, p.host
        LIMIT %(limit)s""",
        {"now": now, "limit": limit},
    )
    leases: dict[str, dict[int, int]] = {}
    for host, worker_id, slots in (yield "SELECT host, worker_id, slots FROM host_leases", None):
        leases.setdefault(host, {})[worker_id] = slots
    return [
        HostSummary(
            host=r[0],
            pages=r[1],
            crawled=r[2],
            errors=r[3],
            due=r[4],
            claimed=r[5],
            slowed_until=r[6] if r[6] is not None and r[6] > now else None,
            crawl_delay=r[7],
            avg_response_ms=None if r[8] is None else round(r[8], 1),
            next_start=r[9] if r[9] is not None and r[9] > now else None,
            leases=leases.get(r[0], {}),
        )
        for r in rows
    ]


def _runs() -> Plan[list[RunSummary]]:
    runs = []
    for run_id, started, finished, command, stats, worker_id in (
        yield (
            "SELECT id, started_at, finished_at, command, stats, worker_id FROM runs "
            "ORDER BY id DESC LIMIT %s",
            (_RUNS,),
        )
    ):
        try:
            parsed = json.loads(stats)
        except ValueError:
            parsed = {}
        runs.append(
            RunSummary(
                id=run_id,
                command=command,
                started_at=started,
                finished_at=finished,
                worker_id=worker_id,
                stats=parsed if isinstance(parsed, dict) else {},
            )
        )
    return runs


async def read_partitions(
    conn: psycopg.AsyncConnection[Any], n: int, now: int
) -> dict[int, dict[str, int]]:
    """Pages, crawled and due now per partition K of ``n`` (``crawl --partition K/N``)."""
    cur = await conn.execute(
        f"""SELECT coalesce(part, 0) %% %(n)s AS k, count(*),
                  count(*) FILTER (WHERE last_crawl_time IS NOT NULL),
                  count(*) FILTER (WHERE {_DUE})
        FROM pages GROUP BY k ORDER BY k""".encode(),
        {"n": n, "now": now},
    )
    found = {k: {"pages": p, "crawled": c, "due_now": d} for k, p, c, d in await cur.fetchall()}
    return {k: found.get(k, {"pages": 0, "crawled": 0, "due_now": 0}) for k in range(n)}
