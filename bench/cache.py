"""The disk cache's cost per page, in both layouts (``[cache] layout``), alternated in one run.

    uv run python bench/cache.py --pages 5000 --rounds 2 [--body-bytes 200]

For each layout: store N pages of a small HTML body (the time per store), read back every
tenth, and the disk the directory takes (``du``: what the file system really uses, blocks
included). Then the event loop: N stores from 8 concurrent tasks (the crawl's default
concurrency), called in the loop (as the crawl did before) and through ``asyncio.to_thread`` (as
``fetch_with_policy`` does now), while a ticker measures how long the loop could not run
anything else (lag beyond 1 ms, summed, per page, and the worst single stall).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from litecrawl.cache import CacheLayout, open_cache
from litecrawl.fetch.base import FetchResult

TASKS = 8
HEADERS = {
    "content-type": "text/html; charset=utf-8",
    "etag": '"abc"',
    "last-modified": "Wed, 25 Nov 2026 10:00:00 GMT",
    "date": "Wed, 25 Nov 2026 10:00:00 GMT",
    "server": "nginx",
}


def disk_bytes(path: Path) -> int:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) * 1024


def measure(root: Path, layout: CacheLayout, pages: int, body: bytes) -> tuple[float, float, int]:
    directory = root / layout
    shutil.rmtree(directory, ignore_errors=True)
    cache = open_cache(directory, layout)
    started = time.perf_counter()
    for i in range(pages):
        url = f"http://example.com/p/{i}"
        cache.store(url, FetchResult(url, url, 200, HEADERS, body), "hash")
    store = (time.perf_counter() - started) / pages
    started = time.perf_counter()
    reads = range(0, pages, 10)
    for i in reads:
        assert cache.load(f"http://example.com/p/{i}") is not None
    load = (time.perf_counter() - started) / len(reads)
    close = getattr(cache, "close", None)
    if close is not None:
        close()  # the WAL checkpointed into the file, so du sees it all
    return store, load, disk_bytes(directory)


async def stalls(
    cache_dir: Path, layout: CacheLayout, pages: int, body: bytes, threaded: bool
) -> tuple[float, float]:
    """(loop time lost per page, worst stall) while ``pages`` stores run from TASKS tasks."""
    shutil.rmtree(cache_dir, ignore_errors=True)
    cache = open_cache(cache_dir, layout)
    lost, worst, done = 0.0, 0.0, asyncio.Event()

    async def ticker() -> None:
        nonlocal lost, worst
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            late = time.perf_counter() - before - 0.001
            if late > 0.001:
                lost, worst = lost + late, max(worst, late)

    async def writer(start: int) -> None:
        for i in range(start, pages, TASKS):
            url = f"http://example.com/p/{i}"
            result = FetchResult(url, url, 200, HEADERS, body)
            if threaded:
                await asyncio.to_thread(cache.store, url, result, "hash")
            else:
                cache.store(url, result, "hash")
                await asyncio.sleep(0)  # the crawl's fetch awaits between stores

    tick = asyncio.create_task(ticker())
    await asyncio.gather(*(writer(k) for k in range(TASKS)))
    done.set()
    await tick
    close = getattr(cache, "close", None)
    if close is not None:
        close()
    return lost / pages, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--body-bytes", type=int, default=200)
    args = parser.parse_args()
    body = b"<html><body>" + b"x" * max(args.body_bytes - 26, 0) + b"</body></html>"
    with tempfile.TemporaryDirectory(prefix="litecrawl-cache-bench-") as tmp:
        for round_ in range(args.rounds):
            for layout in ("files", "sqlite"):
                store, load, size = measure(Path(tmp), layout, args.pages, body)
                print(
                    f"round {round_} {layout:6}  store {store * 1e6:7.1f} us/page  "
                    f"load {load * 1e6:6.1f} us/page  disk {size / args.pages:6.0f} B/page "
                    f"({size / 1e6:.1f} MB for {args.pages})"
                )
        for round_ in range(args.rounds):
            for layout in ("files", "sqlite"):
                for threaded in (False, True):
                    how = "to_thread" if threaded else "in loop"
                    lost, worst = asyncio.run(
                        stalls(Path(tmp) / "loop", layout, args.pages, body, threaded)
                    )
                    print(
                        f"round {round_} {layout:6} {how:9}  event loop lost "
                        f"{lost * 1e6:7.1f} us/page  worst stall {worst * 1e3:6.1f} ms"
                    )


if __name__ == "__main__":
    main()
