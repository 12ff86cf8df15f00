"""Search latency per mode (keyword, semantic, hybrid) at N indexed pages, and the cost of
embedding a page.

    uv run python bench/vector_search.py --n 10000 100000

Builds one index per N (in a temporary folder) through the store the crawler uses
(``write_documents``, with each page's vector): texts of 150-400 words drawn with a fixed seed
from the words of PostgreSQL's documentation (``postgresql-doc-15``), so the FTS5 index and the
vectors look like a real crawl's (``--sections K``: K section vectors per page too). Then
times :func:`litecrawl.index.semantic.find` for 20 queries in each mode (the model already
loaded, as in a long-lived process; a CLI call adds the model's load, printed separately) and
reports the median and the slowest.

``--model minilm``: each index is also copied with every page and section vector replaced by a
384-dimension stand-in of the ``minilm`` model (the WordLlama vector through a fixed random
projection, normalised: embedding 10^5 pages with MiniLM would take hours), the copy made
MiniLM's (``vector_model``), and the two files timed alternately: the scan of 384-float vectors
and the query embedded by MiniLM are what the model changes (the hits are not meaningful).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from litecrawl.index.document import IndexDocument, SectionVector
from litecrawl.index.embed import Embedder, embed_text, embedder
from litecrawl.index.semantic import MODES, find
from litecrawl.index.simhash import simhash
from litecrawl.store.sqlite.connection import connect
from litecrawl.store.sqlite.index import write_documents
from litecrawl.store.sqlite.migrations import migrate

SITE = Path("/usr/share/doc/postgresql-doc-15/html")
QUERIES = [
    "backup database",
    "how do I copy a table to a file",
    "vacuum",
    "create index concurrently",
    "replication slot",
    "make the server faster",
    "json operators",
    "who may read my tables",
    "transaction isolation",
    "full text search",
    "date functions",
    "connection pooling",
    "foreign key",
    "upgrade to a new major version",
    "write ahead log",
    "trigger function",
    "user password",
    "partitioned table",
    "locale collation",
    "explain analyze",
]


def vocabulary() -> list[str]:
    words: list[str] = []
    for page in sorted(SITE.glob("*.html"))[:300]:
        text = re.sub(r"<[^>]+>", " ", page.read_text("utf-8", "replace"))
        words += re.findall(r"[A-Za-z][a-z]{2,}", text)
    return words


def build(path: Path, n: int, words: list[str], sections: int = 0) -> float:
    """The index of ``n`` pages, each with ``sections`` section vectors (40-word slices of
    its text, as the crawler's); returns the embedding's ms per page."""
    rng = random.Random(n)
    conn = connect(path)
    migrate(conn)
    embedding_s = 0.0
    batch: list[IndexDocument] = []
    for i in range(n):
        start = rng.randrange(len(words) - 400)
        text = " ".join(words[start : start + rng.randint(150, 400)]) + f" page{i}"
        t0 = time.perf_counter()
        vector = embed_text(text)
        parts = text.split()
        cut = max(1, len(parts) // max(1, sections))
        slices = [" ".join(parts[k * cut : k * cut + 40]) for k in range(sections)]
        blobs = [embed_text(piece) for piece in slices]
        embedding_s += time.perf_counter() - t0
        batch.append(
            IndexDocument(
                url=f"http://bench.example/{i}",
                title=" ".join(text.split()[:6]),
                keywords=(),
                text_preview=text[:500],
                text=text,
                text_hash=hashlib.sha256(text.encode()).hexdigest(),
                simhash=simhash(text),
                embedding=vector,
                sections=tuple(
                    SectionVector(f"part {k}", f"p{k}", blob)
                    for k, blob in enumerate(blobs)
                    if blob is not None
                ),
            )
        )
        if len(batch) == 1000:
            conn.execute("BEGIN IMMEDIATE")
            write_documents(conn, batch)
            conn.execute("COMMIT")
            batch = []
    if batch:
        conn.execute("BEGIN IMMEDIATE")
        write_documents(conn, batch)
        conn.execute("COMMIT")
    conn.close()
    return 1000 * embedding_s / n


def as_minilm(source: Path, target: Path) -> None:
    """A copy of ``source`` whose vectors are 384-dimension stand-ins of MiniLM's."""
    import numpy as np

    from litecrawl.index.minilm import DIMENSIONS, MODEL

    shutil.copyfile(source, target)
    projection = np.random.default_rng(0).standard_normal((256, DIMENSIONS)).astype(np.float32)
    conn = sqlite3.connect(target)
    for table in ("resource_vectors", "section_vectors"):
        keys = "resource_id, ord" if table == "section_vectors" else "resource_id, 0"
        rows = conn.execute(f"SELECT {keys}, vector FROM {table}").fetchall()
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), 256)
        wide = matrix @ projection
        wide /= np.linalg.norm(wide, axis=1, keepdims=True)
        where = "resource_id = ? AND ord = ?" if table == "section_vectors" else "resource_id = ?"
        conn.executemany(
            f"UPDATE {table} SET model = ?, vector = ? WHERE {where}",
            [
                (MODEL, wide[i].astype("<f4").tobytes(), *r[: 2 if "ord" in where else 1])
                for i, r in enumerate(rows)
            ],
        )
    conn.execute("INSERT INTO vector_model (one, name) VALUES (1, ?)", (MODEL,))
    conn.commit()
    conn.execute("VACUUM")
    conn.close()


def timings(db: Path, mode: str) -> list[float]:
    find(db, QUERIES[0], mode=mode)  # warm the page cache (and load the model)
    times = []
    for query in QUERIES:
        t0 = time.perf_counter()
        find(db, query, mode=mode)  # type: ignore[arg-type]
        times.append(1000 * (time.perf_counter() - t0))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10_000])
    parser.add_argument("--sections", type=int, default=0, help="section vectors per page")
    parser.add_argument("--keep", type=Path, help="build the indexes in this folder and keep them")
    parser.add_argument("--model", help="also time a copy with this model's vectors (minilm)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    Embedder()
    print(f"model load: {1000 * (time.perf_counter() - t0):.0f} ms")
    embedder()
    words = vocabulary()
    print("| pages | embedding ms/page | mode | median ms | slowest ms |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            db = (args.keep or Path(tmp)) / f"v{n}-s{args.sections}.db"
            per_page = build(db, n, words, args.sections)
            files = {"wordllama": db}
            if args.model:
                files[args.model] = db.with_name(f"{db.stem}-{args.model}.db")
                as_minilm(db, files[args.model])
            for mode in MODES:
                for round_ in range(2 if args.model else 1):  # alternated: the load drifts
                    for name, path in files.items():
                        times = timings(path, mode)
                        label = f"{mode} ({name}, round {round_ + 1})" if args.model else mode
                        print(
                            f"| {n:,} | {per_page:.3f} | {label} |"
                            f" {statistics.median(times):.1f} | {max(times):.1f} |",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
