"""The continuous crawl behind ``litecrawl crawl``: the engine in a pipelined claim loop.

Claims are refilled while earlier pages are still in flight, so fetchers never wait for a batch
to drain, but only a little ahead of the fetchers: a claim not yet fetched is work a crash
strands until the lease says its worker is dead. The loop ends when nothing is due and no dead
worker's claims are still to come back (or, with ``watch``, sleeps until the next page is), when
``max_pages`` pages (sitemaps and feeds not counted) were claimed, or when ``stop`` is set
(SIGINT/SIGTERM): then no more claims are made, in-flight pages get ``grace`` seconds to finish,
and the rest are released.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from litecrawl.cache import open_cache
from litecrawl.config import CrawlConfig
from litecrawl.discover.feeds import FEED_CONTENT_TYPES
from litecrawl.engine import Analyzer, CrawlStats, Engine, EngineOptions
from litecrawl.errors import DatabaseUnusable
from litecrawl.fetch.base import Fetcher
from litecrawl.fetch.http import HttpFetcher
from litecrawl.fetch.policy import FetchPolicy
from litecrawl.frontier import open_frontier
from litecrawl.frontier.base import ClaimFocus, Frontier
from litecrawl.index.analyze import AnalyzerSettings, PageAnalyzer
from litecrawl.lease import Lease, LeaseRules
from litecrawl.politeness.gate import CLAIM_HORIZON_SEC, PoliteGate, PolitenessSettings
from litecrawl.resume import known_sites, make_due_again, next_due
from litecrawl.schedule import Schedule
from litecrawl.strategy.loader import strategy_for
from litecrawl.strategy.runner import StrategyRunner, close_strategy
from litecrawl.urls import DomainScope, UrlRules, host_of, without_passwords

__all__ = ["PAGE_TYPES", "CrawlReport", "Focus", "crawl", "run_crawl"]

#: The media types of pages whose bodies a crawl reads (HTML, docs/crawling.md; a link may turn out
#: to be a feed). Others (PDF, images, archives) are skipped after their headers unless
#: ``[fetch] accept_types`` / ``--accept-type`` names them. Sitemaps and feeds, fetched as such,
#: are read whatever their type.
PAGE_TYPES: tuple[str, ...] = ("text/html", "application/xhtml+xml", *sorted(FEED_CONTENT_TYPES))

log = logging.getLogger("litecrawl")


@dataclass(frozen=True, slots=True)
class CrawlReport:
    stats: CrawlStats
    interrupted: bool
    next_due: int | None = None  # when nothing was claimed: when the next page is due


@dataclass(frozen=True, slots=True)
class Focus:
    """A crawl of part of a shared frontier (the site crawler's crawls of one site): claims
    narrowed to ``claims``, links and listing entries kept only when ``accept`` takes them
    (a site's path filter), and ``sitemaps`` and ``feeds`` read first besides the seeds (feeds
    made due at once: read again with conditional GET)."""

    claims: ClaimFocus
    accept: Callable[[str], bool] | None = None
    sitemaps: tuple[str, ...] = ()
    feeds: tuple[str, ...] = ()


def _fetcher(config: CrawlConfig) -> Fetcher:
    ua = config.effective_user_agent()
    if config.fetch.render:
        from litecrawl.fetch.browser import BrowserFetcher

        return BrowserFetcher(
            headers={"User-Agent": ua}, timeout_ms=int(config.fetch.timeout * 1000)
        )
    return HttpFetcher(
        user_agent=ua,
        timeout=config.fetch.timeout,
        max_bytes=config.fetch.max_bytes,
        concurrency=config.concurrency.global_,
    )


def _analyzer_settings(config: CrawlConfig) -> AnalyzerSettings:
    return AnalyzerSettings(
        # dom_remove and extra_remove alike (script, style, svg... are dropped anyway)
        extra_remove=tuple(dict.fromkeys([*config.filter.dom_remove, *config.filter.extra_remove])),
        main_article=config.extract.main_article,
        article_engine=config.extract.engine,
        embed=config.extract.embed,
        # absolute: documents.markdown_path is read from wherever the export runs
        output_dir=Path(config.output.dir).absolute() if config.output.dir else None,
        cache_dir=Path(config.cache.dir) if config.cache.respect_conditional else None,
        cache_layout=config.cache.layout,
    )


def _options(
    config: CrawlConfig,
    seeds: list[str],
    analyzer: Analyzer | None,
    runner: StrategyRunner | None = None,
) -> EngineOptions:
    d = config.discovery
    # Same site as the seeds (and the sitemap given, in sitemap mode) plus any --domain.
    sites = [*seeds, *([config.sitemap.url] if config.sitemap.url else []), *d.domains]
    scope = DomainScope(sites) if config.same_domain_only else None
    return EngineOptions(
        rules=_rules(config),
        schedule=Schedule(),
        n_concurrent=config.concurrency.global_,
        follow_links=d.follow_links,
        max_depth=config.max_depth,
        scope=scope,
        canonical_links=True,
        discover_feeds=True,
        use_lastmod=config.sitemap.use_lastmod,
        sitemaps_per_host=config.sitemap.max_per_host,
        fetch_policy=FetchPolicy(
            # max_retries counts retries after the first try: 3 = waits of 1, 2 and 4 s
            # (docs/crawling.md, "Fetching")
            max_attempts=config.fetch.max_retries + 1,
            cache=(
                open_cache(config.cache.dir, config.cache.layout)
                if config.cache.respect_conditional
                else None
            ),
            accept_types=(*PAGE_TYPES, *config.fetch.accept_types),
        ),
        analyzer=analyzer,
        retry_uncrawled=True,
        strategy=runner,
        partition=config.partition_k_n(),
        # Under a strategy each page's write (and so its scheduled links) is seen by the next
        # claim, so the crawl follows the scores exactly; bfs keeps the batched writes.
        write_batch=1 if runner is not None else 256,
    )


def _rules(config: CrawlConfig) -> UrlRules:
    d = config.discovery
    return UrlRules(None, d.include_patterns, d.exclude_patterns)


def crawl(config: CrawlConfig) -> CrawlReport:
    """Run a whole crawl from Python with a validated config (see :func:`load_config`)."""
    return asyncio.run(run_crawl(config, asyncio.Event()))


async def run_crawl(
    config: CrawlConfig,
    stop: asyncio.Event,
    *,
    index: bool = True,
    on_progress: Callable[[CrawlStats, int], None] | None = None,
    grace: float = 10.0,
    command: str = "crawl",
    focus: Focus | None = None,
    recrawl: Callable[[str], bool] | None = None,
) -> CrawlReport:
    """One crawl of ``config`` until nothing is due (or ``stop``), of all the frontier or of
    its ``focus``; ``recrawl``: the known pages it takes are due now."""
    seeds = list(config.seeds)
    command = without_passwords(command)  # kept in run and worker records, shown by stats
    factory = strategy_for(config.strategy.name)  # unknown: fails before network or DB work
    async with contextlib.AsyncExitStack() as stack:
        frontier = await stack.enter_async_context(open_frontier(config.db))
        lease = await stack.enter_async_context(
            Lease(frontier, LeaseRules(config.lease_timeout), command)
        )
        runner = None
        if factory is not None:
            runner = StrategyRunner(
                factory,
                dict(config.strategy.args),
                frontier,
                _rules(config),
                config.effective_user_agent(),
            )
            stack.push_async_callback(close_strategy, runner, frontier)
        settings = PolitenessSettings.of(config)
        gate = await stack.enter_async_context(PoliteGate(frontier, settings))
        fetcher = await stack.enter_async_context(_fetcher(config))
        analyzer = None
        if index:  # extraction, index rows, Markdown: in worker processes, off the event loop
            analyzer = await stack.enter_async_context(PageAnalyzer(_analyzer_settings(config)))
        sites = seeds
        if focus is None and not seeds and not config.sitemap.url:
            sites = await known_sites(frontier, config.db)
        options = _options(config, sites, analyzer, runner)
        if focus is not None:
            options = _focused(options, focus)
        engine = Engine(frontier, fetcher, options, gate, lease)
        lease.progress = lambda: engine.stats.fetched  # read by the heartbeat thread
        run_id = await frontier.start_run(command, int(time.time()))
        await engine.recover()
        if recrawl is not None:
            await make_due_again(frontier, recrawl)
        await _bootstrap(config, engine, gate, seeds)
        if focus is not None:
            await _bootstrap_focus(engine, focus)
        interrupted = await _loop(config, engine, gate, lease, stop, on_progress, grace)
        stats = engine.stats
        stats.parked = (await frontier.summary(int(time.time()), hosts=0)).parked
        me = lease.identity
        record = {
            **summary_dict(stats),
            "interrupted": interrupted,
            "worker": f"{me.hostname}:{me.pid}",  # the run's machine and process, for stats
        }
        await frontier.finish_run(run_id, json.dumps(record), int(time.time()))
        later = None if stats.claimed else await next_due(frontier)
        return CrawlReport(stats, interrupted, later)
    raise AssertionError("unreachable")  # pragma: no cover


async def _bootstrap(
    config: CrawlConfig, engine: Engine, gate: PoliteGate, seeds: list[str]
) -> None:
    if config.mode == "seed":
        for seed in seeds:  # else the run says only "claimed: 0"
            if engine.options.rules(seed) is None:
                log.warning("%s: seed left out by the include/exclude patterns", seed)
        await engine.bootstrap(seeds, "seed", "page")
        return
    sitemaps = [config.sitemap.url] if config.sitemap.url else []
    if not sitemaps:
        for seed in seeds:  # discover sitemaps through robots.txt, else the usual place
            policy = await gate.robots(seed)
            parts = urlsplit(seed)
            sitemaps += policy.sitemaps() or (f"{parts.scheme}://{parts.netloc}/sitemap.xml",)
    await engine.bootstrap(sitemaps, "sitemap", "sitemap")


def _focused(options: EngineOptions, focus: Focus) -> EngineOptions:
    scope, accept = options.scope, focus.accept
    if accept is not None:
        outer = scope
        scope = accept if outer is None else (lambda url: outer(url) and accept(url))
    return dataclasses.replace(options, focus=focus.claims, scope=scope)


async def _bootstrap_focus(engine: Engine, focus: Focus) -> None:
    await engine.bootstrap(list(focus.sitemaps), "sitemap", "sitemap")
    await engine.bootstrap(list(focus.feeds), "feed", "feed")
    feeds = engine.options.rules.many(focus.feeds, None)
    if feeds:  # known feeds too: each feed crawl reads them again
        await engine.frontier.make_due(feeds, int(time.time()))


async def _loop(
    config: CrawlConfig,
    engine: Engine,
    gate: PoliteGate,
    lease: Lease,
    stop: asyncio.Event,
    on_progress: Callable[[CrawlStats, int], None] | None,
    grace: float,
) -> bool:
    frontier = engine.frontier
    concurrency = config.concurrency.global_
    max_pages = config.limits.max_pages
    # a strategy's scores decide each next claim: no claims ahead of what can be fetched
    ahead = _ClaimAhead(concurrency, ordered=engine.options.strategy is not None)
    in_flight: dict[asyncio.Task[None], str] = {}
    held: Counter[str] = Counter()  # pages in flight per host: the next claim's room
    claimed_total = 0
    last_recovery = time.monotonic()

    def busy() -> int:  # pages waiting for their host hold no fetch slot: claim past them
        return len(in_flight) - gate.waiting

    async def refill() -> int:
        nonlocal claimed_total
        want = ahead.high_water - busy()
        if max_pages:
            want = min(want, max_pages - claimed_total)
        if want <= 0:
            return 0
        # the fetch slots are the gate's, taken after the host's wait (PoliteGate.slot)
        pages = await engine.claim(want, gate.host_rules(held))
        for page in pages:
            in_flight[asyncio.create_task(engine.process(page))] = page.norm_url
            held[host_of(page.norm_url)] += 1
        claimed_total += sum(1 for page in pages if page.kind == "page")  # not sitemaps, feeds
        engine.stats.claimed += len(pages)
        return len(pages)

    async def finished(tasks: set[asyncio.Task[None]]) -> None:
        idle = set()
        for task in tasks:
            if not task.cancelled() and (exc := task.exception()) is not None:
                raise exc  # only DatabaseUnusable leaves Engine.process
            host = host_of(in_flight.pop(task))
            held[host] -= 1
            if held[host] <= 0:
                del held[host]
                idle.add(host)
        ahead.finished(len(tasks))
        await gate.release_hosts(idle, held)

    def budget() -> int | None:
        return max_pages - claimed_total if max_pages else None

    async def claiming() -> bool:
        nonlocal claimed_total, last_recovery
        claimed_total += await engine.suspects(budget(), stop)  # at once: one may kill us
        last_report = 0.0
        while not stop.is_set():
            if time.monotonic() - last_recovery >= lease.rules.beat_every:
                last_recovery = time.monotonic()
                await engine.recover()  # claims of workers that died meanwhile
            may_claim = not (max_pages and claimed_total >= max_pages) and not engine.finished
            if may_claim and busy() <= ahead.refill_at:
                claimed = await refill()
                if not claimed and not in_flight:
                    await engine.flush()  # links still in the write buffer may be due pages
                    claimed = await refill()
                if not claimed and not in_flight:  # pages lost with other workers meanwhile
                    claimed = await engine.suspects(budget(), stop)
                    claimed_total += claimed
                if not claimed and not in_flight:
                    # Not done while a dead worker's claims are still to come back.
                    shared = engine.options.focus is None  # a site crawl waits for no one else
                    if await engine.recover() or await _await_others(lease, stop, shared):
                        continue
                    if await _await_held_back(engine, stop):
                        continue
                    if not config.watch:
                        break
                    await _sleep_until_due(frontier, stop, lease.rules.lease_timeout)
                    await engine.recover()
                    continue
            if not in_flight:
                break
            done, _ = await asyncio.wait(
                in_flight, timeout=0.25, return_when=asyncio.FIRST_COMPLETED
            )
            await finished(done)
            if not done and engine.stats.claimed:  # idle moment: push buffered writes out
                await engine.flush()
            if on_progress is not None and time.monotonic() - last_report > 0.5:
                last_report = time.monotonic()
                on_progress(engine.stats, len(in_flight))
        interrupted = stop.is_set()
        if in_flight:
            done, pending = await asyncio.wait(in_flight, timeout=grace if interrupted else None)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            await engine.flush()
            if pending:
                await frontier.release([in_flight[t] for t in pending])
        await engine.flush()
        if on_progress is not None:
            on_progress(engine.stats, 0)
        return interrupted

    try:
        return await claiming()
    except DatabaseUnusable:
        for task in in_flight:  # nothing of theirs can be written: the next run takes them
            task.cancel()
        await asyncio.gather(*in_flight, return_exceptions=True)
        raise


class _ClaimAhead:
    """How many claims to hold: every fetcher busy plus about a quarter second of work waiting
    to start (at least half the concurrency), so the next claim, queued behind a batch write on
    the database thread, does not leave fetchers idle; yet a crash strands little beyond the
    pages being fetched (and the lease gives those back at once). ``ordered`` (a strategy's
    scores pick each next page): nothing waits beyond the fetchers, a claim per free slot."""

    def __init__(self, concurrency: int, ordered: bool = False) -> None:
        self.concurrency = concurrency
        self.ordered = ordered
        self.rate = 0.0  # pages finished per second, over the last second or so
        self._since = time.monotonic()
        self._done = 0

    def finished(self, n: int) -> None:
        self._done += n
        elapsed = time.monotonic() - self._since
        if elapsed >= 1.0:
            self.rate, self._done, self._since = self._done / elapsed, 0, time.monotonic()

    @property
    def spare(self) -> int:
        if self.ordered:
            return 0
        return max(self.concurrency // 2, 2, int(self.rate / 4))

    @property
    def high_water(self) -> int:
        return self.concurrency + self.spare

    @property
    def refill_at(self) -> int:
        if self.ordered:
            return self.concurrency - 1
        return self.concurrency + self.spare // 2


async def _await_others(lease: Lease, stop: asyncio.Event, shared: bool) -> bool:
    """Nothing due here, but other workers hold claims: wait (True) and look again. A live
    worker's pages may bring new links (``shared``: a crawl of the whole frontier, where they
    are this worker's work too; half a second); one that missed its heartbeats may be dead
    (a beat, until it beats again or its lease runs out). False when no claim is out there."""
    now = time.time()
    me = lease.frontier.worker_id
    others = [w for w in await lease.frontier.workers() if w.id != me and w.claims]
    doubtful = [w for w in others if lease.rules.overdue(w, now)]
    if doubtful:
        log.info(
            "waiting for %d claims of %d workers without a heartbeat for %.0fs "
            "(lease_timeout %.0fs)",
            sum(w.claims for w in doubtful),
            len(doubtful),
            now - max(w.heartbeat_at for w in doubtful),
            lease.rules.lease_timeout,
        )
        wait = lease.rules.beat_every
    elif others and shared:
        wait = min(0.5, lease.rules.beat_every)
    else:
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=wait)
    return True


# A page a host's politeness holds back (a Retry-After, a Crawl-delay: its host passed over by
# the claims) is waited for when it is due within this long; a page due later (the re-crawl
# schedule's least interval is an hour) is left for the next run.
_HELD_BACK_SEC = 130.0  # two of the default 60 s back-offs after a 429 without Retry-After


async def _await_held_back(engine: Engine, stop: asyncio.Event) -> bool:
    """Nothing claimable, but a page is due (or soon will be) whose host is held back: wait a
    moment (True) and look again. False when nothing is due within ``_HELD_BACK_SEC``."""
    now = time.time()
    o = engine.options
    due = await engine.frontier.next_claimable(now, CLAIM_HORIZON_SEC, o.partition, o.focus)
    wait = None if due is None else due - now
    if wait is None or wait > _HELD_BACK_SEC:
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=min(max(wait, 0.25), 1.0))
    return True


async def _sleep_until_due(frontier: Frontier, stop: asyncio.Event, lease_timeout: float) -> None:
    """Until the next page is due, but never longer than a lease: a worker that dies meanwhile
    (another process, another machine) leaves claims that only a recovery makes due again."""
    summary = await frontier.summary(int(time.time()), hosts=0)
    wait = 60.0 if summary.next_due is None else max(1.0, summary.next_due - time.time())
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=min(wait, 300.0, lease_timeout))


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
        "skipped_lastmod": stats.skipped_lastmod,
        "skipped_scope": stats.skipped_scope,
        "throttled": stats.throttled,
        "parked": stats.parked,
        "errors": dict(stats.errors),
        "sitemap_cuts": dict(stats.sitemap_cuts),
        "elapsed_sec": round(elapsed, 3),
        "pages_per_sec": round(stats.fetched / elapsed, 2) if elapsed > 0 else 0.0,
    }
