"""The freshness schedule on a real crawl: a local server whose pages change (or not), crawled
round after round. Time passing is simulated by moving the stored crawl times back, so nothing
here waits."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, NewDb, db_execute, db_rows, html_page
from typer.testing import CliRunner

from litecrawl import litecrawl
from litecrawl.cli import app
from litecrawl.strategy import BaseCrawlingStrategy, States

runner = CliRunner()
Serve = Callable[[web.Application], LocalServer]
HOUR = 3600


def changing_site() -> web.Application:
    """/fast is new at every request; /static never changes and answers 304 to its ETag."""
    served = {"fast": 0}

    async def fast(request: web.Request) -> web.Response:
        served["fast"] += 1
        body = html_page(f"<p>news item number {served['fast']}</p>", "Fast")
        return web.Response(text=body, content_type="text/html")

    async def static(request: web.Request) -> web.Response:
        headers = {"ETag": '"s1"', "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"}
        if request.headers.get("If-None-Match") == '"s1"':
            return web.Response(status=304, headers=headers)
        body = html_page("<p>the same words as always</p>", "Static")
        return web.Response(text=body, content_type="text/html", headers=headers)

    web_app = web.Application()
    web_app.router.add_get("/fast", fast)
    web_app.router.add_get("/static", static)
    return web_app


def pass_an_hour(db: str) -> None:
    """An hour passes: every stored crawl time moves an hour back."""
    db_execute(
        db,
        f"UPDATE pages SET last_crawl_time = last_crawl_time - {HOUR}, "
        f"next_crawl_time = next_crawl_time - {HOUR}",
    )


def crawl_args(tmp_path: Path, db: object, urls: list[str], *more: str) -> list[str]:
    """``litecrawl crawl`` of ``urls`` into ``db`` under the freshness policy (``more`` may
    name another), a new page due again after an hour; the cache under ``tmp_path``."""
    cfg = tmp_path / "crawl.toml"
    cfg.write_text(f'[cache]\ndir = "{tmp_path / "cache"}"\n[schedule]\npolicy = "freshness"\n')
    return [
        "crawl", *urls, "--db", str(db), "--config", str(cfg), "--quiet", "--delay-ms", "0",
        "--no-embed", "--new-interval", str(HOUR), *more,
    ]  # fmt: skip


def crawl_hourly(db: str, site: LocalServer, **options: Any) -> None:
    """One freshness-policy batch of the two pages, then an hour passes for the database."""
    litecrawl(
        db,
        [site.url("/fast"), site.url("/static")],
        fetcher="http",
        obey_robots=False,
        new_interval_sec=HOUR,
        min_interval_sec=600,
        schedule_policy="freshness",
        **options,
    )
    pass_an_hour(db)


def test_fast_pages_are_refetched_more_often_than_static_ones(tmp_path: Path, serve: Serve) -> None:
    site = serve(changing_site())
    db = str(tmp_path / "fresh.db")
    for _ in range(8):
        crawl_hourly(db, site, max_interval_sec=48 * HOUR)
    rows = db_rows(db)
    fast, static = rows[site.url("/fast")], rows[site.url("/static")]
    assert site.count("/fast") > site.count("/static") >= 2
    assert fast["checks"] == site.count("/fast") - 1 == fast["changes"]
    assert static["checks"] == site.count("/static") - 1 and static["changes"] == 0
    assert fast["change_rate"] > static["change_rate"] > 0
    fast_interval = fast["next_crawl_time"] - fast["last_crawl_time"]
    static_interval = static["next_crawl_time"] - static["last_crawl_time"]
    assert fast_interval < static_interval


def test_a_304_is_no_change(tmp_path: Path, new_db: NewDb, serve: Serve) -> None:
    site = serve(changing_site())
    db = new_db("fresh")
    args = crawl_args(tmp_path, db, [site.url("/fast"), site.url("/static")])
    for _ in range(2):
        result = runner.invoke(app, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        pass_an_hour(db)
    rows = db_rows(db)
    fast, static = rows[site.url("/fast")], rows[site.url("/static")]
    again = [r for r in site.requests if r.path == "/static"][1:]
    assert len(again) == 1 and again[0].headers.get("If-None-Match") == '"s1"'
    assert (static["checks"], static["changes"]) == (1, 0)  # answered 304: no change
    assert (fast["checks"], fast["changes"]) == (1, 1)
    shown = runner.invoke(app, ["stats", "--db", str(db), "--json"], catch_exceptions=False)
    changes = json.loads(shown.output)["changes"]
    assert changes["pages re-fetched"] == 2 and changes["checks"] == 2
    assert changes["changes found"] == 1 and changes["no change seen"] == 1
    export = runner.invoke(app, ["export", "--db", str(db), "--format", "jsonl", "--no-text"])
    lines = [line for line in export.output.splitlines() if line.startswith("{")]  # not the count
    records = {r["url"]: r for r in map(json.loads, lines)}
    assert records[site.url("/fast")]["changes"] == 1
    assert records[site.url("/static")]["change_rate"] == static["change_rate"]


class Watching(BaseCrawlingStrategy):
    """Notes what the strategy's view of each crawled page says of its changes."""

    seen: list[tuple[str, object, object, object]] = []

    def read_seeds(self, stream: Any) -> None:
        for url in stream:
            request = self.create_request(url.strip())
            self.refresh_states(request)
            if request.meta[b"state"] is States.NOT_CRAWLED:
                self.schedule(request)

    def page_crawled(self, response: Any) -> None:
        meta = response.meta
        Watching.seen.append(
            (response.url, meta.get(b"checks"), meta.get(b"changes"), meta.get(b"change_rate"))
        )
        meta[b"state"] = States.CRAWLED

    def filter_extracted_links(self, request: Any, links: list[Any]) -> list[Any]:
        return []

    def links_extracted(self, request: Any, links: list[Any]) -> None:
        pass


def test_a_strategy_reads_each_pages_change_rate(tmp_path: Path, serve: Serve) -> None:
    site = serve(changing_site())
    db = str(tmp_path / "fresh.db")
    Watching.seen = []
    for _ in range(4):
        crawl_hourly(db, site, max_interval_sec=HOUR, strategy=Watching)
    rows = db_rows(db)
    last = {url: (checks, changes, rate) for url, checks, changes, rate in Watching.seen}
    first = {url: seen for url, *seen in reversed(Watching.seen)}
    # fetched once: nothing measured yet, so no rate (not the estimator's prior)
    assert first[site.url("/fast")] == first[site.url("/static")] == [0, 0, None]
    fast, static = rows[site.url("/fast")], rows[site.url("/static")]
    # what the strategy saw at the last fetch is what the page's row keeps
    assert last[site.url("/fast")] == (fast["checks"], fast["changes"], fast["change_rate"])
    assert last[site.url("/static")] == (static["checks"], 0, static["change_rate"])
    assert fast["checks"] >= 2 and fast["change_rate"] > static["change_rate"]
    # derived from the columns, so never copied into the stored meta
    assert all(
        b"change_rate" not in str(meta).encode() for meta in [r["meta"] for r in rows.values()]
    )


def test_a_damaged_change_record_starts_again_without_its_old_rate(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    site = serve(changing_site())
    db = new_db("fresh")
    args = crawl_args(tmp_path, db, [site.url("/fast")], "--min-interval", "60")
    fast = site.url("/fast")

    def crawl_again() -> dict[str, Any]:
        pass_an_hour(db)
        db_execute(db, "UPDATE pages SET next_crawl_time = last_crawl_time")  # due now
        result = runner.invoke(app, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return db_rows(db)[fast]

    runner.invoke(app, args, catch_exceptions=False)
    row = crawl_again()
    assert (row["checks"], row["changes"]) == (1, 1) and row["change_rate"] > 0
    db_execute(db, 'UPDATE pages SET change_history = \'{"checks": 1, "hash\'')
    row = crawl_again()
    # the record behind the rate is gone: counts and rate start again together
    assert (row["checks"], row["changes"], row["change_rate"]) == (0, 0, None)
    export = runner.invoke(app, ["export", "--db", str(db), "--format", "jsonl", "--no-text"])
    records = [json.loads(line) for line in export.output.splitlines() if line.startswith("{")]
    assert [(r["checks"], r["change_rate"]) for r in records if r["url"] == fast] == [(0, None)]
    row = crawl_again()
    assert (row["checks"], row["changes"]) == (1, 1) and row["change_rate"] > 0
    assert site.count("/fast") == 4


def test_a_page_visited_late_keeps_the_interval_it_was_given(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    # uniform over 2 pages at one re-crawl an hour: each page every 2 hours. Visited half an
    # hour late, a page is due one interval after it was due (an hour and a half after its
    # visit), and its row keeps the 2 hours it was given: what it spends, which the due time
    # less the visit is not
    site = serve(changing_site())
    db = new_db("fresh")
    urls = [site.url("/fast"), site.url("/static")]
    args = crawl_args(tmp_path, db, urls, "--schedule", "uniform", "--budget", str(1 / HOUR))
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    first = db_rows(db)[site.url("/fast")]
    assert first["recrawl_interval"] == first["next_crawl_time"] - first["last_crawl_time"] == HOUR
    late = HOUR + HOUR // 2  # 90 minutes pass: each page was due 30 minutes ago
    db_execute(
        db,
        f"UPDATE pages SET last_crawl_time = last_crawl_time - {late}, "
        f"next_crawl_time = next_crawl_time - {late}",
    )
    was_due = {url: row["next_crawl_time"] for url, row in db_rows(db).items()}
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = db_rows(db)
    for url in (site.url("/fast"), site.url("/static")):
        row = rows[url]
        assert row["recrawl_interval"] == 2 * HOUR
        assert row["next_crawl_time"] == was_due[url] + 2 * HOUR
        assert row["next_crawl_time"] - row["last_crawl_time"] <= 2 * HOUR - HOUR // 2
    export = runner.invoke(app, ["export", "--db", str(db), "--format", "jsonl", "--no-text"])
    records = [json.loads(line) for line in export.output.splitlines() if line.startswith("{")]
    assert sorted(r["recrawl_interval"] for r in records) == [2 * HOUR, 2 * HOUR]


def shifting_site() -> tuple[web.Application, dict[str, bool]]:
    """/a and /b: the one ``state["a_changes"]`` names is new at every request, the other the
    same; flip it and their rates shift."""
    state, served = {"a_changes": True}, {"a": 0, "b": 0}

    def page(name: str) -> Callable[[web.Request], Any]:
        async def handler(request: web.Request) -> web.Response:
            served[name] += 1
            changing = state["a_changes"] == (name == "a")
            words = f"item number {served[name]}" if changing else "the same words as always"
            return web.Response(text=html_page(f"<p>{words}</p>", name), content_type="text/html")

        return handler

    web_app = web.Application()
    web_app.router.add_get("/a", page("a"))
    web_app.router.add_get("/b", page("b"))
    return web_app, state


def test_the_schedule_follows_pages_whose_rates_shift(tmp_path: Path, serve: Serve) -> None:
    # /a changes at every visit and /b never, for a day; then the other way round. Within a
    # few hours the freshness schedule gives /b the shorter interval: each check since the
    # shift moves a new run's weight (a restarted crawl, as each litecrawl() batch is, learns
    # its prior and hazard again from the stored records)
    web_app, state = shifting_site()
    site = serve(web_app)
    db = str(tmp_path / "fresh.db")
    a, b = site.url("/a"), site.url("/b")

    def intervals() -> tuple[int, int]:
        rows = db_rows(db)
        return rows[a]["recrawl_interval"], rows[b]["recrawl_interval"]

    def crawl() -> None:
        litecrawl(
            db,
            [a, b],
            fetcher="http",
            obey_robots=False,
            new_interval_sec=HOUR,
            min_interval_sec=600,
            max_interval_sec=6 * HOUR,
            schedule_policy="freshness",
        )
        pass_an_hour(db)

    for _ in range(24):
        crawl()
    before = intervals()
    assert before[0] < before[1]  # /a followed, /b left
    state["a_changes"] = False
    hours = 0
    while hours < 24:
        crawl()
        hours += 1
        after = intervals()
        if after[1] < after[0]:
            break
    assert after[1] < after[0], after
    assert hours <= 3  # the estimator before session 13 (hard change detection): 4
    rows = db_rows(db)
    assert rows[b]["changes"] >= 1 and rows[a]["changes"] >= 12
