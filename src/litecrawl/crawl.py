"""``litecrawl crawl`` from a validated config: the fetcher, analyzer, politeness and strategy it
asks for, the seeds or sitemaps to start from, then one run of :func:`litecrawl.driver.drive`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from litecrawl.cache import open_cache
from litecrawl.config import CrawlConfig
from litecrawl.discover.feeds import FEED_CONTENT_TYPES
from litecrawl.driver import Continuous, CrawlReport, drive
from litecrawl.engine import CrawlStats, Engine
from litecrawl.engine_options import Analyzer, EngineOptions
from litecrawl.fetch.base import Fetcher
from litecrawl.fetch.http import HttpFetcher
from litecrawl.fetch.policy import FetchPolicy
from litecrawl.index.analyze import AnalysisPool, AnalyzerSettings, PageAnalyzer
from litecrawl.lease import Lease, LeaseRules
from litecrawl.politeness.gate import PoliteGate, PolitenessSettings
from litecrawl.resume import known_sites, make_due_again
from litecrawl.store.backends import is_postgres, open_frontier
from litecrawl.store.queue import ClaimFocus
from litecrawl.strategy.loader import strategy_for
from litecrawl.strategy.runner import StrategyRunner, close_strategy
from litecrawl.urls import DomainScope, UrlRules, without_passwords

__all__ = ["PAGE_TYPES", "CrawlReport", "Focus", "analysis_pool", "crawl", "run_crawl"]

#: The media types of pages whose bodies a crawl reads (HTML, docs/crawling.md; a link may turn out
#: to be a feed). Others (PDF, images, archives) are skipped after their headers unless
#: ``[fetch] accept_types`` / ``--accept-type`` names them. Sitemaps and feeds, fetched as such,
#: are read whatever their type.
PAGE_TYPES: tuple[str, ...] = ("text/html", "application/xhtml+xml", *sorted(FEED_CONTENT_TYPES))

log = logging.getLogger("litecrawl")


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
            headers={"User-Agent": ua},
            timeout_ms=int(config.fetch.timeout * 1000),
            max_bytes=config.fetch.max_bytes,
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
        tsvector=is_postgres(config.db),
    )


def _polite_rate(config: CrawlConfig) -> float | None:
    """Requests per second one host allows under the politeness settings (None: no limit)."""
    rates = [config.rate_limit.requests_per_second]
    if config.rate_limit.per_host_delay_ms > 0:
        rates.append(1000 / config.rate_limit.per_host_delay_ms)
    known = [r for r in rates if r is not None]
    return min(known) if known else None


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
        schedule=config.schedule.to_schedule(_polite_rate(config)),
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

    async def run() -> CrawlReport:
        async with analysis_pool(config) as pool:
            return await run_crawl(config, asyncio.Event(), pool)

    return asyncio.run(run())


def analysis_pool(config: CrawlConfig) -> AnalysisPool:
    """The analysis workers ``config`` asks for (``extract.workers``), for every crawl its
    owner runs: each crawl's pages go to it with that crawl's own settings."""
    return AnalysisPool(config.extract.workers)


async def run_crawl(
    config: CrawlConfig,
    stop: asyncio.Event,
    analysis: AnalysisPool | None,
    *,
    on_progress: Callable[[CrawlStats, int], None] | None = None,
    grace: float = 10.0,
    command: str = "crawl",
    focus: Focus | None = None,
    recrawl: Callable[[str], bool] | None = None,
) -> CrawlReport:
    """One crawl of ``config`` until nothing is due (or ``stop``), of all the frontier or of
    its ``focus``; its pages analysed (extraction, index rows, Markdown) by ``analysis``'s
    workers, which the caller owns (:func:`analysis_pool`; None: fetched, not indexed);
    ``recrawl``: the known pages it takes are due now."""
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
        if analysis is not None:  # in worker processes, off the event loop
            analyzer = PageAnalyzer(_analyzer_settings(config), analysis)
        sites = seeds
        if focus is None and not seeds and not config.sitemap.url:
            sites = await known_sites(frontier, config.db)
        options = _options(config, sites, analyzer, runner)
        if focus is not None:
            options = _focused(options, focus)
        engine = Engine(frontier, fetcher, options, gate, lease)

        async def start() -> None:
            if recrawl is not None:
                await make_due_again(frontier, recrawl)
            await _bootstrap(config, engine, gate, seeds)
            if focus is not None:
                await _bootstrap_focus(engine, focus)

        plan = Continuous(gate, stop, config.limits.max_pages, config.watch, grace, on_progress)
        return await drive(engine, lease, plan, start)
    raise AssertionError("unreachable")  # pragma: no cover


async def _bootstrap(
    config: CrawlConfig, engine: Engine, gate: PoliteGate, seeds: list[str]
) -> None:
    if config.mode == "seed":
        for seed in seeds:  # else the run says only "claimed: 0"
            if engine.options.rules(seed) is None:
                log.warning("%s: seed left out by the include/exclude patterns", seed)
                engine.stats.refused_seeds[seed] = "left out by the include/exclude patterns"
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
