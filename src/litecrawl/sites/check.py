"""Handle the site queue (docs/sites.md): read each due site's start page and decide its relevance.

New sites are checked; known ones again only when their last check is older than
``site_revisit_delay``. robots.txt is obeyed (cached in the database like the crawl's), the
per-host delay holds, redirects lead to the site's real base URL. A blacklisted site is not
fetched at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass, field

from litecrawl.config import CrawlConfig
from litecrawl.errors import FetchError, HostHeldBack
from litecrawl.extract.page import extract_page
from litecrawl.fetch.base import FetchRequest
from litecrawl.fetch.http import HttpFetcher
from litecrawl.parse.links import is_html
from litecrawl.politeness.gate import PoliteGate, PolitenessSettings
from litecrawl.sites.model import Site, StartPage
from litecrawl.sites.relevance import SiteFilter, decide, default_filter, listing, load_filter
from litecrawl.sites.seeds import base_url
from litecrawl.store.backends import open_frontier, open_sites
from litecrawl.store.sites import SiteStore
from litecrawl.urls import UrlRules, host_of

__all__ = ["CheckReport", "check_sites"]

_BATCH = 100  # sites read from the queue at a time
_NOT_REACHED = frozenset({"dns", "connect", "timeout", "tls", "network"})


@dataclass
class CheckReport:
    checked: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)  # status -> sites


async def check_sites(config: CrawlConfig, stop: asyncio.Event) -> CheckReport:
    """Check every due site once; returns what was decided. Stops early when ``stop`` is set."""
    plugin = (
        load_filter(config.sites.filter)
        if config.sites.filter
        else default_filter(config.sites.languages)
    )
    report = CheckReport()
    settings = PolitenessSettings.of(config)
    store = open_sites(config.db)
    await asyncio.to_thread(store.open)
    try:
        async with contextlib.AsyncExitStack() as stack:
            frontier = await stack.enter_async_context(open_frontier(config.db))
            gate = await stack.enter_async_context(PoliteGate(frontier, settings))
            fetcher = await stack.enter_async_context(
                HttpFetcher(
                    user_agent=settings.user_agent,
                    timeout=config.fetch.timeout,
                    max_bytes=config.fetch.max_bytes,
                )
            )
            checker = _Checker(store, gate, fetcher, plugin, config.concurrency.global_)
            started = time.time()
            checked_before = started - config.sites.site_revisit_delay
            unreachable_before = started - config.sites.unreachable_recheck_delay
            seen: set[int] = set()
            while not stop.is_set():
                due = await asyncio.to_thread(
                    store.due_checks, checked_before, _BATCH, unreachable_before
                )
                due = [s for s in due if s.id not in seen]  # checked this pass: not again
                if not due:
                    break
                seen.update(s.id for s in due)
                for status in await checker.check_all(due, stop):
                    report.checked += 1
                    report.outcomes[status] += 1
    finally:
        await asyncio.to_thread(store.close)
    return report


class _Checker:
    def __init__(
        self,
        store: SiteStore,
        gate: PoliteGate,
        fetcher: HttpFetcher,
        plugin: SiteFilter,
        concurrency: int,
    ) -> None:
        self.store, self.gate, self.fetcher, self.plugin = store, gate, fetcher, plugin
        self._slots = asyncio.Semaphore(concurrency)
        self._rules = UrlRules()

    async def check_all(self, sites: list[Site], stop: asyncio.Event) -> list[str]:
        async def one(site: Site) -> str | None:
            async with self._slots:
                return None if stop.is_set() else await self.check(site)

        outcomes = await asyncio.gather(*(one(s) for s in sites))
        return [o for o in outcomes if o is not None]

    async def check(self, site: Site) -> str:
        annotations = await asyncio.to_thread(self.store.annotations, site.base_url)
        if listing(annotations) == "blacklist":
            page, why, reached = None, "blacklisted", True  # not fetched at all
        else:
            page, why, reached = await self._start_page(site)
        unread = "irrelevant" if reached else "unreachable"
        status, reason = decide(annotations, page, why, self.plugin, unread)
        await asyncio.to_thread(self.store.record_check, site.id, status, reason, page, time.time())
        return status

    async def _start_page(self, site: Site) -> tuple[StartPage | None, str, bool]:
        """The start page as the filter sees it, or None and why it could not be read; and
        whether the site was reached (False: DNS, connection, timeout, TLS, a 5xx or 429, a
        robots.txt that could not be read: worth another try soon)."""
        url = site.base_url
        refusal = await self.gate.check(url)
        if refusal is not None:
            why = f"start page not fetched: {refusal.category} ({refusal})"
            return None, why, not _unreachable(refusal.category)
        try:
            async with self.gate.slot(host_of(url)):
                result = await self.fetcher.fetch(FetchRequest(url))
            await self.gate.observe(host_of(url), result)
        except FetchError as exc:
            why = f"start page not fetched: {exc.category} ({exc})"
            return None, why, not _unreachable(exc.category)
        except HostHeldBack as exc:  # a 503 or 429 a moment ago: not now, and not irrelevant
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(exc.until))
            return None, f"start page not fetched: its host asked to wait until {when}", False
        if result.status != 200:
            reached = result.status < 500 and result.status != 429
            return None, f"start page answered HTTP {result.status}", reached
        final = base_url(result.final_url) or url
        ctype = result.content_type
        if not is_html(ctype):
            page = StartPage(final, 200, ctype, "", "", None, (), (), (), dict(result.headers))
            return page, "", True
        extracted = await asyncio.to_thread(
            extract_page, result.body, result.final_url, ctype, want_markdown=False, want_links=True
        )
        found = extracted.links
        links: tuple[str, ...] = ()
        feeds: tuple[str, ...] = ()
        if found is not None:
            links = tuple(
                dict.fromkeys(u for u in self._rules.many(list(found.links), found.base) if u)
            )
            feeds = tuple(u for u in self._rules.many(list(found.feeds), found.base) if u)
        sitemaps = (
            (await self.gate.robots(url)).sitemaps() if self.gate.settings.obey_robots else ()
        )
        page = StartPage(
            base_url=final,
            status=result.status,
            content_type=ctype,
            title=extracted.title,
            text=extracted.text,
            language=extracted.language,
            links=links,
            feeds=feeds,
            sitemaps=tuple(sitemaps),
            headers=dict(result.headers),
        )
        return page, "", True


def _unreachable(category: str) -> bool:
    """A failure of the site's host or network, not a verdict on the site."""
    return category in _NOT_REACHED or category.startswith("robots_http_")
