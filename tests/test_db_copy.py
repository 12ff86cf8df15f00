"""``litecrawl db copy``: a whole crawl moved SQLite -> PostgreSQL -> SQLite, re-runs, refusals."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from aiohttp import web
from conftest import LocalServer, db_execute, db_query, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.store.backends import open_tables
from litecrawl.store.tables import TABLES

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()
TEXT = " ".join(["Our aquarium keeps zebrafish, guppies and tetras in clean water."] * 6)


def _crawled(serve: Serve, tmp_path: Path) -> Path:
    """A SQLite crawl with every kind of row: pages, index, vectors, links, runs, a site with
    its crawl, feeds and annotations."""
    pages = {
        "/": html_page(
            f"<p>{TEXT}</p>" + "".join(f'<a href="/p{i}">p{i}</a>' for i in range(12)),
            "Aquarium",
            '<link rel="alternate" type="application/rss+xml" href="/feed.xml">',
        ),
        "/feed.xml": (
            200,
            "application/rss+xml",
            "<rss><channel><item><link>/p1</link></item></channel></rss>",
        ),
    }
    pages.update({f"/p{i}": html_page(f"<p>{TEXT} fish {i}</p>", f"Fish {i}") for i in range(12)})
    pages["/p3"] = pages["/p2"]  # a near-duplicate: two documents, one resource
    pages["/p4"] = html_page(  # sections: a vector each
        f'<h2 id="food">Feeding</h2><p>{TEXT} flakes</p><h2 id="water">Water</h2><p>{TEXT} pH</p>',
        "Fish care",
    )
    site = serve(site_app(pages))
    db = tmp_path / "a.db"
    conf = tmp_path / "c.toml"
    conf.write_text("[rate_limit]\nper_host_delay_ms = 0\n")
    base = site.url("/")
    for args in (
        ["crawl", base, "--db", str(db), "--delay-ms", "0"],
        ["sites", "add", base, "--db", str(db)],
        ["sites", "annotate", base, "--note", "good fish", "--db", str(db)],
        ["sites", "run", "--once", "--db", str(db), "--config", str(conf)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    return db


def _all_rows(db: Path | str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, in a backend-neutral order (floats rounded: REAL vs double)."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        if str(db).startswith("postgresql://"):
            with psycopg.connect(str(db)) as pg:
                cur = pg.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                    "AND is_generated = 'NEVER' AND column_name <> 'tsv' ORDER BY column_name",
                    (table.name,),
                )
                cols = [r[0] for r in cur.fetchall()]
        else:
            conn = sqlite3.connect(db)
            cols = sorted(r[1] for r in conn.execute(f"PRAGMA table_info({table.name})"))
            conn.close()
        if table.name == "page_links":  # a link's id is each database's own (its links in)
            cols.remove("id")
        found = db_query(db, f"SELECT {', '.join(cols)} FROM {table.name}")
        rows[table.name] = sorted(
            (tuple(round(v, 3) if isinstance(v, float) else v for v in r) for r in found),
            key=repr,
        )
    return rows


def _copy(source: Path | str, target: Path | str) -> Any:
    return runner.invoke(app, ["db", "copy", "--from", str(source), "--to", str(target)])


def test_round_trip_sqlite_postgres_sqlite_keeps_every_row(
    serve: Serve, tmp_path: Path, pg_url: str
) -> None:
    db = _crawled(serve, tmp_path)
    before = _all_rows(db)
    kinds = ("pages", "documents", "resources", "resource_vectors", "section_vectors", "runs")
    for table in (*kinds, "page_links"):
        assert before[table], table  # the crawl made rows of every kind worth checking
    for table in ("sites", "site_annotations", "site_crawls", "site_feeds"):
        assert before[table], table
    assert len(before["resources"]) < len(before["documents"])  # the near-duplicate

    there = _copy(db, pg_url)
    assert there.exit_code == 0, there.output
    assert re.search(rf"^documents +{len(before['documents'])}$", there.stdout, re.M)
    assert _all_rows(pg_url) == before
    # the full-text vectors were computed by PostgreSQL from the copied text
    assert db_query(
        pg_url, "SELECT count(*) FROM resources WHERE tsv @@ to_tsquery('simple', 'zebrafish')"
    ) == [(len(before["resources"]),)]

    back = tmp_path / "b.db"
    again = _copy(pg_url, back)
    assert again.exit_code == 0, again.output
    assert _all_rows(back) == before
    # FTS5 was filled by the copy's inserts
    fts = "SELECT count(*) FROM resources_fts WHERE resources_fts MATCH 'zebrafish'"
    assert db_query(back, fts) == [(len(before["resources"]),)]


def test_a_copied_database_goes_on_crawling_with_fresh_ids(
    serve: Serve, tmp_path: Path, pg_url: str
) -> None:
    db = _crawled(serve, tmp_path)
    assert _copy(db, pg_url).exit_code == 0
    other = serve(site_app({"/": html_page("<p>other words entirely, about birds</p>", "Birds")}))
    result = runner.invoke(app, ["crawl", other.url("/"), "--db", pg_url, "--delay-ms", "0"])
    assert result.exit_code == 0, result.output
    ids = db_query(pg_url, "SELECT id FROM documents ORDER BY id")
    assert len(ids) == len(_all_rows(db)["documents"]) + 1
    assert db_query(pg_url, "SELECT count(*) FROM runs") == [(len(_all_rows(db)["runs"]) + 1,)]


@pytest.mark.parametrize("target_kind", ["sqlite", "postgres"])
def test_a_copy_run_again_repairs_and_updates_the_target(
    serve: Serve, tmp_path: Path, target_kind: str, request: pytest.FixtureRequest
) -> None:
    db = _crawled(serve, tmp_path)
    target = tmp_path / "t.db" if target_kind == "sqlite" else request.getfixturevalue("pg_url")
    assert _copy(db, target).exit_code == 0
    # as if the first copy had stopped half way, and the source had moved on since
    db_execute(target, "DELETE FROM page_links")
    db_execute(target, "DELETE FROM resource_vectors")
    db_execute(target, "DELETE FROM pages WHERE norm_url LIKE '%/p1%'")
    db_execute(db, "UPDATE pages SET error = 'changed since' WHERE norm_url LIKE '%/p2'")
    result = _copy(db, target)
    assert result.exit_code == 0, result.output
    assert _all_rows(target) == _all_rows(db)


def test_refusals_exit_2_and_a_target_with_other_rows_exits_1(
    serve: Serve, tmp_path: Path, pg_url: str
) -> None:
    missing = _copy(tmp_path / "nothing.db", pg_url)
    assert missing.exit_code == 2 and "no database at" in missing.output
    db = _crawled(serve, tmp_path)
    assert _copy(db, db).exit_code == 2
    unreachable = _copy(db, "postgresql://someone:s3cret@127.0.0.1:1/nowhere")
    assert unreachable.exit_code == 2
    assert "127.0.0.1:1" in unreachable.output and "s3cret" not in unreachable.output
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://127.0.0.1:9/elsewhere\n")
    added = runner.invoke(app, ["seeds", "add", str(seeds), "--db", pg_url])  # a crawl of its own
    assert added.exit_code == 0, added.output
    mixed = _copy(db, pg_url)
    assert mixed.exit_code == 1
    assert "pages" in mixed.output and "differ" in mixed.output


def test_every_table_of_a_crawl_is_copied_or_rebuilt(tmp_path: Path) -> None:
    """A table added by a migration and not listed in TABLES would be left behind by db copy
    (section_vectors was): every table is copied, or rebuilt from copied rows, or transient."""
    db = tmp_path / "a.db"
    with open_tables(str(db)):  # brings the schema up to date, every migration
        pass
    conn = sqlite3.connect(db)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    rebuilt = {n for n in names if n.startswith("resources_fts")}  # FTS5, with the resources
    rebuilt |= {"page_links_in", "page_links_in_new"}  # written with the copied links
    transient = {"host_leases", "sqlite_sequence"}  # held by live workers; SQLite's counters
    assert names - rebuilt - transient == {t.name for t in TABLES}
