"""Does a finalize's index or link write cost more as the crawl grows? One writer alone, on SQLite.

    uv run python bench/write_growth.py documents --pages 120000 --hashes /tmp/kit-simhashes.txt
    uv run python bench/write_growth.py links --pages 40000
    uv run python bench/write_growth.py links --pages 40000 --without-target-index
    uv run python bench/write_growth.py links --pages 60000 --random-sources
    uv run python bench/write_growth.py links --pages 200000 --random-sources --links 18 --batch 32

``documents``: ``write_documents`` in batches of 64 (short texts under the simhashes of the kit's
pages: bench/site.py's paragraphs, computed once and kept in ``--hashes``, ~1 ms a page), so the
near-duplicate look-up meets the kit's alike simhashes. ``links``: ``write_links`` in
transactions of ``--batch`` pages (256), ``--links`` links each (30) to random pages among
``--targets`` kit URLs, the pages in URL order or (``--random-sources``) in a random order, as a
crawl of the kit reaches them; the CPU of the transactions that merged the links in is shown
apart (and how many merged).
``--cache-kib``: the connection's page cache (default SQLite's, 2 MB, as the crawl's writer).
Prints the process CPU time per page over each ``--window`` of pages, and the bytes the process
read and wrote a page (Linux's /proc/self/io: page cache misses, the write-ahead log and its
checkpoints): a cost that grows shows as a rising column (bench/README.md, issue 33).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from litecrawl.index.document import IndexDocument
from litecrawl.store.sqlite.connection import connect
from litecrawl.store.sqlite.index import write_documents
from litecrawl.store.sqlite.links import write_links
from litecrawl.store.sqlite.migrations import migrate

_TEXT = " ".join(f"w{i}" for i in range(60))  # long enough for a near-duplicate search


def kit_simhashes(n: int, path: Path) -> list[int]:
    """The simhashes of ``n`` kit-like page texts, computed once into ``path``."""
    known = [int(line) for line in path.read_text().split()] if path.exists() else []
    if len(known) >= n:
        return known[:n]
    from litecrawl.index.simhash import simhash

    spec = importlib.util.spec_from_file_location("kit", Path(__file__).parent / "site.py")
    assert spec is not None and spec.loader is not None
    kit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kit)
    rng = random.Random(1)
    with path.open("w") as out:
        for i in range(n):
            links = " ".join(kit.paragraph(rng, 40) + f" link {k}" for k in range(24))
            filler = " ".join(kit.paragraph(rng, 60) for _ in range(28))
            out.write(f"{simhash(f'Page {i} {links} {filler}')}\n")
    return [int(line) for line in path.read_text().split()]


def _document(i: int, h: int) -> IndexDocument:
    text = f"{_TEXT} p{i}"
    digest = hashlib.sha256(text.encode()).hexdigest()
    return IndexDocument(
        url=f"http://k/{i}",
        title="t",
        keywords=(),
        text_preview="",
        text=text,
        text_hash=digest,
        simhash=h,
    )


def _io() -> tuple[int, int]:
    """Bytes this process has read and written through system calls (0, 0 off Linux)."""
    try:
        fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    except OSError:
        return 0, 0
    return int(fields["rchar"]), int(fields["wchar"])


def _merged(conn: sqlite3.Connection) -> bool:
    """Whether the last write merged the links in (it leaves none unmerged, its own included)."""
    return conn.execute("SELECT min(link_id) FROM page_links_in_new").fetchone()[0] is None


def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        conn = connect(Path(tmp) / "w.db")
        migrate(conn)
        if args.cache_kib:
            conn.execute(f"PRAGMA cache_size = -{args.cache_kib}")
        if args.without_target_index:
            conn.execute("DROP INDEX idx_page_links_dst")
        write: Callable[[int, int], None]
        if args.what == "documents":
            hashes = kit_simhashes(args.pages, Path(args.hashes))
            size = 64

            def write(start: int, end: int) -> None:
                write_documents(conn, [_document(i, hashes[i]) for i in range(start, end)])

        else:
            rng = random.Random(1)
            size = args.batch
            order = list(range(args.pages))
            if args.random_sources:
                random.Random(7).shuffle(order)

            def url(i: int) -> str:
                return f"http://127.0.0.1:8181/s{i // 1000:03d}/page{i}.html"

            def write(start: int, end: int) -> None:
                graph = [
                    (url(order[i]), [url(rng.randrange(args.targets)) for _ in range(args.links)])
                    for i in range(start, end)
                ]
                write_links(conn, graph)

        began, since, io = time.process_time(), 0, _io()
        merging, merges = 0.0, 0  # CPU seconds and count of the transactions that merged
        for start in range(0, args.pages, size):
            end = min(args.pages, start + size)
            before = time.process_time()
            conn.execute("BEGIN IMMEDIATE")
            write(start, end)
            conn.execute("COMMIT")
            if args.what == "links" and _merged(conn):
                merging += time.process_time() - before
                merges += 1
            if end - since >= args.window or end == args.pages:
                now = time.process_time()
                pages = end - since
                per_page = (now - began) / pages * 1e6
                moved = _io()
                read, written = ((b - a) / pages / 1024 for a, b in zip(io, moved, strict=True))
                merged = f"  merging {merging / pages * 1e6:5.1f} us/page ({merges})"
                print(
                    f"{end:8d} pages  {per_page:7.1f} us/page  read {read:6.1f} KiB/page  "
                    f"written {written:6.1f} KiB/page" + (merged if args.what == "links" else ""),
                    flush=True,
                )
                began, since, io, merging, merges = now, end, moved, 0.0, 0
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["documents", "links"])
    parser.add_argument("--pages", type=int, default=40_000)
    parser.add_argument("--window", type=int, default=10_000)
    parser.add_argument("--targets", type=int, default=200_000, help="links: pages linked to")
    parser.add_argument("--links", type=int, default=30, help="links: links a page")
    parser.add_argument("--batch", type=int, default=256, help="links: pages a transaction")
    parser.add_argument("--hashes", default="/tmp/kit-simhashes.txt", help="documents: cache")
    parser.add_argument("--cache-kib", type=int, default=0, help="SQLite's page cache (KiB)")
    parser.add_argument("--random-sources", action="store_true", help="links: pages in any order")
    parser.add_argument("--without-target-index", action="store_true", help="links: no dst_key")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
