"""Does the link graph's write cost the PostgreSQL server more as the graph grows? Two designs.

    uv run python bench/pg_links.py --pages 150000 --design merge btree

One writer writes each page's outgoing links (``--links`` a page, to random pages among
``--targets``; the pages in a random order, as a crawl reaches them) in transactions of
``--batch`` pages into a throwaway server (bench/pg.py: durable, PostgreSQL's defaults), with
each design in turn on a new database:

- ``merge``: the store's own ``write_links`` (store/postgres/writes.py): the rows, then their
  links in staged in ``page_links_in_new`` and merged into ``page_links_in`` in key order once
  they are also an eighth of the graph (store/link_graph.py);
- ``btree``: the rows alone, with a b-tree on ``page_links(dst_key)`` kept by the server as
  they are written (what links in were found through before the merge);
- ``direct``: the rows, and their links in written straight into ``page_links_in`` (its
  primary key the b-tree kept as they are written), nothing staged or merged (readers and
  deletes as they are).

Prints, for each ``--window`` of pages, the server's CPU a page (the backend's and the rest:
WAL writer, checkpointer, autovacuum), the WAL written a page and the transactions that merged:
a cost that grows shows as a rising column (bench/README.md, issue 33 on PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

import psycopg
from pg import empty, server, server_cpu

from litecrawl.store.postgres.connection import migrate_database
from litecrawl.store.postgres.writes import write_links
from litecrawl.store.sql import link_key


def _url(i: int) -> str:
    return f"http://127.0.0.1:8181/s{i // 1000:03d}/page{i}.html"


async def _direct_links(conn: psycopg.AsyncConnection, graph: list[tuple[str, list[str]]]) -> None:
    """The rows (a new graph), and their links in written at once."""
    await _btree_links(conn, graph)
    await conn.execute(
        "INSERT INTO page_links_in (dst_key, link_id) "
        "SELECT dst_key, id FROM page_links WHERE src = ANY(%s)",
        (sorted(src for src, _ in graph),),
    )


async def _btree_links(conn: psycopg.AsyncConnection, graph: list[tuple[str, list[str]]]) -> None:
    """The rows (a new graph: no page's links are there yet), as write_links reads them."""
    await conn.execute(
        "SELECT src, dst FROM page_links WHERE src = ANY(%s)", ([src for src, _ in graph],)
    )
    rows = [(src, dst, link_key(dst)) for src, dsts in graph for dst in dict.fromkeys(dsts)]
    await conn.execute(
        "INSERT INTO page_links (src, dst, dst_key) "
        "SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[])",
        tuple(list(column) for column in zip(*rows, strict=True)),
    )


async def measure(url: str, cluster: object, design: str, args: argparse.Namespace) -> None:
    empty(url)
    migrate_database(url)
    rng, order = random.Random(1), list(range(args.pages))
    random.Random(7).shuffle(order)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        if design == "btree":
            await conn.execute("CREATE INDEX idx_page_links_dst ON page_links(dst_key)")
        wal = "SELECT wal_bytes FROM pg_stat_wal"
        since, cpu, wal_at, merges = 0, server_cpu(cluster), 0, 0  # type: ignore[arg-type]
        wal_at = int((await (await conn.execute(wal)).fetchone() or [0])[0])
        for start in range(0, args.pages, args.batch):
            end = min(args.pages, start + args.batch)
            graph = [
                (_url(order[i]), [_url(rng.randrange(args.targets)) for _ in range(args.links)])
                for i in range(start, end)
            ]
            async with conn.transaction():
                if design == "merge":
                    await write_links(conn, graph)
                elif design == "direct":
                    await _direct_links(conn, graph)
                else:
                    await _btree_links(conn, graph)
            if design == "merge":
                cur = await conn.execute("SELECT min(link_id) FROM page_links_in_new")
                merges += (await cur.fetchone() or [0])[0] is None
            if end - since >= args.window or end == args.pages:
                now_cpu = server_cpu(cluster)  # type: ignore[arg-type]
                now_wal = int((await (await conn.execute(wal)).fetchone() or [0])[0])
                pages = end - since
                print(
                    f"{design:6} {end:8d} pages  server {1e6 * (now_cpu - cpu) / pages:7.1f} "
                    f"us/page  WAL {(now_wal - wal_at) / pages / 1024:6.1f} KiB/page"
                    + (f"  merges {merges}" if design == "merge" else ""),
                    flush=True,
                )
                since, cpu, wal_at, merges = end, now_cpu, now_wal, 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=150_000)
    parser.add_argument("--window", type=int, default=25_000)
    parser.add_argument("--targets", type=int, default=150_000, help="pages linked to")
    parser.add_argument("--links", type=int, default=18, help="links a page")
    parser.add_argument("--batch", type=int, default=64, help="pages a transaction")
    designs = ["merge", "btree", "direct"]
    parser.add_argument("--design", nargs="+", choices=designs, default=["merge"])
    args = parser.parse_args()
    started = time.monotonic()
    with server(None) as (url, cluster):
        for design in args.design:
            asyncio.run(measure(url, cluster, design, args))
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
