"""The frontier at a glance (``litecrawl stats``): pages by state and kind, what is due, hosts,
errors with a sample URL each, the last runs, the live workers. One read-only pass over the
SQLite tables."""

from __future__ import annotations

import json
import sqlite3

from litecrawl.frontier.lost import PARK_AFTER
from litecrawl.store.runs import ErrorSummary, FrontierSummary, HostSummary, RunSummary
from litecrawl.store.sql import CHANGE_BANDS, change_bands
from litecrawl.store.sqlite.leases import read_workers
from litecrawl.store.states import STATE_NAMES
from litecrawl.store.strategies import PARKED

__all__ = ["read_partitions", "read_summary"]

_RUNS = 10


def read_summary(conn: sqlite3.Connection, now: int, hosts: int | None = 10) -> FrontierSummary:
    """The summary as of ``now`` (epoch seconds); ``hosts`` top hosts (None: all)."""
    states = dict(conn.execute("SELECT state, count(*) FROM pages GROUP BY state"))
    kinds = dict(conn.execute("SELECT kind, count(*) FROM pages GROUP BY kind"))
    due = conn.execute(
        "SELECT count(*) FROM pages WHERE processing_time IS NULL "
        "AND (next_crawl_time IS NULL OR next_crawl_time <= ?)",
        (now,),
    ).fetchone()[0]
    claimed = conn.execute(
        "SELECT count(*) FROM pages WHERE processing_time IS NOT NULL"
    ).fetchone()[0]
    n_hosts = conn.execute("SELECT count(DISTINCT host) FROM pages").fetchone()[0]
    # min(norm_url): a deterministic sample of each category
    errors = [
        ErrorSummary(category, pages, sample)
        for category, pages, sample in conn.execute(
            "SELECT error, count(*), min(norm_url) FROM pages WHERE error IS NOT NULL "
            "GROUP BY error ORDER BY count(*) DESC, error"
        )
    ]
    next_due = (
        now
        if due
        else conn.execute(
            "SELECT min(next_crawl_time) FROM pages WHERE processing_time IS NULL "
            "AND next_crawl_time < ?",  # a strategy's known-but-not-queued URLs are never due
            (PARKED,),
        ).fetchone()[0]
    )
    parked, parked_next, suspects = conn.execute(  # idx_pages_lost
        "SELECT coalesce(sum(lost_alone >= :p), 0), "
        "min(CASE WHEN lost_alone >= :p THEN next_crawl_time END), "
        "coalesce(sum(lost_alone < :p), 0) FROM pages "
        "WHERE lost > 0 AND processing_time IS NULL",
        {"p": PARK_AFTER},
    ).fetchone()
    return FrontierSummary(
        by_state={STATE_NAMES.get(k, str(k)): v for k, v in states.items()},
        by_kind=kinds,
        due_now=due,
        claimed=claimed,
        hosts=n_hosts,
        errors=errors,
        next_due=next_due,
        runs=_runs(conn),
        top_hosts=_hosts(conn, now, hosts),
        workers=read_workers(conn),
        parked=parked,
        parked_next=parked_next,
        suspects=suspects,
        changes=change_bands(conn.execute(CHANGE_BANDS).fetchone()),
    )


def _hosts(conn: sqlite3.Connection, now: int, limit: int | None) -> list[HostSummary]:
    if limit == 0:
        return []  # a scan of every page saved (the crawl only asks for the next due time)
    rows = conn.execute(
        """SELECT p.host, p.pages, p.crawled, p.errors, p.due, p.claimed,
                  h.slowed_until, h.crawl_delay, p.avg_response_ms, h.next_start
        FROM (SELECT host, count(*) AS pages,
                     sum(last_crawl_time IS NOT NULL AND error IS NULL) AS crawled,
                     sum(error IS NOT NULL) AS errors,
                     sum(processing_time IS NULL
                         AND (next_crawl_time IS NULL OR next_crawl_time <= :now)) AS due,
                     sum(processing_time IS NOT NULL) AS claimed,
                     avg(response_ms) AS avg_response_ms
              FROM pages GROUP BY host) AS p
        LEFT JOIN hosts h ON h.host = p.host
        ORDER BY p.pages DESC, p.host
        LIMIT :limit""",
        {"now": now, "limit": -1 if limit is None else limit},
    ).fetchall()
    leases: dict[str, dict[int, int]] = {}
    for host, worker_id, slots in conn.execute("SELECT host, worker_id, slots FROM host_leases"):
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


def _runs(conn: sqlite3.Connection) -> list[RunSummary]:
    runs = []
    for run_id, started, finished, command, stats, worker_id in conn.execute(
        "SELECT id, started_at, finished_at, command, stats, worker_id FROM runs "
        "ORDER BY id DESC LIMIT ?",
        (_RUNS,),
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


def read_partitions(conn: sqlite3.Connection, n: int, now: int) -> dict[int, dict[str, int]]:
    """Pages, crawled and due now per partition K of ``n`` (``crawl --partition K/N``)."""
    rows = conn.execute(
        "SELECT coalesce(part, 0) % :n AS k, count(*), "
        "sum(last_crawl_time IS NOT NULL), "
        "sum(processing_time IS NULL AND (next_crawl_time IS NULL OR next_crawl_time <= :now)) "
        "FROM pages GROUP BY k ORDER BY k",
        {"n": n, "now": now},
    )
    found = {k: {"pages": p, "crawled": c, "due_now": d} for k, p, c, d in rows}
    return {k: found.get(k, {"pages": 0, "crawled": 0, "due_now": 0}) for k in range(n)}
