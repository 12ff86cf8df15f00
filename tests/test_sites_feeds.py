"""``litecrawl sites run``: full crawls with sitemaps and a path filter, feed crawls in between."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import LocalServer, NewDb, db_query, html_page
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()
TEXT = "<p>" + " ".join(["Our aquarium keeps zebrafish, guppies and tetras in clean water."] * 6)
FEED_LINK = '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'


def _rss(base: str, paths: list[str]) -> str:
    items = "".join(
        f"<item><title>{p}</title><link>{base}{p}</link>"
        "<pubDate>Mon, 06 Jan 2020 10:00:00 GMT</pubDate></item>"
        for p in paths
    )
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Fish news</title>'
        f"<link>{base}/</link>{items}</channel></rss>"
    )


def _feed_site(feed: list[str]) -> web.Application:
    """A blog: a start page advertising its feed, a sitemap listed in robots.txt, and a feed
    (the paths in ``feed``, read at request time) answered with an ETag and 304s."""
    app = web.Application()
    links = '<a href="/a">a</a> <a href="/old">old</a> <a href="/private/x">private</a>'
    links += ' <a href="/news">news</a>'  # a link that turns out to be a feed
    pages = {"/": links, "/a": "", "/old": "", "/c": "", "/private/x": "", "/from-sitemap": ""}
    pages["/n1"] = ""

    async def handler(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        if request.path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nAllow: /\nSitemap: {base}/sitemap.xml\n")
        if request.path == "/sitemap.xml":
            body = (
                '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<url><loc>{base}/from-sitemap</loc></url></urlset>"
            )
            return web.Response(text=body, content_type="application/xml")
        if request.path == "/feed.xml":
            body = _rss(base, feed)
            etag = '"' + hashlib.sha1(body.encode()).hexdigest()[:12] + '"'
            if request.headers.get("If-None-Match") == etag:
                return web.Response(status=304, headers={"ETag": etag})
            return web.Response(
                text=body, content_type="application/rss+xml", headers={"ETag": etag}
            )
        if request.path == "/news":  # no validators: read in full each time
            return web.Response(text=_rss(base, ["/n1"]), content_type="application/rss+xml")
        if request.path not in pages:
            return web.Response(status=404, text="not found")
        head = FEED_LINK if request.path == "/" else ""
        page = html_page(TEXT + pages[request.path], request.path, head)
        return web.Response(text=page, content_type="text/html")

    app.router.add_get("/{tail:.*}", handler)
    return app


def _sites_run(db: str | Path, conf: Path) -> str:
    result = runner.invoke(app, ["sites", "run", "--once", "--db", str(db), "--config", str(conf)])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_full_crawl_then_feed_crawls_read_only_new_entries(
    tmp_path: Path, serve: Serve, monkeypatch: pytest.MonkeyPatch, new_db: NewDb
) -> None:
    (tmp_path / "pathrules.py").write_text(
        "def no_private(site, path):\n    return not path.startswith('/private/')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    feed = ["/a"]
    site = serve(_feed_site(feed))
    db, conf = new_db("s"), tmp_path / "c.toml"
    conf.write_text(
        f'[cache]\ndir = "{tmp_path / "cache"}"\n[rate_limit]\nper_host_delay_ms = 0\n'
        "[sites]\nfull_crawl_interval = 3600\nfeed_crawl_interval = 0\n"
        'path_filter = "pathrules:no_private"\n'
    )
    runner.invoke(app, ["sites", "add", site.url("/"), "--db", str(db)])

    # a full crawl: links, the sitemap and the feed; the path filter keeps /private/ out
    out = _sites_run(db, conf)
    assert f"crawled {site.url('/')} (full)" in out, out
    seen = Counter(site.paths())
    for path in ("/a", "/old", "/from-sitemap", "/feed.xml", "/sitemap.xml", "/news", "/n1"):
        assert seen[path] == 1, (path, seen)
    assert seen["/private/x"] == 0 and seen["/c"] == 0

    # a new entry: the feed crawl reads the feed again (conditional GET) and only the new entry
    feed.append("/c")
    before = len(site.requests)
    out = _sites_run(db, conf)
    assert f"crawled {site.url('/')} (feed): 3 fetched" in out, out
    requests = site.requests[before:]
    assert sorted(r.path for r in requests) == ["/c", "/feed.xml", "/news"]
    assert "If-None-Match" in next(r for r in requests if r.path == "/feed.xml").headers

    # nothing new: the feed answers 304 and no entry is fetched
    before = len(site.requests)
    out = _sites_run(db, conf)
    assert f"crawled {site.url('/')} (feed): 2 fetched" in out, out
    assert sorted(r.path for r in site.requests[before:]) == ["/feed.xml", "/news"]

    kinds = db_query(db, "SELECT kind, fetched FROM site_crawls ORDER BY id")
    assert [k for k, _ in kinds] == ["full", "feed", "feed"]
    shown = runner.invoke(app, ["sites", "show", site.url("/"), "--db", str(db)]).stdout
    assert f"feed: {site.url('/feed.xml')} (read " in shown and "2 entries, etag" in shown
    assert f"feed: {site.url('/news')} (read " in shown and "1 entries)" in shown
    assert "next full crawl:" in shown and "next feed crawl:" in shown


def test_a_site_without_feeds_is_not_checked_out_for_feed_crawls(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    site_app = web.Application()
    pages = {"/": TEXT}

    async def handler(request: web.Request) -> web.Response:
        if request.path not in pages:
            return web.Response(status=404)
        return web.Response(text=html_page(pages[request.path]), content_type="text/html")

    site_app.router.add_get("/{tail:.*}", handler)
    site = serve(site_app)
    db, conf = new_db("s"), tmp_path / "c.toml"
    conf.write_text(
        f'[cache]\ndir = "{tmp_path / "cache"}"\n'
        "[sites]\nfull_crawl_interval = 3600\nfeed_crawl_interval = 0\n"
    )
    runner.invoke(app, ["sites", "add", site.url("/"), "--db", str(db)])
    assert "1 crawled" in _sites_run(db, conf)
    assert "0 crawled" in _sites_run(db, conf)  # no feed: nothing to do until the full crawl
    assert db_query(db, "SELECT kind FROM site_crawls") == [("full",)]
    shown = runner.invoke(app, ["sites", "show", site.url("/"), "--db", str(db)]).stdout
    assert "next full crawl:" in shown  # and no date for a feed crawl that never comes
    assert "next feed crawl: none (no feeds found)" in shown, shown
    page = _dashboard_site(db, site.url("/"))
    assert "<th>next feed crawl</th><td>none (no feeds found)</td>" in page, page


def _dashboard_site(db: str, url: str) -> str:
    """The dashboard's page of the site (``litecrawl serve`` on a free port), as HTML."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "litecrawl", "serve", "--db", db, "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().split()[2].rstrip("/")
        query = urllib.parse.urlencode({"url": url})
        with urllib.request.urlopen(f"{base}/site?{query}", timeout=30) as response:
            return str(response.read().decode())
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_path_filter_that_cannot_be_loaded_exits_2(tmp_path: Path, new_db: NewDb) -> None:
    conf = tmp_path / "c.toml"
    conf.write_text('[sites]\npath_filter = "no_such_module_here:f"\n')
    result = runner.invoke(
        app, ["sites", "run", "--once", "--db", str(new_db("s")), "--config", str(conf)]
    )
    assert result.exit_code == 2 and "sites.path_filter" in result.output
