"""The site crawler (seed 002): handle the queue, then crawl due relevant sites, one per worker.

A worker checks a site out (a lock in the database that expires after ``lease_timeout`` unless
renewed, so a worker killed with kill -9 loses its site to the others), crawls it with the
ordinary crawl restricted to the site's host (the same frontier, index and politeness), and
checks it in: the next full crawl scheduled, the crawl recorded, and the links its pages make
to other sites counted and those sites queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from litecrawl.config import CrawlConfig
from litecrawl.crawl import run_crawl
from litecrawl.sites.check import check_sites
from litecrawl.sites.model import Site, SiteCrawl
from litecrawl.sites.store import SiteStore, open_sites
from litecrawl.urls import host_of

__all__ = ["SitesReport", "run_sites", "site_links"]


@dataclass
class SitesReport:
    checked: int = 0
    crawls: list[tuple[str, SiteCrawl]] = field(default_factory=list)  # (base URL, crawl)
    queued: int = 0  # sites found through links


async def run_sites(
    config: CrawlConfig, stop: asyncio.Event, *, workers: int, once: bool
) -> SitesReport:
    """Queue pass, crawls of every due site, then (unless ``once``) ``site_delay`` and again,
    until ``stop``."""
    report = SitesReport()
    store = open_sites(config.db)
    await asyncio.to_thread(store.open)
    try:
        while not stop.is_set():
            report.checked += (await check_sites(config, stop)).checked
            await asyncio.gather(*(_worker(config, store, stop, n, report) for n in range(workers)))
            if once:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), config.sites.site_delay)
    finally:
        await asyncio.to_thread(store.close)
    return report


async def _worker(
    config: CrawlConfig, store: SiteStore, stop: asyncio.Event, n: int, report: SitesReport
) -> None:
    worker = f"{socket.gethostname()}:{os.getpid()}:{n}"
    while not stop.is_set():
        site = await asyncio.to_thread(store.checkout, worker, time.time(), config.lease_timeout)
        if site is None:
            return
        crawl, links = await _crawl_site(config, store, site, worker, stop)
        now = time.time()
        # an interrupted crawl is due again at once: the next run goes on with it
        next_crawl = now if crawl.interrupted else now + config.sites.full_crawl_interval
        report.queued += await asyncio.to_thread(store.checkin, crawl, next_crawl, links, now)
        report.crawls.append((site.base_url, crawl))


async def _crawl_site(
    config: CrawlConfig, store: SiteStore, site: Site, worker: str, stop: asyncio.Event
) -> tuple[SiteCrawl, dict[str, int]]:
    seed = site.final_url or site.base_url
    host = host_of(seed)
    site_config = config.model_copy(
        update={
            "seeds": [seed],
            "mode": "seed",
            "max_depth": 0,  # a full crawl: all of the site, within max_pages_per_site
            "watch": False,
            "limits": config.limits.model_copy(
                update={"max_pages": config.sites.max_pages_per_site}
            ),
        }
    )
    crawl_stop = asyncio.Event()
    keeper = asyncio.create_task(_keep_lock(config, store, site, worker, stop, crawl_stop))
    started = time.time()
    try:
        result = await run_crawl(
            site_config, crawl_stop, hosts=[host], command=f"sites run {site.base_url}"
        )
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
    stats = result.stats
    crawl = SiteCrawl(
        site_id=site.id,
        kind="full",
        worker=worker,
        started_at=started,
        finished_at=time.time(),
        fetched=stats.fetched,
        new_pages=stats.new_links,
        errors=stats.failed,
        interrupted=result.interrupted,
    )
    targets = await asyncio.to_thread(store.outlinks, host)
    return crawl, site_links(host, targets)


async def _keep_lock(
    config: CrawlConfig,
    store: SiteStore,
    site: Site,
    worker: str,
    stop: asyncio.Event,
    crawl_stop: asyncio.Event,
) -> None:
    """Renew the site's lock while it is crawled; stop the crawl on Ctrl+C or a lost lock."""
    every = config.lease_timeout / 3
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
        if stop.is_set():
            crawl_stop.set()
            return
        until = time.time() + config.lease_timeout
        if not await asyncio.to_thread(store.renew, site.id, worker, until):
            crawl_stop.set()  # expired and taken by another worker: leave it the site
            return


def site_links(host: str, targets: list[str]) -> dict[str, int]:
    """Links to other sites by their base URL (the target's origin), counted."""
    counts: Counter[str] = Counter()
    for url in targets:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc and parts.netloc != host:
            counts[f"{parts.scheme}://{parts.netloc}/"] += 1
    return dict(counts)
