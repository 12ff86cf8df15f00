"""What a finalize writes on SQLite, in the caller's transaction: the batch's new links, the
pages' rows, their link graph, a strategy's changes, sitemap and feed entries, and the index
documents. New rows are counted with ``total_changes``."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from litecrawl.store.queue import FinalizeResult, NewLink, PageUpdate
from litecrawl.store.sql import UPSERT_PAGE
from litecrawl.store.sqlite.index import remove_documents, write_documents
from litecrawl.store.sqlite.links import write_links
from litecrawl.store.strategies import StrategyWrites
from litecrawl.strategy.domain import partition_hash
from litecrawl.strategy.metadata import merge

__all__ = ["insert_links", "insert_listed", "link_row", "write_batch", "write_strategy"]

# A strategy's change to one URL: inserted if unknown (due now when queued, else parked), then
# only the values it changed are set; a parked URL that gets queued becomes due.
_INSERT_STRATEGY_LINK = """
INSERT OR IGNORE INTO pages (norm_url, host, depth, source, score, kind, state, meta,
                             next_crawl_time, part)
VALUES (:url, :host, :depth, 'link', coalesce(:score, 0.5), 'page', coalesce(:state, 0), :meta,
        CASE WHEN :queue THEN NULL ELSE :parked END, :part)
"""
_UPDATE_STRATEGY_LINK = """
UPDATE pages SET score = coalesce(:score, score), state = coalesce(:state, state),
  meta = coalesce(:meta, meta), part = CASE WHEN :meta IS NULL THEN part ELSE :part END,
  next_crawl_time = CASE WHEN :queue AND next_crawl_time = :parked THEN NULL
                    ELSE next_crawl_time END
WHERE norm_url = :url
"""
_DEEPER = 1 << 62  # deeper than any link
_INSERT_LINK = """
INSERT INTO pages (norm_url, host, depth, source, score, kind, part) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (norm_url) DO UPDATE SET depth = excluded.depth WHERE excluded.depth < pages.depth
"""


def write_batch(conn: sqlite3.Connection, updates: Sequence[PageUpdate]) -> FinalizeResult:
    """The whole batch: each page's new links (a new URL counts for the first page linking to
    it), the pages' rows, their outgoing links, strategy changes, documents; 404/410 pages leave
    the index (their frontier rows stay)."""
    listed = [link for u in updates for link in u.links if link.lastmod is not None]
    pages = [u.page_row() for u in updates]
    new_links = fresh_by_links = 0
    for new, update, page in zip(insert_links(conn, updates), updates, pages, strict=True):
        new_links += new
        if new and update.next_crawl_time_if_new_links is not None:
            update.fresh_by_links(page)
            fresh_by_links += 1
    if listed:
        new_links += insert_listed(conn, listed, max(u.last_crawl_time for u in updates))
    conn.executemany(UPSERT_PAGE, pages)
    graph = [(u.norm_url, u.links_out) for u in updates if u.links_out is not None]
    if graph:
        write_links(conn, graph)
    for update in updates:
        if update.strategy is not None:
            new_links += write_strategy(conn, update.strategy)
    documents = [u.document for u in updates if u.document is not None]
    if documents:
        write_documents(conn, documents)
    gone = [u.norm_url for u in updates if u.status in (404, 410)]
    if gone:
        remove_documents(conn, gone)
    return FinalizeResult(new_links, fresh_by_links)


def insert_links(conn: sqlite3.Connection, updates: Sequence[PageUpdate]) -> list[int]:
    """Each page's links into the frontier (unknown URLs inserted, known ones given a smaller
    depth), in order; for each page, how many rows its links inserted or changed."""
    counts = []
    # URL -> the smallest depth this batch has written it with: a later link to it at that depth
    # or deeper would change nothing (the upsert only lowers a depth), so it is not executed
    # (pages of a site link to the same navigation: on real sites most of a batch's links)
    written: dict[str, int] = {}
    for update in updates:
        rows = []
        for link in update.links:
            if link.lastmod is None and written.get(link.url, _DEEPER) > link.depth:
                written[link.url] = link.depth
                rows.append(link_row(link))
        before = conn.total_changes
        conn.executemany(_INSERT_LINK, rows)
        counts.append(conn.total_changes - before)
    return counts


def insert_listed(conn: sqlite3.Connection, links: Sequence[NewLink], now: int) -> int:
    """Insert sitemap/feed entries; a listed lastmod newer than our last fetch makes a known page
    due now. Returns how many were new."""
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO pages (norm_url, host, depth, source, score, kind, part, lastmod) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(*link_row(link), link.lastmod) for link in links],
    )
    new = conn.total_changes - before
    conn.executemany(
        "UPDATE pages SET lastmod = :lastmod, next_crawl_time = CASE "
        "  WHEN :lastmod > coalesce(last_crawl_time, 0) AND next_crawl_time > :now "
        "  THEN :now ELSE next_crawl_time END "
        "WHERE norm_url = :url AND :lastmod IS NOT NULL AND lastmod IS NOT :lastmod",
        [{"url": link.url, "lastmod": link.lastmod, "now": now} for link in links],
    )
    return new


def write_strategy(conn: sqlite3.Connection, writes: StrategyWrites) -> int:
    """A strategy's link writes and domain metadata; returns how many URLs were new."""
    rows = [change.row() for change in writes.links]
    before = conn.total_changes
    conn.executemany(_INSERT_STRATEGY_LINK, rows)
    new = conn.total_changes - before
    conn.executemany(_UPDATE_STRATEGY_LINK, rows)
    # read-modify-write: the write transaction (BEGIN IMMEDIATE) keeps other workers out
    for domain, base, mine in writes.domains:
        row = conn.execute("SELECT data FROM domain_metadata WHERE domain = ?", (domain,))
        stored = row.fetchone()
        data = merge(base, mine, stored[0] if stored else None)
        if data is None:
            conn.execute("DELETE FROM domain_metadata WHERE domain = ?", (domain,))
        else:
            conn.execute(
                "INSERT INTO domain_metadata (domain, data) VALUES (?, ?) "
                "ON CONFLICT (domain) DO UPDATE SET data = excluded.data",
                (domain, data),
            )
    return new


def link_row(link: NewLink) -> tuple[str, str, int, str, float, str, int]:
    return (
        link.url,
        link.host,
        link.depth,
        link.source,
        link.score,
        link.kind,
        partition_hash(link.url, host=link.host),
    )
