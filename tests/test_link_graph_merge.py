"""The link graph's index of links in, merged in key order now and then (store/link_graph.py):
whatever was merged and whatever was not, every reader of the graph sees each page's links as
last written, on both backends, and so does a copy of the database."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import psycopg
from conftest import NewDb, db_execute, db_query
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litecrawl.dbcopy import copy_database
from litecrawl.store.backends import open_queries, open_sites, open_tables
from litecrawl.store.postgres.writes import write_links as pg_write_links
from litecrawl.store.sqlite.connection import connect
from litecrawl.store.sqlite.links import write_links as sqlite_write_links
from litecrawl.store.tables import TABLES

_LINKS = next(t for t in TABLES if t.name == "page_links")
_MERGE_EVERY = 5  # rows: most batches merge, some do not (the least: merge_due)

Graph = list[tuple[str, list[str]]]

# a batch: (page, its targets) for a few of 8 pages; a target may be the page itself or repeat
_BATCHES = st.lists(
    st.lists(
        st.tuples(st.integers(0, 7), st.lists(st.integers(0, 9), max_size=6)),
        min_size=1,
        max_size=4,
    ),
    min_size=1,
    max_size=6,
)


def _write(db: str, graph: Graph) -> None:
    """One batch, as a finalize writes it: one transaction."""
    if db.startswith("postgresql://"):

        async def write() -> None:
            async with await psycopg.AsyncConnection.connect(db) as conn, conn.transaction():
                await pg_write_links(conn, graph, _MERGE_EVERY)

        asyncio.run(write())
        return
    conn = connect(db)
    try:
        conn.execute("BEGIN IMMEDIATE")
        sqlite_write_links(conn, graph, _MERGE_EVERY)
        conn.execute("COMMIT")
    finally:
        conn.close()


def _expected(graph: dict[str, list[str]], write: Graph) -> None:
    """The model: a page links each target once, never itself, its last write's links."""
    for src, dsts in write:
        graph[src] = [d for d in dict.fromkeys(dsts) if d != src]


def _check(db: str, urls: Sequence[str], graph: dict[str, list[str]]) -> None:
    pairs = sorted((src, dst) for src, dsts in graph.items() for dst in dsts)
    with open_tables(db) as tables:
        assert tables.count("page_links") == len(pairs)
        read = tables.read(_LINKS, ["src", "dst"], None, 100)
        assert [(str(s), str(d)) for s, d in read] == pairs
    queries = open_queries(db)
    for url in urls:
        out = queries.links(url, False, 100, 0)
        assert out is not None
        assert (out.total, [r.url for r in out.rows]) == (
            len(graph.get(url, [])),
            sorted(graph.get(url, [])),
        )
        into = sorted(src for src, dst in pairs if dst == url)
        got = queries.links(url, True, 100, 0)
        assert got is not None
        assert (got.total, [r.url for r in got.rows]) == (len(into), into)
    with open_sites(db) as sites:
        assert sorted(sites.outlinks("h.test")) == sorted(dst for _, dst in pairs)
        half = list(urls[:4])
        assert sorted(sites.listed(half)) == sorted({d for s, d in pairs if s in half})


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=_BATCHES)
def test_every_reader_sees_the_links_last_written(
    new_db: NewDb, tmp_path: Path, batches: list[list[tuple[int, list[int]]]]
) -> None:
    db = new_db("links")
    with open_tables(db):  # the schema
        pass
    for table in ("page_links_in_new", "page_links_in", "page_links", "pages"):
        db_execute(db, f"DELETE FROM {table}")  # the examples share the database
    urls = [f"http://h.test/p{i}" for i in range(10)]
    for url in urls:
        db_execute(db, f"INSERT INTO pages (norm_url, host) VALUES ('{url}', 'h.test')")
    graph: dict[str, list[str]] = {}
    merged = 0
    for batch in batches:
        write = [(urls[src], [urls[d] for d in dsts]) for src, dsts in batch]
        _write(db, write)
        _expected(graph, write)
        _check(db, urls, graph)
        merged += db_query(db, "SELECT count(*) FROM page_links_in")[0][0]
    # the example read merged links, or wrote too few links to merge any
    assert merged or sum(len(d) for d in graph.values()) < _MERGE_EVERY
    copy = str(tmp_path / f"copy{len(list(tmp_path.iterdir()))}.db")
    copy_database(db, copy)
    _check(copy, urls, graph)


def test_merges_come_rarer_as_the_links_in_grow(new_db: NewDb) -> None:
    """A merge writes about all of the index of links in, so it waits until the links written
    since are also an eighth of those before: the merges per link written fall as the graph
    grows, the links not merged stay under that share, and readers see every link."""
    db = new_db("rarer")
    with open_tables(db):  # the schema
        pass
    targets = [f"http://h.test/t{i}" for i in range(10)]
    sources = [f"http://h.test/p{i}" for i in range(100)]
    for url in targets + sources:
        db_execute(db, f"INSERT INTO pages (norm_url, host) VALUES ('{url}', 'h.test')")
    merges = 0
    for i, src in enumerate(sources):  # 100 batches of 4 links
        _write(db, [(src, [targets[(i + k) % 10] for k in range(4)])])
        unmerged = db_query(db, "SELECT count(*) FROM page_links_in_new")[0][0]
        merged = db_query(db, "SELECT count(*) FROM page_links_in")[0][0]
        assert merged + unmerged == 4 * (i + 1)
        merges += unmerged == 0
        assert unmerged < max(_MERGE_EVERY, merged // 8)  # merged once it was not
    assert merges <= 25  # every other batch while the graph is small (50), then rarer
    queries = open_queries(db)
    for target in targets:
        got = queries.links(target, True, 100, 0)
        assert got is not None and got.total == 40  # 100 sources x 4 links over 10 targets
