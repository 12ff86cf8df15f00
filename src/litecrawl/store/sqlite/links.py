"""The link graph in SQLite: each page's outgoing links, written with the page, read by serve."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from litecrawl.store.sql import MAX_LINKS_PER_PAGE, link_key

__all__ = ["read_links", "write_links"]


def write_links(conn: sqlite3.Connection, graph: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Replace the stored outgoing links of each page (inside the caller's transaction)."""
    conn.executemany("DELETE FROM page_links WHERE src = ?", [(src,) for src, _ in graph])
    rows = []
    for src, dsts in graph:
        unique = dict.fromkeys(dsts)
        unique.pop(src, None)
        rows += [(src, dst, link_key(dst)) for dst in list(unique)[:MAX_LINKS_PER_PAGE]]
    conn.executemany("INSERT INTO page_links (src, dst, dst_key) VALUES (?, ?, ?)", rows)


def read_links(
    conn: sqlite3.Connection, url: str, inbound: bool, limit: int, offset: int
) -> tuple[int, list[tuple[str, int | None, int | None]]]:
    """Links into (``inbound``) or out of ``url``: how many in all, and a page of them as
    (url, state, status), the frontier's state and HTTP status when it knows the other end."""
    params: tuple[object, ...]
    if inbound:
        other, where, params = "src", "l.dst_key = ? AND l.dst = ?", (link_key(url), url)
    else:
        other, where, params = "dst", "l.src = ?", (url,)
    total = conn.execute(f"SELECT count(*) FROM page_links l WHERE {where}", params).fetchone()
    rows = conn.execute(
        f"""SELECT l.{other}, p.state, p.status FROM page_links l
        LEFT JOIN pages p ON p.norm_url = l.{other}
        WHERE {where} ORDER BY l.{other} LIMIT ? OFFSET ?""",
        (*params, limit, offset),
    ).fetchall()
    return int(total[0]), [(str(u), s, st) for u, s, st in rows]
