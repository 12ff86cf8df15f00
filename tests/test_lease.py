"""Leases: a killed crawl's claims come back at once; a silent worker's after lease_timeout."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import PATIENCE_SEC, LocalServer, crawler_env, db_rows, html_page

from litecrawl.lease import Lease, LeaseRules, current_identity
from litecrawl.store.queue import NewLink
from litecrawl.store.sqlite.frontier import SQLiteFrontier
from litecrawl.store.workers import WorkerIdentity

Serve = Callable[[web.Application], LocalServer]
N_PAGES = 150


def wide_site(delay: float, pace: dict[str, float] | None = None) -> web.Application:
    """/ links to /p0../p{N-1}; every page answers after ``delay`` seconds, or after
    ``pace["delay"]`` when given (a test changes it while the site runs)."""
    app = web.Application()
    pace = pace if pace is not None else {"delay": delay}

    async def handler(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        await asyncio.sleep(pace["delay"])
        body = "".join(f'<a href="/p{i}">{i}</a>' for i in range(N_PAGES))
        return web.Response(
            text=html_page(body if request.path == "/" else "leaf", request.path),
            content_type="text/html",
        )

    app.router.add_get("/{tail:.*}", handler)
    return app


def spawn_crawl(db: Path, url: str, *extra: str) -> subprocess.Popen[bytes]:
    # Output to a file, not a pipe: after kill -9 nothing else may hold our end open.
    log = (db.parent / "crawl.log").open("ab")
    args = ["--no-cache", "--max-depth", "0", "--delay-ms", "0", *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "litecrawl", "crawl", url, "--db", str(db), *args],
        stdout=log,
        stderr=log,
        env=crawler_env(),
    )


def query(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_kill_9_mid_crawl_then_rerun_at_once_crawls_everything(
    tmp_path: Path, serve: Serve
) -> None:
    pace = {"delay": 0.5}  # slow while the victim runs: it holds many claims at the kill
    site = serve(wide_site(0.5, pace))
    db = tmp_path / "c.db"
    flags = ("--concurrency", "16", "--per-host", "16")
    victim = spawn_crawl(db, site.url("/"), *flags)
    deadline = time.monotonic() + PATIENCE_SEC
    claimed: list[tuple[object, ...]] = []
    while time.monotonic() < deadline and len(claimed) < 16:
        time.sleep(0.05)
        if db.exists() and len(site.requests) > 1:
            claimed = query(db, "SELECT norm_url FROM pages WHERE worker_id IS NOT NULL")
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(30)
    assert len(claimed) >= 16, "the crawl should have held many claims before the kill"
    held = {str(url) for (url,) in query(db, "SELECT norm_url FROM pages WHERE worker_id > 0")}
    assert held, "the kill should strand claims"
    assert query(db, "SELECT count(*) FROM workers") == [(1,)]  # the dead worker's row
    before = Counter(site.paths())
    # fast for the rerun, which tries the dead worker's claims one at a time (docs/crawling.md,
    # "Resume after a kill"): at 0.5 s a page that alone took 12 s of the test
    pace["delay"] = 0.02

    # The same command again, at once: the dead worker's claims are recovered at start (its
    # process is gone) and crawled, although processing_timeout_sec (600 s) has not passed.
    rerun = spawn_crawl(db, site.url("/"), *flags)
    assert rerun.wait(PATIENCE_SEC) == 0
    rows = db_rows(db)
    assert len(rows) == N_PAGES + 1
    assert all(r["last_crawl_time"] is not None and r["error"] is None for r in rows.values())
    assert all(r["processing_time"] is None and r["worker_id"] is None for r in rows.values())
    assert query(db, "SELECT count(*) FROM workers") == [(0,)]
    counts = Counter(site.paths())
    twice = {path for path, n in counts.items() if n > 1 and path != "/robots.txt"}
    # Only pages that were claimed and already requested when the kill came are fetched again.
    assert twice <= {u.removeprefix(site.base) for u in held} & set(before)
    assert max(counts.values()) <= 2


def test_a_worker_whose_heartbeat_stopped_loses_its_claims(tmp_path: Path) -> None:
    async def scenario() -> None:
        db = tmp_path / "l.db"
        elsewhere = WorkerIdentity("other-machine", 4242, "boot/ns", "123", "litecrawl crawl")
        async with SQLiteFrontier(db) as silent, SQLiteFrontier(db) as live:
            t0 = time.time()
            await silent.register_worker(elsewhere, t0)
            await silent.add(NewLink(f"http://h.test/{i}", "h.test") for i in range(8))
            taken = await silent.claim(5, int(t0))
            assert len(taken) == 5
            async with Lease(live, LeaseRules(lease_timeout=30)) as lease:
                workers = {w.identity.hostname: w for w in await live.workers()}
                assert workers["other-machine"].claims == 5
                # Another machine: no process to look at, so only its heartbeat tells.
                recovered = await live.recover_lost(lease.is_dead(t0 + 29), int(t0))
                assert recovered == 0
                recovered = await live.recover_lost(lease.is_dead(t0 + 31), int(t0))
                assert recovered == 5
                hostnames = [w.identity.hostname for w in await live.workers()]
                assert hostnames == [current_identity().hostname]
                again = await live.claim(10, int(t0))
                assert {p.norm_url for p in taken} <= {p.norm_url for p in again}
                # The silent worker beats again: its row comes back, told it was lost.
                assert silent.beat(t0 + 40) is False
                assert silent.beat(t0 + 41) is True
        rows = db_rows(db)
        assert {r["worker_id"] for r in rows.values()} == {None}  # clean exit gave claims back

    asyncio.run(scenario())


def test_on_this_machine_a_gone_or_replaced_process_is_dead_at_once(tmp_path: Path) -> None:
    here = current_identity()
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        alive = WorkerIdentity(
            here.hostname, sleeper.pid, here.pid_scope, _start_of(sleeper.pid), "sleep"
        )
        reused = WorkerIdentity(here.hostname, sleeper.pid, here.pid_scope, "1", "old owner")
        rules = LeaseRules(lease_timeout=30)
        now = time.time()

        async def verdicts() -> dict[str, bool]:
            async with SQLiteFrontier(tmp_path / "p.db") as f, Lease(f, rules) as lease:
                for ident in (alive, reused):
                    async with SQLiteFrontier(tmp_path / "p.db") as other:
                        await other.register_worker(ident, now)  # left behind, as by a crash
                judge = lease.is_dead(now)
                return {w.identity.command: judge(w) for w in await f.workers()}

        found = asyncio.run(verdicts())
        assert found == {"sleep": False, "old owner": True, "": False}
        sleeper.kill()
        sleeper.wait()
        found = asyncio.run(verdicts())
        assert found["sleep"] is True  # process gone: dead without waiting for the lease
    finally:
        sleeper.kill()
        sleeper.wait()


def _start_of(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2 :].split()[19]


def test_a_crawl_waits_for_the_lease_of_a_silent_worker_elsewhere(
    tmp_path: Path, serve: Serve
) -> None:
    """Another machine's worker holds claims and stopped beating: a crawl that runs out of
    work does not end "done" with those pages left claimed; it waits for the lease to run out
    (``--lease-timeout``), recovers them and crawls them."""
    site = serve(wide_site(0.0))
    db = tmp_path / "x.db"
    elsewhere = WorkerIdentity("other-machine", 4242, "boot/ns", "123", "litecrawl crawl")
    urls = [site.url(f"/p{i}") for i in range(5)]

    async def strand() -> None:
        async with SQLiteFrontier(db) as silent:
            now = time.time()
            # Missed a few beats already, but its 6 s lease is not over yet.
            await silent.register_worker(elsewhere, now - 2.5)
            await silent.add(NewLink(u, site.base.removeprefix("http://")) for u in urls)
            assert len(await silent.claim(5, int(now))) == 5

    asyncio.run(strand())
    proc = spawn_crawl(db, site.url("/p0"), "--lease-timeout", "6", "--no-follow")
    assert proc.wait(PATIENCE_SEC) == 0
    rows = db_rows(db)
    assert all(rows[u]["last_crawl_time"] is not None for u in urls)
    assert all(r["processing_time"] is None for r in rows.values())
    assert query(db, "SELECT count(*) FROM workers") == [(0,)]
    assert {p for p in site.paths() if p != "/robots.txt"} == {f"/p{i}" for i in range(5)}


def test_watch_takes_over_the_claims_of_a_worker_that_dies_while_it_waits(
    tmp_path: Path, serve: Serve
) -> None:
    """A ``--watch`` crawl with nothing due sleeps until the next due page (a day away), but a
    worker elsewhere that stops beating meanwhile has its claims crawled within its lease."""
    site = serve(wide_site(0.0))
    db = tmp_path / "w.db"
    watcher = spawn_crawl(db, site.url("/p0"), "--watch", "--no-follow", "--lease-timeout", "3")
    try:
        deadline = time.monotonic() + PATIENCE_SEC
        while time.monotonic() < deadline and "/p0" not in site.paths():
            time.sleep(0.05)
        assert "/p0" in site.paths()
        time.sleep(1.0)  # let it finish the page and go to sleep
        elsewhere = WorkerIdentity("other-machine", 4242, "boot/ns", "123", "litecrawl crawl")
        urls = [site.url(f"/p{i}") for i in range(1, 4)]

        async def claim_and_die() -> None:  # closing is not a clean exit: rows stay
            async with SQLiteFrontier(db) as doomed:
                now = time.time()
                await doomed.register_worker(elsewhere, now)
                await doomed.add(NewLink(u, site.base.removeprefix("http://")) for u in urls)
                assert len(await doomed.claim(3, int(now))) == 3

        asyncio.run(claim_and_die())
        deadline = time.monotonic() + PATIENCE_SEC
        while time.monotonic() < deadline and not {f"/p{i}" for i in range(1, 4)} <= set(
            site.paths()
        ):
            time.sleep(0.1)
        assert {f"/p{i}" for i in range(1, 4)} <= set(site.paths())
        assert watcher.poll() is None  # still watching
    finally:
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(30) == 0
    rows = db_rows(db)
    assert all(rows[u]["last_crawl_time"] is not None for u in urls)
    assert query(db, "SELECT count(*) FROM workers") == [(0,)]
