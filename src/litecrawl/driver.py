"""The crawl driver under both ``litecrawl()`` and ``litecrawl crawl``: one run of the engine.

A run is the same whoever starts it::

    run record (start) -> recover lost claims -> the caller's start (seeds, sitemaps, feeds)
      -> claims: one batch (``litecrawl()``) or the pipelined loop (the CLI, :mod:`.claiming`)
      -> flush -> run record (end: the summary and the worker's machine:pid)

so a cron job's ``litecrawl()`` runs appear in ``litecrawl stats`` and the dashboard like the
CLI's, each with the worker (the :class:`~litecrawl.lease.Lease` the caller holds) that ran it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from litecrawl.claiming import Continuous, claim_continuously
from litecrawl.engine import CrawlStats, Engine
from litecrawl.lease import Lease
from litecrawl.store.queue import ClaimedPage

__all__ = ["Batch", "Continuous", "CrawlReport", "drive", "summary_dict"]


@dataclass(frozen=True, slots=True)
class CrawlReport:
    stats: CrawlStats
    interrupted: bool
    next_due: int | None = None  # when nothing was claimed: when the next page is due


@dataclass(frozen=True, slots=True)
class Batch:
    """One cron-style pass (``litecrawl()``): up to ``n_claims`` pages due now are claimed at
    once and all processed (``n_concurrent`` at a time); what is left of the budget goes to
    pages lost with their workers. Links found meanwhile wait for the next pass."""

    n_claims: int


async def drive(
    engine: Engine,
    lease: Lease,
    plan: Batch | Continuous,
    start: Callable[[], Awaitable[object]] | None = None,
) -> CrawlReport:
    """One run of ``engine`` by the worker holding ``lease``: recorded from start to end."""
    frontier = engine.frontier
    run_id = await frontier.start_run(lease.identity.command, int(time.time()))
    await engine.recover()
    if start is not None:
        await start()
    if isinstance(plan, Batch):
        await _batch(engine, plan.n_claims)
        interrupted = False
    else:
        interrupted = await claim_continuously(engine, lease, plan)
    stats = engine.stats
    summary = await frontier.summary(int(time.time()), hosts=0)
    stats.parked = summary.parked
    me = lease.identity
    record = {
        **summary_dict(stats),
        "interrupted": interrupted,
        "worker": f"{me.hostname}:{me.pid}",  # the run's machine and process, for stats
    }
    await frontier.finish_run(run_id, json.dumps(record), int(time.time()))
    return CrawlReport(stats, interrupted, None if stats.claimed else summary.next_due)


async def _batch(engine: Engine, n_claims: int) -> None:
    claimed = await engine.claim(n_claims)
    engine.stats.claimed += len(claimed)
    semaphore = asyncio.Semaphore(engine.options.n_concurrent)

    async def guarded(page: ClaimedPage) -> None:
        async with semaphore:
            await engine.process(page)

    await asyncio.gather(*(guarded(page) for page in claimed))
    await engine.flush()
    await engine.suspects(n_claims - len(claimed))


def summary_dict(stats: CrawlStats) -> dict[str, object]:
    elapsed = stats.elapsed
    return {
        "claimed": stats.claimed,
        "fetched": stats.fetched,
        "ok": stats.ok,
        "failed": stats.failed,
        "indexed": stats.indexed,
        "fresh": stats.fresh,
        "new_links": stats.new_links,
        "redirects": stats.redirects,
        "cache_hits": stats.not_modified,  # 304s served from the cache
        "skipped_robots": stats.errors.get("robots", 0),
        "skipped_type": stats.errors.get("content_type", 0) + stats.errors.get("not_text", 0),
        "skipped_lastmod": stats.skipped_lastmod,
        "skipped_scope": stats.skipped_scope,
        "at_max_depth": stats.at_max_depth,
        "throttled": stats.throttled,
        "render_timeouts": stats.render_timeouts,
        "parked": stats.parked,
        "errors": dict(stats.errors),
        "sitemap_cuts": dict(stats.sitemap_cuts),
        "refused_seeds": len(stats.refused_seeds),
        "elapsed_sec": round(elapsed, 3),
        "pages_per_sec": round(stats.fetched / elapsed, 2) if elapsed > 0 else 0.0,
    }
