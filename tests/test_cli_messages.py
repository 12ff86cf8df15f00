"""What ``litecrawl crawl`` says: the JSON log stream and its summary record, failed fetches as
warnings with their URL, causes with an example URL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def broken_site(serve: Serve) -> LocalServer:
    links = '<a href="/gone">gone</a> <a href="/broken">broken</a> <a href="/ok">ok</a>'
    return serve(
        site_app(
            {
                "/": html_page(links),
                "/ok": html_page("fine"),
                "/broken": (500, "text/html", "oops"),
            }
        )
    )


def test_log_json_is_json_to_the_end_with_one_summary_record(tmp_path: Path, serve: Serve) -> None:
    site = broken_site(serve)
    for level in ([], ["-q"]):
        result = runner.invoke(
            app,
            [
                *("crawl", site.url("/"), "--db", str(tmp_path / f"c{len(level)}.db")),
                *("--no-cache", "--delay-ms", "0", "--ignore-robots", "--log-json", *level),
            ],
            catch_exceptions=False,
        )
        records = [json.loads(line) for line in result.stderr.splitlines()]  # all JSON
        summaries = [r for r in records if r["logger"] == "litecrawl.summary"]
        assert summaries == [records[-1]]
        last = records[-1]
        assert (last["claimed"], last["ok"], last["failed"]) == (4, 2, 2)
        assert last["errors"] == {"http_404": 1, "http_500": 1}
        assert last["exit_code"] == result.exit_code == 0
        assert any(site.url("/gone") in cause for cause in last["causes"])
        warned = {r["url"]: r["error"] for r in records if r["level"] == "WARNING" and "url" in r}
        assert warned == {site.url("/gone"): "http_404", site.url("/broken"): "http_500"}


def test_failed_fetches_warn_with_their_url_and_causes_name_one(
    tmp_path: Path, serve: Serve
) -> None:
    site = broken_site(serve)
    result = runner.invoke(
        app,
        [
            *("crawl", site.url("/"), "--db", str(tmp_path / "c.db"), "-q"),
            *("--no-cache", "--delay-ms", "0", "--ignore-robots"),
        ],
        catch_exceptions=False,
    )
    warnings = [ln for ln in result.stderr.splitlines() if "level=WARNING" in ln]
    assert any(f"url={site.url('/gone')}" in ln and "status=404" in ln for ln in warnings)
    host = site.base.split("//")[1]
    cause = f"{host}: HTTP 404 Not Found (1 page, e.g. {site.url('/gone')})"
    assert cause in result.stderr


def test_log_json_stays_json_when_the_run_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    (tmp_path / "none.txt").write_text("")
    runner.invoke(app, ["seeds", "add", str(tmp_path / "none.txt"), "--db", str(empty)])
    result = runner.invoke(app, ["crawl", "--db", str(empty), "--log-json"])
    assert result.exit_code == 2
    records = [json.loads(line) for line in result.stderr.splitlines()]  # all JSON
    assert records[-1]["level"] == "ERROR" and "holds no pages" in records[-1]["msg"]


def test_a_seed_the_patterns_leave_out_is_a_warning(tmp_path: Path, serve: Serve) -> None:
    site = broken_site(serve)
    result = runner.invoke(
        app,
        [
            *("crawl", site.url("/"), "--db", str(tmp_path / "c.db"), "-q"),
            *("--no-cache", "--ignore-robots", "--include", "/docs/"),
        ],
        catch_exceptions=False,
    )
    warnings = [ln for ln in result.stderr.splitlines() if "level=WARNING" in ln]
    assert any(site.url("/") in ln and "include/exclude" in ln for ln in warnings)
    assert site.requests == []
