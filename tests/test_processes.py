"""Overlapping runs and crash safety, with real processes on one SQLite file."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, html_page

Serve = Callable[[web.Application], LocalServer]
N_PAGES = 40


def slow_site(delay: float, pace: dict[str, float] | None = None) -> web.Application:
    """/ links to /p0../p{N-1}; every page answers after ``delay`` seconds, or after
    ``pace["delay"]`` when given (a test changes it while the site runs)."""
    app = web.Application()
    pace = pace if pace is not None else {"delay": delay}

    async def handler(request: web.Request) -> web.Response:
        await asyncio.sleep(pace["delay"])
        body = (
            "".join(f'<a href="/p{i}">{i}</a>' for i in range(N_PAGES))
            if request.path == "/"
            else ""
        )
        return web.Response(text=html_page(body, request.path), content_type="text/html")

    app.router.add_get("/{tail:.*}", handler)
    return app


def crawler_process(db: Path, url: str, **kwargs: object) -> subprocess.Popen[bytes]:
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    code = textwrap.dedent(
        f"""
        from litecrawl import litecrawl
        litecrawl({str(db)!r}, [{url!r}], fetcher="http", obey_robots=False, {args})
        """
    )
    return subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)


def table(db: Path) -> dict[str, tuple[int | None, int | None, int | None]]:
    conn = sqlite3.connect(db)
    try:
        return {
            url: (last, nxt, proc)
            for url, last, nxt, proc in conn.execute(
                "SELECT norm_url, last_crawl_time, next_crawl_time, processing_time FROM pages"
            )
        }
    finally:
        conn.close()


def test_two_overlapping_processes_never_fetch_the_same_url(tmp_path: Path, serve: Serve) -> None:
    site = serve(slow_site(0.3))
    db = tmp_path / "shared.db"
    first = crawler_process(db, site.url("/"), n_claims=1)  # discovers the 40 links
    assert first.wait(60) == 0, first.stderr.read() if first.stderr else ""
    site.requests.clear()
    procs = [crawler_process(db, site.url("/"), n_claims=30, n_concurrent=5) for _ in range(2)]
    for p in procs:
        assert p.wait(120) == 0, p.stderr.read() if p.stderr else ""
    counts = Counter(site.paths())
    assert len(counts) == N_PAGES  # 30 + 10: both processes worked
    assert max(counts.values()) == 1  # and never on the same URL
    # The overlap was real: some request of one process ran while the other's was in flight.
    spans = sorted((r.start, r.end) for r in site.requests)
    assert any(b_start < a_end for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    assert all(proc is None for _, _, proc in table(db).values())


def test_kill_9_mid_batch_loses_nothing_and_next_run_recovers(tmp_path: Path, serve: Serve) -> None:
    pace = {"delay": 0.5}  # slow while the victim runs: its batch is in flight at the kill
    site = serve(slow_site(0.5, pace))
    db = tmp_path / "crash.db"
    first = crawler_process(db, site.url("/"), n_claims=1)
    assert first.wait(60) == 0
    victim = crawler_process(db, site.url("/"), n_claims=N_PAGES, n_concurrent=4)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(site.requests) < 6:
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(10)
    before = table(db)
    assert len(before) == N_PAGES + 1  # every discovered URL survived the kill
    claimed = [u for u, (_, _, proc) in before.items() if proc is not None]
    assert claimed, "the kill should have left claimed rows behind"
    # The database file is intact.
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    # A run right away sees the killed run's worker gone (its process no longer exists) and
    # recovers its claims at once. They were lost together, so none of them is suspected of
    # killing its worker: each is due again and fetched once in this run (a page is parked only
    # when it was all its worker held, three times: frontier/lost.py).
    site.requests.clear()
    # fast for the next run, which tries the lost claims one at a time (docs/crawling.md,
    # "Resume after a kill"): at 0.5 s a page that alone took 20 s of the test
    pace["delay"] = 0.02
    p = crawler_process(db, site.url("/"), n_claims=N_PAGES, n_concurrent=10)
    assert p.wait(120) == 0
    claimed_paths = {u.removeprefix(site.base) for u in claimed}
    assert all(site.count(path) == 1 for path in claimed_paths), site.paths()
    after = table(db)
    assert set(after) == set(before)
    assert all(proc is None for _, _, proc in after.values())  # no claim left behind
    assert all(after[u][1] is not None for u in claimed)  # rescheduled (stale)
