"""Each stage of a crawl beside its floor: the least the same work costs here.

    uv run python bench/floors.py --site kit --port 8853                 # kit pages
    uv run python bench/floors.py --site /usr/share/doc/python3.11/html  # real pages
    uv run python bench/floors.py fetch --n 10000 --port 8853            # the event loop's fetch
    uv run python bench/floors.py writer --db KIT.db --n 10000           # the writer's rows

``worker`` (the default): CPU (``process_time``, all threads) a page of each stage as litecrawl
runs it and of its floor, the best of ``--rounds`` passes over the same warm pages (``--cold``:
each call timed alone right after another page's whole job, as a worker meets its caches):

- parse: ``parse_html`` (lxml.html's parser, the page's links read, scripts stripped) against
  ``etree.HTML(body)`` (libxml2's HTML parser into plain elements: nothing of ours);
- text: the text pass (one libxslt transform marking blocks) against
  ``etree.tostring(method="text")`` of the body (libxml2 writing the text out);
  ``extract_page`` is the parse, the links, the frame and controls dropped, headings marked, the
  text and sections, keywords, language and preview;
- links: ``links_in`` against every ``<a>``'s ``href`` read by ``iter``;
- words: the vocabulary (words cut and hashed once), keywords and simhash against
  ``text.lower().split()`` and a Python ``hash`` of each word;
- vectors: the page's and its sections' vectors (every word cached: a warm worker) against
  each text's words looked up in the word cache and their rows gathered and summed (numpy's
  ``take`` and ``sum``: no normalising, no bytes);
- hashes: SHA-256 of the body and of the text (already the floor: one C call each).

``--site kit`` (or ``ours``): the site ``compare --site`` crawls (10,000 pages, its links naming
``--port``), generated if missing.

``writer --db CRAWL.db``: the rows a finished crawl wrote for its first ``--n`` pages (the
frontier's link rows and the page's own row, the link graph's rows, the resource and document
rows, the page's and its sections' vector rows, FTS5's insert of the text) written again by
plain ``executemany`` into a new database of the same schema and pragmas, ``--batch`` pages a
transaction, each stage and the commit timed: SQLite's own cost of exactly those rows, with
none of our code (the writer's floor; bench/README.md, issue 29, session 14, has the crawl's
own figure of each stage beside it).

``fetch [--site kit]``: bench/site.py's site (or the kit's) fetched by a bare aiohttp loop (one
session, 64 connections, keep-alive, each body read, nothing parsed or stored), CPU a page: the
floor of the event loop's fetch (the kit's baseline-aiohttp peer is more: a whole crawler in one
process, which also parses each page's title and links with selectolax and joins them).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_KIT = Path("/tmp/benchsite-10000")


def _site_pages(site: Path, n: int) -> list[tuple[str, bytes]]:
    from instructions import _pages

    if (site / "s000").is_dir():
        return _pages(site, n)
    files = sorted(site.rglob("*.html"))[:n]
    return [(f"http://127.0.0.1:8080/{f.relative_to(site)}", f.read_bytes()) for f in files]


_CHURN: list[Callable[[int], object]] = []  # --cold: run before each timed call


def _best(fn: Callable[[Any], object], items: Sequence[Any], rounds: int) -> float:
    """CPU microseconds an item, the best of ``rounds`` passes (with ``--cold``, each call
    timed alone after another page's whole job)."""
    best = float("inf")
    for _ in range(rounds):
        spent = 0.0
        if _CHURN:
            for i, item in enumerate(items):
                _CHURN[0](i)
                start = time.process_time()
                fn(item)
                spent += time.process_time() - start
        else:
            start = time.process_time()
            for item in items:
                fn(item)
            spent = time.process_time() - start
        best = min(best, spent)
    return best / len(items) * 1e6


def worker(site: Path, n: int, warm: int, rounds: int, cold: bool = False) -> None:
    from lxml import etree

    from litecrawl.extract.decode import decode_html
    from litecrawl.extract.dom import _plain_text, parse_html
    from litecrawl.extract.page import _valid_chars, extract_page
    from litecrawl.extract.vocabulary import keywords, vocabulary
    from litecrawl.index.analyze import AnalyzerSettings
    from litecrawl.index.embed import embedder
    from litecrawl.index.simhash import simhash
    from litecrawl.index.work import _vectors, analyze
    from litecrawl.parse.links import links_in

    pages = _site_pages(site, warm + n)
    settings = AnalyzerSettings()
    html = {"content-type": "text/html"}
    for url, body in pages[:warm]:  # the word cache filled as a worker's is
        analyze(url, body, html, 200, 1, "seed", settings, 0.0)
    pages = pages[warm:]
    extracted = [
        extract_page(b, u, "text/html", want_markdown=False, want_links=True, want_sections=True)
        for u, b in pages
    ]
    for e in extracted:  # every word of these pages cached: the vectors' steady state
        _vectors(e.url, e)
    data = [_valid_chars(decode_html(b, "text/html"))[1] for _, b in pages]
    trees = [etree.HTML(body) for _, body in pages]
    bodies = [t.find("body") if t.find("body") is not None else t for t in trees]
    texts = [e.text for e in extracted]
    get = embedder()._rows.get
    sums = embedder()._sums

    def words(text: str) -> object:
        vocabulary.cache_clear()
        return keywords(text, "en"), simhash(text)

    def look_ups(e: Any) -> object:
        # the same texts as the worker embeds: the page's words, and each section's (when there
        # are two or more) after the title's
        from litecrawl.index.embed import SECTION_WORDS, page_words, titled

        texts = [page_words(e.title, e.text)]
        if len(e.sections) >= 2:
            head = e.title.split()
            for section in e.sections:
                texts.append(
                    titled(head, section.text.split(maxsplit=SECTION_WORDS)[:SECTION_WORDS])
                )
        return [sums.take(list(map(get, words)), axis=0).sum(axis=0) for words in texts]

    def full(page: tuple[str, bytes]) -> object:
        return analyze(page[0], page[1], html, 200, 1, "seed", settings, 0.0)

    def extract(page: tuple[str, bytes]) -> object:
        return extract_page(
            page[1], page[0], "text/html", want_markdown=False, want_links=True, want_sections=True
        )

    if cold:  # another page analysed before each timed call: caches as a worker finds them
        _CHURN.append(lambda i: full(pages[(i + 1) % len(pages)]))
    rows = [
        ("analyze (the whole job)", _best(full, pages, rounds), None),
        ("extract_page (parse + text + words)", _best(extract, pages, rounds), None),
        (
            "parse",
            _best(lambda d: parse_html(d, "http://127.0.0.1:8080/x.html"), data, rounds),
            _best(lambda p: etree.HTML(p[1]), pages, rounds),
        ),
        (
            "text (the XSLT pass alone)",
            _best(_plain_text, bodies, rounds),
            _best(lambda b: etree.tostring(b, method="text", encoding="unicode"), bodies, rounds),
        ),
        (
            "links",
            _best(lambda t: links_in(t, "http://x/"), trees, rounds),
            _best(lambda t: [a.get("href") for a in t.iter("a")], trees, rounds),
        ),
        (
            "words: keywords + simhash",
            _best(words, texts, rounds),
            _best(lambda t: list(map(hash, t.lower().split())), texts, rounds),
        ),
        (
            "vectors (page + sections)",
            _best(lambda e: _vectors(e.url, e), extracted, rounds),
            _best(look_ups, extracted, rounds),
        ),
        (
            "hashes (SHA-256 body + text)",
            _best(
                lambda p: (
                    hashlib.sha256(p[0][1]).digest(),
                    hashlib.sha256(p[1].encode("utf-8", "surrogatepass")).digest(),
                ),
                list(zip(pages, texts, strict=True)),
                rounds,
            ),
            None,
        ),
    ]
    chars = sum(map(len, texts)) // len(texts)
    kib = sum(len(b) for _, b in pages) / len(pages) / 1024
    print(
        f"{site}: {len(pages)} pages, {kib:.0f} KiB, {chars} characters of text a page"
        + (", each call after another page's whole job (--cold)" if cold else "")
    )
    print(f"{'stage':40s} {'litecrawl us':>12s} {'floor us':>10s}")
    for name, ours, floor in rows:
        shown = [f"{x:12.0f}" if x is not None else f"{'-':>12s}" for x in (ours, floor)]
        print(f"{name:40s} {shown[0]} {shown[1]}")


def fetch(n: int, port: int, concurrency: int, site: str) -> None:
    import aiohttp
    from run import Nginx, bench_site

    root = bench_site("kit" if site == "kit" else "ours", n, port)
    urls = [f"http://127.0.0.1:{port}/{p.relative_to(root)}" for p in sorted(root.rglob("*.html"))]
    nginx = Nginx(root, port)

    async def crawl() -> int:
        got = 0
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            queue = iter(urls)

            async def one() -> None:
                nonlocal got
                for url in queue:
                    async with session.get(url) as response:
                        await response.read()
                        got += 1

            await asyncio.gather(*(one() for _ in range(concurrency)))
        return got

    try:
        start, wall = time.process_time(), time.perf_counter()
        got = asyncio.run(crawl())
        cpu, wall = time.process_time() - start, time.perf_counter() - wall
    finally:
        nginx.stop()
    print(
        f"bare aiohttp: {got} pages, {cpu / got * 1e3:.3f} ms CPU a page, {got / wall:.0f} pages/s"
    )


def writer(db: Path, n: int, batch: int) -> None:
    """The writer's stages' floor: the rows a finished crawl (``db``) wrote for its first ``n``
    pages, written again by plain ``executemany`` into a new database of the same schema and
    pragmas, ``batch`` pages a transaction (the crawl's batches), each stage timed: SQLite's own
    cost of exactly those rows, with none of our code building or deciding them."""
    import sqlite3
    import tempfile

    from litecrawl.store.sqlite.connection import connect, for_writing
    from litecrawl.store.sqlite.migrations import migrate

    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    # in the order the crawl wrote them (its documents' ids): FTS5 flushes its pending terms at
    # every rowid lower than the last, which the order of the crawl's batches never gives
    crawled = src.execute(
        "SELECT norm_url, host, last_crawl_time, next_crawl_time, content_hash, p.depth, state,"
        " p.status, error, p.content_type, etag, last_modified, response_ms, kind, part"
        " FROM pages p LEFT JOIN documents d ON d.url = p.norm_url WHERE p.status IS NOT NULL"
        " ORDER BY d.id IS NULL, d.id, last_crawl_time LIMIT ?",
        (n,),
    ).fetchall()
    known = {
        r[0]: r[1:]
        for r in src.execute("SELECT norm_url, host, depth, source, score, kind, part FROM pages")
    }
    out: dict[str, list[tuple[Any, ...]]] = {}
    for row in src.execute("SELECT src, dst, dst_key FROM page_links ORDER BY id"):
        out.setdefault(row[0], []).append(row)
    docs = {r[1]: r for r in src.execute("SELECT * FROM documents")}
    resources = {r[0]: r for r in src.execute("SELECT * FROM resources")}
    vectors = {r[0]: r for r in src.execute("SELECT * FROM resource_vectors")}
    sections: dict[int, list[tuple[Any, ...]]] = {}
    for row in src.execute("SELECT * FROM section_vectors ORDER BY resource_id, ord"):
        sections.setdefault(row[0], []).append(row)
    src.close()

    def marks(row: Sequence[Any]) -> str:
        return ", ".join("?" for _ in row)

    stages = (
        "page and link rows",
        "link graph rows",
        "resource + document rows",
        "vector rows (page + sections)",
        "FTS5 insert",
        "commit",
    )
    spent = dict.fromkeys(stages, 0.0)
    counts = {"links": 0, "sections": 0, "terms": 0}
    with tempfile.TemporaryDirectory() as tmp:
        conn = for_writing(connect(Path(tmp) / "floor.db"))
        migrate(conn)
        written: set[int] = set()
        for at in range(0, len(crawled), batch):
            pages = crawled[at : at + batch]
            seen: set[str] = set()
            link_rows = []
            for page in pages:
                for _, dst, _ in out.get(page[0], ()):
                    if dst not in seen and dst in known:
                        seen.add(dst)
                        link_rows.append((dst, *known[dst]))
            urls = [page[0] for page in pages]
            graph = [row for url in urls for row in out.get(url, ())]
            page_docs = [docs[url] for url in urls if url in docs]
            rids = [d[2] for d in page_docs if d[2] is not None and d[2] not in written]
            written.update(rids)
            new_resources = [resources[rid] for rid in dict.fromkeys(rids)]
            texts = [(r[0], r[7], r[8]) for r in new_resources]
            vector_rows = [vectors[rid] for rid in rids if rid in vectors]
            section_rows = [row for rid in rids for row in sections.get(rid, ())]
            counts["links"] += len(graph)
            counts["sections"] += len(section_rows)
            steps = [
                (
                    "page and link rows",
                    [
                        (
                            "INSERT INTO pages (norm_url, host, depth, source, score, kind, part)"
                            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (norm_url) DO UPDATE"
                            " SET depth = excluded.depth WHERE excluded.depth < pages.depth",
                            link_rows,
                        ),
                        (
                            "INSERT INTO pages (norm_url, host, last_crawl_time, next_crawl_time,"
                            " content_hash, depth, state, status, error, content_type, etag,"
                            " last_modified, response_ms, kind, part) VALUES"
                            f" ({marks(pages[0])}) ON CONFLICT (norm_url) DO UPDATE SET"
                            " last_crawl_time = excluded.last_crawl_time, next_crawl_time ="
                            " excluded.next_crawl_time, content_hash = excluded.content_hash,"
                            " state = excluded.state, status = excluded.status, error ="
                            " excluded.error, content_type = excluded.content_type, etag ="
                            " excluded.etag, last_modified = excluded.last_modified, response_ms"
                            " = excluded.response_ms, fetch_count = fetch_count + 1",
                            pages,
                        ),
                    ],
                ),
                (
                    "link graph rows",
                    [("INSERT INTO page_links (src, dst, dst_key) VALUES (?, ?, ?)", graph)],
                ),
                (
                    "resource + document rows",
                    [(f"INSERT INTO resources VALUES ({marks(r)})", [r]) for r in new_resources]
                    + (
                        [
                            (
                                f"INSERT INTO documents VALUES ({marks(page_docs[0])})",
                                [(None, *d[1:]) for d in page_docs],
                            )
                        ]
                        if page_docs
                        else []
                    ),
                ),
                (
                    "vector rows (page + sections)",
                    [("INSERT INTO resource_vectors VALUES (?, ?, ?)", vector_rows)]
                    + (
                        [
                            (
                                f"INSERT INTO section_vectors VALUES ({marks(section_rows[0])})",
                                section_rows,
                            )
                        ]
                        if section_rows
                        else []
                    ),
                ),
                (
                    "FTS5 insert",
                    [("INSERT INTO resources_fts (rowid, title, text) VALUES (?, ?, ?)", texts)],
                ),
            ]
            conn.execute("BEGIN IMMEDIATE")
            for stage, statements in steps:
                start = time.process_time()
                for sql, rows in statements:
                    conn.executemany(sql, rows)
                spent[stage] += time.process_time() - start
            start = time.process_time()
            conn.execute("COMMIT")
            spent["commit"] += time.process_time() - start
        conn.close()
    pages_n = len(crawled)
    print(
        f"{db}: {pages_n} pages, {counts['links'] / pages_n:.1f} links and"
        f" {counts['sections'] / pages_n:.1f} section rows a page, {batch} pages a transaction"
    )
    print(f"{'writer stage (floor: plain executemany)':40s} {'us a page':>10s}")
    for stage in stages:
        print(f"{stage:40s} {spent[stage] / pages_n * 1e6:10.0f}")
    print(f"{'sum':40s} {sum(spent.values()) / pages_n * 1e6:10.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", choices=("worker", "fetch", "writer"), default="worker")
    parser.add_argument("--site", default=str(_KIT), help="a directory, or kit / ours")
    parser.add_argument("--db", type=Path, help="writer: a finished crawl of the kit's site")
    parser.add_argument("--batch", type=int, default=64, help="writer: pages a transaction")
    parser.add_argument("--n", type=int, default=200, help="pages (fetch: the kit's size)")
    parser.add_argument("--warm", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="another page's job before each call")
    parser.add_argument("--port", type=int, default=8853)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    if args.what == "fetch":
        fetch(args.n, args.port, args.concurrency, args.site)
    elif args.what == "writer":
        if args.db is None:
            raise SystemExit("writer needs --db: a finished crawl (bench/split.py keeps none)")
        writer(args.db, args.n, args.batch)
    else:
        from run import bench_site

        site = Path(args.site)
        if args.site in ("kit", "ours"):  # as compare's --site: 10,000 pages, links on --port
            site = bench_site(args.site, 10_000, args.port)
        worker(site, args.n, args.warm, args.rounds, args.cold)


if __name__ == "__main__":
    main()
