"""``litecrawl sites run``: crawls of relevant sites, locks, links between sites."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import (
    LocalServer,
    NewDb,
    analysis_workers_during,
    crawler_env,
    db_query,
    html_page,
)
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()
TEXT = "<p>" + " ".join(["Our aquarium keeps zebrafish, guppies and tetras in clean water."] * 6)


def _app(pages: dict[str, str], delay: float = 0.0) -> web.Application:
    """HTML pages by path, each with TEXT; ``{other}`` placeholders filled at request time."""
    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        body = pages.get(request.path)
        if body is None:
            return web.Response(status=404, text="not found")
        await asyncio.sleep(delay)
        return web.Response(text=html_page(TEXT + body, request.path), content_type="text/html")

    app.router.add_get("/{tail:.*}", handler)
    return app


def _slow_site(
    serve: Serve, tmp_path: Path, db: str, n: int, conf_text: str
) -> tuple[LocalServer, str, Path]:
    """A site of ``n`` linked pages at 0.2 s each, added to a fresh database, and its config."""
    pages = {"/": "".join(f'<a href="/p{i}">p</a>' for i in range(n))}
    pages.update({f"/p{i}": "" for i in range(n)})
    site = serve(_app(pages, delay=0.2))
    conf = tmp_path / "c.toml"
    conf.write_text(conf_text)
    runner.invoke(app, ["sites", "add", site.url("/"), "--db", str(db)])
    return site, db, conf


def _sites(db: str | Path) -> dict[str, dict[str, Any]]:
    result = runner.invoke(app, ["sites", "list", "--json", "--db", str(db)])
    return {s["base_url"]: s for s in map(json.loads, result.stdout.splitlines())}


def test_run_crawls_due_sites_and_counts_links_between_sites(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    other: dict[str, str] = {}
    b = serve(_app(other))
    c = serve(_app({"/": ""}))  # found through a link only
    a = serve(
        _app(
            {
                "/": f'<a href="/x">x</a> <a href="{b.url()}">B</a> <a href="{c.url()}">C</a>',
                "/x": f'<a href="/y">y</a> <a href="{b.url("/")}">B again</a>',
                "/y": '<a href="/">home</a>',
            }
        )
    )
    other.update({"/": f'<a href="{a.url("/")}">A</a>'})
    db = new_db("s")
    assert runner.invoke(app, ["sites", "add", a.url("/"), b.url("/"), "--db", str(db)])
    run = ["sites", "run", "--once", "--workers", "2", "--db", str(db)]
    # a pool of one worker process (this test process's child, as the command runs here) for
    # the pass: both site crawls share it, where each started its own
    env = {"LITECRAWL_EXTRACT_WORKERS": "1"}
    results = []
    workers = analysis_workers_during(lambda: results.append(runner.invoke(app, run, env=env)))
    (result,) = results
    assert result.exit_code == 0, result.output
    assert len(workers) == 1
    # (failed once at load ~10 with "0 new sites": what the database held is in the message)
    assert "2 sites checked, 2 crawled, 1 new sites found through links" in result.stdout, (
        result.stdout,
        _sites(db),
        db_query(db, "SELECT src, dst FROM page_links"),
        db_query(db, "SELECT norm_url, host, state, content_hash FROM pages"),
    )
    # every page of both sites fetched once (the start page twice: the check and the crawl)
    assert Counter(a.paths()) == {"/robots.txt": 1, "/": 2, "/x": 1, "/y": 1}
    assert Counter(b.paths()) == {"/robots.txt": 1, "/": 2}
    assert c.paths() == []  # queued, not crawled: another site
    sites = _sites(db)
    assert sites[c.url("/")]["status"] == "queued" and sites[c.url("/")]["source"] == "link"
    assert all(sites[s.url("/")]["next_crawl"] > time.time() + 86400 for s in (a, b))
    links = db_query(
        db,
        "SELECT f.base_url, t.base_url, l.count FROM site_links l "
        "JOIN sites f ON f.id = l.from_site JOIN sites t ON t.id = l.to_site",
    )
    assert sorted(links) == sorted(
        [(a.url("/"), b.url("/"), 2), (a.url("/"), c.url("/"), 1), (b.url("/"), a.url("/"), 1)]
    )
    crawls = db_query(db, "SELECT site_id, kind, fetched, interrupted FROM site_crawls")
    assert sorted((k, f, i) for _, k, f, i in crawls) == [("full", 1, 0), ("full", 3, 0)]
    shown = runner.invoke(app, ["sites", "show", a.url("/"), "--db", str(db)]).stdout
    assert "crawl: full" in shown and f"links to: {b.url('/')} (2)" in shown
    assert f"linked from: {b.url('/')} (1)" in shown

    # the next run: the new site is checked and crawled; the crawled ones are not due
    again = runner.invoke(app, ["sites", "run", "--once", "--db", str(db)])
    assert "1 sites checked, 1 crawled" in again.stdout, again.stdout
    assert f"crawled {c.url('/')} (full): 1 fetched" in again.stdout
    assert _sites(db)[c.url("/")]["status"] == "relevant"
    assert Counter(a.paths())["/x"] == 1 and Counter(b.paths())["/"] == 2


def test_a_killed_worker_loses_its_site_after_the_lock_expires(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    conf_text = "lease_timeout = 4\n[rate_limit]\nper_host_delay_ms = 0\n"
    site, db, conf = _slow_site(serve, tmp_path, new_db("s"), 40, conf_text)
    runner.invoke(app, ["sites", "check", "--db", str(db)])
    cmd = [sys.executable, "-m", "litecrawl", "sites", "run", "--once", "--db", str(db)]
    proc = subprocess.Popen(
        [*cmd, "--config", str(conf)], stdout=subprocess.DEVNULL, env=crawler_env()
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(site.paths()) < 8:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    ((until,),) = db_query(db, "SELECT locked_until FROM sites")  # as the dead worker left it
    held = {u for (u,) in db_query(db, "SELECT norm_url FROM pages WHERE worker_id IS NOT NULL")}
    before = Counter(site.paths())
    run = ["sites", "run", "--once", "--db", str(db), "--config", str(conf)]
    # at once: the site is still locked by the dead worker, unless this run's check pass took
    # until the lock ran out (a loaded machine: it then crawled the site, and the next had
    # nothing due, failing a test that timed it)
    locked = runner.invoke(app, run)
    if "1 crawled" not in locked.stdout:
        assert "0 crawled" in locked.stdout, locked.stdout
        time.sleep(max(0.0, until + 0.5 - time.time()))
        later = runner.invoke(app, run)
        assert "1 crawled" in later.stdout, later.stdout
    # whichever run crawled the site checked it out once the dead worker's lock had run out
    ((started,),) = db_query(db, "SELECT started_at FROM site_crawls")
    assert started >= until
    fetched = Counter(site.paths())
    fetched["/"] -= 1  # the start page was read once by the check
    assert all(fetched[f"/p{i}"] >= 1 for i in range(40))  # nothing lost
    twice = {p for p, n in fetched.items() if n > 1 and p != "/robots.txt"}
    # only pages claimed and already requested when the kill came are fetched again
    assert twice <= {u.removeprefix(site.base) for u in held} & set(before)
    assert db_query(db, "SELECT count(*) FROM pages WHERE processing_time IS NOT NULL") == [(0,)]
    assert db_query(db, "SELECT locked_by FROM sites") == [(None,)]


def test_ctrl_c_releases_the_site_and_the_next_run_goes_on(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    site, db, conf = _slow_site(
        serve, tmp_path, new_db("s"), 30, "[rate_limit]\nper_host_delay_ms = 0\n"
    )
    cmd = [sys.executable, "-m", "litecrawl", "sites", "run", "--once", "--db", str(db)]
    cmd += ["--config", str(conf)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=crawler_env()
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(site.paths()) < 6:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "(interrupted)" in out
    assert db_query(db, "SELECT locked_by FROM sites") == [(None,)]  # the lock released
    assert db_query(db, "SELECT interrupted FROM site_crawls") == [(1,)]
    result = runner.invoke(app, ["sites", "run", "--once", "--db", str(db), "--config", str(conf)])
    assert "0 sites checked, 1 crawled" in result.stdout, result.stdout
    fetched = Counter(site.paths())
    assert all(fetched[f"/p{i}"] == 1 for i in range(30))  # each page once over both runs
    assert db_query(db, "SELECT count(*) FROM site_crawls") == [(2,)]


def test_two_processes_never_crawl_one_site_at_once(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    # ~4 s of crawl (a 200 ms per-host delay): the second process starts well within it
    site, db, conf = _slow_site(
        serve, tmp_path, new_db("s"), 20, "[rate_limit]\nper_host_delay_ms = 200\n"
    )
    runner.invoke(app, ["sites", "check", "--db", str(db)])
    cmd = [sys.executable, "-m", "litecrawl", "sites", "run", "--once", "--db", str(db)]
    cmd += ["--config", str(conf)]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=crawler_env())
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert sorted("1 crawled" in out for out in outs) == [False, True], outs
    fetched = Counter(site.paths())
    assert all(fetched[f"/p{i}"] == 1 for i in range(20)), fetched
    assert db_query(db, "SELECT count(*) FROM site_crawls") == [(1,)]
