"""The link graph (page_links) and response times, written by real crawls of a local site."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, db_rows, html_page, redirect_to
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.store.sql import MAX_LINKS_PER_PAGE

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def _site(state: dict[str, str]) -> web.Application:
    app = web.Application()

    def page(body: Callable[[], str]) -> Callable[[web.Request], object]:
        async def handler(request: web.Request) -> web.Response:
            return web.Response(text=html_page(body(), request.path), content_type="text/html")

        return handler

    app.router.add_get("/", page(lambda: state["home"]))
    app.router.add_get(
        "/a", page(lambda: state.get("a", "") + ' <a href="/b">b</a> <a href="/">home</a>')
    )
    app.router.add_get("/b", page(lambda: '<a href="/deep">deeper than the crawl goes</a>'))
    app.router.add_get("/c", page(lambda: "no links"))
    app.router.add_get(
        "/many", page(lambda: "".join(f'<a href="/m{i}">m</a>' for i in range(1200)))
    )
    app.router.add_get("/old", redirect_to("/c"))
    return app


def _crawl(db: Path, url: str, *extra: str) -> None:
    args = ["crawl", url, "--db", str(db), "--delay-ms", "0", "--no-cache", "-q", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output


def _links(db: Path) -> dict[str, set[str]]:
    conn = sqlite3.connect(db)
    try:
        graph: dict[str, set[str]] = {}
        for src, dst in conn.execute("SELECT src, dst FROM page_links"):
            graph.setdefault(src, set()).add(dst)
        return graph
    finally:
        conn.close()


def test_links_out_stored_and_replaced_when_the_page_changes(tmp_path: Path, serve: Serve) -> None:
    state = {
        "home": '<a href="/a">a</a> <a href="/old">old</a> <a href="http://127.0.0.1:9/x">x</a>'
    }
    site = serve(_site(state))
    db = tmp_path / "c.db"
    _crawl(db, site.url("/"), "--max-depth", "2")
    u = site.url
    graph = _links(db)
    # off-site links are in the graph too (they are links of the page, followed or not)
    assert graph[u("/")] == {u("/a"), u("/old"), "http://127.0.0.1:9/x"}
    assert graph[u("/a")] == {u("/b"), u("/")}
    # /b is at the maximum depth: not followed, but its links are known
    assert graph[u("/b")] == {u("/deep")}
    assert u("/deep") not in db_rows(db)
    assert graph[u("/old")] == {u("/c")}  # a redirect links to its target
    assert u("/c") not in graph  # no links

    # the home page's links change: they are replaced; /a's text changes, not its links: its
    # rows stay as they are (as those of the unchanged pages)
    state["home"] = '<a href="/c">c</a>'
    state["a"] = "<p>new words on the page</p>"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE pages SET next_crawl_time = 0")  # all due again
    # what the re-crawl deletes from the graph, seen by the database itself
    conn.execute("CREATE TABLE deleted_links (src TEXT)")
    conn.execute(
        "CREATE TRIGGER seen AFTER DELETE ON page_links BEGIN "
        "INSERT INTO deleted_links VALUES (old.src); END"
    )
    conn.commit()
    conn.close()
    _crawl(db, site.url("/"), "--max-depth", "2")
    graph = _links(db)
    assert graph[u("/")] == {u("/c")}
    assert graph[u("/a")] == {u("/b"), u("/")}
    conn = sqlite3.connect(db)
    deleted = [src for (src,) in conn.execute("SELECT src FROM deleted_links")]
    conn.close()
    assert sorted(deleted) == [u("/")] * 3  # only the changed links were rewritten
    assert db_rows(db)[u("/a")]["fetch_count"] == 2  # although /a was crawled again


def test_links_per_page_are_capped(tmp_path: Path, serve: Serve) -> None:
    site = serve(_site({"home": ""}))
    db = tmp_path / "c.db"
    _crawl(db, site.url("/many"), "--max-depth", "0", "--max-pages", "1")
    assert len(_links(db)[site.url("/many")]) == MAX_LINKS_PER_PAGE


def test_response_times_recorded(tmp_path: Path, serve: Serve) -> None:
    site = serve(_site({"home": '<a href="/a">a</a> <a href="/nowhere">404</a>'}))
    db = tmp_path / "c.db"
    _crawl(db, site.url("/"), "--max-depth", "1")
    rows = db_rows(db)
    for path in ("/", "/a", "/nowhere"):
        ms = rows[site.url(path)]["response_ms"]
        assert isinstance(ms, int) and 0 <= ms < 10_000, (path, ms)
