"""Rendering fetcher: one shared headless Chromium, a fresh page per URL (docs/python-api.md,
step 4).

Each fetch: ``goto`` (images, fonts and media blocked), scroll ``scroll_rounds`` times, wait
until the network is quiet (bounded by ``timeout_ms``: a page that never goes idle still returns
what it has), run ``page_hook``, then return the rendered DOM (HTML) or the raw bytes (anything
else). A page whose HTML came but whose render ran out of time returns that HTML as served,
marked ``render_timed_out`` (docs/crawling.md, "A render that runs out of time"). Pages of one
site share a browser context, never another site's (:mod:`.contexts`).

Blocking costs the page no trip to Python for what is plainly not media: Chromium is started with
images turned off (none is requested), and a request whose URL ends in a script, style or
document extension goes on inside Playwright's driver; only the others (URLs that do not say
what they are) reach :meth:`_block`, which blocks them by the type Chromium gives them (image,
font, media).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import re
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import urljoin, urlsplit

import playwright.async_api as pw
from playwright.async_api import Browser, BrowserContext, Page, Route

from litecrawl.errors import (
    BadRedirect,
    BrowserUnavailable,
    FetchTimeout,
    NetworkError,
    TooLarge,
    TooManyRedirects,
    UnwantedType,
)
from litecrawl.fetch.base import MAX_BYTES, FetchRequest, FetchResult, accepts
from litecrawl.fetch.chromium_errors import INVALID_REDIRECT, REFUSED, net_error, translate
from litecrawl.fetch.contexts import ContextPool
from litecrawl.version import VERSION

__all__ = ["BrowserFetcher", "find_chromium"]

PageHook = Callable[[Page], Awaitable[None] | None]
# status, final URL, headers, body, the render timed out (body: the HTML as served)
_Got = tuple[int, str, dict[str, str], bytes, bool]

_FLAGS = "no-sandbox disable-gpu disable-background-networking disable-component-update"
LAUNCH_ARGS = [f"--{flag}" for flag in (_FLAGS + " disable-sync no-first-run disable-quic").split()]
# Blocking media, Chromium requests no image at all (<img>, CSS backgrounds, whatever the URL):
# no request, no route to Python and back. Fonts and media still go by their type (_block).
NO_IMAGES = ("--blink-settings=imagesEnabled=false",)
BLOCKED_TYPES = frozenset({"image", "font", "media"})
HTML_TYPES = ("text/html", "application/xhtml+xml")
VIEWER_TYPES = ("application/pdf",)  # Chromium shows these in a viewer; body() is the viewer
MAX_REDIRECTS = 10
IDLE_QUIET_S = 0.5  # network idle = nothing in flight for this long (Playwright's definition)
INSTALL_HINT = (
    "install Chromium with 'apt-get install chromium' (Debian/Ubuntu), or set LITECRAWL_CHROMIUM "
    "to a Chromium/Chrome executable, or run 'playwright install chromium' where browser "
    "downloads are possible"
)
# Requests for these are never images, fonts or media: Playwright's driver matches this regex and
# lets them go on without a trip to Python. Only the path counts (a query may say anything).
_NOT_MEDIA = r"[^?#]*\.(?:js|mjs|css|html?|json)(?:[?#]|$)"
_ASK_PYTHON = re.compile(rf"^(?!{_NOT_MEDIA})", re.IGNORECASE)
_SCROLL_JS = (
    "window.scrollTo(0, (document.scrollingElement||document.documentElement).scrollHeight)"
)


def find_chromium(executable_path: str | None = None) -> str:
    """The Chromium to drive: the argument, ``$LITECRAWL_CHROMIUM``, ``$PATH``, /usr/bin/chromium.

    An explicit path (argument or environment variable) that is not an executable is an error,
    never silently replaced. Raises :class:`BrowserUnavailable` saying what to install.
    """
    env = os.environ.get("LITECRAWL_CHROMIUM")
    for source, path in (("executable_path", executable_path), ("LITECRAWL_CHROMIUM", env)):
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return path
        if path:
            raise BrowserUnavailable(f"no executable at {path!r} (from {source}); {INSTALL_HINT}")
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    raise BrowserUnavailable(f"no Chromium found; {INSTALL_HINT}")


class _Inflight:
    """Counts a page's requests in flight from now on, to wait for a quiet network after
    scrolling.

    Made once the page has loaded: every request event costs a message from Playwright's driver
    and a Request object in Python (~35 a page on a documentation site, most of the client's
    work), so the load's own requests are left to the driver's ``networkidle``, which
    :meth:`wait_idle` awaits first.
    """

    def __init__(self, page: Page) -> None:
        self.page, self.count, self.changed = page, 0, asyncio.Event()
        self.last = time.monotonic()
        page.on("request", lambda _: self._add(1))
        page.on("requestfinished", lambda _: self._add(-1))
        page.on("requestfailed", lambda _: self._add(-1))

    def _add(self, n: int) -> None:
        self.count = max(0, self.count + n)  # a request of the load may finish after we count
        self.last = time.monotonic()
        self.changed.set()

    async def wait_idle(self, deadline: float) -> None:
        """Return once nothing was in flight for IDLE_QUIET_S, or at ``deadline`` (monotonic).

        First the driver's ``networkidle`` (no request for IDLE_QUIET_S since the navigation:
        it fires once, so it covers the load), then our count of what started since. Quiet time
        already passed counts: a page idle since before the scroll wait returns at once.
        """
        with contextlib.suppress(pw.Error):  # its timeout, or a navigation under way
            left_ms = max(deadline - time.monotonic(), 0.001) * 1000
            await self.page.wait_for_load_state("networkidle", timeout=left_ms)
        while (left := deadline - time.monotonic()) > 0:
            quiet_for = time.monotonic() - self.last
            if self.count == 0 and quiet_for >= IDLE_QUIET_S:
                return
            self.changed.clear()
            wait = IDLE_QUIET_S - quiet_for if self.count == 0 else left
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, wait))


class BrowserFetcher:
    """``async with BrowserFetcher() as f: result = await f.fetch(FetchRequest(url))``.

    ``fetch`` may run concurrently (cap it outside). ``timeout_ms`` bounds the navigation (no
    answer: :class:`FetchTimeout`), the parsing of the page and the wait for a quiet network;
    scrolling adds ``scroll_rounds * scroll_wait_ms``; the render, page_hook included, is cut
    off at twice ``timeout_ms`` plus the scrolling time. A render that runs out of time after
    the answer came gives the HTML as served (``render_timed_out``), never a second render.
    Headers other than User-Agent are sent with every request of the page; a request's own
    headers (conditional GET) only with the main document.
    """

    def __init__(
        self,
        *,
        headers: Mapping[str, str] | None = None,
        viewport: Mapping[str, int] | None = None,
        timeout_ms: int = 15000,
        block_media: bool = True,
        scroll_rounds: int = 1,
        scroll_wait_ms: int = 800,
        page_hook: PageHook | None = None,
        executable_path: str | None = None,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        extra = dict(headers or {})  # no User-Agent given: litecrawl's, never HeadlessChrome's
        ua = [extra.pop(k) for k in list(extra) if k.lower() == "user-agent"]
        self.user_agent = ua[-1] if ua else f"litecrawl/{VERSION}"
        self.extra_headers = extra
        self.viewport = dict(viewport or {"width": 2160, "height": 3840})
        self.timeout_ms, self.block_media = timeout_ms, block_media
        self.scroll_rounds, self.scroll_wait_ms = scroll_rounds, scroll_wait_ms
        self.page_hook, self.executable_path = page_hook, executable_path
        self.max_bytes = max_bytes
        self._pw: pw.Playwright | None = None
        self._browser: Browser | None = None
        self._contexts = ContextPool(self._new_context)
        self._path: str | None = None
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> Self:
        try:
            self._path = find_chromium(self.executable_path)
        except BrowserUnavailable:
            if self.executable_path or os.environ.get("LITECRAWL_CHROMIUM"):
                raise
            self._path = None  # Playwright's own build, if `playwright install chromium` worked
        self._pw = await pw.async_playwright().start()
        if self._path is None and not Path(self._pw.chromium.executable_path).is_file():
            await self._stop()
            raise BrowserUnavailable(f"no Chromium found; {INSTALL_HINT}")
        try:
            self._browser = await self._launch()
        except pw.Error as exc:
            await self._stop()
            where = self._path or "(Playwright's own build)"
            msg = str(exc).splitlines()[0]
            raise BrowserUnavailable(
                f"Chromium {where} failed to start: {msg}; {INSTALL_HINT}"
            ) from exc
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stop()

    async def _launch(self) -> Browser:
        assert self._pw is not None
        args = [*LAUNCH_ARGS, *(NO_IMAGES if self.block_media else ())]
        return await self._pw.chromium.launch(executable_path=self._path, headless=True, args=args)

    async def _stop(self) -> None:
        await self._contexts.close()
        browser, driver, self._browser, self._pw = self._browser, self._pw, None, None
        if browser is not None:
            with contextlib.suppress(pw.Error):
                await browser.close()
        if driver is not None:
            await driver.stop()

    async def fetch(self, request: FetchRequest) -> FetchResult:
        url, start = request.url, time.monotonic()
        async with self._lock:  # the shared browser, relaunched if it crashed
            if self._pw is None or self._browser is None:
                raise RuntimeError("use 'async with BrowserFetcher(...)' before fetch()")
            if not self._browser.is_connected():
                self._contexts.forget()
                self._browser = await self._launch()
        hard_s = 2 * self.timeout_ms / 1000 + self.scroll_rounds * self.scroll_wait_ms / 1000
        try:
            # the render is cut off at hard_s (_visit); this bounds what follows: the served
            # HTML's read (or a hook's await that ignores cancellation) gets timeout_ms more
            async with asyncio.timeout(hard_s + self.timeout_ms / 1000):
                async with self._contexts.page(url) as (context, page):
                    got = await self._visit(context, page, request, start, start + hard_s)
        except TimeoutError as exc:  # the hard cut-off above (Playwright's timeouts are below)
            raise FetchTimeout(url, f"no result within {hard_s:.1f}s") from exc
        except pw.Error as exc:
            raise translate(url, exc) from exc
        status, final_url, headers, body, cut = got
        if len(body) > self.max_bytes:  # as the HTTP fetcher: what was rendered, or downloaded
            raise TooLarge(url, f"body over {self.max_bytes} bytes")
        elapsed = time.monotonic() - start
        return FetchResult(url, final_url, status, headers, body, elapsed, render_timed_out=cut)

    async def _redirected_to(self, context: BrowserContext, url: str) -> str | None:
        """The scheme a redirect of ``url`` leads to when it is not http(s) (Chromium says only
        "aborted"): the redirects asked for again without following them, as the HTTP fetcher
        sees them. None when none leads elsewhere (or this second look fails)."""
        for _ in range(MAX_REDIRECTS):
            try:
                response = await context.request.get(
                    url, max_redirects=0, timeout=self.timeout_ms, fail_on_status_code=False
                )
                location = response.headers.get("location")
                await response.dispose()
            except pw.Error:
                return None
            if not location or not 300 <= response.status < 400:
                return None
            url = urljoin(url, location)
            scheme = urlsplit(url).scheme.lower()
            if scheme not in ("http", "https"):
                return scheme
        return None

    async def _new_context(self) -> BrowserContext:
        assert self._browser is not None
        context = await self._browser.new_context(
            viewport={"width": self.viewport["width"], "height": self.viewport["height"]},
            user_agent=self.user_agent,
            extra_http_headers=self.extra_headers,
            accept_downloads=False,
        )
        context.set_default_timeout(self.timeout_ms)
        if self.block_media:
            await context.route(_ASK_PYTHON, self._block)
        return context

    async def _visit(
        self, context: BrowserContext, page: Page, request: FetchRequest, start: float, hard: float
    ) -> _Got:
        downloads = list[object]()
        page.on("download", lambda d: downloads.append(d))
        if request.headers:  # the first request of a new page is its navigation
            await page.route("**/*", lambda route: self._first(route, page, request), times=1)
        try:
            # "commit": back as soon as the answer's headers are in, so a render that runs out
            # of time afterwards still has the page's HTML as served (_served)
            response = await page.goto(request.url, wait_until="commit")
        except pw.Error as exc:
            code = net_error(str(exc))
            if code == INVALID_REDIRECT:
                raise BadRedirect(request.url, "redirect to something that is not a URL") from exc
            download = bool(downloads) or "Download is starting" in str(exc)
            if not download and code in REFUSED:
                scheme = await self._redirected_to(context, request.url)
                if scheme is not None:
                    why = f"redirect to {scheme}:, not to an http(s) URL"
                    raise BadRedirect(request.url, why) from exc
            if not download:
                raise
            return (*await self._direct(context, request.url, request.headers), False)
        if response is None:
            raise NetworkError(request.url, "navigation produced no response")
        hops, hop = 0, response.request.redirected_from
        while hop is not None:
            hops, hop = hops + 1, hop.redirected_from
        if hops > MAX_REDIRECTS:  # Chromium allows 20
            raise TooManyRedirects(request.url, f"{hops} redirects (at most {MAX_REDIRECTS})")
        headers = await response.all_headers()
        mime = headers.get("content-type", "").split(";")[0].strip().lower()
        final_url = page.url
        if mime in VIEWER_TYPES:  # the viewer stopped: closing a page that shows one can hang
            with contextlib.suppress(pw.Error):
                await page.goto("about:blank")
        if 200 <= response.status < 300 and not accepts(mime, request.accept_types):
            raise UnwantedType(request.url, mime, response.status)
        if mime in VIEWER_TYPES:
            return (*await self._direct(context, final_url, request.headers), False)
        if mime and mime not in HTML_TYPES:  # image, text, JSON...: the bytes as served
            return response.status, page.url, headers, await response.body(), False
        deadline = start + self.timeout_ms / 1000
        try:
            async with asyncio.timeout(max(hard - time.monotonic(), 0.001)):
                left_ms = max(deadline - time.monotonic(), 0.001) * 1000
                try:
                    await page.wait_for_load_state("domcontentloaded", timeout=left_ms)
                except pw.TimeoutError:
                    raise TimeoutError from None
                body = await self._render(page, deadline)
        except TimeoutError:
            # The render ran out of time, not the server: the HTML as served is kept, never
            # rendered again (docs/crawling.md). No body either: a timeout.
            return response.status, page.url, headers, await response.body(), True
        # The body is now the DOM serialised as UTF-8, whatever charset the server declared.
        headers["content-type"] = f"{mime or 'text/html'}; charset=utf-8"
        return response.status, page.url, headers, body, False

    async def _render(self, page: Page, deadline: float) -> bytes:
        """The loaded page scrolled, waited on until idle, given to ``page_hook``, serialised."""
        with contextlib.suppress(pw.TimeoutError):
            left_ms = max(deadline - time.monotonic(), 0.001) * 1000
            await page.wait_for_load_state("load", timeout=left_ms)
        inflight = _Inflight(page)
        for _ in range(self.scroll_rounds):
            with contextlib.suppress(pw.Error):  # a script or meta refresh may be navigating
                await page.evaluate(_SCROLL_JS)
            await asyncio.sleep(self.scroll_wait_ms / 1000)
        await inflight.wait_idle(deadline)
        if self.page_hook is not None and inspect.isawaitable(result := self.page_hook(page)):
            await result
        with contextlib.suppress(pw.Error):  # fails if a script is navigating away right now
            return (await page.content()).encode()
        await page.wait_for_load_state("domcontentloaded")
        return (await page.content()).encode()

    @staticmethod
    async def _block(route: Route) -> None:
        if route.request.resource_type in BLOCKED_TYPES:
            await route.abort()
        else:
            await route.continue_()

    async def _first(self, route: Route, page: Page, request: FetchRequest) -> None:
        """The navigation gets the request's own headers (conditional GET); nothing else does."""
        req = route.request
        if req.is_navigation_request() and req.frame == page.main_frame:
            headers = {**await req.all_headers(), **self.extra_headers, **request.headers}
            await route.continue_(headers=headers)
        else:
            await route.fallback()

    async def _direct(
        self, context: BrowserContext, url: str, extra: Mapping[str, str]
    ) -> tuple[int, str, dict[str, str], bytes]:
        """Downloads and PDFs: the raw bytes via the context's HTTP client (same UA, headers)."""
        resp = await context.request.get(
            url, headers=dict(extra), timeout=self.timeout_ms, max_redirects=MAX_REDIRECTS
        )
        headers = {k.lower(): v for k, v in resp.headers.items()}
        return resp.status, resp.url, headers, await resp.body()
