"""The link graph in SQLite: each page's outgoing links, written with the page (serve reads
them through ``store/dashboard_sql.py``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from litecrawl.store.sql import MAX_LINKS_PER_PAGE, link_key

__all__ = ["write_links"]


def write_links(conn: sqlite3.Connection, graph: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Replace the stored outgoing links of each page (inside the caller's transaction)."""
    conn.executemany("DELETE FROM page_links WHERE src = ?", [(src,) for src, _ in graph])
    rows = []
    for src, dsts in graph:
        unique = dict.fromkeys(dsts)
        unique.pop(src, None)
        rows += [(src, dst, link_key(dst)) for dst in list(unique)[:MAX_LINKS_PER_PAGE]]
    conn.executemany("INSERT INTO page_links (src, dst, dst_key) VALUES (?, ?, ?)", rows)
