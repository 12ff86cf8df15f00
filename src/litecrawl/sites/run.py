"""The site crawler (docs/sites.md): handle the queue, then crawl due relevant sites, one per
worker.

A worker checks a site out (a lock in the database that expires after ``lease_timeout`` unless
renewed, so a worker killed with kill -9 loses its site to the others), crawls it with the
ordinary crawl restricted to the site's host (the same frontier, index and politeness), and
checks it in: the next full crawl scheduled, the crawl recorded, and the links its pages make
to other sites counted and those sites queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from litecrawl.config import CrawlConfig
from litecrawl.crawl import CrawlReport, Focus, analysis_pool, run_crawl
from litecrawl.index.analyze import AnalysisPool
from litecrawl.sites.check import check_sites
from litecrawl.sites.model import Site, SiteCrawl, SiteSchedule
from litecrawl.sites.relevance import PathFilter, load_path_filter
from litecrawl.store.backends import open_sites
from litecrawl.store.queue import ClaimFocus
from litecrawl.store.sites import SiteStore
from litecrawl.urls import host_of

__all__ = ["SitesReport", "run_sites", "site_links"]

log = logging.getLogger("litecrawl")


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
    paths = load_path_filter(config.sites.path_filter) if config.sites.path_filter else None
    report = SitesReport()
    store = open_sites(config.db)
    await asyncio.to_thread(store.open)
    try:
        while not stop.is_set():
            report.checked += (await check_sites(config, stop)).checked
            # sites due when the pass began: one crawled and due again at once (an interval
            # of 0, an interrupted crawl) waits for the next pass, and --once ends
            due_by = time.time()
            # one analysis pool for the pass's site crawls (each page carries its crawl's
            # settings), not one a crawl: [sites] workers pools of a worker per CPU before;
            # none is held through site_delay (docs/sites.md)
            async with analysis_pool(config) as pool:
                await asyncio.gather(
                    *(
                        _worker(config, store, stop, n, report, paths, due_by, pool)
                        for n in range(workers)
                    )
                )
            if once:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), config.sites.site_delay)
    finally:
        await asyncio.to_thread(store.close)
    return report


async def _worker(
    config: CrawlConfig,
    store: SiteStore,
    stop: asyncio.Event,
    n: int,
    report: SitesReport,
    paths: PathFilter | None,
    due_by: float,
    pool: AnalysisPool,
) -> None:
    worker = f"{socket.gethostname()}:{os.getpid()}:{n}"
    while not stop.is_set():
        site = await asyncio.to_thread(
            store.checkout, worker, due_by, time.time(), config.lease_timeout
        )
        if site is None:
            return
        crawl, links = await _crawl_site(config, store, site, worker, stop, paths, pool)
        queued = await asyncio.to_thread(
            store.checkin, crawl, _schedule(config, site, crawl), links, time.time()
        )
        # added once the checkin is back: ``report.queued += await ...`` read the count before
        # the await, and a checkin that overlapped another's stored its sum over theirs
        report.queued += queued
        report.crawls.append((site.base_url, crawl))


def _kind(site: Site, now: float) -> str:
    """A full crawl when one is due (never crawled: at once), else a feed crawl."""
    return "full" if site.next_crawl is None or site.next_crawl <= now else "feed"


def _schedule(config: CrawlConfig, site: Site, crawl: SiteCrawl) -> SiteSchedule:
    now = time.time()
    intervals = config.sites
    if crawl.interrupted:  # due again at once: the next run goes on with it
        return SiteSchedule(
            next_crawl=now if crawl.kind == "full" else site.next_crawl or now,
            next_feed_crawl=now if crawl.kind == "feed" else site.next_feed_crawl or now,
        )
    if crawl.kind == "full":  # a full crawl reads the feeds too
        return SiteSchedule(
            now + intervals.full_crawl_interval, now + intervals.feed_crawl_interval
        )
    return SiteSchedule(site.next_crawl or now, now + intervals.feed_crawl_interval)


async def _crawl_site(
    config: CrawlConfig,
    store: SiteStore,
    site: Site,
    worker: str,
    stop: asyncio.Event,
    paths: PathFilter | None,
    pool: AnalysisPool,
) -> tuple[SiteCrawl, dict[str, int]]:
    seed = site.final_url or site.base_url
    host = host_of(seed)
    kind = _kind(site, time.time())
    accept = _accept(site, host, paths)
    crawl_stop = asyncio.Event()
    keeper = asyncio.create_task(_keep_lock(config, store, site, worker, stop, crawl_stop))
    started = time.time()
    try:
        if kind == "full":
            # all of the site from its start page and sitemaps, within max_pages_per_site
            focus = Focus(ClaimFocus((host,)), accept, site.sitemaps, site.feeds)
            reports = [await _run(config, crawl_stop, site, [seed], focus, pool)]
        else:
            reports = await _feed_crawl(config, store, site, host, accept, crawl_stop, pool)
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
    crawl = SiteCrawl(
        site_id=site.id,
        kind=kind,
        worker=worker,
        started_at=started,
        finished_at=time.time(),
        fetched=sum(r.stats.fetched for r in reports),
        new_pages=sum(r.stats.new_links for r in reports),
        errors=sum(r.stats.failed for r in reports),
        interrupted=any(r.interrupted for r in reports),
    )
    targets = await asyncio.to_thread(store.outlinks, host)
    return crawl, site_links(host, targets)


async def _feed_crawl(
    config: CrawlConfig,
    store: SiteStore,
    site: Site,
    host: str,
    accept: Callable[[str], bool] | None,
    stop: asyncio.Event,
    pool: AnalysisPool,
) -> list[CrawlReport]:
    """The site's feeds, read again (conditional GET), then only those of their entries that
    are due: new ones, and known ones whose feed date is newer than their last crawl."""
    feeds = tuple(f.url for f in await asyncio.to_thread(store.feeds, site.id))
    if not feeds:
        return []
    focus = Focus(ClaimFocus((host,), feeds), accept, feeds=feeds)
    # the start page stays the seed (it sets the crawl's scope) but is not claimed
    seeds = [site.final_url or site.base_url]
    read = await _run(config, stop, site, seeds, focus, pool)
    if read.interrupted:
        return [read]
    entries = tuple(await asyncio.to_thread(store.listed, feeds))
    focus = Focus(ClaimFocus((host,), entries), accept)
    return [read, await _run(config, stop, site, seeds, focus, pool)]


async def _run(
    config: CrawlConfig,
    stop: asyncio.Event,
    site: Site,
    seeds: list[str],
    focus: Focus,
    pool: AnalysisPool,
) -> CrawlReport:
    site_config = config.model_copy(
        update={
            "seeds": seeds,
            "mode": "seed",
            "max_depth": 0,
            "watch": False,
            "limits": config.limits.model_copy(
                update={"max_pages": config.sites.max_pages_per_site}
            ),
        }
    )
    return await run_crawl(
        site_config, stop, pool, focus=focus, command=f"sites run {site.base_url}"
    )


def _accept(site: Site, host: str, paths: PathFilter | None) -> Callable[[str], bool] | None:
    """The path filter as a link filter: other hosts' links pass (the crawl's scope decides
    those); a filter that raises keeps the path out and says so once per crawl."""
    if paths is None:
        return None
    warned = False

    def accept(url: str) -> bool:
        nonlocal warned
        parts = urlsplit(url)
        if parts.netloc != host:
            return True
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            return bool(paths(site, path))
        except Exception:
            if not warned:
                warned = True
                log.exception("sites.path_filter raised for %s: such paths are not crawled", url)
            return False

    return accept


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
