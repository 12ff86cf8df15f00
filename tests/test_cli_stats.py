"""``litecrawl stats``: the same content as tables, plain text and JSON; live workers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, site_app
from test_lease import query, spawn_crawl, wide_site
from typer.testing import CliRunner

from litecrawl import litecrawl
from litecrawl.cli import app
from litecrawl.store.queue import NewLink
from litecrawl.store.sqlite.frontier import SQLiteFrontier

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def stats(db: Path, *args: str) -> Any:
    result = runner.invoke(app, ["stats", "--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_stats_after_a_crawl_as_json_and_plain_text(tmp_path: Path, serve: Serve) -> None:
    site = serve(
        site_app(
            {
                "/": '<a href="/ok">ok</a> <a href="/private/x">x</a> <a href="/gone">g</a>',
                "/ok": "fine",
                "/robots.txt": (
                    200,
                    "text/plain",
                    "User-agent: *\nDisallow: /private\nCrawl-delay: 0.1\n",
                ),
            }
        )
    )
    db = tmp_path / "c.db"
    crawl = runner.invoke(
        app, ["crawl", site.url("/"), "--db", str(db), "--no-cache", "--delay-ms", "0", "-q"]
    )
    assert crawl.exit_code in (0, 1), crawl.output
    data = json.loads(stats(db, "--json").output)
    assert data["pages"] == {
        "total": 4,
        "by_state": {"crawled": 2, "error": 2},
        "by_kind": {"page": 4},
    }
    assert data["errors"] == [
        {"category": "http_404", "pages": 1, "sample_url": site.url("/gone")},
        {"category": "robots", "pages": 1, "sample_url": site.url("/private/x")},
    ]
    assert data["due_now"] == 0 and data["claimed"] == 0 and data["next_due"] is not None
    host = site.base.removeprefix("http://")
    assert [(h["host"], h["pages"], h["crawled"], h["errors"]) for h in data["hosts"]["shown"]] == [
        (host, 4, 2, 2)
    ]
    [shown] = data["hosts"]["shown"]
    assert (shown["robots"], shown["crawl_delay"], shown["blocked_until"]) == ("parsed", 0.1, None)
    [run] = data["runs"]
    # the 404 failed; robots.txt's refusal is a skip, not a failure (both in its errors)
    assert (run["fetched"], run["failed"], run["outcome"]) == (3, 1, "done")
    assert run["errors"] == {"http_404": 1, "robots": 1}
    assert run["worker"] == f"{socket.gethostname()}:{os.getpid()}"  # the machine and process
    assert data["workers"] == []

    text = stats(db).output  # not a terminal here: plain aligned text
    assert "\x1b" not in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("category"))
    row = next(line for line in lines if line.startswith("robots"))
    assert row.index(site.url("/private/x")) == header.index("sample URL")
    assert any(line.startswith("host") and "politeness" in line for line in lines)
    assert any(line.startswith(host) and line.endswith("crawl-delay 0.1s") for line in lines)
    me = f"{socket.gethostname()}:{os.getpid()}"
    assert any(line.split()[-2:] == ["done", me] for line in lines)  # outcome, machine:pid
    assert "workers: none" in text
    assert all(line == line.rstrip() for line in lines)
    assert runner.invoke(app, ["stats", "--db", str(tmp_path / "none.db")]).exit_code == 2


def test_a_litecrawl_batch_is_a_run_with_its_worker(tmp_path: Path, serve: Serve) -> None:
    """litecrawl() (a cron job's batch) and the CLI share one driver: its run is recorded."""
    site = serve(site_app({"/": '<a href="/a">a</a> <a href="/gone">g</a>', "/a": "fine"}))
    db = tmp_path / "c.db"
    litecrawl(str(db), [site.url("/")], n_claims=5, fetcher="http", obey_robots=False)
    litecrawl(str(db), [site.url("/")], n_claims=5, fetcher="http", obey_robots=False)
    data = json.loads(stats(db, "--json").output)
    newest, first = data["runs"]  # newest first
    assert first["command"] == newest["command"] == "litecrawl()"
    assert (first["fetched"], first["failed"], first["outcome"]) == (1, 0, "done")
    assert (newest["fetched"], newest["failed"], newest["outcome"]) == (2, 1, "done")
    assert newest["errors"] == {"http_404": 1}
    assert newest["worker"] == f"{socket.gethostname()}:{os.getpid()}"
    assert data["workers"] == []  # the batch's lease ended with it
    text = stats(db).output
    me = f"{socket.gethostname()}:{os.getpid()}"
    assert sum(line.split()[-2:] == ["done", me] for line in text.splitlines()) == 2


def test_stats_shows_live_workers_and_their_claims(tmp_path: Path, serve: Serve) -> None:
    site = serve(wide_site(0.5))
    db = tmp_path / "w.db"
    # a heartbeat every half second (lease_timeout / 6): the pages it fetched come with it
    flags = ("--concurrency", "4", "--per-host", "4", "--lease-timeout", "3")
    proc = spawn_crawl(db, site.url("/"), *flags)
    deadline = time.monotonic() + 60
    data: dict[str, Any] = {"workers": []}
    try:
        while time.monotonic() < deadline and not any(
            w["pages"] and w["claims"] for w in data["workers"]
        ):
            time.sleep(0.05)
            if db.exists() and len(site.requests) > 1:
                data = json.loads(stats(db, "--json").output)
        live = stats(db).output
    finally:
        proc.send_signal(signal.SIGINT)
    [worker] = data["workers"]
    assert (worker["hostname"], worker["pid"], worker["status"]) == (
        socket.gethostname(),
        proc.pid,
        "alive",
    )
    assert worker["claims"] > 0 and 0 < worker["pages"] <= len(site.requests)
    # the host's politeness: the worker leases all 4 of its slots while it fetches it
    [host] = data["hosts"]["shown"]
    assert host["leases"] == {str(worker["id"]): 4}
    assert data["runs"][0]["outcome"] == "running"
    assert data["runs"][0]["worker"] == f"{socket.gethostname()}:{proc.pid}"
    text = stats(db).output
    assert proc.wait(60) == 0
    workers = [line.split() for line in text.splitlines() if line.startswith(str(worker["id"]))]
    assert any(str(proc.pid) in fields and "alive" in fields for fields in workers)
    assert f"slots leased: 4 by worker {worker['id']}" in live

    after = json.loads(stats(db, "--json").output)
    assert after["workers"] == [] and after["claimed"] == 0  # a clean exit leaves nothing
    assert after["runs"][0]["outcome"] == "interrupted"
    assert after["runs"][0]["worker"] == f"{socket.gethostname()}:{proc.pid}"

    # kill -9: the run shows as killed, its worker as dead with the claims it still holds.
    proc = spawn_crawl(db, site.url("/"), "--concurrency", "4", "--per-host", "4")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and query(db, "SELECT count(*) FROM runs") != [(2,)]:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    killed = json.loads(stats(db, "--json").output)
    assert killed["runs"][0]["outcome"] == "killed"
    assert [w["status"] for w in killed["workers"]] == ["dead"]


def test_stats_top_hosts_and_all_hosts(tmp_path: Path) -> None:
    db = tmp_path / "h.db"

    async def fill() -> None:
        async with SQLiteFrontier(db) as frontier:
            await frontier.add(
                NewLink(f"http://h{i:02d}.test/{j}", f"h{i:02d}.test")
                for i in range(12)
                for j in range(i + 1)
            )

    asyncio.run(fill())
    top = json.loads(stats(db, "--json").output)["hosts"]
    assert top["total"] == 12
    assert [h["host"] for h in top["shown"]] == [f"h{i:02d}.test" for i in range(11, 1, -1)]
    assert [h["due"] for h in top["shown"]][:2] == [12, 11]
    every = json.loads(stats(db, "--json", "--hosts").output)["hosts"]["shown"]
    assert len(every) == 12
    assert "hosts (10 of 12 by pages; --hosts for all)" in stats(db).output
