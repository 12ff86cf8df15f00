"""Frontera's own strategies (``BasicCrawlingStrategy``, ``Discovery``), copied into
tests/strategies/frontera/ with only their imports changed, crawl a real local site."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import LocalServer, db_rows, html_page, site_app
from test_strategy import fetched, last_run_errors, one_at_a_time
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.strategy import States

Serve = Callable[[web.Application], LocalServer]
F = "strategies.frontera"
S = "strategies.frontera_style"
runner = CliRunner()


def discovery_site(serve: Serve) -> LocalServer:
    pages: dict[str, Any] = {
        "/": html_page(
            '<a href="/a">a</a> <a href="/b">b</a> <a href="/private/x">p</a>'
            ' <a href="http://example.invalid/elsewhere">away</a>'
        ),
        "/a": html_page('<a href="/a2">a2</a>'),
        "/a2": html_page("a2"),
        "/b": html_page("b"),
        "/listed-1": html_page("one"),
        "/listed-2": html_page("two"),
        "/private/x": html_page("private"),
    }
    site = serve(site_app(pages))
    pages["/robots.txt"] = (
        200,
        "text/plain",
        f"User-agent: *\nDisallow: /private\nSitemap: {site.base}/sitemap.xml\n",
    )
    pages["/sitemap.xml"] = (
        200,
        "application/xml",
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{site.base}/listed-1</loc></url>"
        f"<url><loc>{site.base}/listed-2</loc></url></urlset>",
    )
    return site


def domains(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(db)
    try:
        return {d: json.loads(data) for d, data in conn.execute("SELECT * FROM domain_metadata")}
    finally:
        conn.close()


def test_frontera_basic_crawling_strategy(tmp_path: Path, serve: Serve) -> None:
    site = serve(
        site_app(
            {
                "/": html_page('<a href="/a">a</a> <a href="/gone">g</a>'),
                "/a": html_page('<a href="/">home</a>'),
            }
        )
    )
    db = tmp_path / "c.db"
    result = one_at_a_time(db, site.url("/"), "--strategy", f"{F}.basic:BasicCrawlingStrategy")
    assert "failed:        1" in result.output, result.output  # /gone: a 404
    assert sorted(fetched(site)) == ["/", "/a", "/gone"]
    states = {url: row["state"] for url, row in db_rows(db).items()}
    assert states == {
        site.url("/"): States.CRAWLED,
        site.url("/a"): States.CRAWLED,
        site.url("/gone"): States.ERROR,
    }
    assert "strategy" not in last_run_errors(db)


# Frontera's sitemap reader parses XML with BeautifulSoup's HTML parser and calls findAll: both
# warn, and the suite makes warnings errors
@pytest.mark.filterwarnings("ignore::bs4.XMLParsedAsHTMLWarning")
@pytest.mark.filterwarnings("ignore:Call to deprecated method findAll:DeprecationWarning")
def test_frontera_discovery(tmp_path: Path, serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    site = discovery_site(serve)
    monkeypatch.chdir(tmp_path)  # Discovery opens public_suffix_list.dat where it runs
    (tmp_path / "public_suffix_list.dat").write_text("// the list litecrawl bundles is used\n")
    config = tmp_path / "d.toml"
    config.write_text(
        f'[strategy]\nname = "{F}.discovery:Discovery"\n[strategy.args]\nDISCOVERY_MAX_PAGES = 6\n'
    )
    db = tmp_path / "c.db"
    log = tmp_path / "log"
    # Discovery fetches robots.txt and sitemaps as pages: they must be accepted as such
    accept = ("--accept-type", "text/plain", "--accept-type", "application/xml")
    result = one_at_a_time(
        db, site.url("/"), "--config", str(config), "--log-file", str(log), *accept
    )
    assert result.exit_code == 0, result.output
    assert last_run_errors(db) == {}, log.read_text()
    paths = fetched(site)
    # robots.txt first (its Sitemap line), then the sitemap and the home page it scheduled,
    # then what they list and link
    assert paths[:1] == ["/sitemap.xml"] or paths[:1] == ["/"]
    assert {"/", "/sitemap.xml", "/listed-1", "/listed-2", "/a", "/b"} <= set(paths)
    assert "/private/x" not in paths
    rows = db_rows(db)
    assert rows[site.url("/robots.txt")]["state"] == States.CRAWLED
    (meta,) = domains(db).values()
    # a set (subdomains) stored tagged, the parsed robots.txt (_rp) not stored, counters kept
    assert meta["subdomains"] == {"$s": ["127.0.0.1"]}
    assert "_rp" not in meta and meta["rp_url"] == site.url("/robots.txt")
    assert meta["queued_pages"] == 6  # DISCOVERY_MAX_PAGES
    assert "/a2" not in paths  # sitemap, home, 2 listed, /a, /b: the limit was reached


def test_metadata_that_cannot_be_stored_is_an_error_where_it_was_written(
    tmp_path: Path, serve: Serve
) -> None:
    site = serve(site_app({"/": html_page('<a href="/a">a</a>'), "/a": html_page("a")}))
    db, log = tmp_path / "c.db", tmp_path / "log"
    result = one_at_a_time(
        db, site.url("/"), "--strategy", f"{S}:BadMetadata", "--log-file", str(log)
    )
    # the summary, not a traceback; exit 1 as the hook failed on every page
    assert result.exit_code == 1, result.output
    assert "the strategy's hooks raised 2 times" in result.output
    assert sorted(fetched(site)) == ["/", "/a"]  # the crawl went on
    assert last_run_errors(db) == {"strategy": 2}  # once a page
    text = log.read_text()
    assert "domain metadata of '127.0.0.1', key 'parser': object" in text
    assert 'frontera_style.py", line' in text and 'entry["parser"] = object()' in text
    # what could be stored was: the set as a set, the count
    stored = domains(db)["127.0.0.1"]
    assert stored == {"pages": 2, "seen": {"$s": ["/", "/a"]}}
    stats = runner.invoke(app, ["stats", "--db", str(db), "--json"])
    errors = {e["category"]: e["pages"] for e in json.loads(stats.output)["errors"]}
    assert errors == {"strategy": 2}
    assert "strategy" in runner.invoke(app, ["stats", "--db", str(db)]).output
