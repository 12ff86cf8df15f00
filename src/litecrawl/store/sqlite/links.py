"""The link graph in SQLite: each page's outgoing links, written with the page (serve reads
them through ``store/dashboard_sql.py``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from litecrawl.store.sql import changed_links

__all__ = ["write_links"]


def write_links(conn: sqlite3.Connection, graph: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Replace the stored outgoing links of each page whose links changed (inside the caller's
    transaction)."""
    stored = conn.execute(
        "SELECT src, dst FROM page_links WHERE src IN (SELECT value FROM json_each(?))",
        (json.dumps([src for src, _ in graph], ensure_ascii=False),),
    )
    gone, rows = changed_links(graph, stored)
    conn.executemany("DELETE FROM page_links WHERE src = ?", [(src,) for src in gone])
    conn.executemany("INSERT INTO page_links (src, dst, dst_key) VALUES (?, ?, ?)", rows)
