"""The engine: run claimed pages through the pipeline and write the outcome back.

Per page (docs/python-api.md, steps 4-9, plus the CLI's fetch policy in docs/crawling.md)::

    check URL -> politeness -> fetch (retries, conditional GET, cache) -> redirect rules
      -> kind: page  -> links -> [analyze: extract + index] -> transform
         kind: sitemap / feed -> entries into the frontier
      -> freshness -> schedule -> downstream hook -> finalize (batched write)

Which pages it is given, and when, is the driver's (:mod:`litecrawl.driver`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import cast

from litecrawl.discover.feeds import is_feed_content_type
from litecrawl.discover.listing import SitemapBounds, listing_links
from litecrawl.engine_options import EngineOptions
from litecrawl.errors import DatabaseUnusable, FetchError, FrontierError, UnwantedType, error_for
from litecrawl.fetch.base import Fetcher, FetchResult
from litecrawl.fetch.policy import Throttled, fetch_with_policy
from litecrawl.frontier.lost import ClaimKind
from litecrawl.hooks import await_me_maybe
from litecrawl.index.document import IndexDocument
from litecrawl.lease import Lease
from litecrawl.link_scope import LinkScope
from litecrawl.outcomes import CrawlStats, PageOutcomes
from litecrawl.parse.links import extract_links, is_html, refresh_target
from litecrawl.parse.resolve import LinkRules, resolve_links
from litecrawl.parse.sniff import not_text
from litecrawl.politeness.base import Gate, OpenGate
from litecrawl.store.frontier import Frontier
from litecrawl.store.queue import ClaimedPage, HostRules, NewLink
from litecrawl.urls import host_of
from litecrawl.writeback import PageWriter, content_hash

__all__ = ["CrawlStats", "Engine", "content_hash"]

log = logging.getLogger("litecrawl")


class _Requeued(Exception):
    """The host asked us to come back later; the claim was released, not finalized."""


class Engine:
    def __init__(
        self,
        frontier: Frontier,
        fetcher: Fetcher,
        options: EngineOptions,
        gate: Gate | None = None,
        lease: Lease | None = None,
    ) -> None:
        self.frontier = frontier
        self.lease = lease  # this worker's lease: recovery also takes dead workers' claims
        self.fetcher = fetcher
        self.options = options
        self.gate: Gate = gate or OpenGate()
        self.stats = CrawlStats()
        self.outcomes = PageOutcomes(self.stats)
        self.sitemap_bounds = SitemapBounds(
            options.max_depth, options.sitemaps_per_host, self.stats.sitemap_cuts
        )
        self.writer = PageWriter(frontier, options, self.stats, self.outcomes)
        self.scope = LinkScope(options, self.stats)
        if lease is not None:  # pages written in this run: its heartbeats record it
            lease.progress = lambda: self.writer.written  # read by the heartbeat thread
        # sent with each page to the analyzer, which resolves the page's links in its worker
        self._link_rules = LinkRules(options.rules, options.canonical_links, options.discover_feeds)

    @property
    def finished(self) -> bool:
        """The strategy's finished() said so."""
        return self.writer.finished

    async def flush(self) -> None:
        """Write all pending page updates in one transaction."""
        await self.writer.flush()

    # -- batches ----------------------------------------------------------------------------

    async def bootstrap(
        self, start_urls: list[str], source: str = "seed", kind: str = "page"
    ) -> int:
        """Step 1 (docs/python-api.md): insert valid normalized start URLs idempotently."""
        urls = self.options.rules.many(start_urls, None)
        runner = self.options.strategy
        if runner is not None and kind == "page":
            writes = runner.read_seeds(urls)
            self.writer.count_strategy_errors()
            return await self.frontier.write_strategy(writes)
        links = [NewLink(u, host_of(u), 0, source, 1.0, kind) for u in urls]
        return await self.frontier.add(links)

    async def recover(self) -> int:
        """Step 2 (docs/python-api.md): the claims of dead workers (leases), and claims older
        than the processing timeout, are reset and rescheduled stale (or made due again,
        ``retry_uncrawled``)."""
        now = int(time.time())
        o = self.options
        lost = 0
        if self.lease is not None:
            lost = await self.frontier.recover_lost(self.lease.is_dead(now), now)
            if lost:
                log.warning("recovered %d claims of workers that stopped", lost)
        timeout = o.processing_timeout_sec
        old = await self.frontier.recover_stale(now - timeout, now, o.schedule, o.retry_uncrawled)
        if old:
            log.warning("recovered %d stale claims older than %ds", old, timeout)
        self.stats.recovered += lost + old
        return lost + old

    async def claim(
        self, limit: int, hosts: HostRules | None = None, kind: ClaimKind = ClaimKind.CLEAN
    ) -> list[ClaimedPage]:
        """Due pages: by score under a strategy, only this worker's partition if set, only of
        hosts ``hosts`` lets it fetch soon if given; none whose last claim was lost with its
        worker (see :meth:`suspects`)."""
        o = self.options
        return await self.frontier.claim(
            limit, int(time.time()), o.strategy is not None, o.partition, o.focus, hosts, kind
        )

    async def suspects(self, budget: int | None = None, stop: asyncio.Event | None = None) -> int:
        """Pages whose last claim was lost with its worker (a kill, a crash), each claimed,
        processed and written while this worker holds nothing else: a page that kills its
        worker is then lost alone, and parked after a few such losses if this worker had
        written other pages (:mod:`litecrawl.frontier.lost`), while pages that were merely in
        flight at a kill are crawled. At most ``budget`` pages (None: all); returns how many."""
        done = 0
        await self.flush()  # a finished page holds its claim until written
        while (budget is None or done < budget) and not (stop is not None and stop.is_set()):
            await self._record_progress()
            pages = await self.claim(1, kind=ClaimKind.SUSPECTS)
            if not pages:
                break
            self.stats.claimed += 1
            done += 1
            await self.process(pages[0])
            await self.flush()
        return done

    async def _record_progress(self) -> None:
        """A heartbeat now: what this run has written decides what losing the page it claims
        next proves (litecrawl.frontier.lost)."""
        if self.lease is None:
            return
        try:
            await asyncio.to_thread(self.lease.beat_now)
        except FrontierError as exc:
            if isinstance(exc, DatabaseUnusable):
                raise
            log.warning("heartbeat failed: %s", exc)

    # -- one page ---------------------------------------------------------------------------

    async def process(self, page: ClaimedPage) -> None:
        """Run one claimed page through the pipeline; never raises for a page's own trouble."""
        try:
            await self._process(page)
        except _Requeued:
            return
        except DatabaseUnusable:
            raise  # no page can be written any more: the crawl stops (crawl.py)
        except Exception:
            # A bug or a foreign error must not leave the row claimed nor stop the batch.
            log.exception("unexpected error processing %s", page.norm_url)
            self.outcomes.failed(page, page.norm_url, error_for("internal", page.norm_url), "fetch")
            await self.writer.finish_stale(page, page.norm_url, "internal")

    async def _process(self, page: ClaimedPage) -> None:
        rules = self.options.rules
        url = page.norm_url
        # Step 4 (docs/python-api.md): sanity check of the stored URL against the current rules.
        normalized = rules.normalize(url)
        if normalized != url:
            self.outcomes.note(
                logging.INFO, "filter", page, url, None, f"now normalized as {normalized}"
            )
            await self._delete(url)
            if normalized is None or not rules.validate(normalized):
                return
            claimed = await self._claim_other(normalized, page)
            if claimed is None:
                return
            page, url = claimed, normalized
        elif not rules.validate(url):
            self.outcomes.note(
                logging.INFO, "filter", page, url, None, "no longer matches the URL rules"
            )
            await self._delete(url)
            return

        if self._unchanged_since_listed(page):
            self.stats.skipped_lastmod += 1
            self.outcomes.note(
                logging.INFO, "skip", page, url, None, "unchanged since its sitemap lastmod"
            )
            await self.writer.finish_stale(page, url, None, recheck_lastmod=True)
            return
        refusal = await self.gate.check(url)
        if refusal is not None:
            self.outcomes.failed(page, url, refusal, "skip")
            await self.writer.finish_stale(page, url, refusal.category)
            return

        result = await self._fetch(page, url)
        if result is None:
            return
        self.stats.fetched += 1

        # Step 5 (docs/python-api.md): redirects.
        final = rules.normalize(result.final_url)
        if final != url:
            self.stats.redirects += 1
            valid = final is not None and rules.validate(final)
            target = [final] if valid and final is not None else []
            # queued at the page's own depth: a redirect is no step deeper (http:// -> https://
            # of a seed must not cost a --max-depth 1 crawl its one level)
            moved = [NewLink(u, host_of(u), page.depth, "redirect") for u in target]
            await self.writer.finish(page, url, result, b"", [], moved, links_out=target)
            if not valid or final is None:
                if final is not None:
                    await self._delete(final)
                return
            claimed = await self._claim_other(final, page)
            if claimed is None:
                return  # another worker is processing the target right now
            page, url = claimed, final

        # Step 6 (docs/python-api.md): links and content.
        content = result.body if result.ok else b""
        links: list[str] = []
        hosts: list[str] | None = None  # links' hosts, when known
        extra: list[NewLink] = []
        links_out: list[str] | None = None  # None: this fetch did not read the page's links
        document: IndexDocument | None = None
        digest: str | None = None  # the body's SHA-256 when a worker hashed it
        if page.kind == "page" and result.ok and is_feed_content_type(result.content_type):
            page = dataclasses.replace(page, kind="feed")  # a link that turned out to be a feed
        if content and page.kind != "page":
            listing = listing_links(page.kind, content, url, result.content_type, page.depth)
            listing = dataclasses.replace(listing, links=self.scope.in_scope(listing.links))
            extra = self.sitemap_bounds.admit(url, page.depth, listing)
            links_out = [link.url for link in extra]  # a listing links to its entries
        elif content and is_html(result.content_type):
            what = not_text(content)
            if what is not None:  # garbage words if decoded: neither indexed nor parsed
                error = error_for("not_text", url, f"{what}, labelled {result.content_type}")
                self.outcomes.failed(page, url, error, "extract")
                await self.writer.finish_stale(page, url, "not_text", result)
                return
            found = resolved = None
            if self.options.analyzer is not None:
                analysis = await self.options.analyzer(
                    url, result, page.depth, page.source, self._link_rules
                )
                document, found, resolved = analysis.document, analysis.links, analysis.resolved
                digest = analysis.content_hash
            if resolved is None:  # no worker resolved them (none, or it could not parse)
                if found is None:
                    found = extract_links(content, url, result.content_type)
                resolved = resolve_links(found, self._link_rules)
                if document is not None and resolved.canonical:
                    document = dataclasses.replace(document, canonical=resolved.canonical)
            refresh = resolved.refresh or self._refresh_header(result, url)
            if refresh is not None and refresh != url:
                await self._refreshed(page, url, result, refresh)
                return
            links, hosts, extra, links_out = self.scope.page_links(resolved, page.depth)
        if self.options.transform_hook is not None:
            try:
                transformed = cast(
                    "str | bytes",
                    await await_me_maybe(
                        self.options.transform_hook(content, result.content_type, url)
                    ),
                )
            except Exception:
                log.exception("transform_hook failed for %s", url)
                self.outcomes.failed(
                    page, url, error_for("hook", url, "transform_hook raised"), "fetch"
                )
                await self.writer.finish_stale(page, url, "hook", result, links)
                return
            content = transformed.encode("utf-8") if isinstance(transformed, str) else transformed
            digest = None  # the hash is of what is stored: the transformed content
        await self.writer.finish(
            page, url, result, content, links, extra, document, links_out, digest, hosts
        )

    def _refresh_header(self, result: FetchResult, url: str) -> str | None:
        value = result.headers.get("refresh")
        raw = refresh_target(value) if value else None
        return self.options.rules(raw, url) if raw else None

    async def _refreshed(
        self, page: ClaimedPage, url: str, result: FetchResult, target: str
    ) -> None:
        """A page whose refresh sends its reader on within seconds (docs/crawling.md#redirects)
        is a redirect: nothing of it is kept, and its target is queued at the page's own depth
        (a redirect is no step deeper), if in scope."""
        self.stats.redirects += 1
        extra = self.scope.in_scope([NewLink(target, host_of(target), page.depth, "redirect")])
        moved = dataclasses.replace(result, final_url=target)  # the log says where it went
        await self.writer.finish(page, url, moved, b"", [], extra, links_out=[target])

    def _unchanged_since_listed(self, page: ClaimedPage) -> bool:
        """A URL whose sitemap lastmod is older than its stored fetch time is not fetched."""
        return (
            self.options.use_lastmod
            and page.lastmod is not None
            and page.last_crawl_time is not None
            and page.lastmod <= page.last_crawl_time
        )

    # -- fetching ---------------------------------------------------------------------------

    async def _fetch(self, page: ClaimedPage, url: str) -> FetchResult | None:
        """Fetch under the policy; None when the page was finalized as failed or re-queued."""
        try:
            outcome = await fetch_with_policy(
                self.fetcher,
                self.gate,
                self.options.fetch_policy,
                url,
                page.etag,
                page.last_modified,
                page.kind,
            )
        except FetchError as exc:
            # a type not asked for is a skip, not a failed fetch: logged at INFO (docs/crawling.md)
            self.outcomes.failed(page, url, exc, "skip" if exc.skipped else "fetch")
            answered = None
            if isinstance(exc, UnwantedType):  # the row tells what it was: status and type
                answered = FetchResult(
                    url, url, exc.status, {"content-type": exc.content_type}, b""
                )
            await self.writer.finish_stale(page, url, exc.category, answered)
            return None
        if isinstance(outcome, Throttled):
            # 429/503: the host is slowed down; the page comes back after Retry-After.
            self.stats.throttled += 1
            self.outcomes.note(
                logging.INFO, "fetch", page, url, None, "host asked to slow down: requeued"
            )
            await self.flush()
            await self.frontier.release([url], int(outcome.retry_at) + 1)
            raise _Requeued
        self.stats.not_modified += outcome.revalidated
        if outcome.render_timed_out:  # kept as served, not rendered again (docs/crawling.md)
            self.stats.render_timeouts += 1
            self.outcomes.note(
                logging.WARNING,
                "fetch",
                page,
                url,
                outcome.status,
                "render timed out: the HTML as served is kept, not rendered",
            )
        return outcome

    async def _claim_other(self, url: str, page: ClaimedPage) -> ClaimedPage | None:
        await self.flush()  # the claim must see our own finalized rows
        return await self.frontier.claim_url(url, host_of(url), page.depth, int(time.time()))

    async def _delete(self, url: str) -> None:
        await self.flush()
        await self.frontier.delete([url])
        self.stats.deleted += 1
