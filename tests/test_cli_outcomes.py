"""What ``litecrawl crawl`` tells its user: exit codes, causes in words, logs, failed URLs."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, crawler_env, db_rows, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def crawl(db: Path, *args: str) -> Any:
    return runner.invoke(
        app,
        ["crawl", "--db", str(db), "--no-cache", "--delay-ms", "0", *args],
        catch_exceptions=False,
    )


def page_records(stderr: str) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [r for r in records if r["logger"] == "litecrawl.page"]


def test_unreachable_host_is_recorded_as_such_and_exits_1(
    tmp_path: Path, refused_base: str
) -> None:
    db, failed = tmp_path / "c.db", tmp_path / "failed.txt"
    urls = [f"{refused_base}/", f"{refused_base}/a"]
    result = crawl(db, *urls, "--failed-out", str(failed))
    assert result.exit_code == 1
    rows = db_rows(db)
    assert {rows[u]["error"] for u in urls} == {"connect"}  # not "robots"
    host = refused_base.removeprefix("http://")
    assert f"{host} unreachable: connection refused (2 pages, e.g. {refused_base}/" in result.stderr
    assert "exit 1: every page tried failed (2 of 2)" in result.stderr
    assert failed.read_text().splitlines() == urls


def test_robots_5xx_holds_pages_back_under_their_own_category(tmp_path: Path, serve: Serve) -> None:
    site = serve(site_app({"/robots.txt": (500, "text/plain", "oops"), "/": html_page("hi")}))
    db = tmp_path / "c.db"
    result = crawl(db, site.url("/"))
    assert site.paths() == ["/robots.txt"]  # RFC 9309: 5xx = disallow all, for a while
    assert db_rows(db)[site.url("/")]["error"] == "robots_http_500"
    assert "robots.txt answered 500, pages held back" in result.stderr
    assert result.exit_code == 1


def test_every_page_failing_exits_1_one_success_exits_0(tmp_path: Path, serve: Serve) -> None:
    site = serve(site_app({"/": html_page('<a href="/gone">x</a>')}))
    assert crawl(tmp_path / "a.db", site.url("/gone")).exit_code == 1  # a 404, nothing else
    ok = crawl(tmp_path / "b.db", site.url("/"))
    assert ok.exit_code == 0  # one page fine, one 404: a normal crawl
    assert f"HTTP 404 Not Found (1 page, e.g. {site.url('/gone')})" in ok.stderr


def test_failed_out_then_seeds_add_due_now_retries_them(tmp_path: Path, serve: Serve) -> None:
    state = {"broken": True}

    async def handler(request: web.Request) -> web.Response:
        if request.path == "/flaky" and state["broken"]:
            return web.Response(status=500, text="down")
        if request.path == "/":
            return web.Response(text=html_page('<a href="/flaky">f</a>'), content_type="text/html")
        return web.Response(text=html_page("fine"), content_type="text/html")

    web_app = web.Application()
    web_app.router.add_get("/{tail:.*}", handler)
    site = serve(web_app)
    db, failed = tmp_path / "c.db", tmp_path / "failed.txt"
    first = crawl(db, site.url("/"), "--failed-out", str(failed))
    assert first.exit_code == 0
    assert failed.read_text() == site.url("/flaky") + "\n"
    assert db_rows(db)[site.url("/flaky")]["error"] == "http_500"
    state["broken"] = False
    added = runner.invoke(app, ["seeds", "add", str(failed), "--db", str(db), "--due-now"])
    assert added.exit_code == 0 and "1 of them made due now" in added.output
    site.requests.clear()
    again = crawl(db, site.url("/"))
    assert again.exit_code == 0
    assert site.paths() == ["/flaky"]  # only the failed page was due
    row = db_rows(db)[site.url("/flaky")]
    assert row["status"] == 200 and row["error"] is None


def tree() -> web.Application:
    return site_app(
        {
            "/": html_page(
                '<a href="/a">a</a> <a href="/b">b</a> <a href="/missing">m</a>', "Home"
            ),
            "/a": html_page("<p>page a</p>", "A"),
            "/b": html_page("<p>page b</p>", "B"),
        }
    )


def test_verbose_logs_one_structured_record_per_page(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree())
    out = tmp_path / "md"
    result = crawl(tmp_path / "c.db", site.url("/"), "-v", "--log-json", "--output", str(out))
    assert result.exit_code == 0
    records = page_records(result.stderr)
    by_url = {r["url"]: r for r in records}
    assert len(records) == len(by_url) == 4  # one per page
    for record in records:
        assert {"time", "level", "msg", "url", "status", "source", "depth", "action"} <= set(record)
    home = by_url[site.url("/")]
    assert (home["action"], home["status"], home["source"], home["depth"]) == (
        "output",
        200,
        "seed",
        0,
    )
    assert by_url[site.url("/a")]["source"] == "link" and by_url[site.url("/a")]["depth"] == 1
    missing = by_url[site.url("/missing")]
    assert (missing["action"], missing["status"], missing["error"]) == ("fetch", 404, "http_404")
    # the same records as key=value text without --log-json
    text = crawl(tmp_path / "d.db", site.url("/"), "-v", "--full-page")
    lines = [ln for ln in text.stderr.splitlines() if "logger=litecrawl.page" in ln]
    assert len(lines) == 4
    assert any(
        "action=extract" in ln and f"url={site.url('/a')}" in ln and "depth=1" in ln for ln in lines
    )


def test_levels_are_honest_without_a_terminal(tmp_path: Path, serve: Serve) -> None:
    hits = {"n": 0}

    async def busy(request: web.Request) -> web.Response:
        hits["n"] += 1
        if hits["n"] == 1:  # the page (robots.txt is ignored) answers 429 once
            return web.Response(status=429, headers={"Retry-After": "0"})
        return web.Response(text=html_page("ok"), content_type="text/html")

    web_app = web.Application()
    web_app.router.add_get("/{tail:.*}", busy)
    site = serve(web_app)
    default = crawl(tmp_path / "a.db", site.url("/"), "--ignore-robots")
    assert "level=INFO" in default.stderr and "answered 429" in default.stderr
    assert "level=DEBUG" not in default.stderr  # not a terminal is no reason for DEBUG
    assert "logger=litecrawl.page" not in default.stderr  # per page only with -v
    hits["n"] = 0
    quiet = crawl(tmp_path / "b.db", site.url("/"), "--ignore-robots", "-q")
    assert "level=INFO" not in quiet.stderr and "answered 429" not in quiet.stderr
    assert "fetched:" in quiet.stderr  # the summary is still printed


def test_summary_counts_and_fetch_failures_warn_at_any_level(
    tmp_path: Path, serve: Serve, refused_base: str
) -> None:
    site = serve(tree())
    result = crawl(
        tmp_path / "c.db",
        site.url("/"),
        f"{refused_base}/x",
        "--any-domain",
        "-q",
        "--ignore-robots",
    )
    lines = dict(
        (key.strip(), value.strip())
        for key, _, value in (ln.partition(":") for ln in result.stderr.splitlines())
        if key and not key.startswith((" ", "{")) and "=" not in key
    )
    assert lines["claimed"] == "5" and lines["ok"] == "3" and lines["indexed"] == "3"
    assert lines["fresh"] == "3"  # a first crawl: every page answered OK; not the 404
    assert lines["failed"] == "2" and "connect=1" in lines["errors"]
    warnings = [ln for ln in result.stderr.splitlines() if "level=WARNING" in ln]
    assert any(f"url={refused_base}/x" in ln and "error=connect" in ln for ln in warnings)


def test_seed_option_spellings_and_log_file(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree())
    db, log = tmp_path / "c.db", tmp_path / "crawl.log"
    result = runner.invoke(
        app,
        [
            *("crawl", "--url", site.url("/a"), "--db-path", str(db), "--delay-ms", "0", "-q"),
            *("--log-file", str(log), "--max-depth", "1"),
        ],
    )
    assert result.exit_code == 0
    assert set(db_rows(db)) == {site.url("/a")}  # the two designs' --url and --db-path
    assert "logger=litecrawl.page" not in result.stderr  # quiet on the terminal...
    text = log.read_text()
    assert "logger=litecrawl.page" in text and f"url={site.url('/a')}" in text  # ...not in the file
    bad = runner.invoke(app, ["crawl", site.url("/"), "--log-file", str(tmp_path / "no/such")])
    assert bad.exit_code == 2 and "--log-file" in bad.output
    site.requests.clear()
    bad = runner.invoke(app, ["crawl", site.url("/"), "--failed-out", str(tmp_path / "no/such")])
    assert bad.exit_code == 2 and "--failed-out" in bad.output
    assert site.requests == []  # told before any crawling


def test_max_retries_counts_retries_after_the_first_try(tmp_path: Path) -> None:
    accepted = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def cut_short() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(1)
            conn.recv(65536)
            # a body cut short (a dropped connection?): a network error, retried
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nhi")
            conn.close()

    threading.Thread(target=cut_short, daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/"
    try:
        for retries, connections in ((0, 1), (1, 2)):
            accepted.clear()
            cfg = tmp_path / f"r{retries}.toml"
            cfg.write_text(f"[fetch]\nmax_retries = {retries}\n")
            result = crawl(
                tmp_path / f"r{retries}.db", url, "--ignore-robots", "--config", str(cfg)
            )
            assert result.exit_code == 1
            assert len(accepted) == connections
            assert db_rows(tmp_path / f"r{retries}.db")[url]["error"] == "network"
    finally:
        server.close()


def test_summary_is_a_table_on_a_terminal(tmp_path: Path, refused_base: str) -> None:
    env = crawler_env({**os.environ, "FORCE_COLOR": "1", "COLUMNS": "120"})  # rich: a terminal
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "litecrawl",
            "crawl",
            f"{refused_base}/",
            "--db",
            str(tmp_path / "c.db"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", done.stderr)  # colours and cursor moves
    assert "│ claimed" in shown and "│ new links" in shown  # a table, readable labels
    assert "top error causes" in shown and "unreachable: connection refused" in shown


def test_dom_remove_entries_beyond_the_always_removed_are_removed(
    tmp_path: Path, serve: Serve
) -> None:
    page = html_page("<main><p>the story itself</p></main><aside>buy our mugs</aside>", "S")
    site = serve(site_app({"/": page}))
    cfg = tmp_path / "f.toml"
    cfg.write_text('[filter]\ndom_remove = ["script", "style", "svg", "aside"]\n')
    out = tmp_path / "out"
    result = crawl(tmp_path / "c.db", site.url("/"), "--config", str(cfg), "--output", str(out))
    assert result.exit_code == 0
    (markdown,) = out.rglob("*.md")
    text = markdown.read_text()
    assert "the story itself" in text and "mugs" not in text


def test_a_strategy_that_cannot_be_loaded_is_refused_before_crawling(
    tmp_path: Path, serve: Serve
) -> None:
    site = serve(tree())
    result = crawl(tmp_path / "c.db", site.url("/"), "--strategy", "mypkg.strategies:Deep")
    assert result.exit_code == 2 and "mypkg" in result.output
    assert site.requests == []


def _summary_lines(stderr: str) -> dict[str, str]:
    return dict(
        (key.strip(), value.strip())
        for key, _, value in (ln.partition(":") for ln in stderr.splitlines())
        if key and not key.startswith((" ", "{")) and "=" not in key
    )


def test_types_not_asked_for_are_skipped_not_failed(tmp_path: Path, serve: Serve) -> None:
    body = "<p>" + "Words enough to be a page. " * 10 + "</p>"
    site = serve(
        site_app(
            {
                "/": html_page(
                    body + '<a href="/a.pdf">pdf</a> <a href="/b.png">png</a>'
                    ' <a href="/gone">gone</a>'
                ),
                "/a.pdf": (200, "application/pdf", "%PDF-1.4 not read"),
                "/b.png": (200, "image/png", "not an image either"),
            }
        )
    )
    result = crawl(tmp_path / "c.db", site.url("/"), "-q")
    lines = _summary_lines(result.stderr)
    # the 404 failed; the PDF and the image were not asked for: skipped, and no reason for exit 1
    assert (lines["ok"], lines["failed"], lines["skipped_type"]) == ("1", "1", "2"), lines
    assert "content_type=2" in lines["errors"] and "http_404=1" in lines["errors"]
    assert result.exit_code == 0, result.stderr

    # a seed of a type not asked for and nothing else: nothing crawled says so, exit 1
    pdf = crawl(tmp_path / "d.db", site.url("/a.pdf"), "-q")
    assert _summary_lines(pdf.stderr)["failed"] == "0"
    assert pdf.exit_code == 1
    assert "exit 1: no page crawled: of 1 tried, 0 failed, 1 skipped" in pdf.stderr
