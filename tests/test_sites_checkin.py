"""Checkins of sites that link to each other, at the same moment (PostgreSQL: workers on
several machines share the site queue)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from aiohttp import web
from conftest import LocalServer, crawler_env, db_query, html_page
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.sites.model import SiteCrawl, SiteSchedule
from litecrawl.store.postgres.sites import PostgresSites

runner = CliRunner()
Serve = Callable[[web.Application], LocalServer]
A, B, C = "http://a.test/", "http://b.test/", "http://c.test/"


def _waiting(url: str, n: int, what: str) -> None:
    """Until ``n`` backends of this database wait for a lock. Asked on a connection of its own
    in autocommit: inside a transaction pg_stat_activity is read once and kept, and a backend
    the pool connects later (a loaded machine) was never seen."""
    deadline = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
                " WHERE NOT l.granted AND a.datname = current_database()"
            ).fetchone()
            if row is not None and row[0] >= n:
                return
            time.sleep(0.02)
    raise AssertionError(f"{n} waiting for {what} never seen")


def test_checkins_of_sites_linking_each_other_never_deadlock(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A links to B and C, B to A; both crawls end together and check in at the same moment:
    # held at the same statement by a second connection, then let go at once. A checkin that
    # wrote its own site's row first, then the sites it found, waited for the other's while
    # holding its own: PostgreSQL found a deadlock and the write was retried.
    store = PostgresSites(pg_url)
    store.open()
    try:
        store.add([A, B], time.time())
        for site in store.sites(None):
            store.record_check(site.id, "relevant", "test", None, time.time())
        now = time.time()
        out_a = store.checkout("w1", now, now, 300)
        out_b = store.checkout("w2", now, now, 300)
        assert out_a is not None and out_b is not None
        assert {out_a.base_url, out_b.base_url} == {A, B}
        links = {A: {B: 2, C: 1}, B: {A: 1}}

        def checkin(site_id: int, worker: str, base_url: str) -> int:
            crawl = SiteCrawl(site_id, "full", worker, now, time.time(), 1, 1, 0, False)
            later = time.time() + 86400
            return store.checkin(crawl, SiteSchedule(later, later), links[base_url], time.time())

        with psycopg.connect(pg_url) as gate, ThreadPoolExecutor(2) as pool:
            gate.execute("LOCK TABLE site_crawls IN SHARE MODE")  # each checkin records a crawl
            done = [
                pool.submit(checkin, site.id, worker, site.base_url)
                for site, worker in ((out_a, "w1"), (out_b, "w2"))
            ]
            try:
                _waiting(pg_url, 2, "the two checkins")
            finally:
                gate.commit()  # let them go (seen waiting or not: the pool waits for them)
            queued = [d.result(timeout=60) for d in done]
    finally:
        store.close()
    assert not [r.getMessage() for r in caplog.records if "deadlock" in r.getMessage()]
    assert sorted(queued) == [0, 1]  # C, queued by A's checkin
    rows = db_query(
        pg_url,
        "SELECT f.base_url, t.base_url, l.count FROM site_links l "
        "JOIN sites f ON f.id = l.from_site JOIN sites t ON t.id = l.to_site",
    )
    assert sorted(rows) == [(A, B, 2), (A, C, 1), (B, A, 1)]
    assert db_query(pg_url, "SELECT count(*) FROM site_crawls") == [(2,)]
    sites = db_query(pg_url, "SELECT base_url, status, source, locked_by FROM sites")
    assert sorted(sites) == [
        (A, "relevant", "seed", None),
        (B, "relevant", "seed", None),
        (C, "queued", "link", None),
    ]


TEXT = "<p>" + " ".join(["Our aquarium keeps zebrafish, guppies and tetras in clean water."] * 6)


def _slow_site(pages: dict[str, str]) -> web.Application:
    """HTML pages by path, each with TEXT, answered after 0.5 s (a crawl outlasts many polls)."""
    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        body = pages.get(request.path)
        if body is None:
            return web.Response(status=404, text="not found")
        await asyncio.sleep(0.5)
        return web.Response(text=html_page(TEXT + body, request.path), content_type="text/html")

    app.router.add_get("/{tail:.*}", handler)
    return app


def test_a_run_counts_the_sites_found_by_checkins_that_overlap(
    tmp_path: Path, serve: Serve, pg_url: str
) -> None:
    # Two workers of one `sites run` check in at once: A's checkin queues C while B's waits
    # (a second connection holds each site's row until both checkins wait, then lets A's go
    # first). The count of sites found is both checkins', whichever ends last.
    other: dict[str, str] = {}
    b = serve(_slow_site(other))
    c = serve(_slow_site({"/": ""}))
    a = serve(_slow_site({"/": f'<a href="{b.url()}">B</a> <a href="{c.url()}">C</a>'}))
    other["/"] = f'<a href="{a.url()}">A</a>'
    conf = tmp_path / "c.toml"  # no lock renewed while the test holds the rows
    conf.write_text("lease_timeout = 300\n[rate_limit]\nper_host_delay_ms = 0\n")
    assert runner.invoke(app, ["sites", "add", a.url(), b.url(), "--db", pg_url]).exit_code == 0
    cmd = [sys.executable, "-m", "litecrawl", "sites", "run", "--once", "--workers", "2"]
    run = subprocess.Popen(
        [*cmd, "--db", pg_url, "--config", str(conf)],
        stdout=subprocess.PIPE,
        text=True,
        env=crawler_env(),
    )
    gates: dict[str, psycopg.Connection[Any]] = {}
    try:
        deadline = time.monotonic() + 60
        while len(gates) < 2 and time.monotonic() < deadline and run.poll() is None:
            for (url,) in db_query(pg_url, "SELECT base_url FROM sites WHERE locked_by <> ''"):
                if url not in gates:  # checked out, crawling: its checkin will wait
                    gates[url] = gate = psycopg.connect(pg_url)
                    held = gate.execute(
                        "SELECT locked_by FROM sites WHERE base_url = %s FOR SHARE", (url,)
                    ).fetchone()
                    assert held is not None and held[0], f"{url} checked in before it was held"
            time.sleep(0.01)
        assert set(gates) == {a.url(), b.url()}, (gates, run.poll())
        _waiting(pg_url, 2, "the two checkins")
        gates.pop(a.url()).commit()
        while db_query(pg_url, f"SELECT locked_by FROM sites WHERE base_url = '{a.url()}'") != [
            (None,)
        ]:
            assert time.monotonic() < deadline, "A's checkin never ended"
            time.sleep(0.01)
        gates.pop(b.url()).commit()
        out, _ = run.communicate(timeout=60)
    finally:
        for gate in gates.values():
            gate.close()
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, out
    assert "2 sites checked, 2 crawled, 1 new sites found through links" in out, out
    queued = db_query(pg_url, f"SELECT status, source FROM sites WHERE base_url = '{c.url()}'")
    assert queued == [("queued", "link")]
