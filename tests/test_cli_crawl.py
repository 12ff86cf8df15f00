"""``litecrawl crawl`` end to end against real local sites; politeness measured at the server."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import (
    PATIENCE_SEC,
    LocalServer,
    NewDb,
    crawler_env,
    db_execute,
    db_query,
    db_rows,
    html_page,
    site_app,
)
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def tree_site(
    fanout: int = 3, levels: int = 3, delay: float = 0.0, robots: str = "", extra: Any = None
) -> web.Application:
    """A tree: / links to /n0../n{fanout-1}; /n{path} links to /n{path}{i} up to ``levels``."""
    app = web.Application()

    async def page(request: web.Request) -> web.StreamResponse:
        if delay:
            await asyncio.sleep(delay)
        path = request.path
        if path == "/robots.txt":
            if not robots:
                return web.Response(status=404)
            return web.Response(text=robots, content_type="text/plain")
        if extra and path in extra:
            return await extra[path](request)
        name = "" if path == "/" else path[2:]
        if path != "/" and (not path.startswith("/n") or len(name) > levels):
            return web.Response(status=404)
        children = (
            "".join(f'<a href="/n{name}{i}">{name}{i}</a> ' for i in range(fanout))
            if len(name) < levels
            else ""
        )
        body = children + '<a href="http://localhost:9/elsewhere">off-site</a>'
        return web.Response(text=html_page(body, f"page {name}"), content_type="text/html")

    app.router.add_get("/{tail:.*}", page)
    return app


def crawl(db: Path | str, *args: str) -> Any:
    result = runner.invoke(
        app, ["crawl", "--db", str(db), "--no-cache", "--quiet", *args], catch_exceptions=False
    )
    return result


def fetched(site: LocalServer) -> list[str]:
    return [p for p in site.paths() if p != "/robots.txt"]


def test_whole_site_unlimited_depth_each_page_once(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    site = serve(tree_site())
    db = new_db("c")
    result = crawl(db, site.url("/"), "--max-depth", "0", "--delay-ms", "0")
    assert result.exit_code == 0, result.output
    expected = 1 + 3 + 9 + 27
    assert len(fetched(site)) == expected
    assert len(set(fetched(site))) == expected
    got = db_rows(db)
    assert got[site.url("/n012")]["depth"] == 3
    assert "http://localhost:9/elsewhere" not in got  # same-domain scope by default
    # Run again: nothing is due, nothing fetched.
    site.requests.clear()
    assert crawl(db, site.url("/"), "--max-depth", "0").exit_code == 0
    assert fetched(site) == []


def test_bfs_depth_limit_and_max_pages(tmp_path: Path, new_db: NewDb, serve: Serve) -> None:
    site = serve(tree_site())
    crawl(new_db("a"), site.url("/"), "--delay-ms", "0")  # default depth 2
    assert sorted(len(p) for p in fetched(site)) == [1] + [3] * 3 + [4] * 9
    site.requests.clear()
    crawl(new_db("b"), site.url("/"), "--max-depth", "0", "--max-pages", "5", "--delay-ms", "0")
    assert len(fetched(site)) == 5
    # BFS: the first five are the home page and depth-1 pages before any depth-2 page.
    assert sorted(len(p) for p in fetched(site))[:4] == [1, 3, 3, 3]


def test_any_domain_and_include_exclude(tmp_path: Path, new_db: NewDb, serve: Serve) -> None:
    site = serve(tree_site(levels=1))
    db = new_db("c")
    crawl(
        db, site.url("/"), "--any-domain", "--exclude", "/n1$", "--delay-ms", "0", "--timeout", "2"
    )
    got = db_rows(db)
    assert "http://localhost:9/elsewhere" in got
    assert site.url("/n1") not in got and site.url("/n0") in got


def test_robots_obeyed_and_crawl_delay_honoured(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    robots = "User-agent: *\nDisallow: /n1\nCrawl-delay: 0.3\n"
    site = serve(tree_site(levels=1, robots=robots))
    db = new_db("c")
    result = crawl(db, site.url("/"), "--delay-ms", "0")
    assert result.exit_code == 0
    assert "/n1" not in site.paths() and "/n0" in site.paths()
    assert db_rows(db)[site.url("/n1")]["error"] == "robots"
    starts = sorted(r.start for r in site.requests if r.path != "/robots.txt")
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    # Crawl-delay 0.3 s (without it, --delay-ms 0 would give gaps near 0); the server's clock
    # sees a request late when its thread waits for the CPU: leave a loaded machine room
    assert gaps and min(gaps) >= 0.2


def test_per_host_concurrency_and_delay_measured_at_server(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    site = serve(tree_site(fanout=12, levels=1, delay=0.3))
    crawl(new_db("c"), site.url("/"), "--per-host", "2", "--concurrency", "8", "--delay-ms", "0")
    spans = [(r.start, r.end) for r in site.requests if r.path != "/robots.txt"]
    peak = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert peak == 2
    site.requests.clear()
    crawl(new_db("d"), site.url("/"), "--per-host", "4", "--delay-ms", "200")
    starts = sorted(r.start for r in site.requests if r.path != "/robots.txt")
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.1  # 200 ms asked; server-side clock: room for a loaded machine


def test_conditional_get_304_reuses_cached_body(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    web_app = web.Application()

    async def doc(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return web.Response(
            text=html_page("<p>cached body</p>", "Doc"),
            content_type="text/html",
            headers={"ETag": '"v1"', "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"},
        )

    web_app.router.add_get("/doc", doc)
    site = serve(web_app)
    db = new_db("c")
    cache = tmp_path / "cache"
    args = ["crawl", "--db", str(db), "--quiet", "--delay-ms", "0", site.url("/doc")]
    cfg = tmp_path / "cache.toml"
    cfg.write_text(f'[cache]\ndir = "{cache}"\n')

    def run() -> Any:
        return runner.invoke(app, [*args, "--config", str(cfg)], catch_exceptions=False)

    assert run().exit_code == 0
    first = db_rows(db)[site.url("/doc")]
    assert first["etag"] == '"v1"'
    cached = list(cache.rglob("*.html"))
    assert len(cached) == 1 and b"cached body" in cached[0].read_bytes()
    # the analysis worker hashed the body for the page row: the same hash as the body's
    assert first["content_hash"] == hashlib.sha256(cached[0].read_bytes()).hexdigest()
    assert len(list(cache.rglob("*.headers.json"))) == 1
    db_execute(db, "UPDATE pages SET next_crawl_time = 1")
    result = run()
    assert result.exit_code == 0
    doc_requests = [r for r in site.requests if r.path == "/doc"]
    assert doc_requests[-1].headers.get("If-None-Match") == '"v1"'
    assert doc_requests[-1].headers.get("If-Modified-Since") == "Wed, 21 Oct 2015 07:28:00 GMT"
    second = db_rows(db)[site.url("/doc")]
    assert second["content_hash"] == first["content_hash"]  # same body, from the cache
    assert second["status"] == 200 and second["error"] is None


def test_429_retry_after_and_5xx_then_success(tmp_path: Path, new_db: NewDb, serve: Serve) -> None:
    hits: dict[str, int] = {}
    busy_times: list[float] = []

    async def flaky(request: web.Request) -> web.Response:
        hits[request.path] = hits.get(request.path, 0) + 1
        if request.path == "/busy":
            busy_times.append(time.time())
            if hits["/busy"] == 1:
                return web.Response(status=429, headers={"Retry-After": "1"})
        if request.path == "/broken" and hits["/broken"] == 1:
            return web.Response(status=500)
        return web.Response(text=html_page("ok", "ok"), content_type="text/html")

    app_ = web.Application()
    app_.router.add_get("/{tail:.*}", flaky)
    site = serve(app_)
    db = new_db("c")
    result = crawl(db, site.url("/busy"), site.url("/broken"), "--delay-ms", "0")
    assert result.exit_code == 0
    got = db_rows(db)
    assert got[site.url("/broken")]["status"] == 200 and hits["/broken"] == 2  # 5xx retried once
    busy = got[site.url("/busy")]
    if busy["last_crawl_time"] is None:
        # 429: the page was given back with its Retry-After, not dropped...
        due = busy["next_crawl_time"]
        # whole seconds, rounded up, from the moment the 429 was answered (not from now: a
        # loaded machine may take seconds between that answer and this line)
        assert busy_times[0] <= due <= busy_times[0] + 3
        time.sleep(max(0.0, due - time.time() + 0.05))
        # ...and the next run fetches it.
        crawl(db, site.url("/busy"), "--delay-ms", "0")
    # (on a slow machine the first run may still be going when it is due, and fetch it itself)
    assert hits["/busy"] == 2 and db_rows(db)[site.url("/busy")]["status"] == 200
    assert busy_times[1] - busy_times[0] >= 1.0  # never before Retry-After


def test_bad_config_exits_2_naming_file_key_value(tmp_path: Path) -> None:
    cfg = tmp_path / "site.toml"
    cfg.write_text("[concurrency]\nper_host = 0\n")
    result = runner.invoke(app, ["crawl", "http://127.0.0.1:1/", "--config", str(cfg)])
    assert result.exit_code == 2
    assert "site.toml" in result.output and "concurrency.per_host" in result.output
    assert "0" in result.output
    result = runner.invoke(app, ["crawl", "http://127.0.0.1:1/", "--include", "(bad"])
    assert result.exit_code == 2 and "include_patterns" in result.output
    cfg.write_text('[extract]\nengine = "readability"\n')  # not an article engine
    result = runner.invoke(app, ["crawl", "http://127.0.0.1:1/", "--config", str(cfg)])
    assert result.exit_code == 2 and "extract.engine" in result.output
    assert "readability" in result.output
    result = runner.invoke(app, ["crawl"])
    assert result.exit_code == 2


def test_config_merge_order_files_env_flags(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=2))
    a = tmp_path / "a.toml"
    b = tmp_path / "b.toml"
    a.write_text(
        f'max_depth = 0\nseeds = ["{site.url("/")}"]\n[rate_limit]\nper_host_delay_ms = 0\n'
    )
    b.write_text("max_depth = 1\n")
    db = tmp_path / "c.db"
    result = runner.invoke(
        app,
        ["crawl", "--config", str(a), "--config", str(b), "--quiet", "--no-cache"],
        env={"CRAWLER_DB_PATH": str(db)},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert sorted(len(p) for p in fetched(site)) == [1, 3, 3]  # b's max_depth = 1 won
    site.requests.clear()
    db2 = tmp_path / "d.db"
    runner.invoke(
        app,
        [
            "crawl",
            "--config",
            str(a),
            "--config",
            str(b),
            "--max-depth",
            "0",
            "--quiet",
            "--no-cache",
            "--db",
            str(db2),
        ],
        env={"CRAWLER_DB_PATH": str(db)},
        catch_exceptions=False,
    )
    assert db2.exists() and len(fetched(site)) == 7  # flags beat files and environment


def _spawn(log_path: Path, db: str, url: str, *extra: str) -> subprocess.Popen[bytes]:
    # Output to a file, not a pipe: after kill -9 nothing else may hold our end open.
    log = log_path.open("ab")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "litecrawl",
            "crawl",
            url,
            "--db",
            str(db),
            "--no-cache",
            "--max-depth",
            "0",
            "--delay-ms",
            "0",
            *extra,
        ],
        stdout=log,
        stderr=log,
        env=crawler_env(),
    )


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists()}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupt_and_resume(
    tmp_path: Path, new_db: NewDb, serve: Serve, sig: signal.Signals
) -> None:
    site = serve(tree_site(fanout=4, levels=2, delay=0.2))
    db = new_db("c")
    proc = _spawn(
        tmp_path / "crawl.log", db, site.url("/"), "--concurrency", "2", "--per-host", "2"
    )
    # bounds on a hang, not speeds: under load a crawler took over 30 s to fetch 5 pages, and
    # was then stopped before it had its signal handlers (SIGINT) or any page (SIGKILL)
    deadline = time.monotonic() + PATIENCE_SEC
    while time.monotonic() < deadline and len(fetched(site)) < 5 and proc.poll() is None:
        time.sleep(0.05)
    assert len(fetched(site)) >= 5, "the crawl never got going"
    helpers = _children(proc.pid)  # the analysis worker processes (and their server)
    assert helpers, "no analysis worker started (crawler_env: a pool of one)"
    os.kill(proc.pid, sig)
    proc.wait(PATIENCE_SEC)
    deadline = time.monotonic() + PATIENCE_SEC
    while _alive(helpers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(helpers), "worker processes outlived the crawler"
    if sig == signal.SIGINT:
        assert proc.returncode == 0
        assert b"fetched" in (tmp_path / "crawl.log").read_bytes()  # the summary
        assert all(r["processing_time"] is None for r in db_rows(db).values())  # claims released
    first = set(fetched(site))
    assert 0 < len(first) < 21
    # Resume: the same command continues at once; after SIGKILL the dead worker's claims are
    # recovered as soon as the new run sees its process gone.
    proc = _spawn(tmp_path / "crawl.log", db, site.url("/"))
    assert proc.wait(PATIENCE_SEC) == 0
    assert set(fetched(site)) == {"/"} | {f"/n{i}" for i in range(4)} | {
        f"/n{i}{j}" for i in range(4) for j in range(4)
    }


def test_seeds_add_then_crawl(tmp_path: Path, new_db: NewDb, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=1))
    db = new_db("c")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"# seeds\n{site.url('/n0')}\n\n{site.url('/n1')}\nmailto:x@y\n")
    result = runner.invoke(app, ["seeds", "add", str(seeds), "--db", str(db)])
    assert result.exit_code == 0
    assert "2 new seeds" in result.output and "skipped" in result.output
    assert {u: r["source"] for u, r in db_rows(db).items()} == {
        site.url("/n0"): "seed",
        site.url("/n1"): "seed",
    }
    again = runner.invoke(app, ["seeds", "add", str(seeds), "--db", str(db)])
    assert "0 new seeds, 2 already known" in again.output
    missing = runner.invoke(app, ["seeds", "add", str(tmp_path / "nope.txt"), "--db", str(db)])
    assert missing.exit_code == 2


def test_watch_keeps_running_until_interrupted(tmp_path: Path, new_db: NewDb, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=1))
    db = new_db("c")
    # a 1 s lease: the wait wakes every second (to recover dead workers' claims)
    proc = _spawn(tmp_path / "crawl.log", db, site.url("/"), "--watch", "--lease-timeout", "1")
    log = (tmp_path / "crawl.log").read_text
    deadline = time.monotonic() + PATIENCE_SEC
    while time.monotonic() < deadline and "watching: next page due at" not in log():
        time.sleep(0.05)
    time.sleep(2.5)
    assert proc.poll() is None  # nothing is due, but --watch waits for the next due page
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    assert len(fetched(site)) == 3
    # said once, when the wait began, not at every wake-up
    told = [line for line in log().splitlines() if "watching: next page due at" in line]
    assert len(told) == 1 and "level=INFO" in told[0], log()[-2000:]


DATA = Path(__file__).parent / "data" / "html"


def docs_site() -> web.Application:
    docs = (DATA / "docs_page.html").read_text("utf-8")
    news = (DATA / "news_article.html").read_text("utf-8")
    index = html_page(
        '<a href="/docs/2.4/guide/frontier.html">guide</a> <a href="/news/a">news</a>'
    )
    return site_app({"/": index, "/docs/2.4/guide/frontier.html": docs, "/news/a": news})


def test_output_markdown_honours_dom_remove_and_extra_remove(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    site = serve(docs_site())
    cfg = tmp_path / "filter.toml"
    cfg.write_text(
        '[filter]\ndom_remove = ["script", "style", "iframe"]\nextra_remove = [".ads"]\n'
    )
    out = tmp_path / "out"
    args = ("--max-depth", "0", "--delay-ms", "0", "--output", str(out), "--config", str(cfg))
    result = crawl(new_db("c"), site.url("/"), *args)
    assert result.exit_code == 0, result.output
    md = next(out.rglob("frontier*.md")).read_text("utf-8")
    assert "```python\nfrom crawlkit import Frontier" in md and "| max_depth |" in md
    assert site.url("/docs/2.4/tutorial/first-crawl.html") in md
    assert "video.example.net" not in md and "Crawlkit Cloud" not in md  # dom_remove, extra_remove
    assert "Built with Sphinx" in md  # not asked to be removed


@pytest.mark.parametrize("engine", ["trafilatura", "resiliparse"])
def test_main_article_engine_from_config(
    tmp_path: Path, new_db: NewDb, serve: Serve, engine: str
) -> None:
    site = serve(docs_site())
    cfg = tmp_path / "engine.toml"
    cfg.write_text(f'[extract]\nengine = "{engine}"\n')
    db, out = new_db("c"), tmp_path / "out"
    args = ("--max-depth", "0", "--delay-ms", "0", "--main-article", "--output", str(out))
    result = crawl(db, site.url("/"), *args, "--config", str(cfg))
    assert result.exit_code == 0, result.output
    modes = dict(db_query(db, "SELECT url, extraction_mode FROM documents"))
    assert modes[site.url("/news/a")] == "article"
    assert modes[site.url("/")] == "fullpage"  # two links: nothing to extract, the full page
    md = next(out.rglob("a.md")).read_text("utf-8")
    assert "keeper's cottage" in md and "Privacy policy" not in md
    meta = json.loads(next(out.rglob("a.meta.json")).read_text("utf-8"))
    assert meta["extraction_mode"] == "article" and meta["author"] == "Maren Holt"
