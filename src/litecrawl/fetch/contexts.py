"""Browser contexts shared by the pages of one site, so rendering pays a context once per site.

A context is Chromium's private profile: cookies, storage, HTTP cache. Each origin (scheme, host
and port) gets its own, shared by its pages while the fetcher lives (one ``litecrawl()`` batch)
and replaced after :data:`PAGES_PER_CONTEXT` pages: what one site stores is never seen by
another site's pages, and the site's scripts and stylesheets are fetched and compiled once
rather than for every page. Every page is closed after its fetch; a context is closed once it
is replaced and its last page is done, or when more than :data:`IDLE_CONTEXTS` sit idle (the
least recently used first), so a crawl over many sites keeps a bounded number open.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import playwright.async_api as pw
from playwright.async_api import BrowserContext, Page

__all__ = ["IDLE_CONTEXTS", "PAGES_PER_CONTEXT", "ContextPool", "origin_of"]

PAGES_PER_CONTEXT = 100  # then a fresh context: bounded memory and bounded state per site
IDLE_CONTEXTS = 8  # contexts kept open with no page in them
# Chromium's close of a page can hang for good (a PDF viewer that was loading: 7 in 15 closes
# on Chromium 156): past this the page is left to its context, which is retired and closed
PAGE_CLOSE_S = 5.0


def origin_of(url: str) -> str:
    """``scheme://host:port``: cookies ignore the port, so ports are told apart here."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


@dataclass(eq=False)
class _Shared:
    made: asyncio.Future[BrowserContext]  # its pages wait for it; the pool owns it either way
    pages: int = 0  # open now
    used: int = 0  # opened in all
    idle_since: float = 0.0


class ContextPool:
    """``async with pool.page(url) as (context, page): ...``; ``close()`` closes them all."""

    def __init__(self, make: Callable[[], Awaitable[BrowserContext]]) -> None:
        self._make = make
        self._live: dict[str, _Shared] = {}  # origin -> the context its next pages open in
        self._retired: set[_Shared] = set()  # replaced, closed when their last page is done
        self._closing: set[asyncio.Future[None]] = set()

    @contextlib.asynccontextmanager
    async def page(self, url: str) -> AsyncIterator[tuple[BrowserContext, Page]]:
        origin = origin_of(url)
        shared = self._take(origin)
        try:
            # shielded: a fetch cut off by its timeout leaves the context to the pool
            context = await asyncio.shield(shared.made)
            page = await context.new_page()
        except BaseException:
            await self._give_back(origin, shared)
            raise
        try:
            yield context, page
        finally:
            try:
                with contextlib.suppress(pw.Error):  # a crashed browser took it already
                    async with asyncio.timeout(PAGE_CLOSE_S):
                        await page.close()
            except TimeoutError:
                self._retire(origin, shared)  # closed with the page when given back below
            finally:
                await self._give_back(origin, shared)

    def _take(self, origin: str) -> _Shared:
        shared = self._live.get(origin)
        if shared is None or shared.used >= PAGES_PER_CONTEXT:
            if shared is not None:
                self._retire(origin, shared)
            shared = self._live[origin] = _Shared(asyncio.ensure_future(self._make()))
            shared.made.add_done_callback(lambda made: self._watch(origin, shared, made))
        shared.pages += 1
        shared.used += 1
        return shared

    def _retire(self, origin: str, shared: _Shared) -> None:
        if self._live.get(origin) is shared:
            del self._live[origin]
        self._retired.add(shared)

    def _watch(self, origin: str, shared: _Shared, made: asyncio.Future[BrowserContext]) -> None:
        """A context closed by another (a page_hook) is dropped: the next page gets a new one."""
        if not made.cancelled() and made.exception() is None:
            made.result().once("close", lambda _: self._drop(origin, shared))

    def _drop(self, origin: str, shared: _Shared) -> None:
        if self._live.get(origin) is shared:
            del self._live[origin]
        self._retired.discard(shared)

    async def _give_back(self, origin: str, shared: _Shared) -> None:
        shared.pages -= 1
        shared.idle_since = time.monotonic()
        failed = shared.made.done() and (shared.made.cancelled() or shared.made.exception())
        if failed and self._live.get(origin) is shared:
            del self._live[origin]  # the next page tries a new one
        closing: list[_Shared] = []
        if shared in self._retired and not shared.pages:
            self._retired.discard(shared)
            closing.append(shared)
        idle = sorted((s.idle_since, o) for o, s in self._live.items() if not s.pages)
        closing += [self._live.pop(old) for _, old in idle[: max(0, len(idle) - IDLE_CONTEXTS)]]
        if closing:  # closed before the fetch returns, as a page's own context used to be
            await asyncio.wait([self._close(s) for s in closing])  # wait: a cancel spares them

    def _close(self, shared: _Shared) -> asyncio.Future[None]:
        """Close ``shared`` (once made); tracked, so ``close()`` waits even for a cancelled one."""
        closing = asyncio.ensure_future(_close(shared.made))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)
        return closing

    def forget(self) -> None:
        """The browser is gone (crashed): its contexts went with it."""
        self._live.clear()
        self._retired.clear()

    async def close(self) -> None:
        for shared in [*self._live.values(), *self._retired]:
            self._close(shared)
        self.forget()
        await asyncio.gather(*self._closing)


async def _close(made: asyncio.Future[BrowserContext]) -> None:
    try:
        context = await made
    except BaseException:  # never made: nothing to close
        return
    with contextlib.suppress(pw.Error):  # gone with a crashed browser already
        await context.close()
