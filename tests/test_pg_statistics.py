"""A crawl into PostgreSQL keeps the planner's statistics of the tables it grows
(``store/postgres/statistics.py``): without them every plan until autovacuum's first look (at
most once a minute) is made for empty tables."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from aiohttp import web
from conftest import LocalServer, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.store.postgres.connection import migrate_database

Serve = Callable[[web.Application], LocalServer]
_PAGES = 300


def test_a_crawl_analyzes_the_tables_it_has_grown(pg_url: str, serve: Serve) -> None:
    migrate_database(pg_url)
    tables = ["pages", "resources", "documents", "page_links"]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for table in tables:  # only the crawl may take statistics here
            conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)".encode())
    links = [
        "".join(f'<a href="/p{(i + k) % _PAGES}">{k}</a> ' for k in range(1, 12))
        for i in range(_PAGES)
    ]
    everything = "".join(f'<a href="/p{i}">{i}</a> ' for i in range(_PAGES))
    served = {"/": html_page(everything, "Home")}
    served |= {
        f"/p{i}": html_page(f"<p>Page {i} words</p>{links[i]}", f"P{i}") for i in range(_PAGES)
    }
    site = serve(site_app(served))
    result = CliRunner().invoke(
        app, ["crawl", site.url("/"), "--db", pg_url, "--delay-ms", "0", "--no-cache", "-q"]
    )
    assert result.exit_code == 0, result.output
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT s.relname, s.last_analyze IS NOT NULL, c.reltuples FROM pg_stat_user_tables s"
            " JOIN pg_class c ON c.oid = s.relid WHERE s.relname = ANY(%s) ORDER BY s.relname",
            (tables,),
        ).fetchall()
        counted = conn.execute("SELECT count(*) FROM pages").fetchone()
    assert counted is not None and counted[0] == _PAGES + 1
    analyzed = {name: (done, reltuples) for name, done, reltuples in rows}
    assert analyzed["pages"][0] and analyzed["page_links"][0], analyzed
    # the pages' statistics count them as they are at the end, not as they were at the start
    assert analyzed["pages"][1] >= _PAGES / 2, analyzed
