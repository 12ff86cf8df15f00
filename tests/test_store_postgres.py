"""The PostgreSQL store: the same storage shape as the SQLite file, migrations applied once."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from aiohttp import web
from conftest import (
    LocalServer,
    crawler_env,
    db_query,
    db_rows,
    html_page,
    index_document,
    site_app,
)
from pg_cluster import Cluster

from litecrawl.store.postgres.migrations import MIGRATIONS as PG_MIGRATIONS
from litecrawl.store.postgres.migrations import migrate as pg_migrate
from litecrawl.store.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from litecrawl.store.sqlite.migrations import migrate as sqlite_migrate

# FTS5's own tables in SQLite: the one place where the backends differ by design (the
# tsvector column and the version table are left out of the PostgreSQL side below)
_SQLITE_ONLY = ("resources_fts", "sqlite_")


def _sqlite_shape(path: Path) -> dict[str, set[str]]:
    conn = sqlite3.connect(path)
    try:
        sqlite_migrate(conn)
        tables = [
            t
            for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not t.startswith(_SQLITE_ONLY)
        ]
        return {t: {r[1] for r in conn.execute(f"PRAGMA table_info({t})")} for t in tables}
    finally:
        conn.close()


def _pg_shape(url: str) -> dict[str, set[str]]:
    with psycopg.connect(url, autocommit=True) as conn:
        pg_migrate(conn)
        cur = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public'"
        )
        shape: dict[str, set[str]] = {}
        for table, column in cur.fetchall():
            shape.setdefault(table, set()).add(column)
    shape.pop("litecrawl_schema")
    shape["resources"] -= {"tsv"}
    return shape


def test_both_backends_have_the_same_migrations_and_tables(tmp_path: Path, pg_url: str) -> None:
    assert [n for n, _ in PG_MIGRATIONS] == [n for n, _ in SQLITE_MIGRATIONS]
    assert _pg_shape(pg_url) == _sqlite_shape(tmp_path / "x.db")


def test_workers_starting_at_once_apply_each_migration_once(pg_url: str) -> None:
    def one(_: int) -> int:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            return pg_migrate(conn)

    with ThreadPoolExecutor(4) as workers:
        assert list(workers.map(one, range(4))) == [len(PG_MIGRATIONS)] * 4
    with psycopg.connect(pg_url) as conn:
        cur = conn.execute("SELECT version, name FROM litecrawl_schema ORDER BY version")
        applied = [(v, n) for v, n in cur.fetchall()]
    assert applied == [(i + 1, n) for i, (n, _) in enumerate(PG_MIGRATIONS)]


def _parts_after_upgrade(
    path: Path,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    migration: str,
    columns: tuple[str, ...],
    rows: list[tuple[Any, ...]],
) -> tuple[dict[str, int], dict[str, int]]:
    """``rows`` written into a SQLite file and a PostgreSQL database at the schema before
    ``migration``, then both upgraded: each one's ``norm_url -> part``."""
    from litecrawl.store.postgres import migrations as pg_migrations
    from litecrawl.store.sqlite import migrations as sqlite_migrations

    before = [n for n, _ in SQLITE_MIGRATIONS].index(migration)
    names = ", ".join(columns)
    conn = sqlite3.connect(path, isolation_level=None)
    monkeypatch.setattr(sqlite_migrations, "MIGRATIONS", SQLITE_MIGRATIONS[:before])
    sqlite_migrate(conn)
    marks = ", ".join("?" * len(columns))
    conn.executemany(f"INSERT INTO pages ({names}) VALUES ({marks})", rows)
    monkeypatch.setattr(sqlite_migrations, "MIGRATIONS", SQLITE_MIGRATIONS)
    sqlite_migrate(conn)
    on_sqlite = dict(conn.execute("SELECT norm_url, part FROM pages").fetchall())
    conn.close()

    with psycopg.connect(pg_url, autocommit=True) as pg:
        monkeypatch.setattr(pg_migrations, "MIGRATIONS", PG_MIGRATIONS[:before])
        pg_migrate(pg)
        with pg.cursor() as cur:
            marks = ", ".join(["%s"] * len(columns))
            cur.executemany(f"INSERT INTO pages ({names}) VALUES ({marks})", rows)
        monkeypatch.setattr(pg_migrations, "MIGRATIONS", PG_MIGRATIONS)
        pg_migrate(pg)
        on_pg = dict(pg.execute("SELECT norm_url, part FROM pages").fetchall())
    return on_sqlite, on_pg


def test_an_older_database_gets_each_pages_partition_hash(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upgrading a crawl made before the partition hash: every page gets it (with its meta's
    slot when a strategy set one), on both backends."""
    from litecrawl.strategy.domain import partition_hash

    rows = [
        (f"http://{host}/p{i}", host, meta)
        for i, (host, meta) in enumerate(
            [("a.example.com", None), ("b.example.co.uk", None), ("c.test", '{"b:slot": "b:7"}')]
            * 4
        )
    ]
    expected = {url: partition_hash(url, meta) for url, _, meta in rows}
    assert len(set(expected.values())) == 3
    columns = ("norm_url", "host", "meta")
    got = _parts_after_upgrade(
        tmp_path / "old.db", pg_url, monkeypatch, "partition_hash", columns, rows
    )
    assert got == (expected, expected)


def test_private_suffix_hosts_get_their_partition_hash_again(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database whose pages of alice.github.io and bob.github.io were hashed as one
    "github.io" (and wiki.corp as "corp"): the upgrade gives them their own, on both backends;
    other pages and a strategy's slot keep theirs."""
    from litecrawl.strategy.domain import partition_hash

    old = {"alice.github.io": "github.io", "bob.github.io": "github.io", "wiki.corp": "corp"}
    old |= {"www.example.com": "example.com"}
    rows = [(f"http://{h}/p", h, None, zlib.crc32(d.encode())) for h, d in old.items()]
    slot = '{"b:slot": "b:7"}'
    rows.append(("http://carol.github.io/p", "carol.github.io", slot, zlib.crc32(b"7")))
    expected = {url: partition_hash(url, meta) for url, _, meta, _ in rows}
    assert len(set(expected.values())) == 5
    columns = ("norm_url", "host", "meta", "part")
    got = _parts_after_upgrade(
        tmp_path / "old.db", pg_url, monkeypatch, "private_suffixes", columns, rows
    )
    assert got == (expected, expected)


def test_a_crawl_outlives_a_database_restart(
    tmp_path: Path, pg_cluster: Cluster, serve: Callable[[web.Application], LocalServer]
) -> None:
    pages = {"/": "".join(f'<a href="/p{i}">p{i}</a>' for i in range(40))}
    pages.update({f"/p{i}": "<p>fish</p>" for i in range(40)})
    site = serve(site_app({path: html_page(body) for path, body in pages.items()}))
    db = pg_cluster.create_database()
    log = (tmp_path / "crawl.log").open("wb")
    cmd = [sys.executable, "-m", "litecrawl", "crawl", site.url("/"), "--db", db, "--no-cache"]
    # 5 pages a second: the restart comes early in an 8-second crawl
    proc = subprocess.Popen(
        [*cmd, "--delay-ms", "200"], stdout=log, stderr=subprocess.STDOUT, env=crawler_env()
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(site.paths()) < 8:
        time.sleep(0.05)
    pg_cluster.restart()
    assert proc.wait(120) == 0
    log.close()
    output = (tmp_path / "crawl.log").read_text()
    assert "unreachable" in output and "is back" in output, output
    assert Counter(p for p in site.paths() if p != "/robots.txt") == {p: 1 for p in pages}
    rows = db_rows(db)
    assert {u.removeprefix(site.base) for u, r in rows.items() if r["state"] == 2} == set(pages)
    assert db_query(db, "SELECT count(*) FROM documents") == [(41,)]


def test_passwords_stay_out_of_run_records_stats_and_logs(
    pg_cluster: Cluster, serve: Callable[[web.Application], LocalServer]
) -> None:
    site = serve(site_app({"/": html_page("<p>fish</p>")}))
    # the test server trusts local connections: the password is accepted and never checked
    db = pg_cluster.create_database().replace("litecrawl@", "litecrawl:s3cret@")
    crawl = subprocess.run(
        [sys.executable, "-m", "litecrawl", "crawl", site.url("/"), "--db", db, "--verbose"],
        capture_output=True,
        text=True,
        check=False,
        env=crawler_env(),
    )
    assert crawl.returncode == 0, crawl.stderr
    stats = subprocess.run(
        [sys.executable, "-m", "litecrawl", "stats", "--db", db, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert stats.returncode == 0, stats.stderr
    [(command,)] = db_query(db, "SELECT command FROM runs")
    assert "--db postgresql://litecrawl:***@" in command
    for text in (crawl.stdout, crawl.stderr, stats.stdout, stats.stderr, command):
        assert "s3cret" not in text


def test_a_malformed_or_unreachable_database_url_exits_2_without_its_password() -> None:
    from typer.testing import CliRunner

    from litecrawl.cli import app

    runner = CliRunner()
    for url in ("postgresql://u:s3cret@[zz/x", "postgresql://u:s3cret@127.0.0.1:1/nowhere"):
        for args in (
            ["crawl", "http://127.0.0.1:9/", "--db", url],
            ["stats", "--db", url],
            ["search", "fish", "--db", url],
            ["sites", "list", "--db", url],
            ["export", "-f", "jsonl", "--db", url],
        ):
            result = runner.invoke(app, args)
            assert result.exit_code == 2, (args, result.output)
            assert "u:***@" in result.output and "s3cret" not in result.output, result.output
            assert "Traceback" not in result.output


def test_sites_run_outlives_a_database_restart(
    tmp_path: Path, pg_cluster: Cluster, serve: Callable[[web.Application], LocalServer]
) -> None:
    words = "<p>" + " ".join(["Our aquarium keeps zebrafish, guppies and tetras."] * 8)
    pages = {"/": html_page(words + "".join(f'<a href="/p{i}">p</a>' for i in range(30)))}
    pages.update({f"/p{i}": html_page(words) for i in range(30)})
    site = serve(site_app(pages))
    db = pg_cluster.create_database()
    conf = tmp_path / "c.toml"
    conf.write_text("lease_timeout = 4\n[rate_limit]\nper_host_delay_ms = 200\n")
    litecrawl = [sys.executable, "-m", "litecrawl", "sites"]
    subprocess.run([*litecrawl, "add", site.url("/"), "--db", db], check=True)
    subprocess.run([*litecrawl, "check", "--db", db], check=True, capture_output=True)
    log = (tmp_path / "run.log").open("wb")
    cmd = [*litecrawl, "run", "--once", "--db", db, "--config", str(conf)]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=crawler_env())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(site.paths()) < 8:
        time.sleep(0.05)
    pg_cluster.restart()
    code = proc.wait(120)
    log.close()
    output = (tmp_path / "run.log").read_text()
    assert code == 0, output
    assert "1 crawled" in output and "unreachable" in output, output
    fetched = Counter(p for p in site.paths() if p != "/robots.txt")
    fetched["/"] -= 1  # the start page was read once by the check
    assert fetched == {p: 1 for p in pages}, (fetched, output)
    assert db_query(db, "SELECT count(*), max(fetched) FROM site_crawls") == [(1, 31)]
    assert db_query(db, "SELECT locked_by FROM sites") == [(None,)]


def test_a_finalize_does_not_wait_for_another_workers_write_of_a_linked_page(pg_url: str) -> None:
    """Another worker's finalize holds its pages' rows until it commits (a second or more of
    tsvectors): a page linking to one of them is written meanwhile, and a link that makes a
    known page shallower still moves it up."""
    from litecrawl.store.postgres.frontier import PostgresFrontier
    from litecrawl.store.queue import NewLink, PageUpdate

    def link(path: str, depth: int) -> NewLink:
        return NewLink(f"http://a.test{path}", "a.test", depth)

    async def go() -> None:
        f = PostgresFrontier(pg_url)
        await f.open()
        try:
            await f.add([link("/", 0), link("/busy", 1), link("/deep", 5)])
            async with await psycopg.AsyncConnection.connect(pg_url) as other:
                # the other worker's finalize of /busy, not committed yet
                await other.execute("UPDATE pages SET status = 200 WHERE norm_url LIKE '%/busy'")
                update = PageUpdate(
                    "http://a.test/", "a.test", 0, 3600, "h", status=200,
                    links=(link("/busy", 1), link("/deep", 1), link("/new", 1)),
                )  # fmt: skip
                result = await asyncio.wait_for(f.finalize([update]), 10)
                assert result.new_links == 1
                await other.rollback()
            depths = await f.db.read(_depths)
            assert depths == {"/": 0, "/busy": 1, "/deep": 1, "/new": 1}
        finally:
            await f.close()

    async def _depths(conn: psycopg.AsyncConnection[Any]) -> dict[str, int]:
        cur = await conn.execute("SELECT norm_url, depth FROM pages")
        return {url.removeprefix("http://a.test"): d for url, d in await cur.fetchall()}

    asyncio.run(go())


def test_workers_writing_the_same_texts_at_once_share_one_resource_each(pg_url: str) -> None:
    """Another worker is placing the same texts (the same pages on other hosts) and has not
    committed: this write waits for it, then links its documents to those resources, instead
    of failing on resources.text_hash (store/postgres/index.py's text locks)."""
    from litecrawl.store.postgres import index
    from litecrawl.store.postgres.frontier import PostgresFrontier

    texts = [f"page /p{i} of the same site on two hosts" for i in range(20)]
    mine = [index_document(f"http://a.test/p{i}", "p", t) for i, t in enumerate(texts)]
    theirs = [index_document(f"http://b.test/p{i}", "p", t) for i, t in enumerate(texts)]

    async def go() -> None:
        f = PostgresFrontier(pg_url)
        await f.open()
        try:
            async with await psycopg.AsyncConnection.connect(pg_url) as other:
                await index.write_documents(other, theirs)  # the other worker's, not committed
                write = asyncio.create_task(f.write_documents(mine))
                await asyncio.sleep(0.5)
                assert not write.done()  # waiting for the other worker's texts
                await other.commit()
                await asyncio.wait_for(write, 10)
        finally:
            await f.close()

    asyncio.run(go())
    assert db_query(pg_url, "SELECT count(*), count(DISTINCT text_hash) FROM resources") == [
        (20, 20)
    ]
    documents = "SELECT count(*), count(DISTINCT resource_id) FROM documents"
    assert db_query(pg_url, documents) == [(40, 20)]
