"""What a finalize writes on PostgreSQL: the batch's new links, the pages' rows, their link
graph, a strategy's changes, sitemap and feed entries, and the index documents.

The statements are the SQLite store's (``store/sqlite/writes.py``) in PostgreSQL's dialect:
batches as arrays (``unnest``) instead of ``executemany``, new rows counted with ``RETURNING
(xmax = 0)`` where SQLite counts ``total_changes``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from litecrawl.index.document import IndexDocument
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.link_graph import (
    MERGE_EVERY,
    MERGE_POSTGRES,
    NEW_IN_LINKS,
    STAGED,
    delete_links,
    merge_due,
)
from litecrawl.store.postgres.connection import Conn
from litecrawl.store.postgres.index import remove_documents, write_documents
from litecrawl.store.queue import FinalizeResult, NewLink, PageUpdate
from litecrawl.store.sql import UPSERT_PAGE, changed_links, page_sets
from litecrawl.store.strategies import StrategyWrites
from litecrawl.strategy.domain import partition_hash
from litecrawl.strategy.metadata import merge

__all__ = [
    "Batch",
    "columns",
    "insert_links",
    "insert_listed",
    "write_batch",
    "write_links",
    "write_strategy",
]

_NEW_LINKS = """
INSERT INTO pages (norm_url, host, depth, source, score, kind, part)
SELECT * FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[], %s::float8[], %s::text[],
                     %s::bigint[])
ON CONFLICT (norm_url) DO UPDATE SET depth = excluded.depth WHERE excluded.depth < pages.depth
RETURNING norm_url, (xmax = 0)
"""
_UPSERT_PAGE = POSTGRES.sql(UPSERT_PAGE)
# The batch's processed pages in one statement (their rows exist: each was claimed), the new
# values as one array per column; a row it did not find is upserted alone (_UPSERT_PAGE). One
# statement for the batch instead of one a row: ~15-25 us of the server's CPU a page less
# (bench/README.md).
_PAGE_VALUES = {
    "norm_url": "text",
    "last_crawl_time": "bigint",
    "next_crawl_time": "bigint",
    "content_hash": "text",
    "state": "int",
    "status": "int",
    "error": "text",
    "content_type": "text",
    "etag": "text",
    "last_modified": "text",
    "recheck_lastmod": "bool",
    "response_ms": "int",
    "kind": "text",
    "checks": "int",
    "changes": "int",
    "change_rate": "float8",
    "change_history": "text",
    "recrawl_interval": "bigint",
}
_ARRAYS = ", ".join(f"%s::{kind}[]" for kind in _PAGE_VALUES.values())
_UPDATE_PAGES = f"""
UPDATE pages SET{page_sets(lambda column: f"v.{column}")}
FROM unnest({_ARRAYS}) AS v({", ".join(_PAGE_VALUES)})
WHERE pages.norm_url = v.norm_url
RETURNING pages.norm_url
""".encode()


@dataclass(slots=True)
class Batch:
    """One finalize's page updates, sorted into what each statement writes."""

    updates: Sequence[PageUpdate]
    pages: list[dict[str, Any]]  # the pages rows
    links: list[NewLink]  # followed links, one per URL at its smallest depth, in key order
    first_seen_on: dict[str, int]  # each link's first page in the batch
    listed: list[NewLink]  # sitemap and feed entries (with a lastmod)
    documents: list[IndexDocument]
    gone: list[str]  # 404/410: the page leaves the index (its frontier row stays)
    graph: list[tuple[str, Sequence[str]]]  # the outgoing links of the pages read this time
    now: int

    @classmethod
    def of(cls, updates: Sequence[PageUpdate]) -> Batch:
        links, first_seen_on = _batch_links(updates)
        links.sort(key=lambda link: link.url)
        return cls(
            updates=updates,
            pages=[u.page_row() for u in updates],
            links=links,
            first_seen_on=first_seen_on,
            listed=[link for u in updates for link in u.links if link.lastmod is not None],
            documents=[u.document for u in updates if u.document is not None],
            gone=[u.norm_url for u in updates if u.status in (404, 410)],
            graph=[(u.norm_url, u.links_out) for u in updates if u.links_out is not None],
            now=max(u.last_crawl_time for u in updates),
        )


async def write_batch(
    conn: Conn, batch: Batch, inserted: Sequence[tuple[str, bool]]
) -> FinalizeResult:
    """Everything of the batch but its links (``inserted``: what :func:`insert_links` said)."""
    new_links = fresh_by_links = 0
    if inserted:
        # a new URL counts for the first page of the batch that links to it, as when the pages
        # are written one by one
        new = Counter(batch.first_seen_on[url] for url, is_new in inserted if is_new)
        new_links = sum(new.values())
        for i, update in enumerate(batch.updates):
            if new[i] and update.next_crawl_time_if_new_links is not None:
                update.fresh_by_links(batch.pages[i])
                fresh_by_links += 1
    if batch.listed:
        new_links += await insert_listed(conn, batch.listed, batch.now)
    await _write_pages(conn, batch.pages)
    if batch.graph:
        await write_links(conn, batch.graph)
    for update in batch.updates:
        if update.strategy is not None:
            new_links += await write_strategy(conn, update.strategy, domains=False)
    if batch.documents:
        await write_documents(conn, batch.documents)
    if batch.gone:
        await remove_documents(conn, batch.gone)
    # domain rows last and in one order (sorted by domain, each domain's changes in page
    # order): a worker holding one waits for no other row, so two workers cannot deadlock
    changes = [c for u in batch.updates if u.strategy is not None for c in u.strategy.domains]
    if changes:
        async with conn.cursor() as cur:
            for domain, base, mine in sorted(changes, key=lambda c: c[0]):
                await _merge_domain(cur, domain, base, mine)
    return FinalizeResult(new_links, fresh_by_links)


async def _write_pages(conn: Conn, pages: list[dict[str, Any]]) -> None:
    """The processed pages' rows: updated in one statement, a row not found upserted (a URL
    twice in the batch: each row in turn, as the upsert is written for)."""
    rest = pages
    if len({page["norm_url"] for page in pages}) == len(pages):
        cur = await conn.execute(
            _UPDATE_PAGES, [[page[column] for page in pages] for column in _PAGE_VALUES]
        )
        updated = {url for (url,) in await cur.fetchall()}
        rest = [page for page in pages if page["norm_url"] not in updated]
    if rest:
        async with conn.cursor() as cur:
            await cur.executemany(_UPSERT_PAGE, rest)


# A strategy's change to one URL, as the SQLite store's: inserted if unknown (due now when
# queued, else parked), then only the values it changed are set.
_INSERT_STRATEGY_LINK = """
INSERT INTO pages (norm_url, host, depth, source, score, kind, state, meta, next_crawl_time,
                   part)
VALUES (%(url)s, %(host)s, %(depth)s, 'link', coalesce(%(score)s, 0.5), 'page',
        coalesce(%(state)s, 0), %(meta)s, CASE WHEN %(queue)s THEN NULL ELSE %(parked)s END,
        %(part)s)
ON CONFLICT (norm_url) DO NOTHING
"""
_UPDATE_STRATEGY_LINK = """
UPDATE pages SET score = coalesce(%(score)s, score), state = coalesce(%(state)s, state),
  meta = coalesce(%(meta)s, meta),
  part = CASE WHEN %(meta)s::text IS NULL THEN part ELSE %(part)s END,
  next_crawl_time = CASE WHEN %(queue)s AND next_crawl_time = %(parked)s THEN NULL
                    ELSE next_crawl_time END
WHERE norm_url = %(url)s
"""


async def write_strategy(conn: Conn, writes: StrategyWrites, domains: bool = True) -> int:
    """A strategy's link writes and (``domains``) domain metadata; returns how many URLs were
    new."""
    rows = [change.row() for change in writes.links]
    new = 0
    async with conn.cursor() as cur:
        if rows:
            await cur.executemany(_INSERT_STRATEGY_LINK, rows)
            new = max(cur.rowcount, 0)  # summed over the rows (psycopg >= 3.1)
            await cur.executemany(_UPDATE_STRATEGY_LINK, rows)
        for domain, base, mine in writes.domains if domains else ():
            await _merge_domain(cur, domain, base, mine)
    return new


async def _merge_domain(
    cur: psycopg.AsyncCursor[Any], domain: str, base: str | None, mine: str | None
) -> None:
    """Read-modify-write of one domain's metadata, the row locked: a worker's change merges
    into what others wrote (``merge``) instead of overwriting it."""
    while True:
        await cur.execute(
            "SELECT data FROM domain_metadata WHERE domain = %s FOR UPDATE", (domain,)
        )
        stored = await cur.fetchone()
        data = merge(base, mine, stored[0] if stored else None)
        if stored is not None:
            if data is None:
                await cur.execute("DELETE FROM domain_metadata WHERE domain = %s", (domain,))
            else:
                await cur.execute(
                    "UPDATE domain_metadata SET data = %s WHERE domain = %s", (data, domain)
                )
            return
        if data is None:
            return
        # no row to lock: insert, or (another worker inserted it first) merge into theirs
        await cur.execute(
            "INSERT INTO domain_metadata (domain, data) VALUES (%s, %s) "
            "ON CONFLICT (domain) DO NOTHING",
            (domain, data),
        )
        if cur.rowcount == 1:
            return


async def insert_listed(conn: Conn, links: Sequence[NewLink], now: int) -> int:
    """Sitemap/feed entries (as the SQLite store's ``_insert_listed``): new ones inserted; a
    listed lastmod newer than our last fetch makes a known page due now."""
    cols = columns(links)
    cur = await conn.execute(
        "INSERT INTO pages (norm_url, host, depth, source, score, kind, part, lastmod) "
        "SELECT * FROM unnest(%s::text[], %s::text[], %s::int[], %s::text[], %s::float8[],"
        " %s::text[], %s::bigint[], %s::bigint[]) ON CONFLICT (norm_url) DO NOTHING",
        (*cols, [link.lastmod for link in links]),
    )
    new = max(cur.rowcount, 0)
    await conn.execute(
        "UPDATE pages SET lastmod = l.lastmod, next_crawl_time = CASE "
        "  WHEN l.lastmod > coalesce(pages.last_crawl_time, 0) AND pages.next_crawl_time > %s "
        "  THEN %s ELSE pages.next_crawl_time END "
        "FROM unnest(%s::text[], %s::bigint[]) AS l(url, lastmod) "
        "WHERE pages.norm_url = l.url AND l.lastmod IS NOT NULL "
        "AND pages.lastmod IS DISTINCT FROM l.lastmod",
        (now, now, cols[0], [link.lastmod for link in links]),
    )
    return new


def _batch_links(updates: Sequence[PageUpdate]) -> tuple[list[NewLink], dict[str, int]]:
    """The batch's followed links, one per URL at its smallest depth, and for each URL the
    index of the first page that links to it."""
    kept: dict[str, NewLink] = {}
    first_seen_on: dict[str, int] = {}
    for i, update in enumerate(updates):
        for link in update.links:
            if link.lastmod is not None:
                continue
            old = kept.get(link.url)
            if old is None:
                kept[link.url] = link
                first_seen_on[link.url] = i
            elif link.depth < old.depth:
                kept[link.url] = link
    return list(kept.values()), first_seen_on


_DELETE_LINKS = [d.encode() for d in delete_links("= ANY(%s)")]
_NEW_IN_LINKS = NEW_IN_LINKS.format(member="= ANY(%s)").encode()


async def write_links(
    conn: Conn, graph: Sequence[tuple[str, Sequence[str]]], merge_every: int = MERGE_EVERY
) -> None:
    """Replace the stored outgoing links of each page whose links changed (as the SQLite
    store's ``write_links``), merging the links in as often."""
    cur = await conn.execute(
        b"SELECT src, dst FROM page_links WHERE src = ANY(%s)", ([src for src, _ in graph],)
    )
    gone, rows = changed_links(graph, await cur.fetchall())
    for statement in _DELETE_LINKS if gone else []:
        await conn.execute(statement, (gone,))
    if not rows:
        return
    await conn.execute(
        b"INSERT INTO page_links (src, dst, dst_key) "
        b"SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[])",
        tuple(list(column) for column in zip(*rows, strict=True)),
    )
    await conn.execute(_NEW_IN_LINKS, (sorted({src for src, _, _ in rows}),))
    staged = await (await conn.execute(STAGED.encode())).fetchone()
    if staged is not None and merge_due(staged[0], staged[1], merge_every):
        await conn.execute(MERGE_POSTGRES.encode())


async def insert_links(conn: Conn, links: Sequence[NewLink]) -> list[tuple[str, bool]]:
    """Links into the frontier, one statement each for the batch (a round trip per page cost
    3x): URLs not yet known inserted, with whether this worker's statement was the one that
    inserted them; known URLs only get a smaller depth. Known URLs are found by a plain read
    first: an upsert of a row waits for any other transaction writing it, and other workers'
    finalizes are writing the rows of their pages (most of which some page links to); with 2
    workers that wait was 27 s of a 50 s crawl."""
    cur = await conn.execute(
        b"SELECT norm_url, depth FROM pages WHERE norm_url = ANY(%s)", ([k.url for k in links],)
    )
    known: dict[str, int] = dict(await cur.fetchall())
    shallower = [k for k in links if k.url in known and k.depth < known[k.url]]
    if shallower:
        await conn.execute(
            b"UPDATE pages SET depth = v.depth FROM unnest(%s::text[], %s::int[]) AS v(url, depth)"
            b" WHERE pages.norm_url = v.url AND v.depth < pages.depth",
            ([k.url for k in shallower], [k.depth for k in shallower]),
        )
    unknown = [k for k in links if k.url not in known]
    if not unknown:
        return []
    cur = await conn.execute(_NEW_LINKS.encode(), columns(unknown))
    return [(url, bool(is_new)) for url, is_new in await cur.fetchall()]


def columns(links: Sequence[NewLink]) -> tuple[list[Any], ...]:
    """Links as one array per column (what ``unnest`` takes)."""
    return (
        [link.url for link in links],
        [link.host for link in links],
        [link.depth for link in links],
        [link.source for link in links],
        [link.score for link in links],
        [link.kind for link in links],
        [partition_hash(link.url, host=link.host) for link in links],
    )
