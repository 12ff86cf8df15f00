"""Frontier micro-benchmark (no network): claim + finalize + link insert, in URLs/s.

    uv run python bench/frontier_bench.py --rows 10000 1000000 [--backend sqlite postgres]
                                          [--pg-url postgresql://...] [--workers 1 8]

For each backend and size, fills a fresh frontier with that many never-crawled rows, then
measures rounds of: claim 64 due rows, finalize them with 20 new links each (the shape of a real
crawl page: ~30 hrefs, ~20 distinct on-site). Prints URLs/s for claim+finalize and the claim's
query plan, so the cost per URL at 10^6 rows can be compared with 10^4. PostgreSQL: a throwaway
server with its durable defaults (fsync, synchronous commit) unless ``--pg-url`` is given.
``--workers N ...``: also N processes claiming and finalizing at once on a fresh frontier of the
same size (URLs/s on the wall clock, all of them together). ``--hosts H``: the rows spread over H
hosts, claimed as ``litecrawl crawl`` claims them (passing over hosts held back, leasing host
slots, given back after each finalize) instead of the plain claim.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import multiprocessing
import sqlite3
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import psycopg
from pg import empty, server

from litecrawl.lease import current_identity
from litecrawl.store.backends import open_frontier
from litecrawl.store.queue import HostRules, NewLink, PageUpdate
from litecrawl.store.sqlite.connection import connect

BATCH = 64
LINKS_PER_PAGE = 20
HOSTS = 1  # --hosts: bench0.test .. bench{H-1}.test; more than one: claims that know hosts
# what a crawl with --concurrency 64 --per-host 4 --delay-ms 0 asks (PoliteGate.host_rules)
RULES = HostRules(per_host=4, share=64, new_host_room=6)
_CLAIM_WHERE = (
    "processing_time IS NULL AND (next_crawl_time IS NULL OR next_crawl_time <= 0) "
    "ORDER BY next_crawl_time{nulls}, depth, score DESC LIMIT 64"
)


async def create(location: str) -> None:
    async with open_frontier(location):  # creates and migrates the schema
        pass


def _host(i: int) -> str:
    return "bench.test" if HOSTS == 1 else f"bench{i % HOSTS}.test"


def fill(location: str, rows: int) -> None:
    if location.startswith("postgresql://"):
        host = "'bench.test'" if HOSTS == 1 else f"'bench' || (i %% {HOSTS}) || '.test'"
        with psycopg.connect(location, autocommit=True) as pg:
            pg.execute(
                f"INSERT INTO pages (norm_url, host, depth) SELECT 'http://' || {host} || '/p'"
                f" || i, {host}, i %% 6 FROM generate_series(0, %s) AS i".encode(),
                (rows - 1,),
            )
            pg.execute("VACUUM ANALYZE pages")
        return
    conn = connect(location)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO pages (norm_url, host, depth) VALUES (?, ?, ?)",
        ((f"http://{_host(i)}/p{i}", _host(i), i % 6) for i in range(rows)),
    )
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


async def measure(location: str, rounds: int, worker: int = 0) -> tuple[float, float]:
    async with open_frontier(location) as frontier:
        await frontier.register_worker(current_identity("bench"), time.time())  # leases name it
        next_link = 10**9 * (worker + 1)  # each worker's new links are its own
        claim_time = finalize_time = 0.0
        done = 0
        for _ in range(rounds):
            now = int(time.time())
            t0 = time.perf_counter()
            rules = RULES if HOSTS > 1 else None
            pages = await frontier.claim(BATCH, now, hosts=rules)
            t1 = time.perf_counter()
            updates = []
            for page in pages:
                host = page.norm_url.split("/")[2]
                links = tuple(
                    NewLink(f"http://{host}/n{next_link + k}", host, page.depth + 1)
                    for k in range(LINKS_PER_PAGE)
                )
                next_link += LINKS_PER_PAGE
                updates.append(
                    PageUpdate(
                        page.norm_url,
                        host,
                        now,
                        now + 86400,
                        "h" * 64,
                        page.depth,
                        200,
                        links=links,
                    )
                )
            await frontier.finalize(updates)
            if rules is not None:  # nothing in flight any more: the leases go back
                await frontier.release_hosts(list(frontier.host_slots))
            t2 = time.perf_counter()
            claim_time += t1 - t0
            finalize_time += t2 - t1
            done += len(pages)
        return done / claim_time, done / finalize_time


def _one_worker(location: str, rounds: int, worker: int, hosts: int = 1) -> int:
    """A worker process's share: claim + finalize rounds; returns the URLs it finalized."""
    global HOSTS
    HOSTS = hosts
    claim, finalize = asyncio.run(measure(location, rounds, worker))
    del claim, finalize
    return rounds * BATCH


def together(location: str, rounds: int, workers: int) -> float:
    """URLs/s claimed and finalized by ``workers`` processes at once (wall clock)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        list(pool.map(_ready, range(workers)))  # the processes are up before the clock starts
        began = time.perf_counter()
        done = sum(
            pool.map(
                _one_worker,
                [location] * workers,
                [rounds] * workers,
                range(workers),
                [HOSTS] * workers,
            )
        )
        return done / (time.perf_counter() - began)


def _ready(_: int) -> None:
    importlib.import_module("litecrawl.store.postgres.frontier")  # paid before the clock


def plan(location: str) -> str:
    if location.startswith("postgresql://"):
        with psycopg.connect(location) as pg:
            rows = pg.execute(
                "EXPLAIN SELECT norm_url FROM pages WHERE "
                + _CLAIM_WHERE.format(nulls=" NULLS FIRST")
                + " FOR UPDATE SKIP LOCKED"
            ).fetchall()
        return "\n".join(r[0] for r in rows)
    conn = sqlite3.connect(location)
    rows = conn.execute(
        "EXPLAIN QUERY PLAN SELECT rowid FROM pages WHERE " + _CLAIM_WHERE.format(nulls="")
    ).fetchall()
    conn.close()
    return "; ".join(r[-1] for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument(
        "--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"]
    )
    parser.add_argument("--pg-url", help="a PostgreSQL database to use (emptied!)")
    parser.add_argument(
        "--workers", type=int, nargs="*", default=[], help="also N processes at once (URLs/s)"
    )
    parser.add_argument("--hosts", type=int, default=1, help="spread the rows over H hosts")
    args = parser.parse_args()
    global HOSTS
    HOSTS = args.hosts
    print(
        f"| backend | rows | claim URLs/s | finalize (+{LINKS_PER_PAGE} links) URLs/s | "
        "claim+finalize URLs/s |"
    )
    print("|---|---|---|---|---|")
    plans: dict[str, str] = {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        server(args.pg_url if "postgres" in args.backend else "unused") as (pg_url, _),
    ):
        for rows in args.rows:
            for backend in args.backend:
                if backend == "postgres":
                    empty(pg_url)
                    location = pg_url
                else:
                    location = str(Path(tmp) / f"bench-{rows}.db")
                asyncio.run(create(location))
                fill(location, rows)
                claim, finalize = asyncio.run(measure(location, args.rounds))
                both = 1 / (1 / claim + 1 / finalize)
                print(
                    f"| {backend} | {rows:,} | {claim:,.0f} | {finalize:,.0f} | {both:,.0f} |",
                    flush=True,
                )
                plans[f"{backend} at {rows:,} rows"] = plan(location)
                for workers in args.workers:
                    if backend == "postgres":
                        empty(pg_url)
                    else:
                        Path(location).unlink()
                    asyncio.run(create(location))
                    fill(location, rows)
                    rate = together(location, args.rounds, workers)
                    print(
                        f"| {backend}, {workers} workers | {rows:,} | | | {rate:,.0f} |",
                        flush=True,
                    )
    for name, text in plans.items():
        print(f"\nclaim query plan, {name}:\n{text}")


if __name__ == "__main__":
    main()
