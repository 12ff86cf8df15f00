"""The frontier at a glance (``litecrawl stats``): pages by state and kind, what is due, errors,
the last runs. One read-only pass over the SQLite tables."""

from __future__ import annotations

import sqlite3

from litecrawl.frontier.base import PARKED, FrontierSummary

__all__ = ["STATE_NAMES", "read_partitions", "read_summary"]

STATE_NAMES = {0: "not_crawled", 1: "queued", 2: "crawled", 3: "error"}


def read_summary(conn: sqlite3.Connection, now: int) -> FrontierSummary:
    """The summary as of ``now`` (epoch seconds)."""
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
    hosts = conn.execute("SELECT count(DISTINCT host) FROM pages").fetchone()[0]
    errors = dict(
        conn.execute("SELECT error, count(*) FROM pages WHERE error IS NOT NULL GROUP BY error")
    )
    next_due = conn.execute(
        "SELECT min(next_crawl_time) FROM pages WHERE processing_time IS NULL "
        "AND next_crawl_time < ?",  # a strategy's known-but-not-queued URLs are never due
        (PARKED,),
    ).fetchone()[0]
    runs = [
        {
            "id": r[0],
            "started_at": r[1],
            "finished_at": r[2],
            "command": r[3],
            "stats": r[4],
        }
        for r in conn.execute(
            "SELECT id, started_at, finished_at, command, stats FROM runs ORDER BY id DESC LIMIT 5"
        )
    ]
    return FrontierSummary(
        by_state={STATE_NAMES.get(k, str(k)): v for k, v in states.items()},
        by_kind=kinds,
        due_now=due,
        claimed=claimed,
        hosts=hosts,
        errors=errors,
        next_due=next_due,
        runs=runs,
    )


def read_partitions(conn: sqlite3.Connection, n: int, now: int) -> dict[int, dict[str, int]]:
    """Pages, crawled and due now per partition K of ``n`` (``crawl --partition K/N``)."""
    rows = conn.execute(
        "SELECT litecrawl_partition(norm_url, meta, :n) AS k, count(*), "
        "sum(last_crawl_time IS NOT NULL), "
        "sum(processing_time IS NULL AND (next_crawl_time IS NULL OR next_crawl_time <= :now)) "
        "FROM pages GROUP BY k ORDER BY k",
        {"n": n, "now": now},
    )
    found = {k: {"pages": p, "crawled": c, "due_now": d} for k, p, c, d in rows}
    return {k: found.get(k, {"pages": 0, "crawled": 0, "due_now": 0}) for k in range(n)}
