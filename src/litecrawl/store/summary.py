"""The frontier at a glance (``litecrawl stats``, the dashboard): pages by state and kind, what
is due, hosts, errors with a sample URL each, the last runs, the live workers.

Written once as plans (:mod:`litecrawl.store.plans`) in both backends' spelling
(:mod:`litecrawl.store.dialect`); only the first counts differ: SQLite counts with one indexed
query each, PostgreSQL in one pass with ``FILTER``.
"""

from __future__ import annotations

import json

from litecrawl.frontier.lost import PARK_AFTER
from litecrawl.store.dialect import Dialect
from litecrawl.store.plans import Plan
from litecrawl.store.runs import ErrorSummary, FrontierSummary, HostSummary, RunSummary
from litecrawl.store.sql import CHANGE_BANDS, change_bands
from litecrawl.store.states import STATE_NAMES
from litecrawl.store.strategies import PARKED
from litecrawl.store.workers import WORKERS, WorkerRecord

__all__ = ["partitions_plan", "summary_plan"]

_RUNS = 10
_DUE = "processing_time IS NULL AND (next_crawl_time IS NULL OR next_crawl_time <= :now)"


def summary_plan(d: Dialect, now: int, hosts: int | None = 10) -> Plan[FrontierSummary]:
    """The summary as of ``now`` (epoch seconds); ``hosts`` top hosts (None: all)."""
    states: dict[int, int] = dict(
        (yield d.sql("SELECT state, count(*) FROM pages GROUP BY state"), None)
    )
    kinds: dict[str, int] = dict(
        (yield d.sql("SELECT kind, count(*) FROM pages GROUP BY kind"), None)
    )
    p = {"now": now, "parked": PARKED}
    if d.postgres:
        ((due, claimed, n_hosts, soonest),) = yield (
            d.sql(
                f"SELECT count(*) FILTER (WHERE {_DUE}), "
                "count(*) FILTER (WHERE processing_time IS NOT NULL), count(DISTINCT host), "
                # a strategy's known-but-not-queued URLs are never due
                "min(next_crawl_time) FILTER (WHERE processing_time IS NULL "
                "AND next_crawl_time < :parked) FROM pages"
            ),
            p,
        )
    else:  # each count on its own index
        ((due,),) = yield d.sql(f"SELECT count(*) FROM pages WHERE {_DUE}"), p
        ((claimed,),) = yield (
            d.sql("SELECT count(*) FROM pages WHERE processing_time IS NOT NULL"),
            None,
        )
        ((n_hosts,),) = yield d.sql("SELECT count(DISTINCT host) FROM pages"), None
        soonest = None
        if not due:
            ((soonest,),) = yield (
                d.sql(
                    "SELECT min(next_crawl_time) FROM pages WHERE processing_time IS NULL "
                    "AND next_crawl_time < :parked"
                ),
                p,
            )
    # min(norm_url): a deterministic sample of each category
    errors = [
        ErrorSummary(category, pages, sample)
        for category, pages, sample in (
            yield (
                d.sql(
                    "SELECT error, count(*), min(norm_url) FROM pages WHERE error IS NOT NULL "
                    "GROUP BY error ORDER BY count(*) DESC, error"
                ),
                None,
            )
        )
    ]
    ((parked, parked_next, suspects),) = yield (  # idx_pages_lost
        d.sql(
            "SELECT count(*) FILTER (WHERE lost_alone >= :p), "
            "min(next_crawl_time) FILTER (WHERE lost_alone >= :p), "
            "count(*) FILTER (WHERE lost_alone < :p) FROM pages "
            "WHERE lost > 0 AND processing_time IS NULL"
        ),
        {"p": PARK_AFTER},
    )
    runs = yield from _runs(d)
    top_hosts = yield from _hosts(d, now, hosts)
    workers = [WorkerRecord.from_row(r) for r in (yield d.sql(WORKERS), None)]
    ((*bands,),) = yield d.sql(CHANGE_BANDS), None
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


def _hosts(d: Dialect, now: int, limit: int | None) -> Plan[list[HostSummary]]:
    if limit == 0:
        return []  # a scan of every page saved (the crawl only asks for the next due time)
    rows = yield (
        d.sql(
            f"""SELECT p.host, p.pages, p.crawled, p.errors, p.due, p.claimed,
                  h.slowed_until, h.crawl_delay, p.avg_response_ms, h.next_start
        FROM (SELECT host, count(*) AS pages,
                     count(*) FILTER (WHERE last_crawl_time IS NOT NULL AND error IS NULL)
                       AS crawled,
                     count(*) FILTER (WHERE error IS NOT NULL) AS errors,
                     count(*) FILTER (WHERE {_DUE}) AS due,
                     count(*) FILTER (WHERE processing_time IS NOT NULL) AS claimed,
                     CAST(avg(response_ms) AS DOUBLE PRECISION) AS avg_response_ms
              FROM pages GROUP BY host) AS p
        LEFT JOIN hosts h ON h.host = p.host
        ORDER BY p.pages DESC, p.host
        LIMIT :limit"""
        ),
        {"now": now, "limit": d.no_limit(limit)},
    )
    leases: dict[str, dict[int, int]] = {}
    for host, worker_id, slots in (
        yield (
            d.sql("SELECT host, worker_id, slots FROM host_leases"),
            None,
        )
    ):
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


def _runs(d: Dialect) -> Plan[list[RunSummary]]:
    runs = []
    for run_id, started, finished, command, stats, worker_id in (
        yield (
            d.sql(
                "SELECT id, started_at, finished_at, command, stats, worker_id FROM runs "
                "ORDER BY id DESC LIMIT ?"
            ),
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


def partitions_plan(d: Dialect, n: int, now: int) -> Plan[dict[int, dict[str, int]]]:
    """Pages, crawled and due now per partition K of ``n`` (``crawl --partition K/N``)."""
    rows = yield (
        d.sql(
            f"""SELECT coalesce(part, 0) % :n AS k, count(*),
                  count(*) FILTER (WHERE last_crawl_time IS NOT NULL),
                  count(*) FILTER (WHERE {_DUE})
        FROM pages GROUP BY k ORDER BY k"""
        ),
        {"n": n, "now": now},
    )
    found = {k: {"pages": p, "crawled": c, "due_now": due} for k, p, c, due in rows}
    return {k: found.get(k, {"pages": 0, "crawled": 0, "due_now": 0}) for k in range(n)}
