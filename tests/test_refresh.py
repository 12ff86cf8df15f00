"""A refresh that sends its reader on (``<meta http-equiv=refresh>``, the ``Refresh`` header) is
a redirect: the target is crawled at the page's depth, the page itself is not kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import LocalServer, db_query, db_rows, html_page
from test_cli_scope import crawl  # the CLI's crawl, quiet, no cache, no delay

from litecrawl.parse.links import extract_links, refresh_target
from litecrawl.writeback import content_hash

Serve = Callable[[web.Application], LocalServer]

WORDS = "<p>" + "Words enough to be a page of its own. " * 8 + "</p>"


@pytest.mark.parametrize(
    ("value", "target"),
    [
        ("0;URL=Documentation/web/index.html", "Documentation/web/index.html"),  # LilyPond's
        ("0; url='/a b'", "/a b"),
        (' 3 , URL = "/q" ', "/q"),
        ("0.5 url=/v", "/v"),  # the separator may be a space
        ("100;url=/slow", "/slow"),
        ("101;url=/slower", None),  # a page reloading now and then, not a redirect
        ("300", None),  # a reload of the page itself
        ("0;", None),
        ("soon;url=/w", None),  # no delay: not a refresh
        ("", None),
    ],
)
def test_refresh_target(value: str, target: str | None) -> None:
    assert refresh_target(value) == target


def test_the_first_refresh_outside_noscript_is_the_pages() -> None:
    body = (
        b'<html><head><noscript><meta http-equiv="refresh" content="0;url=/nojs"></noscript>'
        b'<meta http-equiv="Refresh" content="0;url=/real"><meta http-equiv="refresh" '
        b'content="0;url=/second"></head><body><a href="/a">a</a></body></html>'
    )
    assert extract_links(body, "http://h/").refresh == "/real"


def _site() -> web.Application:
    pages: dict[str, str] = {
        "/": html_page(
            "Redirecting...",
            "Redirecting",
            '<meta http-equiv="refresh" content="0;URL=docs/index.html">',
        ),
        "/docs/index.html": html_page(WORDS + '<a href="one.html">one</a>', "Docs"),
        "/docs/one.html": html_page(
            WORDS + '<a href="deeper.html">deeper</a>',
            "One",
            '<noscript><meta http-equiv="refresh" content="0;url=/nojs"></noscript>'
            '<meta http-equiv="refresh" content="600">',
        ),
        "/docs/deeper.html": html_page(WORDS, "Deeper"),
        "/slow": html_page(WORDS, "Slow", '<meta http-equiv="refresh" content="300;url=/never">'),
        "/nojs": html_page(WORDS, "No script"),
        "/never": html_page(WORDS, "Never"),
        "/moved": html_page(WORDS, "Moved"),
    }
    app_ = web.Application()

    async def handler(request: web.Request) -> web.Response:
        if request.path == "/header":  # the Refresh header, with a body of its own
            return web.Response(
                text=html_page(WORDS, "Header"),
                content_type="text/html",
                headers={"Refresh": "0; url=/moved"},
            )
        page = pages.get(request.path)
        if page is None:
            return web.Response(status=404, text="not found")
        return web.Response(text=page, content_type="text/html")

    app_.router.add_get("/{tail:.*}", handler)
    return app_


def test_a_refresh_is_followed_as_a_redirect_at_the_pages_depth(
    tmp_path: Path, serve: Serve
) -> None:
    site = serve(_site())
    db = tmp_path / "c.db"
    result = crawl(db, site.url("/"), site.url("/slow"), site.url("/header"), "--max-depth", "1")
    assert result.exit_code == 0, result.stderr
    fetched = set(site.paths()) - {"/robots.txt"}
    # the refresh is no step deeper: at --max-depth 1 the target's own link is followed too
    assert {"/", "/docs/index.html", "/docs/one.html", "/header", "/moved"} <= fetched
    assert "/docs/deeper.html" not in fetched  # one.html is at depth 1: its links are not
    # not a redirect: inside <noscript>, a reload of the page, a delay of 300 s
    assert not {"/nojs", "/never"} & fetched, fetched
    rows = db_rows(db)
    assert rows[site.url("/docs/index.html")]["depth"] == 0
    assert rows[site.url("/moved")]["depth"] == 0
    # the redirecting pages keep nothing: empty content, no document; the others are indexed
    for path in ("/", "/header"):
        assert rows[site.url(path)]["content_hash"] == content_hash(b"")
    indexed = {url for (url,) in db_query(db, "SELECT url FROM documents")}
    assert site.url("/") not in indexed and site.url("/header") not in indexed
    assert {site.url("/docs/index.html"), site.url("/slow"), site.url("/moved")} <= indexed
    assert "redirects: 2" in " ".join(result.stderr.split()), result.stderr
    # the summary says why the crawl stopped at one.html
    assert "1 page at the depth limit (--max-depth, 2 by default)" in result.stderr


def test_an_http_redirect_is_no_step_deeper_either(tmp_path: Path, serve: Serve) -> None:
    # http://site/ answering 301 to /en/ (or to https) must not cost the crawl a level
    app_ = web.Application()

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.path == "/":
            raise web.HTTPMovedPermanently("/en/")
        if request.path == "/en/":
            return web.Response(
                text=html_page(WORDS + '<a href="/en/child">child</a>', "Home"),
                content_type="text/html",
            )
        if request.path == "/en/child":
            return web.Response(text=html_page(WORDS, "Child"), content_type="text/html")
        return web.Response(status=404, text="not found")

    app_.router.add_get("/{tail:.*}", handler)
    site = serve(app_)
    db = tmp_path / "c.db"
    result = crawl(db, site.url("/"), "--max-depth", "1")
    assert result.exit_code == 0, result.stderr
    assert "/en/child" in site.paths(), site.paths()
    assert db_rows(db)[site.url("/en/")]["depth"] == 0
