"""The last stage of a page: freshness, schedule, downstream hook, then its write, batched.

A finished page stays claimed until its batch is written (``write_batch`` pages, or fewer once
the oldest has waited ``flush_after_sec``); the batch is one transaction, and when the database
refuses it, page by page, so one bad page never stops a crawl.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from typing import TYPE_CHECKING

from litecrawl.errors import DatabaseUnusable, FrontierError, error_for
from litecrawl.fetch.base import FetchResult
from litecrawl.hooks import await_me_maybe
from litecrawl.index.document import IndexDocument
from litecrawl.outcomes import CrawlStats, PageOutcomes
from litecrawl.schedule.planner import NextVisit, PageChange, Planner, change_age
from litecrawl.store.frontier import Frontier
from litecrawl.store.queue import ClaimedPage, FinalizeResult, NewLink, PageUpdate
from litecrawl.urls import host_of

if TYPE_CHECKING:
    from litecrawl.engine_options import EngineOptions
    from litecrawl.store.strategies import StrategyWrites

__all__ = ["PageWriter", "content_hash"]

log = logging.getLogger("litecrawl")
# pages' change records read at once for the prior: the whole crawl at once held every record's
# JSON (docs/freshness.md, the allocation)
_RECORDS_BATCH = 10_000


def content_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


class PageWriter:
    """Finishes the engine's pages into ``frontier``, counting in ``stats`` and ``outcomes``."""

    def __init__(
        self,
        frontier: Frontier,
        options: EngineOptions,
        stats: CrawlStats,
        outcomes: PageOutcomes,
    ) -> None:
        self.frontier = frontier
        self.options = options
        self.stats = stats
        self.outcomes = outcomes
        self.written = 0  # pages written in this run: its heartbeats record it
        self.finished = False  # the strategy's finished() said so
        self._pending: list[PageUpdate] = []
        self._pending_since = 0.0
        self._write_lock = asyncio.Lock()
        self.planner = Planner(options.schedule)

    async def finish(
        self,
        page: ClaimedPage,
        url: str,
        result: FetchResult,
        content: bytes,
        links: list[str],
        extra: list[NewLink] | None = None,
        document: IndexDocument | None = None,
        links_out: list[str] | None = None,
        digest: str | None = None,
        hosts: list[str] | None = None,
    ) -> None:
        """Steps 8-9 (docs/python-api.md): freshness, schedule, downstream hook, the batched write.
        ``digest``: ``content``'s SHA-256 if already known (an analysis worker hashed the body);
        ``hosts``: each of ``links``' host, if known (the worker's, with the links).

        Fresh = a new valid link or a changed content hash. The downstream hook must be told
        before the write, so with a hook the links are looked up first; without one the write
        itself finds out which links are new (one database round trip less per page).
        """
        extra = extra or []
        error = None if result.ok or result.status == 304 else f"http_{result.status}"
        if digest is None:
            digest = content_hash(content)
        now = int(time.time())
        planner, last, nxt, host = (
            self.planner,
            page.last_crawl_time,
            page.next_crawl_time,
            host_of(url),
        )
        change = None
        if result.ok and (content or document is not None):
            # "changed" is about what the user keeps: the extracted text when it is indexed (an
            # ad or a timestamp in the markup is no change); a 304 is no change
            change = planner.observe(
                page.change_history,
                last,
                now,
                document.text_hash if document is not None else digest,
                result.revalidated,
                change_age(result.headers, now, last),
            )
        writes = None
        if self.options.strategy is not None:
            # a listing's page entries are links like any other to the strategy: it decides
            entries = [link.url for link in extra if link.kind == "page"]
            writes = self._strategy_event(page, url, result, [*links, *entries], error, change)
            queued = [w.url for w in writes.links if w.queue and w.url != url]
            listed = set(entries)
            links = [u for u in queued if u not in listed]
            hosts = None  # the strategy's links: their hosts are found again
            extra = [link for link in extra if link.kind != "page" or link.url in set(queued)]
        candidates = links + [link.url for link in extra]
        fresh = fresh_content = digest != page.content_hash
        decide_in_write = (
            not fresh
            and bool(candidates)
            and self.options.downstream_hook is None
            and writes is None
        )
        if not fresh and candidates and not decide_in_write:
            known = await self.frontier.known(candidates)
            fresh = any(u not in known and u != url for u in candidates)
        if self.options.downstream_hook is not None:
            try:
                await await_me_maybe(
                    self.options.downstream_hook(content, result.content_type, url, fresh)
                )
            except Exception:
                log.exception("downstream_hook failed for %s", url)
                self.outcomes.failed(
                    page, url, error_for("hook", url, "downstream_hook raised"), "fetch"
                )
                await self.finish_stale(page, url, "hook", result, links)
                return
        self.stats.fresh += fresh and error is None  # the summary's: an error page is not news
        redirected = (
            result.final_url != url and self.options.rules.normalize(result.final_url) != url
        )
        self.outcomes.response(page, url, result, error, document, redirected)
        await self._refresh_plan(now)
        rate = change.change_rate if change else planner.rate(page.change_history)
        record = change.change_history if change else page.change_history
        visit = self._next_visit(page, now, fresh, host, rate, record)
        await self._write(
            PageUpdate(
                norm_url=url,
                host=host,
                last_crawl_time=now,
                next_crawl_time=visit.due,
                recrawl_interval=visit.interval,
                next_crawl_time_if_new_links=(
                    planner.next_visit(now, last, nxt, True, host, rate, record).due
                    if decide_in_write
                    else None
                ),
                content_hash=digest,
                depth=page.depth,
                status=result.status,
                error=error,
                content_type=result.content_type or None,
                etag=result.headers.get("etag"),
                last_modified=result.headers.get("last-modified"),
                links=(self._new_links(links, page.depth, hosts) if writes is None else ())
                + tuple(extra),
                document=document,
                strategy=writes,
                # an unchanged page links where it did: its stored links stay as they are
                links_out=links_out if fresh_content else None,
                response_ms=round(result.elapsed * 1000),
                kind=page.kind,
                change=change,
            )
        )

    async def finish_stale(
        self,
        page: ClaimedPage,
        url: str,
        error: str | None,
        result: FetchResult | None = None,
        links: list[str] | None = None,
        recheck_lastmod: bool = False,
    ) -> None:
        """Finalize without new content: stale schedule, stored hash kept, claim cleared."""
        writes = None
        if self.options.strategy is not None:
            writes = self._strategy_event(page, url, result, [], error) if error else None
            links = None
        now = int(time.time())
        await self._refresh_plan(now)
        host = host_of(url)
        rate = self.planner.rate(page.change_history)
        visit = self._next_visit(page, now, False, host, rate, page.change_history)
        await self._write(
            PageUpdate(
                norm_url=url,
                host=host,
                last_crawl_time=now,
                next_crawl_time=visit.due,
                recrawl_interval=visit.interval,
                content_hash=None,
                depth=page.depth,
                status=result.status if result else None,
                error=error,
                content_type=(result.content_type or None) if result else None,
                links=self._new_links(links or [], page.depth),
                recheck_lastmod=recheck_lastmod,
                strategy=writes,
                response_ms=round(result.elapsed * 1000) if result and result.elapsed else None,
            )
        )

    async def _refresh_plan(self, now: float) -> None:
        """The uniform and freshness policies share the budget among all crawled pages: the
        allocation is solved again every minute from a histogram of their rates, which follows
        this process's writes and is read from every page at most hourly (docs/freshness.md)."""
        planner = self.planner
        if not planner.due_refresh(now):
            return
        if planner.due_read(now):
            began = time.monotonic()
            rates = await self.frontier.change_rates()
            records = None
            if planner.wants_records(now):  # a batch at a time (docs/freshness.md)
                records, after = planner.records_read(), ""
                while batch := await self.frontier.change_records(after, _RECORDS_BATCH):
                    after = batch[-1][0]
                    records.add((text, last) for _, text, last in batch)
            planner.refresh(rates, now, time.monotonic() - began, records)
        else:
            planner.solve(now)

    def _next_visit(
        self,
        page: ClaimedPage,
        now: int,
        fresh: bool,
        host: str,
        rate: float | None,
        record: str | None,
    ) -> NextVisit:
        """The page's next visit (``record``: its change record as written now), with the
        planner's histogram of rates and its budget's spend kept current with this write (pages
        only: what the allocation plans for)."""
        planner, last = self.planner, page.last_crawl_time
        visit = planner.next_visit(now, last, page.next_crawl_time, fresh, host, rate, record)
        if page.kind == "page":
            if planner.needs_rates:
                before = planner.rate(page.change_history) if last is not None else None
                planner.moved(host, before, rate)
            planner.set_due(last, page.recrawl_interval, visit.interval, page.change_history)
        return visit

    def _strategy_event(
        self,
        page: ClaimedPage,
        url: str,
        result: FetchResult | None,
        links: list[str],
        error: str | None,
        change: PageChange | None = None,
    ) -> StrategyWrites:
        """The strategy's hooks for one processed page; what they changed rides in its write."""
        from litecrawl.strategy.runner import LoadedPage

        runner = self.options.strategy
        assert runner is not None
        seen = (change.checks, change.changes, change.change_rate) if change else None
        loaded = LoadedPage(url, page.depth, 1, page.meta, seen)  # claimed = QUEUED
        if result is None:
            writes = runner.page_done(loaded, 0, {}, b"", [], error)
        else:
            writes = runner.page_done(
                loaded, result.status, dict(result.headers), result.body, links, error
            )
        self.count_strategy_errors()
        return writes

    def count_strategy_errors(self) -> None:
        runner = self.options.strategy
        if runner is not None and runner.errors:
            self.stats.errors["strategy"] += runner.errors
            runner.errors = 0

    def _new_links(
        self, links: list[str], depth: int, hosts: list[str] | None = None
    ) -> tuple[NewLink, ...]:
        if hosts is None:
            hosts = [host_of(u) for u in links]
        return tuple(NewLink(u, h, depth + 1, "link") for u, h in zip(links, hosts, strict=True))

    async def _write(self, update: PageUpdate) -> None:
        if not self._pending:
            self._pending_since = time.monotonic()
        self._pending.append(update)
        if len(self._pending) >= self.options.write_batch:
            await self.flush()  # waiting here is the back-pressure on a slow database
        elif (
            time.monotonic() - self._pending_since >= self.options.flush_after_sec
            and not self._write_lock.locked()
        ):
            await self.flush()

    async def flush(self) -> None:
        """Write all pending page updates in one transaction."""
        async with self._write_lock:
            pending, self._pending = self._pending, []
            if pending:
                result = await self._finalize(pending)
                self.written += len(pending)
                self.stats.new_links += result.new_links
                self.stats.fresh += result.fresh_by_links
                runner = self.options.strategy
                if runner is not None and not self.finished:
                    self.finished = runner.finished()
                    self.count_strategy_errors()

    async def _finalize(self, pending: list[PageUpdate]) -> FinalizeResult:
        """One transaction for the batch; when the database refuses it (not a lost connection:
        the stores wait those out), page by page, and a page whose index document cannot be
        written is kept without it, with the error ``not_indexed`` (the log says why): one bad
        page never stops a crawl."""
        try:
            return await self.frontier.finalize(pending)
        except FrontierError as exc:
            if isinstance(exc, DatabaseUnusable) or (
                len(pending) == 1 and pending[0].document is None
            ):
                raise
            log.warning("writing %d pages at once failed (%s): one by one", len(pending), exc)
        new_links = fresh = 0
        for update in pending:
            try:
                result = await self.frontier.finalize([update])
            except FrontierError as exc:
                if update.document is None or isinstance(exc, DatabaseUnusable):
                    raise  # nothing of the page's own to leave out: the database is at fault
                # the database's own words, without the location the store puts first
                reason = (str(exc.__cause__ or exc).strip().splitlines() or ["?"])[0]
                log.warning("%s: not indexed, the database refused it: %s", update.norm_url, reason)
                self.stats.indexed -= 1
                result = await self.frontier.finalize(
                    [dataclasses.replace(update, document=None, error="not_indexed")]
                )
            new_links += result.new_links
            fresh += result.fresh_by_links
        return FinalizeResult(new_links, fresh)
