"""What ``litecrawl crawl`` takes as its scope and seeds: ``--domain``, registered domains,
seeds that are not URLs, a crawl without seeds, page budgets and forced re-crawls."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, db_rows, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def crawl(db: Path, *args: str) -> Any:
    return runner.invoke(
        app,
        ["crawl", "--db", str(db), "--no-cache", "--delay-ms", "0", "-q", *args],
        catch_exceptions=False,
    )


def test_domain_widens_the_seeds_scope_and_is_refused_with_any_domain(
    tmp_path: Path, serve: Serve
) -> None:
    pages: dict[str, str | tuple[int, str, str]] = {}
    site = serve(site_app(pages))
    other = site.base.replace("127.0.0.1", "localhost")
    links = f'<a href="/a">a</a> <a href="{other}/b">b</a> <a href="http://example.invalid/x">x</a>'
    pages |= {"/": html_page(links), "/a": html_page("a"), "/b": html_page("b")}
    db = tmp_path / "c.db"
    result = crawl(db, site.url("/"), "--domain", "localhost", "--ignore-robots")
    assert result.exit_code == 0, result.output
    assert set(db_rows(db)) == {site.url("/"), site.url("/a"), f"{other}/b"}
    site.requests.clear()
    both = crawl(tmp_path / "d.db", site.url("/"), "--any-domain", "--domain", "127.0.0.1")
    assert both.exit_code == 2
    assert "--domain" in both.output and "--any-domain" in both.output
    assert site.requests == []
