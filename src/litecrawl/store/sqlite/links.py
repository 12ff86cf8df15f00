"""The link graph in SQLite: each page's outgoing links, written with the page, and the index
of links in fed in key order (store/link_graph.py; serve reads them through
``store/dashboard_sql.py``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from litecrawl.store.dialect import SQLITE
from litecrawl.store.link_graph import (
    MERGE,
    MERGE_EVERY,
    NEW_IN_LINKS_SQLITE,
    STAGED,
    delete_links,
    merge_due,
)
from litecrawl.store.sql import changed_links

__all__ = ["replace_links", "write_links"]

_STORED = "SELECT src, dst FROM page_links WHERE src IN (SELECT value FROM json_each(?))"


def write_links(
    conn: sqlite3.Connection,
    graph: Sequence[tuple[str, Sequence[str]]],
    merge_every: int = MERGE_EVERY,
) -> None:
    """Replace the stored outgoing links of each page whose links changed (inside the caller's
    transaction); merge the links in once the links written since the last merge are
    ``merge_every`` and an eighth of those before (:func:`merge_due`)."""
    _, srcs = SQLITE.one_of([src for src, _ in graph])
    gone, rows = changed_links(graph, conn.execute(_STORED, (srcs,)))
    replace_links(conn, gone, rows, merge_every)


def replace_links(
    conn: sqlite3.Connection,
    gone: Sequence[str],
    rows: Sequence[Sequence[Any]],
    merge_every: int = MERGE_EVERY,
    columns: Sequence[str] = ("src", "dst", "dst_key"),
) -> None:
    """The links of the source pages ``gone`` removed, ``rows`` inserted (``columns``: theirs;
    ``src`` among them), the links in kept up to date with both."""
    if gone:
        member, listed = SQLITE.one_of(list(gone))
        for statement in delete_links(member):
            conn.execute(statement, (listed,))
    if not rows:
        return
    marks = ", ".join("?" for _ in columns)
    conn.executemany(f"INSERT INTO page_links ({', '.join(columns)}) VALUES ({marks})", rows)
    src = list(columns).index("src")
    member, written = SQLITE.one_of(sorted({str(row[src]) for row in rows}))
    conn.execute(NEW_IN_LINKS_SQLITE.format(member=member), (written,))
    staged, before = conn.execute(STAGED).fetchone()
    if merge_due(staged, before, merge_every):
        for statement in MERGE:
            conn.execute(statement)
