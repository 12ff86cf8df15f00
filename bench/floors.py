"""Each stage of the analysis worker beside its floor: the least the same work costs here.

    uv run python bench/floors.py --site /tmp/benchsite-10000            # kit pages
    uv run python bench/floors.py --site /usr/share/doc/python3.11/html  # real pages
    uv run python bench/floors.py fetch --n 10000 --port 8853            # the event loop's fetch

``worker`` (the default): CPU (``process_time``, all threads) a page of each stage as litecrawl
runs it and of its floor, the best of ``--rounds`` passes over the same warm pages:

- parse: ``parse_html`` (lxml.html's parser, the page's links read, scripts stripped) against
  ``etree.HTML(body)`` (libxml2's HTML parser into plain elements: nothing of ours);
- text: the text pass (one libxslt transform marking blocks) against
  ``etree.tostring(method="text")`` of the body (libxml2 writing the text out);
  ``extract_page`` is the parse, the links, the frame and controls dropped, headings marked, the
  text and sections, keywords, language and preview;
- links: ``links_in`` against every ``<a>``'s ``href`` read by ``iter``;
- words: the vocabulary (words cut and hashed once), keywords and simhash against
  ``text.lower().split()`` and a Python ``hash`` of each word;
- vectors: the page's and its sections' vectors (every word cached: a warm worker) against the
  word cache's look-ups alone (``dict.get`` of each distinct word of each text);
- hashes: SHA-256 of the body and of the text (already the floor: one C call each).

``fetch``: the kit fetched by a bare aiohttp loop (one session, 64 connections, keep-alive,
each body read, nothing parsed or stored), CPU a page: the floor of the event loop's fetch
(compare bench/split.py's event loop and the kit's baseline-aiohttp peer, which also extracts
links). The writer's floor (SQLite's own share of the writer thread) is read from a native
profile of a crawl (``perf``): bench/README.md, issue 29, session 10.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
import time
from collections import Counter
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


def _best(fn: Callable[[Any], object], items: Sequence[Any], rounds: int) -> float:
    """CPU microseconds an item, the best of ``rounds`` passes."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for item in items:
            fn(item)
        best = min(best, time.process_time() - start)
    return best / len(items) * 1e6


def worker(site: Path, n: int, warm: int, rounds: int) -> None:
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
        return [list(map(get, Counter(words))) for words in texts]

    def full(page: tuple[str, bytes]) -> object:
        return analyze(page[0], page[1], html, 200, 1, "seed", settings, 0.0)

    def extract(page: tuple[str, bytes]) -> object:
        return extract_page(
            page[1], page[0], "text/html", want_markdown=False, want_links=True, want_sections=True
        )

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
            "vectors (page + sections, warm)",
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
    print(f"{site}: {len(pages)} pages, {kib:.0f} KiB, {chars} characters of text a page")
    print(f"{'stage':40s} {'litecrawl us':>12s} {'floor us':>10s}")
    for name, ours, floor in rows:
        shown = [f"{x:12.0f}" if x is not None else f"{'-':>12s}" for x in (ours, floor)]
        print(f"{name:40s} {shown[0]} {shown[1]}")


def fetch(n: int, port: int, concurrency: int) -> None:
    import aiohttp
    from run import Nginx, site_dir

    root = site_dir(n, port)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", choices=("worker", "fetch"), default="worker")
    parser.add_argument("--site", type=Path, default=_KIT)
    parser.add_argument("--n", type=int, default=200, help="pages (fetch: the kit's size)")
    parser.add_argument("--warm", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=8853)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    if args.what == "fetch":
        fetch(args.n, args.port, args.concurrency)
    else:
        worker(args.site, args.n, args.warm, args.rounds)


if __name__ == "__main__":
    main()
