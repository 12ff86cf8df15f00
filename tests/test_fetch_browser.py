"""BrowserFetcher against real local servers with a real headless Chromium (no mocks)."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import re
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import LocalServer, db_query, html_page, site_app
from playwright.async_api import Page
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.errors import (
    BadRedirect,
    BrowserUnavailable,
    ConnectError,
    FetchTimeout,
    TooLarge,
    TooManyRedirects,
)
from litecrawl.fetch import contexts
from litecrawl.fetch.base import FetchRequest, FetchResult
from litecrawl.fetch.browser import BrowserFetcher, find_chromium


def _have_chromium() -> bool:
    try:
        find_chromium()
    except BrowserUnavailable:
        return False
    return True


# In CI the browser must exist (.ci/run installs it): there a missing Chromium fails the tests.
pytestmark = pytest.mark.skipif(
    not _have_chromium() and not os.environ.get("CI"),
    reason="no Chromium: apt-get install chromium, or set LITECRAWL_CHROMIUM",
)

Serve = Callable[[web.Application], LocalServer]
PDF = b"%PDF-1.4\n1 0 obj <</Type /Catalog>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")


def app_of(**routes: Callable[[web.Request], Any] | tuple[str, bytes | str]) -> web.Application:
    """An app from path -> handler or path -> (content type, body); ``_`` in names is ``.``."""
    app = web.Application()
    for name, route in routes.items():
        if isinstance(route, tuple):
            ctype, body = route
            data = body.encode() if isinstance(body, str) else body

            async def handler(
                _: web.Request, ctype: str = ctype, data: bytes = data
            ) -> web.Response:
                return web.Response(body=data, content_type=ctype)

            route = handler
        app.router.add_get("/" + name.replace("_", ".") if name != "index" else "/", route)
    return app


def fetch(url: str, request_headers: dict[str, str] | None = None, **kw: Any) -> FetchResult:
    async def go() -> FetchResult:
        async with BrowserFetcher(**kw) as fetcher:
            return await fetcher.fetch(FetchRequest(url, headers=request_headers or {}))

    return asyncio.run(go())


JS_PAGE = html_page(
    """
    <a href="/static-link">static</a>
    <div id="links"></div>
    <div style="height: 10000px">spacer</div>
    <div id="sentinel">bottom</div>
    <script src="/app.js"></script>
    """,
    title="js",
)
APP_JS = """
const a = document.createElement("a");
a.href = "/js-link"; a.textContent = "made by script";
document.getElementById("links").appendChild(a);
new IntersectionObserver(async (entries, observer) => {
  if (!entries.some((e) => e.isIntersecting)) return;
  observer.disconnect();
  const html = await (await fetch("/more")).text();  // slow: only the idle wait catches it
  document.getElementById("links").insertAdjacentHTML("beforeend", html);
}).observe(document.getElementById("sentinel"));
"""


def js_app() -> web.Application:
    async def more(_: web.Request) -> web.Response:
        await asyncio.sleep(0.4)
        return web.Response(text='<a href="/scrolled-link">after scroll</a>')

    return app_of(
        index=("text/html", JS_PAGE), app_js=("application/javascript", APP_JS), more=more
    )


def test_js_links_and_links_loaded_after_scrolling(serve: Serve) -> None:
    server = serve(js_app())
    result = fetch(server.url("/"), scroll_wait_ms=100)
    assert result.status == 200
    assert result.content_type.startswith("text/html")
    assert b'href="/static-link"' in result.body
    assert b'href="/js-link"' in result.body
    assert b'href="/scrolled-link"' in result.body
    assert server.count("/more") == 1
    # Without a scroll the bottom of the page is never seen, so that link never appears.
    result = fetch(server.url("/"), scroll_rounds=0)
    assert b'href="/js-link"' in result.body
    assert b"/scrolled-link" not in result.body


def test_a_request_of_the_load_still_running_after_the_scroll_is_waited_for(
    serve: Serve,
) -> None:
    # Started as the page loads, answered 1.5 s later: long after the scroll wait (100 ms) and
    # after the page's `load`, so only the wait for a quiet network catches it.
    page = html_page(
        """<div id="late"></div><script>
        addEventListener("load", async () => {
          const html = await (await fetch("/slow")).text();
          document.getElementById("late").innerHTML = html;
        });</script>"""
    )

    async def slow(_: web.Request) -> web.Response:
        await asyncio.sleep(1.5)
        return web.Response(text='<a href="/late-link">late</a>')

    server = serve(app_of(index=("text/html", page), slow=slow))
    result = fetch(server.url("/"), scroll_wait_ms=100)
    assert b'href="/late-link"' in result.body
    assert server.count("/slow") == 1


def test_user_agent_and_headers_reach_the_server(serve: Serve) -> None:
    server = serve(js_app())
    fetch(server.url("/"), scroll_rounds=0)
    version = importlib.metadata.version("litecrawl")
    assert server.requests[0].headers["User-Agent"] == f"litecrawl/{version}"
    assert "HeadlessChrome" not in server.requests[0].headers["User-Agent"]

    server.requests.clear()
    fetch(
        server.url("/"),
        request_headers={"If-None-Match": '"v1"'},
        headers={"User-Agent": "TestBot/2.0 (+https://example.org/bot)", "X-Probe": "yes"},
        scroll_rounds=0,
    )
    seen = {r.path: r.headers for r in server.requests}
    for path in ("/", "/app.js"):  # the page and its subresources
        assert seen[path]["User-Agent"] == "TestBot/2.0 (+https://example.org/bot)"
        assert seen[path]["X-Probe"] == "yes"
    assert seen["/"]["If-None-Match"] == '"v1"'  # the request's own headers: document only
    assert "If-None-Match" not in seen["/app.js"]


MEDIA_PAGE = html_page(
    """<p class="t">text</p>
    <img src="/pic.png" alt="by extension"><img src="/avatar" alt="no extension">
    <div style="width: 10px; height: 10px; background: url(/bg)"></div>
    <video src="/clip.mp4" preload="auto" autoplay muted></video>""",
    head="""<link rel="stylesheet" href="/style.css">
    <style>@font-face { font-family: T; src: url(/font.woff2) format("woff2"); }
    .t { font-family: T; }</style>""",
)
MEDIA = ("/pic.png", "/avatar", "/bg", "/font.woff2", "/clip.mp4")


def media_app() -> web.Application:
    junk = ("application/octet-stream", b"\x00" * 64)
    return app_of(
        index=("text/html", MEDIA_PAGE),
        style_css=("text/css", "p { color: red }"),
        pic_png=("image/png", PNG),
        avatar=("image/png", PNG),  # an image whose URL does not say so
        bg=("image/png", PNG),
        font_woff2=junk,
        clip_mp4=junk,
    )


def test_media_is_blocked_unless_asked_for(serve: Serve) -> None:
    server = serve(media_app())
    result = fetch(server.url("/"), scroll_wait_ms=100)
    assert b"text</p>" in result.body
    assert server.count("/style.css") == 1  # not media: loaded
    assert {path: server.count(path) for path in MEDIA} == dict.fromkeys(MEDIA, 0)
    server.requests.clear()
    fetch(server.url("/"), scroll_wait_ms=100, block_media=False)
    assert all(server.count(path) >= 1 for path in MEDIA), server.paths()


def test_redirect_gives_final_url(serve: Serve) -> None:
    async def old(_: web.Request) -> web.Response:
        raise web.HTTPFound("/new")

    async def loop(_: web.Request) -> web.Response:
        raise web.HTTPFound("/loop")

    refresh = html_page("wait", head='<meta http-equiv="refresh" content="0; url=/new">')
    script = html_page("<script>location.href = '/new'</script>")
    new = ("text/html", html_page("<p>new page</p>"))
    server = serve(
        app_of(old=old, loop=loop, new=new, meta=("text/html", refresh), js=("text/html", script))
    )
    result = fetch(server.url("/old"), scroll_rounds=0)
    assert result.url == server.url("/old")
    assert result.final_url == server.url("/new")
    assert result.status == 200
    assert b"new page" in result.body
    for client_side in ("/meta", "/js"):  # redirects done by the page itself, mid-render
        result = fetch(server.url(client_side), scroll_wait_ms=50)
        assert result.final_url == server.url("/new")
        assert b"new page" in result.body
    with pytest.raises(TooManyRedirects) as info:
        fetch(server.url("/loop"), scroll_rounds=0)
    assert info.value.url == server.url("/loop")
    assert info.value.__cause__ is not None


def test_bad_redirects_are_bad_redirect_as_over_http(serve: Serve) -> None:
    """Chromium stops these navigations with "aborted" or "unsafe redirect"; the category is
    the HTTP fetcher's (bad_redirect: not retried), with the same words."""
    targets = {
        "js": "javascript:alert(1)",
        "data": "data:text/html,<p>hi</p>",
        "ftp": "ftp://example.com/x",
        "mailto": "mailto:a@example.com",
        "hop": "/js",  # an http redirect first
        "broken": "http://[::1",
    }
    routes: dict[str, Any] = {}
    for name, location in targets.items():

        async def moved(_: web.Request, location: str = location) -> web.Response:
            return web.Response(status=302, headers={"Location": location})

        routes[name] = moved
    server = serve(app_of(**routes))

    async def go() -> dict[str, str]:
        said = {}
        async with BrowserFetcher(scroll_rounds=0) as fetcher:
            for name in targets:
                with pytest.raises(BadRedirect) as info:
                    await fetcher.fetch(FetchRequest(server.url(f"/{name}")))
                said[name] = str(info.value).removeprefix(server.url(f"/{name}") + ": ")
        return said

    said = asyncio.run(go())
    not_http = "redirect to {}:, not to an http(s) URL"
    assert said == {
        "js": not_http.format("javascript"),
        "data": not_http.format("data"),
        "ftp": not_http.format("ftp"),
        "mailto": not_http.format("mailto"),
        "hop": not_http.format("javascript"),
        "broken": "redirect to something that is not a URL",
    }


def test_404_is_a_result_not_an_error(serve: Serve) -> None:
    server = serve(site_app({"/": html_page("home")}))
    result = fetch(server.url("/missing"), scroll_rounds=0)
    assert result.status == 404
    assert not result.ok
    assert b"not found" in result.body


BUTTON_PAGE = html_page(
    """<button id="more">more</button>
    <script>
      document.getElementById("more").onclick = () => {
        const p = document.createElement("p");
        p.id = "added";
        p.textContent = "added " + "by click";
        document.body.appendChild(p);
      };
    </script>"""
)
ADDED = b'<p id="added">added by click</p>'


def test_page_hook_async_and_sync(serve: Serve) -> None:
    server = serve(site_app({"/": BUTTON_PAGE}))
    seen: list[str] = []

    async def click(page: Page) -> None:
        seen.append("async")
        await page.click("#more")
        await page.wait_for_selector("#added")

    result = fetch(server.url("/"), scroll_rounds=0, page_hook=click)
    assert ADDED in result.body

    def record(page: Page) -> None:  # a plain function works too
        seen.append(page.url)

    result = fetch(server.url("/"), scroll_rounds=0, page_hook=record)
    assert ADDED not in result.body
    # A sync callable returning an awaitable: the awaitable is awaited.
    result = fetch(server.url("/"), scroll_rounds=0, page_hook=lambda page: page.click("#more"))
    assert ADDED in result.body
    assert seen == ["async", server.url("/")]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections (kernel backlog) and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def timed_fetch(url: str, **kw: Any) -> tuple[float, FetchResult | Exception]:
    """Seconds spent in ``fetch`` alone (not browser start-up), and its result or error."""

    async def go() -> tuple[float, FetchResult | Exception]:
        async with BrowserFetcher(**kw) as fetcher:
            start = time.monotonic()
            try:
                result: FetchResult | Exception = await fetcher.fetch(FetchRequest(url))
            except Exception as exc:
                result = exc
            return time.monotonic() - start, result

    return asyncio.run(go())


def test_server_that_never_answers_times_out(silent_port: int) -> None:
    url = f"http://127.0.0.1:{silent_port}/"
    elapsed, error = timed_fetch(url, timeout_ms=1500)
    assert isinstance(error, FetchTimeout), error
    # the 1.5 s asked for, not the 15 s default (the upper bound leaves a loaded machine room)
    assert 1.4 < elapsed < 14
    assert error.url == url
    assert error.category == "timeout"
    assert error.__cause__ is not None


def test_page_that_never_goes_idle_still_returns(serve: Serve) -> None:
    """The wait for a quiet network ends at the timeout with the page as rendered: a ping every
    0.1 s keeps the network busy for good, each answer written into the DOM. Were the wait not
    to end, the whole render would be cut off and only the HTML as served come back."""
    busy = (
        "<p>busy page</p><p id=n>0</p><script>let n = 0; setInterval(() => fetch('/ping?' + "
        "Date.now()).then(() => { document.getElementById('n').textContent = ++n }), 100)"
        "</script>"
    )
    server = serve(app_of(index=("text/html", html_page(busy)), ping=("text/plain", "pong")))
    # 4 s: room for a loaded machine to parse the page (no assertion on how long it took)
    result = fetch(server.url("/"), timeout_ms=4000, scroll_wait_ms=100)
    assert result.status == 200 and not result.render_timed_out
    answered = re.search(rb'<p id="n">(\d+)</p>', result.body)
    assert answered is not None and int(answered.group(1)) > 0, result.body  # the live DOM
    assert sum(p.startswith("/ping") for p in server.paths()) > 5


def test_connection_refused_is_an_unreachable_host(refused_base: str) -> None:
    with pytest.raises(ConnectError) as info:
        fetch(f"{refused_base}/", scroll_rounds=0)
    assert "ERR_CONNECTION_REFUSED" in str(info.value)
    assert info.value.category == "connect" and info.value.unreachable


def test_missing_browser_says_what_to_install(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bogus = str(tmp_path / "no-such-chromium")

    async def enter(**kw: Any) -> None:
        async with BrowserFetcher(**kw):
            pass

    with pytest.raises(BrowserUnavailable) as info:
        asyncio.run(enter(executable_path=bogus))
    message = str(info.value)
    assert bogus in message
    assert "apt-get install chromium" in message
    assert "LITECRAWL_CHROMIUM" in message
    assert "playwright install chromium" in message

    monkeypatch.setenv("LITECRAWL_CHROMIUM", bogus)
    with pytest.raises(BrowserUnavailable, match="LITECRAWL_CHROMIUM"):
        find_chromium()

    not_a_browser = tmp_path / "fake-chromium"
    not_a_browser.write_text("#!/bin/sh\nexit 1\n")
    not_a_browser.chmod(0o755)
    with pytest.raises(BrowserUnavailable, match=r"failed to start.*apt-get install chromium"):
        asyncio.run(enter(executable_path=str(not_a_browser)))


def test_non_html_gives_the_raw_bytes(serve: Serve) -> None:
    async def download(_: web.Request) -> web.Response:
        disposition = {"Content-Disposition": 'attachment; filename="data.bin"'}
        body = b"\x00\x01\x02binary"
        return web.Response(body=body, content_type="application/octet-stream", headers=disposition)

    pdf, png = ("application/pdf", PDF), ("image/png", PNG)
    server = serve(app_of(doc_pdf=pdf, data_bin=download, pic_png=png))

    result = fetch(server.url("/doc.pdf"))
    assert result.status == 200
    assert result.content_type == "application/pdf"
    assert result.body == PDF
    result = fetch(server.url("/data.bin"))
    assert result.status == 200
    assert result.body == b"\x00\x01\x02binary"
    assert result.final_url == server.url("/data.bin")
    result = fetch(server.url("/pic.png"))  # the document itself is never blocked as media
    assert result.body == PNG
    version = importlib.metadata.version("litecrawl")
    assert {r.headers["User-Agent"] for r in server.requests} == {f"litecrawl/{version}"}


def test_concurrent_fetches_share_one_browser(serve: Serve) -> None:
    pages: dict[str, str | tuple[int, str, str]]
    pages = {f"/p{i}": html_page(f"<p>page {i}</p>") for i in range(6)}
    server = serve(site_app(pages))

    async def go() -> list[FetchResult]:
        async with BrowserFetcher(scroll_rounds=0) as fetcher:
            return await asyncio.gather(
                *(fetcher.fetch(FetchRequest(server.url(p))) for p in pages)
            )

    results = asyncio.run(go())
    for i, result in enumerate(results):
        assert result.final_url == server.url(f"/p{i}")
        assert f"<p>page {i}</p>".encode() in result.body


def test_fetch_outside_the_context_manager_is_a_usage_error() -> None:
    with pytest.raises(RuntimeError, match="async with"):
        asyncio.run(BrowserFetcher().fetch(FetchRequest("http://127.0.0.1/")))


def cookie_app(name: str) -> web.Application:
    """Sets ``name=1`` on /set (header) and ``{name}_js=1`` from script; /see shows nothing."""
    page = html_page(f"<script>document.cookie = '{name}_js=1; path=/'</script>set")

    async def set_cookie(_: web.Request) -> web.Response:
        response = web.Response(text=page, content_type="text/html")
        response.set_cookie(name, "1", path="/")
        return response

    return app_of(set=set_cookie, see=("text/html", html_page("see")))


def fetch_all(urls: list[str], **kw: Any) -> list[FetchResult]:
    """``urls`` one after another with one fetcher (one browser, its contexts kept between)."""

    async def go() -> list[FetchResult]:
        async with BrowserFetcher(**kw) as fetcher:
            return [await fetcher.fetch(FetchRequest(url)) for url in urls]

    return asyncio.run(go())


def test_cookies_stay_with_their_site(serve: Serve) -> None:
    # Two sites on one host name: browsers keep cookies per host whatever the port, so only
    # separate contexts keep them apart.
    a, b = serve(cookie_app("a")), serve(cookie_app("b"))
    fetch_all([a.url("/set"), b.url("/see"), b.url("/set"), a.url("/see")], scroll_rounds=0)
    cookies = {(s.base, r.path): r.headers.get("Cookie", "") for s in (a, b) for r in s.requests}
    assert cookies[(b.base, "/see")] == ""  # nothing of a's reached b
    assert "b=" not in cookies[(a.base, "/see")] and "b_js" not in cookies[(a.base, "/see")]
    # within one site the pages of a batch share their cookies, as in one browser session
    assert set(cookies[(a.base, "/see")].split("; ")) == {"a=1", "a_js=1"}


def test_a_site_gets_a_fresh_context_after_enough_pages(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(contexts, "PAGES_PER_CONTEXT", 2)
    a = serve(cookie_app("a"))
    fetch_all([a.url("/set"), a.url("/see"), a.url("/see?3"), a.url("/see?4")], scroll_rounds=0)
    cookies = [r.headers.get("Cookie", "") for r in a.requests]
    assert cookies[1] != "" and cookies[2:] == ["", ""]


def test_idle_contexts_are_closed_beyond_the_cap(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(contexts, "IDLE_CONTEXTS", 1)
    a, b = serve(cookie_app("a")), serve(cookie_app("b"))

    async def go() -> list[int]:
        open_now = []
        async with BrowserFetcher(scroll_rounds=0) as fetcher:
            for url in (a.url("/set"), b.url("/set"), a.url("/see")):
                await fetcher.fetch(FetchRequest(url))
                browser = fetcher._browser
                assert browser is not None
                open_now.append(len(browser.contexts))
                # every page is closed after its fetch
                assert [len(c.pages) for c in browser.contexts] == [0] * len(browser.contexts)
        return open_now

    assert asyncio.run(go()) == [1, 1, 1]
    assert a.requests[-1].headers.get("Cookie", "") == ""  # a's context was closed meanwhile


def test_each_page_of_a_shared_context_gets_its_own_request_headers(serve: Serve) -> None:
    pages: dict[str, str | tuple[int, str, str]]
    pages = {f"/p{i}": html_page(f'<p>{i}</p><script src="/s{i}.js"></script>') for i in range(4)}
    pages.update({f"/s{i}.js": (200, "application/javascript", "1") for i in range(4)})
    server = serve(site_app(pages))

    async def go() -> list[FetchResult]:
        async with BrowserFetcher(scroll_rounds=0) as fetcher:
            return await asyncio.gather(
                *(
                    fetcher.fetch(FetchRequest(server.url(f"/p{i}"), {"If-None-Match": f'"{i}"'}))
                    for i in range(4)
                )
            )

    for i, result in enumerate(asyncio.run(go())):
        assert f"<p>{i}</p>".encode() in result.body
    seen = {r.path: r.headers.get("If-None-Match") for r in server.requests}
    assert seen == {
        **{f"/p{i}": f'"{i}"' for i in range(4)},
        **{f"/s{i}.js": None for i in range(4)},
    }


def test_downloads_and_pdfs_then_pages_in_the_same_context(serve: Serve) -> None:
    async def download(_: web.Request) -> web.Response:
        disposition = {"Content-Disposition": 'attachment; filename="data.bin"'}
        return web.Response(body=b"\x00\x01bin", headers=disposition)

    server = serve(
        app_of(
            data_bin=download,
            doc_pdf=("application/pdf", PDF),
            index=("text/html", html_page("<p>page</p>")),
        )
    )
    urls = [server.url(p) for p in ("/data.bin", "/doc.pdf", "/", "/data.bin", "/")]
    results = fetch_all(urls, scroll_rounds=0)
    assert [r.body for r in results[:2]] == [b"\x00\x01bin", PDF]
    assert results[3].body == b"\x00\x01bin"
    assert b"<p>page</p>" in results[2].body and b"<p>page</p>" in results[4].body


def test_a_page_hook_closing_the_context_spoils_only_its_own_page(serve: Serve) -> None:
    server = serve(site_app({"/close": html_page("close"), "/next": html_page("<p>next</p>")}))

    async def hook(page: Page) -> None:
        if page.url.endswith("/close"):
            await page.context.close()

    async def go() -> list[FetchResult | Exception]:
        async with BrowserFetcher(scroll_rounds=0, page_hook=hook) as fetcher:
            out: list[FetchResult | Exception] = []
            for path in ("/close", "/next"):
                try:
                    out.append(await fetcher.fetch(FetchRequest(server.url(path))))
                except Exception as exc:
                    out.append(exc)
            return out

    closed, following = asyncio.run(go())
    assert isinstance(closed, Exception)
    assert isinstance(following, FetchResult), following
    assert b"<p>next</p>" in following.body


# Served small (well under the limit), rendered large: the script writes 30,000 characters.
GROWS = html_page("<p id=t>x</p><script>t.textContent = 'x'.repeat(30000)</script>")


def test_max_bytes_applies_to_the_rendered_page(serve: Serve) -> None:
    server = serve(app_of(index=("text/html", GROWS), small=("text/html", html_page("ok"))))
    with pytest.raises(TooLarge, match="over 20000 bytes") as caught:
        fetch(server.url("/"), max_bytes=20_000, scroll_rounds=0)
    assert caught.value.category == "too_large" and caught.value.url == server.url("/")
    assert fetch(server.url("/small"), max_bytes=20_000, scroll_rounds=0).status == 200
    assert len(fetch(server.url("/"), scroll_rounds=0).body) > 30_000  # the default: 10 MB


def test_crawl_with_render_records_too_large_as_the_http_fetcher_does(
    serve: Serve, tmp_path: Path
) -> None:
    """``[fetch] max_bytes`` under ``--render``: the same ``too_large`` outcome as without."""
    server = serve(app_of(index=("text/html", GROWS), small=("text/html", html_page("ok"))))
    conf = tmp_path / "c.toml"
    conf.write_text("[fetch]\nmax_bytes = 20000\n")
    errors = {}
    for render in ("--render", "--no-render"):
        db = tmp_path / f"{render}.db"
        urls = [server.url("/"), server.url("/small")]
        args = ["crawl", *urls, "--db", str(db), "--config", str(conf), render, "--no-cache"]
        result = CliRunner().invoke(app, [*args, "--delay-ms", "0", "-q", "--ignore-robots"])
        assert result.exit_code in (0, 1), result.output
        errors[render] = dict(db_query(db, "SELECT norm_url, error FROM pages"))
    # served as 120 bytes, the HTTP fetcher takes "/" whole; rendered it is over the limit
    assert errors["--render"] == {server.url("/"): "too_large", server.url("/small"): None}
    assert errors["--no-render"] == {server.url("/"): None, server.url("/small"): None}
