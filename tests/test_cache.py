"""The disk cache in its file layout: body + ``.headers.json``, refreshed by a 304."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, db_execute, html_page
from typer.testing import CliRunner

from litecrawl.cache import CachedResponse, DiskCache
from litecrawl.cli import app
from litecrawl.fetch.base import FetchResult
from litecrawl.fetch.http import HttpFetcher
from litecrawl.fetch.policy import FetchPolicy, fetch_with_policy
from litecrawl.politeness.base import OpenGate

Serve = Callable[[web.Application], LocalServer]


def etag_site(pages: dict[str, str]) -> web.Application:
    """HTML pages with the ETag "v1": a request that sends it back gets a 304."""

    async def page(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"', "Cache-Control": "max-age=60"})
        text = pages.get(request.path)
        if text is None:
            return web.Response(status=404)
        return web.Response(text=text, content_type="text/html", headers={"ETag": '"v1"'})

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    return app


def test_headers_json_beside_each_body_and_304_refreshes_it(tmp_path: Path, serve: Serve) -> None:
    body = html_page("<p>cached body</p>", "Doc")
    site = serve(etag_site({"/doc": body}))
    db, cache = tmp_path / "c.db", tmp_path / "cache"
    (tmp_path / "c.toml").write_text(f'[cache]\ndir = "{cache}"\n')
    args = ["crawl", site.url("/doc"), "--db", str(db), "--delay-ms", "0"]
    args += ["--config", str(tmp_path / "c.toml"), "-v", "--log-json"]
    runner = CliRunner()
    assert runner.invoke(app, args).exit_code == 0
    path = DiskCache(cache).path_for(site.url("/doc"))
    meta_path = path.with_suffix(".headers.json")
    assert path.read_bytes() == body.encode()
    meta = json.loads(meta_path.read_text())
    assert {"status", "headers", "fetched_at", "size_bytes", "content_hash"} <= set(meta)
    assert meta["status"] == 200 and meta["size_bytes"] == len(body.encode())
    assert meta["headers"]["etag"] == '"v1"'
    meta["fetched_at"] = 0.0  # an old entry: the 304 must refresh it
    meta_path.write_text(json.dumps(meta))
    db_execute(db, "UPDATE pages SET next_crawl_time = 1")  # due again
    again = runner.invoke(app, args)
    assert again.exit_code == 0
    refreshed = json.loads(meta_path.read_text())
    assert refreshed["fetched_at"] > 0
    assert refreshed["headers"]["cache-control"] == "max-age=60"
    assert refreshed["content_hash"] == meta["content_hash"]  # same body, still cached
    assert path.read_bytes() == body.encode()
    records = [json.loads(x) for x in again.stderr.splitlines() if x.startswith("{")]
    assert [r["action"] for r in records if r["logger"] == "litecrawl.page"] == ["cache"]
    (summary,) = [r for r in records if r["logger"] == "litecrawl.summary"]
    assert summary["cache_hits"] == 1  # the run summary, as JSON under --log-json


def test_the_sqlite_layout_keeps_every_page_in_one_file(tmp_path: Path, serve: Serve) -> None:
    """``[cache] layout = "sqlite"``: one cache.db instead of two files a page; a 304 is
    answered from it and the WARC export reads it, finding the layout by itself."""
    site = serve(etag_site({"/": html_page('<p>cached body</p><a href="/b">b</a>'), "/b": "b"}))
    db, cache = tmp_path / "c.db", tmp_path / "cache"
    (tmp_path / "c.toml").write_text(f'[cache]\ndir = "{cache}"\nlayout = "sqlite"\n')
    args = ["crawl", site.url("/"), "--db", str(db), "--delay-ms", "0", "--no-embed"]
    args += ["--config", str(tmp_path / "c.toml")]
    runner = CliRunner()
    assert runner.invoke(app, args).exit_code == 0
    assert {p.name for p in cache.iterdir()} <= {"cache.db", "cache.db-wal", "cache.db-shm"}
    assert (
        sqlite3.connect(cache / "cache.db").execute("SELECT count(*) FROM responses").fetchone()[0]
        == 2
    )
    db_execute(db, "UPDATE pages SET next_crawl_time = 1")  # due again
    again = runner.invoke(app, args)
    assert again.exit_code == 0
    assert re.search(r"^cache_hits:\s+2$", again.stderr, re.MULTILINE), again.stderr
    warc = tmp_path / "out.warc.gz"
    exported = runner.invoke(
        app,
        ["export", "--format", "warc", "--db", str(db), "--cache-dir", str(cache), "-o", str(warc)],
    )
    assert exported.exit_code == 0, exported.output
    assert b"cached body" in gzip.decompress(warc.read_bytes())


class ThreadNoting(DiskCache):
    """The disk cache, noting which thread each call runs on."""

    threads: list[tuple[str, int]]

    def store(self, url: str, result: FetchResult, content_hash: str) -> Path:
        self.threads.append(("store", threading.get_ident()))
        return super().store(url, result, content_hash)

    def load(self, url: str) -> CachedResponse | None:
        self.threads.append(("load", threading.get_ident()))
        return super().load(url)


def test_the_cache_is_read_and_written_off_the_event_loop(tmp_path: Path, serve: Serve) -> None:
    """A store is file system work (two files and a rename each): on the event loop it would
    stop every other fetch for as long as the disk takes."""
    site = serve(etag_site({"/": html_page("home")}))
    cache = ThreadNoting(tmp_path / "cache")
    cache.threads = []
    policy = FetchPolicy(cache=cache)

    async def go() -> tuple[int, list[int]]:
        loop_thread = threading.get_ident()
        async with HttpFetcher() as fetcher:
            first = await fetch_with_policy(fetcher, OpenGate(), policy, site.url("/"))
            etag = first.headers["etag"] if isinstance(first, FetchResult) else None
            again = await fetch_with_policy(fetcher, OpenGate(), policy, site.url("/"), etag)
        assert isinstance(again, FetchResult) and again.revalidated
        return loop_thread, [thread for _, thread in cache.threads]

    loop_thread, threads = asyncio.run(go())
    assert {call for call, _ in cache.threads} == {"store", "load"}  # (store reads first)
    assert loop_thread not in threads
