"""The analysis workers' memory over a crawl, by tree, alternated in one invocation.

    uv run python bench/worker_rss.py --seeds seeds.txt --runs 2 \
        --tree main=/path/to/main/.venv/bin/litecrawl --tree new=.venv/bin/litecrawl \
        -- --main-article

Each tree's ``litecrawl crawl`` runs on the seed URLs (one a line; ``--no-follow``, no delay, no
cache, a new database each run, then the extra flags) while the crawler's analysis workers
(``python -m litecrawl.index.pool``) are sampled from /proc every 0.25 s: their RSS summed,
its mean, its peak, its last sample, and the crawler's own peak. Session 15 measured glibc's
``malloc_trim`` after large pages with it on LilyPond's documentation (bench/README.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

INTERVAL = 0.25


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return found


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return 0.0


def _is_worker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"litecrawl.index.pool" in f.read()
    except OSError:
        return False


def crawl(binary: str, seeds: list[str], extra: list[str], db: Path) -> dict[str, float]:
    """One crawl by ``binary``, its workers sampled: MiB and seconds."""
    args = [binary, "crawl", *seeds, "--db", str(db), "--no-follow", "--delay-ms", "0"]
    process = subprocess.Popen(
        [*args, "--no-cache", "-q", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    workers: list[float] = []
    crawler: list[float] = []
    started = time.monotonic()
    while process.poll() is None:
        pids = [p for p in _children(process.pid) if _is_worker(p)]
        if pids:
            workers.append(sum(_rss_mib(p) for p in pids))
        crawler.append(_rss_mib(process.pid))
        time.sleep(INTERVAL)
    return {
        "workers_mean": round(statistics.mean(workers)) if workers else 0,
        "workers_peak": round(max(workers, default=0)),
        "workers_last": round(workers[-1]) if workers else 0,
        "crawler_peak": round(max(crawler, default=0)),
        "seconds": round(time.monotonic() - started, 1),
        "exit": process.returncode,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=Path, required=True, help="a file of URLs, one a line")
    parser.add_argument("--tree", action="append", required=True, help="NAME=litecrawl binary")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="more crawl flags (after --)")
    options = parser.parse_args()
    seeds = options.seeds.read_text().split()
    trees = dict(tree.split("=", 1) for tree in options.tree)
    with tempfile.TemporaryDirectory(prefix="lcbench-rss-") as scratch:
        for run in range(options.runs):
            for name, binary in trees.items():
                figures = crawl(binary, seeds, options.extra, Path(scratch) / f"{name}-{run}.db")
                print(name, figures, flush=True)


if __name__ == "__main__":
    main()
