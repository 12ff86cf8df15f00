"""A finalize batch's links into SQLite's frontier: a link the batch has already written at the
same depth or a smaller one is not executed again; the rows and each page's count of new rows
are those of executing every link (the plain way, kept here as the reference)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.store.queue import NewLink, PageUpdate
from litecrawl.store.sqlite.migrations import migrate
from litecrawl.store.sqlite.writes import _INSERT_LINK, insert_links, link_row

_URLS = [f"http://a.test/{c}" for c in "abcdef"] + ["http://b.test:8080/x"]
_LINKS = st.builds(
    NewLink,
    url=st.sampled_from(_URLS),
    host=st.just("a.test"),
    depth=st.integers(0, 4),
    source=st.sampled_from(["link", "feed"]),
    score=st.sampled_from([0.5, 0.9]),
    kind=st.sampled_from(["page", "feed"]),
    lastmod=st.sampled_from([None, None, None, 1000]),
)
_BATCH = st.lists(st.lists(_LINKS, max_size=8), min_size=1, max_size=6)
_KNOWN = st.dictionaries(st.sampled_from(_URLS), st.integers(0, 4), max_size=4)
_ROWS = "SELECT norm_url, host, depth, source, score, kind, part FROM pages ORDER BY norm_url"


def _plain(conn: sqlite3.Connection, updates: Sequence[PageUpdate]) -> list[int]:
    """Every link of every page executed."""
    counts = []
    for update in updates:
        before = conn.total_changes
        conn.executemany(_INSERT_LINK, [link_row(k) for k in update.links if k.lastmod is None])
        counts.append(conn.total_changes - before)
    return counts


def _database(template: sqlite3.Connection, known: dict[str, int]) -> sqlite3.Connection:
    """A copy of the migrated ``template`` in memory (migrating costs ~1 s), holding ``known``."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    template.backup(conn)
    conn.executemany(
        _INSERT_LINK, [link_row(NewLink(url, "a.test", depth)) for url, depth in known.items()]
    )
    return conn


def test_links_written_once_a_batch_give_the_plain_rows_and_counts(tmp_path: Path) -> None:
    template = sqlite3.connect(tmp_path / "migrated.db", isolation_level=None)
    migrate(template)

    @settings(max_examples=30)
    @given(known=_KNOWN, batch=_BATCH)
    def check(known: dict[str, int], batch: list[list[NewLink]]) -> None:
        plain, fast = _database(template, known), _database(template, known)
        updates = [
            PageUpdate(f"http://a.test/page{i}", "a.test", 100, 200, "h", links=links)
            for i, links in enumerate(batch)
        ]
        try:
            assert insert_links(fast, updates) == _plain(plain, updates)
            assert fast.execute(_ROWS).fetchall() == plain.execute(_ROWS).fetchall()
        finally:
            plain.close()
            fast.close()

    check()
    template.close()
