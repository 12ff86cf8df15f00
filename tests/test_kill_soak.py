"""kill -9 at random moments of a real crawl, again and again, then one run to the end: every
page is crawled, none is parked, what is fetched twice is no more than what was in flight at the
kills (counted at the server), and the database is sound; kills in the first seconds of each run,
while the first page is all the crawl holds, never park it; a page that kills its crawler each
time is parked and the crawl says so. bench/kill_soak.py runs the long version on a real
documentation site."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import PATIENCE_SEC, LocalServer, crawler_env, db_query, html_page

from litecrawl.frontier.lost import PARK_AFTER

Serve = Callable[[web.Application], LocalServer]
SECTIONS = 12
LEAVES = 15  # pages reachable only through their section's page
KILLS = 8
EARLY_KILLS = 5


def tree_site(
    first_page_sec: float = 0.05,
    killer: Callable[[], None] | None = None,
    pace: dict[str, float] | None = None,
) -> web.Application:
    """/ links to /s0../s11, each /sI to its 15 leaves; every answer takes 50 ms, the first
    page ``first_page_sec`` (or ``pace["first_page_sec"]`` when given: a test changes it while
    the site runs). With ``killer``, / also links to /killer, whose request calls it."""
    app = web.Application()
    pace = pace if pace is not None else {"first_page_sec": first_page_sec}

    async def handler(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/killer" and killer is not None:
            killer()
            await asyncio.sleep(5)
        await asyncio.sleep(pace["first_page_sec"] if request.path == "/" else 0.05)
        parts = request.path.strip("/").split("/")
        if request.path == "/":
            links = [f"/s{i}" for i in range(SECTIONS)] + (["/killer"] if killer else [])
        elif len(parts) == 1:
            links = [f"/{parts[0]}/p{j}" for j in range(LEAVES)]
        else:
            links = ["/"]
        body = "".join(f'<a href="{u}">{u}</a> ' for u in links)
        return web.Response(text=html_page(body, request.path), content_type="text/html")

    app.router.add_get("/{tail:.*}", handler)
    return app


def all_paths() -> set[str]:
    sections = {f"/s{i}" for i in range(SECTIONS)}
    leaves = {f"/s{i}/p{j}" for i in range(SECTIONS) for j in range(LEAVES)}
    return {"/"} | sections | leaves


def crawl(db: Path, site: LocalServer) -> subprocess.Popen[bytes]:
    log = (db.parent / "crawl.log").open("ab")  # a file: nothing of ours held by the dead
    flags = ["--no-cache", "--max-depth", "0", "--delay-ms", "0", "--concurrency", "4"]
    return subprocess.Popen(
        [sys.executable, "-m", "litecrawl", "crawl", site.url("/"), "--db", str(db), *flags],
        stdout=log,
        stderr=log,
        start_new_session=True,  # kill -9 of its process group: its analysis workers too
        env=crawler_env(),
    )


def test_many_kills_at_random_moments_then_one_run_to_the_end(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site())
    db = tmp_path / "soak.db"
    seed = int.from_bytes(os.urandom(4))
    pick = random.Random(seed)
    in_flight = 0  # claims the killed runs held: pages being fetched or not yet written
    for _ in range(KILLS):
        proc = crawl(db, site)
        # a random moment of the crawl: after 3 to 20 more requests (a loaded machine starts
        # a process in anything from 1 to 10 s, so a time after the start says little)
        target = len(site.requests) + pick.randint(3, 20)
        deadline = time.monotonic() + PATIENCE_SEC
        while len(site.requests) < target and proc.poll() is None:
            assert time.monotonic() < deadline, "the crawl does not go on"
            time.sleep(0.005)
        assert proc.poll() is None, f"seed {seed}: the crawl ended between kills"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        in_flight += db_query(db, "SELECT count(*) FROM pages WHERE worker_id IS NOT NULL")[0][0]
    last = crawl(db, site)
    log = (tmp_path / "crawl.log").read_text
    assert last.wait(PATIENCE_SEC) == 0, f"seed {seed}: {log()[-3000:]}"

    rows = db_query(db, "SELECT norm_url, last_crawl_time, error, processing_time FROM pages")
    assert {u.removeprefix(site.base) for u, *_ in rows} == all_paths()
    assert all(crawled and error is None and held is None for _, crawled, error, held in rows)
    assert db_query(db, "SELECT count(*) FROM pages WHERE lost_alone > 0 OR lost > 0") == [(0,)]
    counts = Counter(p for p in site.paths() if p != "/robots.txt")
    assert set(counts) == all_paths()
    again = sum(n - 1 for n in counts.values())
    assert again <= in_flight, f"seed {seed}: {again} fetched again, {in_flight} in flight"
    assert db_query(db, "PRAGMA integrity_check") == [("ok",)]


def test_kills_in_the_first_seconds_never_park_the_first_page(tmp_path: Path, serve: Serve) -> None:
    """Each run is killed 0.8 to 3 s after it asked for the first page, which takes 3.5 s to
    answer: the first page is all the crawl holds at every kill, and the dead runs had written
    nothing, so nothing says that page is to blame. Then one run to the end crawls it all."""
    pace = {"first_page_sec": 3.5}
    site = serve(tree_site(pace=pace))
    db = tmp_path / "early.db"
    pick = random.Random(int.from_bytes(os.urandom(4)))
    for i in range(EARLY_KILLS):
        proc = crawl(db, site)
        deadline = time.monotonic() + PATIENCE_SEC
        while site.count("/") <= i and proc.poll() is None:
            assert time.monotonic() < deadline, "the crawl does not go on"
            time.sleep(0.005)
        time.sleep(pick.uniform(0.8, 3.0))
        assert proc.poll() is None, (tmp_path / "crawl.log").read_text()[-3000:]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        assert db_query(db, "SELECT norm_url FROM pages WHERE worker_id IS NOT NULL") == [
            (site.url("/"),)
        ]
    # (the last run's loss is recovered by the next run)
    assert db_query(db, "SELECT lost, lost_alone FROM pages") == [(EARLY_KILLS - 1, 0)]
    pace["first_page_sec"] = 0.05  # the kills are over: the last run need not wait for it
    last = crawl(db, site)
    assert last.wait(PATIENCE_SEC) == 0, (tmp_path / "crawl.log").read_text()[-3000:]
    rows = db_query(db, "SELECT norm_url, last_crawl_time, error FROM pages")
    assert {u.removeprefix(site.base) for u, *_ in rows} == all_paths()
    assert all(crawled and error is None for _, crawled, error in rows)
    assert db_query(db, "SELECT count(*) FROM pages WHERE lost_alone > 0 OR lost > 0") == [(0,)]


def test_a_page_that_kills_its_worker_is_parked_and_the_crawl_says_so(
    tmp_path: Path, serve: Serve
) -> None:
    """/killer kills the crawl that fetches it (kill -9 of its process group, from the server):
    lost with the other pages in flight the first time (no blame), then tried alone once each
    run has written TRY_SUSPECTS_AFTER other pages; after three such losses it is parked, and
    the run that finishes the rest exits 1 saying so."""
    crawler: dict[str, int] = {}
    site = serve(tree_site(killer=lambda: os.killpg(crawler["pgid"], signal.SIGKILL)))
    db = tmp_path / "k.db"
    codes = []
    while len(codes) < 10 and (not codes or codes[-1] == -signal.SIGKILL):
        proc = crawl(db, site)
        crawler["pgid"] = proc.pid
        codes.append(proc.wait(PATIENCE_SEC))
    log = (tmp_path / "crawl.log").read_text()
    assert codes[-1] == 1 and codes[:-1] == [-signal.SIGKILL] * (len(codes) - 1), log[-3000:]
    # once with the others in flight, then alone at least PARK_AFTER times
    assert site.count("/killer") == len(codes) - 1 >= 1 + PARK_AFTER
    assert re.search(r"^parked: +1$", log, re.M) and "exit 1: 1 pages parked" in log
    out = subprocess.run(
        [sys.executable, "-m", "litecrawl", "stats", "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "parked: 1 pages, each was lost with its worker, alone" in out
    rows = db_query(db, "SELECT norm_url FROM pages WHERE last_crawl_time IS NULL")
    assert rows == [(site.url("/killer"),)]
    assert db_query(db, "SELECT count(*) FROM pages") == [(len(all_paths()) + 1,)]
