"""The disk cache's cost per page, in both layouts (``[cache] layout``), alternated in one run.

    uv run python bench/cache.py --pages 5000 --rounds 2 [--body-bytes 200]

For each layout: store N pages of a small HTML body (the time per store: it runs in the crawl's
event loop), read back every tenth, and the disk the directory takes (``du``: what the file
system really uses, blocks included).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from litecrawl.cache import CacheLayout, open_cache
from litecrawl.fetch.base import FetchResult

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


if __name__ == "__main__":
    main()
