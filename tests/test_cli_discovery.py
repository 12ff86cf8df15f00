"""Sitemap mode (robots.txt discovery, index + gzipped sub-sitemaps, lastmod) and feeds."""

from __future__ import annotations

import gzip
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, db_rows, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def urlset(base: str, entries: dict[str, str]) -> bytes:
    items = "".join(
        f"<url><loc>{base}{path}</loc><lastmod>{lastmod}</lastmod></url>"
        for path, lastmod in entries.items()
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>'
    ).encode()


def sitemap_site(state: dict[str, Any]) -> web.Application:
    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        path = request.path
        if path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nSitemap: {base}/sitemap_index.xml\n")
        if path == "/sitemap_index.xml":
            subs = "".join(
                f"<sitemap><loc>{base}/{name}</loc><lastmod>{lastmod}</lastmod></sitemap>"
                for name, lastmod in state["subs"].items()
            )
            body = (
                '<?xml version="1.0"?><sitemapindex '
                f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{subs}</sitemapindex>'
            )
            return web.Response(text=body, content_type="application/xml")
        if path in ("/a.xml.gz", "/b.xml.gz"):
            body = gzip.compress(urlset(base, state["pages"][path]))
            return web.Response(body=body, content_type="application/x-gzip")
        if path.startswith("/p"):
            links = '<a href="/unlisted">not in any sitemap</a>'
            return web.Response(text=html_page(links, path), content_type="text/html")
        return web.Response(status=404)

    app.router.add_get("/{tail:.*}", handler)
    return app


def test_sitemap_mode_on_a_site_without_a_sitemap_says_so(tmp_path: Path, serve: Serve) -> None:
    """No Sitemap: line in robots.txt and nothing at /sitemap.xml: the summary says that no
    sitemap was found there, not only that something answered 404."""
    site = serve(site_app({"/": html_page('<a href="/a">a</a>')}))
    args = ["crawl", site.url("/"), "--sitemap-mode", "--db", str(tmp_path / "n.db")]
    result = runner.invoke(app, [*args, "--delay-ms", "0", "--no-cache", "--quiet"])
    assert result.exit_code == 1
    said = f"no sitemap found at {site.url('/sitemap.xml')} (HTTP 404 Not Found) (1 page"
    assert said in result.stderr, result.stderr


def test_sitemap_mode_discovers_via_robots_and_respects_lastmod(
    tmp_path: Path, serve: Serve
) -> None:
    state: dict[str, Any] = {
        "subs": {"a.xml.gz": "2024-01-01", "b.xml.gz": "2024-01-01T10:00:00+02:00"},
        "pages": {
            "/a.xml.gz": {"/p1": "2024-01-01", "/p2": "2024-01-02T00:00:00Z"},
            "/b.xml.gz": {"/p3": "2023-12-31T23:59:59.5+00:00", "/p4": "2024-01-01"},
        },
    }
    site = serve(sitemap_site(state))
    db = tmp_path / "s.db"
    args = [
        "crawl",
        site.url("/"),
        "--sitemap-mode",
        "--db",
        str(db),
        "--delay-ms",
        "0",
        "--no-cache",
        "--quiet",
    ]
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    fetched = set(site.paths())
    assert {"/sitemap_index.xml", "/a.xml.gz", "/b.xml.gz", "/p1", "/p2", "/p3", "/p4"} <= fetched
    assert "/unlisted" not in fetched  # sitemap mode fetches what is listed
    got = db_rows(db)
    assert got[site.url("/p1")]["source"] == "sitemap"
    assert got[site.url("/a.xml.gz")]["kind"] == "sitemap"
    assert got[site.url("/p2")]["lastmod"] == 1704153600  # 2024-01-02T00:00:00Z

    # Everything due again; b.xml.gz and /p4 changed since, the rest did not.
    conn = sqlite3.connect(db)
    conn.execute("UPDATE pages SET next_crawl_time = 1")
    conn.commit()
    conn.close()
    state["subs"]["b.xml.gz"] = "2099-01-01"
    state["pages"]["/b.xml.gz"]["/p4"] = "2099-01-01"
    site.requests.clear()
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    again = set(site.paths())
    assert {"/sitemap_index.xml", "/b.xml.gz", "/p4"} <= again
    assert not again & {"/a.xml.gz", "/p1", "/p2", "/p3"}  # lastmod older than our fetch
    assert "skipped_lastmod" in result.output


def test_explicit_sitemap_url_and_follow(tmp_path: Path, serve: Serve) -> None:
    state: dict[str, Any] = {"subs": {}, "pages": {"/a.xml.gz": {"/p1": "2024-01-01"}}}
    site = serve(sitemap_site(state))
    db = tmp_path / "s.db"
    result = runner.invoke(
        app,
        [
            "crawl",
            "--sitemap",
            site.url("/a.xml.gz"),
            "--follow",
            "--db",
            str(db),
            "--delay-ms",
            "0",
            "--no-cache",
            "--quiet",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert {"/a.xml.gz", "/p1", "/unlisted"} <= set(site.paths())


RSS = """<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
<link>{base}/</link><description>d</description>
<item><title>One</title><link>{base}/story-1</link>
  <pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate></item>
<item><title>Two</title><link>{base}/story-2</link></item>
</channel></rss>"""


def test_feeds_found_in_pages_feed_their_entries(tmp_path: Path, serve: Serve) -> None:
    app_ = web.Application()

    async def handler(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        if request.path == "/":
            head = '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
            return web.Response(text=html_page("home", "Home", head), content_type="text/html")
        if request.path == "/feed.xml":
            return web.Response(text=RSS.format(base=base), content_type="application/rss+xml")
        if request.path.startswith("/story-"):
            return web.Response(text=html_page("story"), content_type="text/html")
        return web.Response(status=404)

    app_.router.add_get("/{tail:.*}", handler)
    site = serve(app_)
    db = tmp_path / "f.db"
    result = runner.invoke(
        app,
        ["crawl", site.url("/"), "--db", str(db), "--delay-ms", "0", "--no-cache", "--quiet"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    got = db_rows(db)
    assert got[site.url("/feed.xml")]["kind"] == "feed"
    assert got[site.url("/story-1")]["source"] == "feed"
    assert got[site.url("/story-1")]["lastmod"] == 1704103200
    assert {"/feed.xml", "/story-1", "/story-2"} <= set(site.paths())
