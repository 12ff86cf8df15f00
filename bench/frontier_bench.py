"""Frontier micro-benchmark (no network): claim + finalize + link insert, in URLs/s.

    uv run python bench/frontier_bench.py --rows 10000 1000000

For each size, fills a fresh SQLite frontier with that many never-crawled rows, then measures
rounds of: claim 64 due rows, finalize them with 20 new links each (the shape of a real crawl
page: ~30 hrefs, ~20 distinct on-site). Prints URLs/s for claim+finalize and the claim's query
plan, so the cost per URL at 10^6 rows can be compared with 10^4.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from pathlib import Path

from litecrawl.frontier.base import NewLink, PageUpdate
from litecrawl.store.sqlite.frontier import SQLiteFrontier, connect

BATCH = 64
LINKS_PER_PAGE = 20


async def create(path: Path) -> None:
    async with SQLiteFrontier(path):  # creates and migrates the schema
        pass


def fill(path: Path, rows: int) -> None:
    conn = connect(path)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO pages (norm_url, host, depth) VALUES (?, 'bench.test', ?)",
        ((f"http://bench.test/p{i}", i % 6) for i in range(rows)),
    )
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


async def measure(path: Path, rounds: int) -> tuple[float, float]:
    async with SQLiteFrontier(path) as frontier:
        next_link = 10**9
        claim_time = finalize_time = 0.0
        done = 0
        for _ in range(rounds):
            now = int(time.time())
            t0 = time.perf_counter()
            pages = await frontier.claim(BATCH, now)
            t1 = time.perf_counter()
            updates = []
            for page in pages:
                links = tuple(
                    NewLink(f"http://bench.test/n{next_link + k}", "bench.test", page.depth + 1)
                    for k in range(LINKS_PER_PAGE)
                )
                next_link += LINKS_PER_PAGE
                updates.append(
                    PageUpdate(
                        page.norm_url,
                        "bench.test",
                        now,
                        now + 86400,
                        "h" * 64,
                        page.depth,
                        200,
                        links=links,
                    )
                )
            await frontier.finalize(updates)
            t2 = time.perf_counter()
            claim_time += t1 - t0
            finalize_time += t2 - t1
            done += len(pages)
        return done / claim_time, done / finalize_time


def plan(path: Path) -> str:
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "EXPLAIN QUERY PLAN SELECT rowid FROM pages WHERE processing_time IS NULL "
        "AND (next_crawl_time IS NULL OR next_crawl_time <= 0) "
        "ORDER BY next_crawl_time, depth, score DESC LIMIT 64"
    ).fetchall()
    conn.close()
    return "; ".join(r[-1] for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=150)
    args = parser.parse_args()
    print(
        f"| rows | claim URLs/s | finalize (+{LINKS_PER_PAGE} links) URLs/s | "
        "claim+finalize URLs/s |"
    )
    print("|---|---|---|---|")
    for rows in args.rows:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.db"
            asyncio.run(create(path))
            fill(path, rows)
            claim, finalize = asyncio.run(measure(path, args.rounds))
            both = 1 / (1 / claim + 1 / finalize)
            print(f"| {rows:,} | {claim:,.0f} | {finalize:,.0f} | {both:,.0f} |")
            query_plan = plan(path)
    print(f"\nclaim query plan: {query_plan}")


if __name__ == "__main__":
    main()
