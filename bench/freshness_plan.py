"""What the freshness policy's budget sharing costs a crawl at 10^6 pages (issue 30).

    uv run python bench/freshness_plan.py [--rows 10000 1000000] [--hosts 1000]

A SQLite frontier of N crawled pages on H hosts, each with a change rate (log-uniform over four
orders of magnitude). Measured, in one process:

- ``read``: ``change_rates()``, every crawled page's (host, rate), and the histogram built from it
  (``Planner.refresh``, which also solves the allocation): what every worker paid every minute
  before, and pays now at most hourly (and never more than 1% of the time);
- ``solve``: the allocation solved again from the histogram: every minute now, or less often
  when it takes more than 1% of the time;
- ``moved``: a written page's move in the histogram, with its stored rate read from its record
  (``Planner.rate``): what each page written under the freshness policy adds;
- ``check``: a re-fetched page's check (``Planner.observe``: its runs after the check) and the
  decision of its next visit on its posterior (``Planner.next_visit``): what each re-fetch adds;
- ``learn``: the prior's EM step over every page's record (``Learning.read``, a record of four
  runs a page), once every new_interval: at a process's first read, the steps until it settles.

``--records DIR``: instead, the records read as the crawler reads them, from a frontier of N
pages each with its own stored record (kept in DIR, filled once), in a fresh child process
each: the store's read of every page's record and the prior's first EM step, the child's CPU
and its peak memory over what it held before. Run it with another tree's ``src/`` on
PYTHONPATH to measure that tree (the read all at once before session 14, a batch at a time since).

All in CPU seconds of this process (the SQLite read runs in a thread of it): the wall clock means
little on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from litecrawl.schedule import Schedule
from litecrawl.schedule.planner import FULL_SEC, FULL_SHARE, REFRESH_SEC, Planner
from litecrawl.store.backends import open_frontier
from litecrawl.store.sqlite.connection import connect

DAY = 86400.0


def fill(location: str, rows: int, hosts: int) -> None:
    rng = random.Random(1)
    conn = connect(location)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO pages (norm_url, host, depth, last_crawl_time, next_crawl_time, change_rate)"
        " VALUES (?, ?, 1, 1, 2, ?)",
        (
            (f"http://h{i % hosts}.test/p{i}", f"h{i % hosts}.test", 10 ** rng.uniform(-3, 1) / DAY)
            for i in range(rows)
        ),
    )
    conn.execute("COMMIT")
    conn.close()


async def measure(location: str, rows: int, hosts: int) -> dict[str, float]:
    planner = Planner(Schedule(policy="freshness", budget=rows / 5 / DAY, host_budget=2.0))
    async with open_frontier(location) as frontier:
        t0 = time.process_time()
        rates = await frontier.change_rates()
        t1 = time.process_time()
    planner.refresh(rates, now=0.0, took=t1 - t0)
    t2 = time.process_time()
    solves = []
    for _ in range(5):
        s0 = time.process_time()
        planner.solve(now=0.0)
        solves.append(time.process_time() - s0)
    # a page's record after some checks, as the finalize stores it
    change = planner.observe(None, None, 0, "a")
    for k in range(1, 12):
        change = planner.observe(change.change_history, (k - 1) * 3600, k * 3600, f"v{k % 3}")
    record = change.change_history
    n = 20000
    m0 = time.process_time()
    for i in range(n):
        planner.moved(f"h{i % hosts}.test", planner.rate(record), 10 ** (i % 7 - 3) / DAY)
    moved = (time.process_time() - m0) / n
    c0 = time.process_time()
    for k in range(12, 12 + 2000):
        change = planner.observe(change.change_history, (k - 1) * 3600, k * 3600, f"v{k % 3}")
        planner.next_visit(k * 3600, (k - 1) * 3600, k * 3600, False, "h0.test",
                           change.change_rate, change.change_history)  # fmt: skip
    check = (time.process_time() - c0) / 2000
    records = [(change.change_history, 0)] * rows
    learning = planner.learned
    l0 = time.process_time()
    learning.read(records)  # the first read: steps until the prior settles
    first = time.process_time() - l0
    l0 = time.process_time()
    learning.read(records)
    learn = time.process_time() - l0
    return {
        "read": t1 - t0,
        "bin": t2 - t1,
        "solve": sorted(solves)[len(solves) // 2],
        "moved": moved,
        "groups": float(len(planner._bins)),
        "check": check,
        "learn": learn,
        "first": first,
        "steps": float(learning.prior.steps - 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000, 1_000_000])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--records", type=Path, help="measure the records read (databases kept here)")
    ap.add_argument("--records-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.records_child:
        print(json.dumps(asyncio.run(read_records(args.records_child))))
        return
    if args.records:
        records_table(args.rows, args.records)
        return
    print(
        "| pages | hosts | histogram groups | read all rates (s) | build histogram + solve (s) "
        "| solve from histogram (ms) | page moved (µs) | before: share of each minute "
        "| now: share of the time | re-fetch's check + decision (µs) | prior's EM step (s) "
        "| first read's steps (s, steps) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for rows in args.rows:
        with tempfile.TemporaryDirectory() as tmp:
            location = str(Path(tmp) / "plan.db")
            asyncio.run(_create(location))
            fill(location, rows, args.hosts)
            r = asyncio.run(measure(location, rows, args.hosts))
        full = r["read"] + r["bin"]
        every = max(FULL_SEC, r["read"] / FULL_SHARE)
        before = full / REFRESH_SEC
        now = full / every + r["solve"] / max(REFRESH_SEC, r["solve"] / FULL_SHARE)
        print(
            f"| {rows:,} | {args.hosts:,} | {r['groups']:,.0f} | {r['read']:.2f} "
            f"| {r['bin']:.2f} | {r['solve'] * 1000:.1f} | {r['moved'] * 1e6:.0f} "
            f"| {before:.1%} | {now:.2%} | {r['check'] * 1e6:.0f} | {r['learn']:.2f} "
            f"| {r['first']:.1f}, {r['steps']:.0f} |",
            flush=True,
        )


def fill_records(location: str, rows: int) -> None:
    """N crawled pages, each with a change record of four runs of its own numbers."""
    from litecrawl.schedule.record import Record, Run, encode

    rng = random.Random(2)

    def record() -> str:
        runs = tuple(
            Run(
                -rng.uniform(0, 9),
                rng.randint(0, 9),
                rng.uniform(0, 5e6),
                rng.randint(0, 9),
                rng.uniform(0, 5e6),
            )
            for _ in range(4)
        )
        rate = rng.uniform(1e-8, 1e-4)
        digest = f"{rng.getrandbits(256):064x}"
        return encode(Record(20, 9, runs, rng.uniform(0.1, 9), 86400.0, digest, rate))

    conn = connect(location)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO pages (norm_url, host, depth, last_crawl_time, next_crawl_time,"
        " change_rate, change_history) VALUES (?, ?, 1, ?, 2, 1e-5, ?)",
        ((f"http://h{i % 1000}.test/p{i}", f"h{i % 1000}.test", 1 + i, record())
         for i in range(rows)),
    )  # fmt: skip
    conn.execute("COMMIT")
    conn.close()


async def read_records(location: str) -> dict[str, float]:
    """The crawler's read of every page's record and the prior's first EM step (this tree's
    way: a batch at a time when the store pages them, else all at once)."""
    planner = Planner(Schedule(policy="freshness", budget=1.0))
    assert planner.learned.grid  # numpy and the grid loaded before the start: not the read's
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    async with open_frontier(location) as frontier:
        paged = hasattr(planner, "records_read")
        if paged:
            records, after = planner.records_read(), ""
            while batch := await frontier.change_records(after, 10_000):  # type: ignore[call-arg]
                after = batch[-1][0]
                records.add((text, last) for _, text, last in batch)
        else:
            records = await frontier.change_records()  # type: ignore[call-arg,assignment]
    planner.learned.read(records)
    cpu = time.process_time() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"cpu": cpu, "peak_mib": (peak - base) / 1024, "paged": float(paged)}


def records_table(rows_list: list[int], keep: Path) -> None:
    print(
        "| pages | read | records read + first EM step (CPU s) | peak memory over the start (MiB) |"
    )
    print("|---|---|---|---|")
    keep.mkdir(parents=True, exist_ok=True)
    for rows in rows_list:
        location = str(keep / f"records{rows}.db")
        if not Path(location).exists():
            asyncio.run(_create(location))
            fill_records(location, rows)
        out = subprocess.run(
            [sys.executable, __file__, "--records-child", location],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        r = json.loads(out.stdout)
        how = "a batch at a time" if r["paged"] else "all at once"
        print(f"| {rows:,} | {how} | {r['cpu']:.1f} | {r['peak_mib']:.0f} |", flush=True)


async def _create(location: str) -> None:
    async with open_frontier(location):
        pass


if __name__ == "__main__":
    main()
