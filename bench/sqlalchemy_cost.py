"""What SQLAlchemy Core would cost litecrawl's claim and finalize paths (issue 28's choice).

    uv run --with sqlalchemy python bench/sqlalchemy_cost.py --runs 5

The finalize's page upsert (``store/sql.py`` ``UPSERT_PAGE``, batches of 64 rows in a write
transaction) and a claim-sized read (64 due rows, by due time) on a SQLite file, run by sqlite3
as litecrawl runs them and by SQLAlchemy Core (the same statement through ``text()``, so only
the library's own cost differs), alternated; prints CPU microseconds per row (``process_time``,
which the machine's load moves far less than the wall clock). SQLAlchemy is not a dependency:
``--with`` brings it for this run only.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from litecrawl.store.sql import UPSERT_PAGE
from litecrawl.store.sqlite.migrations import migrate

BATCH, ROUNDS = 64, 150
CLAIM = (
    "SELECT norm_url, host, depth, next_crawl_time FROM pages WHERE next_crawl_time > :t "
    "ORDER BY next_crawl_time LIMIT 64"
)


def rows(r: int) -> list[dict[str, Any]]:
    return [
        {
            **dict.fromkeys(("error", "etag", "last_modified", "kind", "checks", "changes")),
            **dict.fromkeys(("change_rate", "change_history")),
            "norm_url": f"http://a.test/{r}/{i}",
            "host": "a.test",
            "last_crawl_time": 1000 + r,
            "next_crawl_time": 5000 + r * BATCH + i,
            "content_hash": "h",
            "depth": 1,
            "state": 2,
            "status": 200,
            "content_type": "text/html",
            "response_ms": 12,
            "part": 7,
            "recheck_lastmod": False,
        }
        for i in range(BATCH)
    ]


def fresh() -> str:
    path = os.path.join(tempfile.mkdtemp(prefix="lcbench-sa-"), "x.db")
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    return path


def by_sqlite3(path: str) -> tuple[float, float]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous=NORMAL")
    start = time.process_time()
    for r in range(ROUNDS):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(UPSERT_PAGE, rows(r))
        conn.execute("COMMIT")
    upsert = time.process_time() - start
    start = time.process_time()
    for r in range(ROUNDS):
        conn.execute(CLAIM, {"t": 5000 + r * BATCH}).fetchall()
    return upsert, time.process_time() - start


def by_sqlalchemy(path: str) -> tuple[float, float]:
    engine = sa.create_engine(f"sqlite:///{path}")
    upsert_stmt, claim_stmt = sa.text(UPSERT_PAGE), sa.text(CLAIM)
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA synchronous=NORMAL")
        conn.commit()
        start = time.process_time()
        for r in range(ROUNDS):
            conn.execute(upsert_stmt, rows(r))
            conn.commit()
        upsert = time.process_time() - start
        start = time.process_time()
        for r in range(ROUNDS):
            conn.execute(claim_stmt, {"t": 5000 + r * BATCH}).fetchall()
        return upsert, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ways: dict[str, Callable[[str], tuple[float, float]]] = {
        "sqlite3 (litecrawl)": by_sqlite3,
        f"SQLAlchemy {sa.__version__} Core, text()": by_sqlalchemy,
    }
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for _ in range(args.runs):  # alternated: the machine's drift hits both alike
        for name, way in ways.items():
            found[name].append(way(fresh()))
    per_row = 1e6 / (ROUNDS * BATCH)
    print("| way | page upsert, CPU us per row | claim-sized read, CPU us per row |")
    print("|---|---|---|")
    for name, runs in found.items():
        upsert = statistics.median(u for u, _ in runs) * per_row
        claim = statistics.median(c for _, c in runs) * per_row
        print(f"| {name} | {upsert:.1f} | {claim:.1f} |")


if __name__ == "__main__":
    main()
