"""litecrawl() on its default path: Playwright rendering in Debian's headless Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import LocalServer, db_query
from typer.testing import CliRunner

from litecrawl import alitecrawl, litecrawl
from litecrawl.cli import app
from litecrawl.errors import BrowserUnavailable
from litecrawl.fetch.browser import find_chromium


def _have_chromium() -> bool:
    try:
        find_chromium()
    except BrowserUnavailable:
        return False
    return True


pytestmark = pytest.mark.skipif(
    not _have_chromium() and not os.environ.get("CI"), reason="no Chromium on this machine"
)

JS_PAGE = """<!doctype html><html><head><title>JS</title></head><body>
<div id="content" style="height: 5000px">loading</div>
<div id="bottom"></div>
<script>
  // A link that only exists once JavaScript ran...
  const a = document.createElement("a");
  a.href = "/from-js"; a.textContent = "js";
  document.body.appendChild(a);
  // ...and one that only appears after the reader scrolled to the bottom.
  new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting) && !document.getElementById("lazy")) {
      const b = document.createElement("a");
      b.id = "lazy"; b.href = "/after-scroll"; b.textContent = "more";
      document.body.appendChild(b);
    }
  }).observe(document.getElementById("bottom"));
</script></body></html>"""


def js_site() -> web.Application:
    app = web.Application()

    async def home(request: web.Request) -> web.Response:
        return web.Response(text=JS_PAGE, content_type="text/html")

    async def other(request: web.Request) -> web.Response:
        return web.Response(text="<p>plain</p>", content_type="text/html")

    app.router.add_get("/", home)
    app.router.add_get("/{tail:.+}", other)
    return app


def test_rendered_links_after_javascript_and_scroll(
    tmp_path: Path, serve: Callable[[web.Application], LocalServer]
) -> None:
    site = serve(js_site())
    db = tmp_path / "render.db"
    seen: list[tuple[str, str]] = []

    async def page_hook(page: Any) -> None:
        seen.append(("hook", page.url))

    litecrawl(
        str(db),
        [site.url("/")],
        n_claims=1,
        page_hook=page_hook,
        pw_viewport={"width": 800, "height": 600},
        downstream_hook=lambda content, ctype, url, fresh: seen.append((url, ctype)),
    )
    conn = sqlite3.connect(db)
    urls = {row[0] for row in conn.execute("SELECT norm_url FROM pages")}
    conn.close()
    assert site.url("/from-js") in urls
    assert site.url("/after-scroll") in urls
    assert ("hook", site.url("/")) in seen
    assert (site.url("/"), "text/html; charset=utf-8") in seen
    ua = next(r.headers.get("User-Agent", "") for r in site.requests if r.path == "/")
    assert ua.startswith("litecrawl/")


PDF = b"%PDF-1.4\n1 0 obj <</Type /Catalog>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
MEDIA_PAGE = """<!doctype html><html><head><title>media</title>
<style>@font-face { font-family: T; src: url(/font.woff2) format("woff2"); } p { font-family: T; }
</style></head><body><p>media page</p>
<img src="/pic.png" alt="by extension"><img src="/avatar" alt="no extension">
<div style="width: 10px; height: 10px; background: url(/bg)"></div>
<video src="/clip.mp4" preload="auto" autoplay muted></video>
<script>document.cookie = "a_js=1; path=/"</script></body></html>"""
MEDIA = ("/pic.png", "/avatar", "/bg", "/font.woff2", "/clip.mp4")


def site_a() -> web.Application:
    """A page with media that sets cookies, a PDF, a download."""

    async def page(_: web.Request) -> web.Response:
        response = web.Response(text=MEDIA_PAGE, content_type="text/html")
        response.set_cookie("a", "1", path="/")
        return response

    async def download(_: web.Request) -> web.Response:
        disposition = {"Content-Disposition": 'attachment; filename="data.bin"'}
        return web.Response(body=b"\x00\x01bin", headers=disposition)

    def body(ctype: str, data: bytes | str) -> Callable[[web.Request], Any]:
        async def handler(_: web.Request) -> web.Response:
            return web.Response(body=data, content_type=ctype)

        return handler

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/data.bin", download)
    app.router.add_get("/doc.pdf", body("application/pdf", PDF))
    for path in MEDIA:
        app.router.add_get(path, body("image/png", PNG))
    return app


def test_one_batch_blocks_media_keeps_cookies_apart_and_returns_bytes(
    tmp_path: Path, serve: Callable[[web.Application], LocalServer]
) -> None:
    """The render path's promises through litecrawl() itself, two sites in one batch."""
    a = serve(site_a())
    b = serve(js_site())  # same host name, another port: another site
    got: dict[str, tuple[str, bytes]] = {}

    def keep(content: bytes, ctype: str, url: str, fresh: bool) -> None:
        got[url] = (ctype, content)

    urls = [a.url("/"), a.url("/doc.pdf"), a.url("/data.bin")]
    urls += [b.url("/"), b.url("/see")]
    litecrawl(
        str(tmp_path / "r.db"),
        urls,
        n_concurrent=2,
        pw_headers={"User-Agent": "RenderBot/1.0", "X-Probe": "yes"},
        pw_scroll_wait_ms=100,
        downstream_hook=keep,
    )
    # blocked: the server never saw an image, font or video request
    assert {path: a.count(path) for path in MEDIA} == dict.fromkeys(MEDIA, 0)
    # the headers reach the navigation requests
    home = next(r for r in a.requests if r.path == "/")
    assert home.headers["User-Agent"] == "RenderBot/1.0" and home.headers["X-Probe"] == "yes"
    # a's cookies (from its header and its script) never reach b
    assert [r.headers.get("Cookie") for r in b.requests] == [None] * len(b.requests)
    # a PDF and a download come back as their bytes (a never-idle page returning at the
    # timeout: tests/test_fetch_browser.py, where a 2 s timeout needs no batch around it)
    assert got[a.url("/doc.pdf")] == ("application/pdf", PDF)
    assert got[a.url("/data.bin")][1] == b"\x00\x01bin"
    assert b"media page" in got[a.url("/")][1] and b"/from-js" in got[b.url("/")][1]


# The parser stops at a script that never comes: the page's HTML has arrived, its render cannot
# finish (DOMContentLoaded never fires), as when a loaded machine starves Chromium.
STUCK = (
    '<!doctype html><html><head><title>stuck</title><script src="/never.js"></script></head>'
    "<body><p>served text</p></body></html>"
)


def stuck_site() -> web.Application:
    async def page(_: web.Request) -> web.Response:
        return web.Response(text=STUCK, content_type="text/html", charset="iso-8859-1")

    async def never(request: web.Request) -> web.Response:
        # answers once the browser has given up on it (closed the connection): too late
        while request.transport is not None and not request.transport.is_closing():
            await asyncio.sleep(0.05)
        return web.Response(text="", content_type="application/javascript")

    site = web.Application()
    site.add_routes([web.get("/never.js", never), web.get("/{page}", page)])
    return site


def test_a_render_out_of_time_keeps_the_served_html_in_both_paths(
    tmp_path: Path, serve: Callable[[web.Application], LocalServer]
) -> None:
    """litecrawl() and crawl --render alike: rendered once, never again (the CLI retries
    network timeouts 3 times), the HTML as served indexed, the outcome counted."""
    site = serve(stuck_site())
    got: list[tuple[str, bytes]] = []
    run = alitecrawl(
        str(tmp_path / "api.db"),
        [site.url("/api")],
        pw_timeout_ms=3000,
        downstream_hook=lambda content, ctype, url, fresh: got.append((ctype, content)),
    )
    stats = asyncio.run(run)
    assert stats.render_timeouts == 1 and stats.failed == 0
    [(record,)] = db_query(tmp_path / "api.db", "SELECT stats FROM runs")
    assert json.loads(record)["render_timeouts"] == 1  # the run's record says so too
    assert got == [("text/html; charset=iso-8859-1", STUCK.encode())]  # as served, not a DOM
    assert site.count("/api") == 1

    db = tmp_path / "cli.db"
    args = ["crawl", site.url("/cli"), "--db", str(db), "--render", "--timeout", "3"]
    result = CliRunner().invoke(app, [*args, "--no-cache", "--delay-ms", "0", "--ignore-robots"])
    assert site.count("/cli") == 1
    assert result.exit_code == 1, result.output  # the one page asked was not rendered
    assert re.search(r"^render_timeouts: +1$", result.output, re.MULTILINE), result.output
    assert "1 of 1 pages were not rendered in time" in result.output
    assert "render timed out: the HTML as served is kept" in result.output  # the page's record
    assert db_query(db, "SELECT norm_url, error FROM pages") == [(site.url("/cli"), None)]
    assert db_query(db, "SELECT title FROM documents") == [("stuck",)]
