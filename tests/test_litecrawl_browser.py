"""litecrawl() on its default path: Playwright rendering in Debian's headless Chromium."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import LocalServer

from litecrawl import litecrawl
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
