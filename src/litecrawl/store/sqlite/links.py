"""The link graph in SQLite: each page's outgoing links, written with the page, read by serve."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

__all__ = ["MAX_LINKS_PER_PAGE", "read_links", "write_links"]

# A page with more links than this (a sitemap-like index, a spam page) keeps its first ones: the
# graph is for people looking at a page, not a complete web graph.
MAX_LINKS_PER_PAGE = 1000


def write_links(conn: sqlite3.Connection, graph: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Replace the stored outgoing links of each page (inside the caller's transaction)."""
    conn.executemany("DELETE FROM page_links WHERE src = ?", [(src,) for src, _ in graph])
    conn.executemany(
        "INSERT OR IGNORE INTO page_links (src, dst) VALUES (?, ?)",
        [(src, dst) for src, dsts in graph for dst in dsts[:MAX_LINKS_PER_PAGE] if dst != src],
    )


def read_links(
    conn: sqlite3.Connection, url: str, inbound: bool, limit: int, offset: int
) -> tuple[int, list[tuple[str, int | None, int | None]]]:
    """Links into (``inbound``) or out of ``url``: how many in all, and a page of them as
    (url, state, status), the frontier's state and HTTP status when it knows the other end."""
    mine, other = ("dst", "src") if inbound else ("src", "dst")
    total = conn.execute(f"SELECT count(*) FROM page_links WHERE {mine} = ?", (url,)).fetchone()[0]
    rows = conn.execute(
        f"""SELECT l.{other}, p.state, p.status FROM page_links l
        LEFT JOIN pages p ON p.norm_url = l.{other}
        WHERE l.{mine} = ? ORDER BY l.{other} LIMIT ? OFFSET ?""",
        (url, limit, offset),
    ).fetchall()
    return int(total), [(str(u), s, st) for u, s, st in rows]
