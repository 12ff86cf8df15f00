"""Crawling strategies (docs/strategies.md) end to end: Frontera-style strategies against real
local sites, real SQLite; what the server saw and what the frontier holds."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import LocalServer, NewDb, db_rows, html_page, site_app
from hypothesis import given
from hypothesis import strategies as st
from test_cli_crawl import tree_site
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.strategy import States, partition_of, registered_domain
from litecrawl.strategy.codec import dumps_meta, loads_meta
from litecrawl.strategy.domain import partition_hash, partition_key
from litecrawl.urls import host_of

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()
TESTS = Path(__file__).parent
S = "strategies.frontera_style"


def crawl(db: Path | str, *args: str) -> Any:
    return runner.invoke(
        app,
        ["crawl", "--db", str(db), "--no-cache", "--quiet", "--delay-ms", "0", *args],
        catch_exceptions=False,
    )


def one_at_a_time(db: Path | str, *args: str) -> Any:
    return crawl(db, "--concurrency", "1", "--per-host", "1", "--max-depth", "0", *args)


def fetched(site: LocalServer) -> list[str]:
    return [p for p in site.paths() if p != "/robots.txt"]


def depth(path: str) -> int:
    return 0 if path == "/" else len(path) - 2


def last_run_errors(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        (stats,) = conn.execute("SELECT stats FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    errors: dict[str, int] = json.loads(stats)["errors"]
    return errors


def test_frontera_breadth_first_order_at_the_server(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=3))
    result = one_at_a_time(tmp_path / "c.db", site.url("/"), "--strategy", f"{S}:Breadth")
    assert result.exit_code == 0, result.output
    paths = fetched(site)
    assert len(paths) == 15 and len(set(paths)) == 15
    assert [depth(p) for p in paths] == sorted(depth(p) for p in paths)


def test_frontera_depth_first_order_at_the_server(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=3))
    result = one_at_a_time(tmp_path / "c.db", site.url("/"), "--strategy", f"{S}:Depth")
    assert result.exit_code == 0, result.output
    paths = fetched(site)
    assert len(paths) == 15 and len(set(paths)) == 15
    # down one branch to the bottom before the second child of the root
    assert [depth(p) for p in paths[:4]] == [0, 1, 2, 3]
    assert paths[4][:-1] == paths[3][:-1]  # the sibling leaf next


def test_builtin_dfs_by_short_name(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=3))
    result = one_at_a_time(tmp_path / "c.db", site.url("/"), "--strategy", "dfs")
    assert result.exit_code == 0, result.output
    assert [depth(p) for p in fetched(site)[:4]] == [0, 1, 2, 3]


def test_only_scheduled_links_are_crawled(tmp_path: Path, serve: Serve) -> None:
    links = '<a href="/keep-1">a</a> <a href="/drop-1">b</a> <a href="/keep-2">c</a>'
    site = serve(
        site_app(
            {
                "/": html_page(links),
                "/keep-1": html_page('<a href="/drop-2">d</a> <a href="/keep-3">e</a>'),
                "/keep-2": html_page("two"),
                "/keep-3": html_page("three"),
                "/drop-1": html_page("never"),
                "/drop-2": html_page("never"),
            }
        )
    )
    db = tmp_path / "c.db"
    result = one_at_a_time(db, site.url("/"), "--strategy", f"{S}:OnlyWord")
    assert result.exit_code == 0, result.output
    assert sorted(fetched(site)) == ["/", "/keep-1", "/keep-2", "/keep-3"]
    assert not any("drop" in url for url in db_rows(db))


def test_finished_stops_the_crawl_with_exit_0(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=3, levels=3))
    db = tmp_path / "c.db"
    result = one_at_a_time(db, site.url("/"), "--strategy", f"{S}:StopAfter")
    assert result.exit_code == 0, result.output
    assert len(fetched(site)) == 3
    # close() was called and what it wrote is stored; b'encoding' came from the response
    stats = runner.invoke(app, ["stats", "--db", str(db), "--domains", "--json"])
    assert json.loads(stats.output)["domains"] == {"closed": {"crawled": 3, "enc": ["utf-8"]}}


def test_states_meta_and_domain_metadata_survive_a_restart(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=2))
    db = tmp_path / "c.db"
    args = (site.url("/"), "--strategy", f"{S}:CountDomains", "--max-pages", "3")
    assert one_at_a_time(db, *args).exit_code == 0
    rows = db_rows(db)
    assert rows[site.url("/")]["state"] == States.CRAWLED
    assert loads_meta(rows[site.url("/n0")]["meta"]) == {b"depth": 1}
    queued = [u for u, r in rows.items() if r["last_crawl_time"] is None]
    assert queued and all(rows[u]["state"] == States.QUEUED for u in queued)
    assert all(loads_meta(rows[u]["meta"])[b"depth"] == 2 for u in queued)
    # second run: the rest, depth from the stored meta; counters continue
    result = one_at_a_time(db, site.url("/"), "--strategy", f"{S}:CountDomains")
    assert result.exit_code == 0, result.output
    assert sorted(fetched(site)) == sorted({*fetched(site)})  # each page once
    assert len(fetched(site)) == 7
    rows = db_rows(db)
    assert all(r["state"] == States.CRAWLED for r in rows.values())
    assert loads_meta(rows[site.url("/n01")]["meta"]) == {b"depth": 2}
    stats = runner.invoke(app, ["stats", "--db", str(db), "--domains", "--json"])
    assert stats.exit_code == 0, stats.output
    assert json.loads(stats.output)["domains"] == {"127.0.0.1": {"pages": 7}}


def test_dont_queue_changes_a_score_without_queuing(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=1, levels=1))
    db = tmp_path / "c.db"
    config = tmp_path / "s.toml"
    config.write_text(
        f'[strategy]\nname = "{S}:Rescore"\n[strategy.args]\nurl = "{site.url("/lonely")}"\n'
    )
    result = one_at_a_time(db, site.url("/"), "--config", str(config))
    assert result.exit_code == 0, result.output
    rows = db_rows(db)
    assert "/lonely" not in fetched(site)
    lonely = rows[site.url("/lonely")]
    assert (lonely["score"], lonely["state"], lonely["last_crawl_time"]) == (0.125, 0, None)
    # a known, crawled page: its score changes, it is not fetched again
    config.write_text(
        f'[strategy]\nname = "{S}:Rescore"\n[strategy.args]\nurl = "{site.url("/n0")}"\n'
    )
    before = rows[site.url("/n0")]
    assert one_at_a_time(db, site.url("/"), "--config", str(config)).exit_code == 0
    after = db_rows(db)[site.url("/n0")]
    assert after["score"] == 0.125 and before["score"] != 0.125
    assert after["next_crawl_time"] == before["next_crawl_time"]
    assert fetched(site).count("/n0") == 1


def test_a_raising_hook_does_not_stop_the_crawl(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=2))
    db = tmp_path / "c.db"
    result = one_at_a_time(db, site.url("/"), "--strategy", f"{S}:Raising")
    assert result.exit_code == 0, result.output
    # /n0's links were never scheduled (its hook raised); everything else was crawled
    assert sorted(fetched(site)) == ["/", "/n0", "/n1", "/n10", "/n11"]
    assert last_run_errors(db) == {"strategy": 1}
    assert db_rows(db)[site.url("/n0")]["state"] == States.CRAWLED


def test_request_error_sets_the_state_and_meta(tmp_path: Path, serve: Serve) -> None:
    site = serve(site_app({"/": html_page('<a href="/gone">x</a>')}))
    db = tmp_path / "c.db"
    assert one_at_a_time(db, site.url("/"), "--strategy", f"{S}:Breadth").exit_code == 0
    gone = db_rows(db)[site.url("/gone")]
    assert gone["state"] == States.ERROR and gone["score"] == 0.0
    assert loads_meta(gone["meta"]) == {b"depth": 1, b"error": b"http_404"}


def test_unknown_strategy_exits_2_naming_it(tmp_path: Path) -> None:
    for name in ("nosuch", "nosuch_module:Strategy", f"{S}:Missing"):
        result = crawl(tmp_path / "c.db", "http://127.0.0.1:9/", "--strategy", name)
        assert result.exit_code == 2, result.output
        assert name in result.output
    assert not (tmp_path / "c.db").exists()


def test_registered_domains_from_the_bundled_suffix_list() -> None:
    assert registered_domain("www.london.co.uk") == "london.co.uk"
    assert registered_domain("images.yandex.ru") == "yandex.ru"
    assert registered_domain("t.co") == "t.co"
    assert registered_domain("127.0.0.1") == "127.0.0.1"
    assert registered_domain("[::1]") == "::1"


def test_partition_hash_is_the_same_in_another_process() -> None:
    keys = [b"example.com", b"london.co.uk", b"127.0.0.1", b"slot-7"]
    code = (
        "from litecrawl.strategy import partition_of\n"
        f"print([partition_of(k, 5) for k in {keys!r}])"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == str([partition_of(k, 5) for k in keys])


_HOSTS = st.sampled_from(
    [
        "example.com",
        "WWW.Example.COM",
        "a.b.london.co.uk",
        "127.0.0.1",
        "[::1]",
        "localhost",
        "xn--bcher-kva.example",
        "t.co",
        "sub.domain.test",
    ]
)


@given(
    host=_HOSTS,
    port=st.sampled_from(["", ":8080"]),
    user=st.sampled_from(["", "u:pw@"]),
    path=st.text(alphabet="abc/?=&", max_size=12),
    slot=st.one_of(st.none(), st.text(max_size=5)),
    other=st.booleans(),
)
def test_the_stored_partition_hash_is_the_partition_keys_crc32(
    host: str, port: str, user: str, path: str, slot: str | None, other: bool
) -> None:
    """The per-host shortcut of partition_hash against the plain key."""
    url = f"http://{user}{host}{port}/{path}"
    meta_dict: dict[bytes, Any] | None = {b"depth": 1} if other else None
    if slot is not None:
        meta_dict = {**(meta_dict or {}), b"slot": slot.encode()}
    meta = dumps_meta(meta_dict) if meta_dict is not None else None
    plain = zlib.crc32(partition_key(url, loads_meta(meta) if meta else None))
    assert partition_hash(url, meta) == plain
    assert partition_hash(url, meta, host_of(url)) == plain
    assert plain % 7 == partition_of(partition_key(url, loads_meta(meta) if meta else None), 7)


def test_partition_claims_only_its_domains(serve: Serve, new_db: NewDb) -> None:
    site = serve(tree_site(fanout=1, levels=1))
    port = site.base.rsplit(":", 1)[1]
    by_ip, by_name = f"http://127.0.0.1:{port}/", f"http://localhost:{port}/"
    keys = {partition_of(b"127.0.0.1", 2): by_ip, partition_of(b"localhost", 2): by_name}
    assert len(keys) == 2  # the two registered domains fall into different partitions
    db = new_db("c")
    for k in (0, 1):
        before = len(site.requests)
        result = one_at_a_time(
            db, by_ip, by_name, "--strategy", "dfs", "--partition", f"{k}/2", "--any-domain"
        )
        assert result.exit_code == 0, result.output
        hosts = {r.headers["Host"].split(":")[0] for r in site.requests[before:]}
        assert hosts == {keys[k].split("/")[2].split(":")[0]}
        stats = runner.invoke(app, ["stats", "--db", str(db), "--partitions", "2", "--json"])
        parts = json.loads(stats.output)["partitions"]
        mine, other = parts[f"{k}/2"], parts[f"{1 - k}/2"]
        assert mine["crawled"] == mine["pages"] >= 2 and mine["due_now"] == 0
        if k == 0:  # the other worker's domain waits for it
            assert other["crawled"] == 0 and other["due_now"] >= 1


def test_seeds_add_goes_through_read_seeds(tmp_path: Path, serve: Serve) -> None:
    site = serve(tree_site(fanout=2, levels=1))
    db = tmp_path / "c.db"
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"# two seeds\n{site.url('/')}\n\n{site.url('/n1')}\nnot a url\n")
    result = runner.invoke(
        app, ["seeds", "add", str(seeds), "--db", str(db), "--strategy", f"{S}:Breadth"]
    )
    assert result.exit_code == 0, result.output
    assert "2 scheduled" in result.output
    rows = db_rows(db)
    assert sorted(rows) == [site.url("/"), site.url("/n1")]
    assert all(loads_meta(r["meta"]) == {b"depth": 0} for r in rows.values())
    assert site.requests == []  # seeding fetches nothing
    again = runner.invoke(
        app, ["seeds", "add", str(seeds), "--db", str(db), "--strategy", f"{S}:Breadth"]
    )
    assert "0 scheduled" in again.output  # read_seeds saw their stored states
    bad = runner.invoke(app, ["seeds", "add", str(seeds), "--db", str(db), "--strategy", "nope"])
    assert bad.exit_code == 2 and "nope" in bad.output


def test_litecrawl_takes_a_strategy(tmp_path: Path, serve: Serve) -> None:
    from strategies.frontera_style import OnlyWord

    from litecrawl import BaseCrawlingStrategy, litecrawl

    assert issubclass(OnlyWord, BaseCrawlingStrategy)
    site = serve(
        site_app(
            {
                "/": html_page('<a href="/pie-1">a</a> <a href="/cake-1">b</a>'),
                "/pie-1": html_page("pie"),
                "/cake-1": html_page("cake"),
            }
        )
    )
    db = tmp_path / "c.db"
    for _ in range(3):
        litecrawl(
            str(db),
            [site.url("/")],
            fetcher="http",
            strategy=OnlyWord,
            strategy_args={"word": "pie"},
        )
    assert sorted(fetched(site)) == ["/", "/pie-1"]


def test_focused_crawls_the_topic_best_first_within_budget(tmp_path: Path, serve: Serve) -> None:
    links = " ".join(
        f'<a href="/{p}">{p}</a>' for p in ("apple-pie", "apple", "cars", "pie-crust", "apple-x")
    )
    pages = {f"/{p}": html_page(p) for p in ("apple-pie", "apple", "cars", "pie-crust")}
    site = serve(site_app({"/": html_page(links), **pages}))
    config = tmp_path / "f.toml"
    config.write_text(
        '[strategy]\nname = "focused"\n[strategy.args]\nterms = ["apple", "pie"]\nbudget = 3\n'
    )
    result = one_at_a_time(tmp_path / "c.db", site.url("/"), "--config", str(config))
    assert result.exit_code == 0, result.output
    paths = fetched(site)
    assert paths[:2] == ["/", "/apple-pie"]  # both terms: the best link first
    assert len(paths) == 3 and "/cars" not in paths


def test_focused_follows_links_by_their_anchor_text(tmp_path: Path, serve: Serve) -> None:
    names = {f"/p{i}": "Zebra stripes" if i in (3, 6) else f"Lion {i}" for i in range(8)}
    links = " ".join(f'<a href="{p}"><b>{text}</b> page</a>' for p, text in names.items())
    site = serve(site_app({"/": html_page(links), **{p: html_page(p) for p in names}}))
    config = tmp_path / "f.toml"
    config.write_text('[strategy]\nname = "focused"\n[strategy.args]\nterms = ["zebra"]\n')
    result = one_at_a_time(tmp_path / "c.db", site.url("/"), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert sorted(fetched(site)) == ["/", "/p3", "/p6"]


def test_strategy_events_are_logged_at_debug(
    tmp_path: Path, serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    from litecrawl import litecrawl

    site = serve(site_app({"/": html_page('<a href="/a">a</a>'), "/a": html_page("a")}))
    with caplog.at_level(logging.DEBUG, logger="litecrawl.strategy"):
        litecrawl(str(tmp_path / "c.db"), [site.url("/")], fetcher="http", strategy=f"{S}:Depth")
    events = {
        (r.url, r.state_before, r.state_after, r.score)  # type: ignore[attr-defined]
        for r in caplog.records
        if hasattr(r, "state_after")
    }
    assert (site.url("/"), States.NOT_CRAWLED, States.QUEUED, 1.0) in events  # read_seeds
    assert (site.url("/"), States.QUEUED, States.CRAWLED, None) in events  # page_crawled
    assert (site.url("/a"), States.NOT_CRAWLED, States.QUEUED, 0.5) in events  # scheduled


def test_sitemap_entries_under_a_strategy(tmp_path: Path, serve: Serve) -> None:
    sitemap = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>{base}/a</loc></url></urlset>"
    )
    pages: dict[str, Any] = {"/a": html_page('<a href="/b">b</a>'), "/b": html_page("b")}
    site = serve(site_app(pages))
    pages["/sitemap.xml"] = (200, "application/xml", sitemap.format(base=site.base))
    db = tmp_path / "c.db"
    result = one_at_a_time(
        db, "--sitemap", site.url("/sitemap.xml"), "--follow", "--strategy", f"{S}:Breadth"
    )
    assert result.exit_code == 0, result.output
    assert {"/a", "/b"} <= set(fetched(site))
    # the entries went through links_extracted: the sitemap's depth + 1
    assert loads_meta(db_rows(db)[site.url("/a")]["meta"]) == {b"depth": 1}
    assert loads_meta(db_rows(db)[site.url("/b")]["meta"]) == {b"depth": 2}
    assert last_run_errors(db) == {}


def test_sitemap_entries_the_strategy_does_not_schedule_are_not_crawled(
    tmp_path: Path, serve: Serve
) -> None:
    sitemap = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>{base}/keep-1</loc></url><url><loc>{base}/drop-1</loc></url></urlset>"
    )
    pages: dict[str, Any] = {"/keep-1": html_page("k"), "/drop-1": html_page("d")}
    site = serve(site_app(pages))
    pages["/sitemap.xml"] = (200, "application/xml", sitemap.format(base=site.base))
    db = tmp_path / "c.db"
    result = one_at_a_time(
        db, "--sitemap", site.url("/sitemap.xml"), "--follow", "--strategy", f"{S}:OnlyWord"
    )
    assert result.exit_code == 0, result.output
    assert sorted(fetched(site)) == ["/keep-1", "/sitemap.xml"]
    assert site.url("/drop-1") not in db_rows(db)


def test_feed_entries_the_strategy_does_not_schedule_are_not_crawled(
    tmp_path: Path, serve: Serve
) -> None:
    feed = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        "<item><link>{base}/keep-2</link></item><item><link>{base}/drop-2</link></item>"
        "</channel></rss>"
    )
    home = html_page(
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml"><a href="/keep-1">k</a>'
    )
    pages: dict[str, Any] = {"/": home, "/keep-1": html_page("k"), "/keep-2": html_page("k")}
    pages["/drop-2"] = html_page("d")
    site = serve(site_app(pages))
    pages["/feed.xml"] = (200, "application/rss+xml", feed.format(base=site.base))
    db = tmp_path / "c.db"
    result = one_at_a_time(db, site.url("/"), "--strategy", f"{S}:OnlyWord")
    assert result.exit_code == 0, result.output
    assert sorted(fetched(site)) == ["/", "/feed.xml", "/keep-1", "/keep-2"]
