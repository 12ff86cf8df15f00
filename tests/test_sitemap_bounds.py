"""A hostile sitemap server: endless index nesting, a 100,000-URL sitemap, an index of many
sitemaps. The crawl stays bounded and says what it cut, and why, once."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import LocalServer, db_rows, html_page
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def hostile_sitemaps() -> web.Application:
    """/nest/N.xml: an index of two new indexes, forever; /big.xml: 100,000 URLs;
    /many.xml: an index of 10 sitemaps; /s/N.xml: a sitemap of one page /p/N."""

    async def handler(request: web.Request) -> web.Response:
        base, path = f"http://{request.host}", request.path
        if path.startswith("/nest/"):
            name = path.removeprefix("/nest/").removesuffix(".xml")
            subs = f"<sitemap><loc>{base}/nest/{name}a.xml</loc></sitemap>"
            subs += f"<sitemap><loc>{base}/nest/{name}b.xml</loc></sitemap>"
            return xml(f"<sitemapindex {_NS}>{subs}</sitemapindex>")
        if path == "/big.xml":
            urls = "".join(f"<url><loc>{base}/b/{i}</loc></url>" for i in range(100_000))
            return xml(f"<urlset {_NS}>{urls}</urlset>")
        if path == "/many.xml":
            subs = "".join(f"<sitemap><loc>{base}/s/{i}.xml</loc></sitemap>" for i in range(10))
            return xml(f"<sitemapindex {_NS}>{subs}</sitemapindex>")
        if path.startswith("/s/"):
            name = path.removeprefix("/s/").removesuffix(".xml")
            return xml(f"<urlset {_NS}><url><loc>{base}/p/{name}</loc></url></urlset>")
        if path.startswith("/p/"):
            return web.Response(text=html_page("page", path), content_type="text/html")
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    return app


def xml(text: str) -> web.Response:
    return web.Response(text=f'<?xml version="1.0"?>{text}', content_type="application/xml")


def crawl(tmp_path: Path, *args: str, code: int = 1) -> str:
    """The crawl's output; a cut at the protocol's bounds or the host cap exits 1, one the
    user asked for (--max-depth) 0."""
    result = CliRunner().invoke(
        app,
        ["crawl", "--db", str(tmp_path / "c.db"), "--no-cache", "--no-embed", "--quiet",
         "--delay-ms", "0", *args],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == code, result.output
    if code:
        assert "exit 1: sitemaps cut (" in result.output.splitlines()[-1], result.output
    return result.output


@pytest.mark.parametrize(
    ("max_depth", "fetched", "cut", "words", "code"),
    [
        # 0 (the index), 1 (two indexes in it: tolerated), 2 (four: their entries cut)
        ("0", 7, "nested_index=8", "is nested 2 levels deep: its 2 sitemaps are not fetched", 1),
        ("1", 3, "max_depth=4", "is at depth 1 (max depth 1): its 2 sitemaps are not fetched", 0),
    ],
)
def test_nested_indexes_stop_at_the_protocol_and_at_max_depth(
    tmp_path: Path, serve: Serve, max_depth: str, fetched: int, cut: str, words: str, code: int
) -> None:
    site = serve(hostile_sitemaps())
    sitemap = site.url("/nest/r.xml")
    output = crawl(tmp_path, "--sitemap", sitemap, "--max-depth", max_depth, code=code)
    nest = [p for p in site.paths() if p.startswith("/nest/")]
    assert len(nest) == len(set(nest)) == fetched
    assert re.search(rf"^sitemap_cuts:\s+{cut}$", output, re.M), output
    cuts = [line for line in output.splitlines() if words in line]
    assert len(cuts) == (fetched + 1) // 2, output  # one line per index cut: 4, then 2
    depths = {url: row["depth"] for url, row in db_rows(tmp_path / "c.db").items()}
    assert depths[site.url("/nest/r.xml")] == 0
    assert depths[site.url("/nest/ra.xml")] == 1


def test_a_sitemap_over_50000_urls_is_cut_with_a_word(tmp_path: Path, serve: Serve) -> None:
    site = serve(hostile_sitemaps())
    # the listed pages are excluded: the test is about the sitemap, not 50,000 fetches
    output = crawl(tmp_path, "--sitemap", site.url("/big.xml"), "--exclude", "/b/")
    assert re.search(r"^sitemap_cuts:\s+over_50000_urls=1$", output, re.M), output
    said = [line for line in output.splitlines() if "lists more than 50000 URLs" in line]
    assert len(said) == 1 and site.url("/big.xml") in said[0], output


def test_sub_sitemaps_of_a_host_are_capped(tmp_path: Path, serve: Serve) -> None:
    site = serve(hostile_sitemaps())
    config = tmp_path / "c.toml"
    config.write_text("[sitemap]\nmax_per_host = 3\n")
    output = crawl(tmp_path, "--config", str(config), "--sitemap", site.url("/many.xml"))
    assert len([p for p in site.paths() if p.startswith("/s/")]) == 3
    assert len([p for p in site.paths() if p.startswith("/p/")]) == 3
    assert re.search(r"^sitemap_cuts:\s+host_cap=7$", output, re.M), output
    said = [line for line in output.splitlines() if "sitemap.max_per_host" in line]
    assert len(said) == 1, output
