"""The engine: claim due pages, run each through the pipeline, write the outcome back.

Per page (seed 000 sections 4-9)::

    check URL -> [politeness] -> fetch/render -> redirect rules -> links -> transform
      -> freshness -> schedule -> downstream hook -> finalize (batched write)

``run_batch`` is one cron-style pass (``litecrawl()``); ``crawl`` keeps claiming, pipelined, until
nothing is due (the CLI).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Protocol, cast

from litecrawl.errors import FetchError
from litecrawl.fetch.base import Fetcher, FetchRequest, FetchResult
from litecrawl.frontier.base import ClaimedPage, Frontier, NewLink, PageUpdate
from litecrawl.hooks import DownstreamHook, TransformHook, await_me_maybe
from litecrawl.parse.links import extract_links, is_html
from litecrawl.schedule import Schedule
from litecrawl.urls import UrlRules, host_of

__all__ = ["CrawlStats", "Engine", "EngineOptions", "Gate", "OpenGate"]

log = logging.getLogger("litecrawl")

EMPTY_HASH = hashlib.sha256(b"").hexdigest()


class Gate(Protocol):
    """Politeness between the engine and the network (robots.txt, per-host pacing)."""

    async def check(self, url: str) -> str | None:
        """None if ``url`` may be fetched, else the reason it may not (e.g. "robots")."""

    def slot(self, host: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold a per-host fetch slot (waits for concurrency cap and delay)."""

    def observe(self, host: str, result: FetchResult | None) -> None:
        """Learn from a response (429/503 Retry-After slow the host down)."""


class OpenGate:
    """No politeness: every URL allowed, no pacing (tests and benchmarks)."""

    async def check(self, url: str) -> str | None:
        return None

    @contextlib.asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        yield

    def observe(self, host: str, result: FetchResult | None) -> None:
        return None


@dataclass(frozen=True, slots=True)
class EngineOptions:
    rules: UrlRules
    schedule: Schedule
    n_concurrent: int = 10
    processing_timeout_sec: int = 600
    transform_hook: TransformHook | None = None
    downstream_hook: DownstreamHook | None = None
    follow_links: bool = True
    max_depth: int = 0  # 0 = unlimited
    scope: Callable[[str], bool] | None = None  # extra link filter (e.g. same domain)
    write_batch: int = 64  # finalized pages per transaction


@dataclass
class CrawlStats:
    claimed: int = 0
    fetched: int = 0
    fresh: int = 0
    redirects: int = 0
    deleted: int = 0
    recovered: int = 0
    new_links: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)

    @property
    def failed(self) -> int:
        return sum(self.errors.values())

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


def content_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


class Engine:
    def __init__(
        self,
        frontier: Frontier,
        fetcher: Fetcher,
        options: EngineOptions,
        gate: Gate | None = None,
    ) -> None:
        self.frontier = frontier
        self.fetcher = fetcher
        self.options = options
        self.gate = gate or OpenGate()
        self.stats = CrawlStats()
        self._pending: list[PageUpdate] = []
        self._write_lock = asyncio.Lock()

    # -- batches ----------------------------------------------------------------------------

    async def bootstrap(self, start_urls: list[str], source: str = "seed") -> int:
        """Section 1: insert valid normalized start URLs idempotently."""
        urls = self.options.rules.many(start_urls, None)
        return await self.frontier.add(NewLink(u, host_of(u), 0, source, 1.0) for u in urls)

    async def recover(self) -> int:
        """Section 2: claims older than the processing timeout are reset and rescheduled stale."""
        now = int(time.time())
        n = await self.frontier.recover_stale(
            now - self.options.processing_timeout_sec, now, self.options.schedule
        )
        self.stats.recovered += n
        if n:
            log.warning(
                "recovered %d stale claims older than %ds", n, self.options.processing_timeout_sec
            )
        return n

    async def run_batch(self, n_claims: int) -> CrawlStats:
        """Sections 2-9: recover, claim up to ``n_claims`` due pages, process them all, finalize."""
        await self.recover()
        claimed = await self.frontier.claim(n_claims, int(time.time()))
        self.stats.claimed += len(claimed)
        semaphore = asyncio.Semaphore(self.options.n_concurrent)

        async def guarded(page: ClaimedPage) -> None:
            async with semaphore:
                await self.process(page)

        await asyncio.gather(*(guarded(page) for page in claimed))
        await self.flush()
        return self.stats

    # -- one page ---------------------------------------------------------------------------

    async def process(self, page: ClaimedPage) -> None:
        """Run one claimed page through the pipeline; never raises for a page's own trouble."""
        try:
            await self._process(page)
        except Exception:
            # A bug or a foreign error must not leave the row claimed nor stop the batch.
            log.exception("unexpected error processing %s", page.norm_url)
            self.stats.errors["internal"] += 1
            await self._finish_stale(page, page.norm_url, "internal")

    async def _process(self, page: ClaimedPage) -> None:
        rules = self.options.rules
        url = page.norm_url
        # Section 4: sanity check of the stored URL against the current rules.
        normalized = rules.normalize(url)
        if normalized != url:
            await self._delete(url)
            if normalized is None or not rules.validate(normalized):
                return
            claimed = await self._claim_other(normalized, page.depth)
            if claimed is None:
                return
            page, url = claimed, normalized
        elif not rules.validate(url):
            await self._delete(url)
            return

        refusal = await self.gate.check(url)
        if refusal is not None:
            self.stats.errors[refusal] += 1
            await self._finish_stale(page, url, refusal)
            return

        result = await self._fetch(page, url)
        if result is None:
            return
        self.stats.fetched += 1

        # Section 5: redirects.
        final = rules.normalize(result.final_url)
        if final != url:
            self.stats.redirects += 1
            valid = final is not None and rules.validate(final)
            target = [final] if valid and final is not None else []
            await self._finish(page, url, result, b"", target, error=None)
            if not valid or final is None:
                if final is not None:
                    await self._delete(final)
                return
            claimed = await self._claim_other(final, page.depth)
            if claimed is None:
                return  # another worker is processing the target right now
            page, url = claimed, final

        # Section 6: links and content.
        content = result.body if result.ok else b""
        links: list[str] = []
        if content and is_html(result.content_type) and self._follows(page.depth):
            found = extract_links(content, url, result.content_type).links
            links = [u for u in rules.many(found, None) if self._in_scope(u)]
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
                self.stats.errors["hook"] += 1
                await self._finish_stale(page, url, "hook", result, links)
                return
            content = transformed.encode("utf-8") if isinstance(transformed, str) else transformed
        await self._finish(page, url, result, content, links, error=None)

    async def _fetch(self, page: ClaimedPage, url: str) -> FetchResult | None:
        host = host_of(url)
        try:
            async with self.gate.slot(host):
                result = await self.fetcher.fetch(FetchRequest(url))
        except FetchError as exc:
            log.warning("fetch failed: %s", exc)
            self.gate.observe(host, None)
            self.stats.errors[exc.category] += 1
            await self._finish_stale(page, url, exc.category)
            return None
        self.gate.observe(host, result)
        return result

    # -- finalizing -------------------------------------------------------------------------

    async def _finish(
        self,
        page: ClaimedPage,
        url: str,
        result: FetchResult,
        content: bytes,
        links: list[str],
        error: str | None,
    ) -> None:
        """Sections 8-9: freshness, schedule, downstream hook, then the UPSERT (batched)."""
        known = await self.frontier.known(links) if links else set()
        new = [u for u in links if u not in known and u != url]
        digest = content_hash(content)
        fresh = bool(new) or digest != page.content_hash
        status_error = error or (None if result.ok else f"http_{result.status}")
        if self.options.downstream_hook is not None:
            try:
                await await_me_maybe(
                    self.options.downstream_hook(content, result.content_type, url, fresh)
                )
            except Exception:
                log.exception("downstream_hook failed for %s", url)
                self.stats.errors["hook"] += 1
                await self._finish_stale(page, url, "hook", result, links)
                return
        self.stats.fresh += fresh
        self.stats.new_links += len(new)
        if status_error and not result.ok:
            self.stats.errors[status_error] += 1
        now = int(time.time())
        interval = self.options.schedule.next_interval(
            page.last_crawl_time, page.next_crawl_time, fresh
        )
        await self._write(
            PageUpdate(
                norm_url=url,
                host=host_of(url),
                last_crawl_time=now,
                next_crawl_time=now + interval,
                content_hash=digest,
                depth=page.depth,
                status=result.status,
                error=status_error,
                content_type=result.content_type or None,
                fresh=fresh,
                links=self._new_links(links, page.depth),
            )
        )

    async def _finish_stale(
        self,
        page: ClaimedPage,
        url: str,
        error: str,
        result: FetchResult | None = None,
        links: list[str] | None = None,
    ) -> None:
        """Finalize without new content: stale schedule, stored hash kept, claim cleared."""
        now = int(time.time())
        interval = self.options.schedule.next_interval(
            page.last_crawl_time, page.next_crawl_time, False
        )
        await self._write(
            PageUpdate(
                norm_url=url,
                host=host_of(url),
                last_crawl_time=now,
                next_crawl_time=now + interval,
                content_hash=None,
                depth=page.depth,
                status=result.status if result else None,
                error=error,
                content_type=(result.content_type or None) if result else None,
                links=self._new_links(links or [], page.depth),
            )
        )

    def _new_links(self, links: list[str], depth: int) -> tuple[NewLink, ...]:
        return tuple(NewLink(u, host_of(u), depth + 1, "link") for u in links)

    def _follows(self, depth: int) -> bool:
        o = self.options
        return o.follow_links and (o.max_depth <= 0 or depth < o.max_depth)

    def _in_scope(self, url: str) -> bool:
        return self.options.scope is None or self.options.scope(url)

    async def _claim_other(self, url: str, depth: int) -> ClaimedPage | None:
        await self.flush()  # the claim must see our own finalized rows
        return await self.frontier.claim_url(url, host_of(url), depth, int(time.time()))

    async def _delete(self, url: str) -> None:
        await self.flush()
        await self.frontier.delete([url])
        self.stats.deleted += 1

    async def _write(self, update: PageUpdate) -> None:
        self._pending.append(update)
        if len(self._pending) >= self.options.write_batch:
            await self.flush()

    async def flush(self) -> None:
        """Write all pending page updates in one transaction."""
        async with self._write_lock:
            pending, self._pending = self._pending, []
            if pending:
                await self.frontier.finalize(pending)
