"""Instructions per page under callgrind: a measure this machine's noise cannot move.

    uv run python bench/instructions.py worker --site /tmp/benchsite-10000 [--warm 200]
    uv run python bench/instructions.py links --site /tmp/benchsite-10000
    uv run python bench/instructions.py text --site /tmp/lckit-10000-port8820   # or words
    uv run python bench/instructions.py worker --site /usr/share/doc/postgresql-doc-15/html \
        --mode output            # or plain, trafilatura, resiliparse: real pages, each path
    uv run python bench/instructions.py crawler --litecrawl /other/tree/.venv/bin/litecrawl

``worker``: :func:`litecrawl.index.work.analyze` (the analysis worker's whole job: parse, links,
text, keywords, language, hashes, simhash) over kit pages, or any folder of HTML pages;
``--mode`` adds Markdown + sidecar output (``output``), a main-article engine or PostgreSQL's
full-text vector (``tsvector``, what a crawl into PostgreSQL builds in the worker). ``links``:
resolving each page's links with :class:`litecrawl.urls.UrlRules` (what the event loop does per
page). ``text``: the worker's text and sections stage alone (:meth:`LxmlDoc.render_sections`
as the index calls it: the controls and the frame dropped, the text pass, the sections), every
page parsed in both runs; ``words``: its keywords and simhash from the page's text (the
vocabulary built once a page, as the worker does). ``crawler``: the crawler process of a
real crawl of ``bench/run.py crawl``'s site (1,000 pages, served by nginx; event loop and writer
thread, the analysis workers not traced), by this tree's console script or another tree's
(``--litecrawl``), capped at 200 and at 1,000 pages. Each runs twice under ``valgrind
--tool=callgrind``, over a few pages and over many; the difference divided by the difference in
pages is the cost of one page, with start-up and imports cancelled out. Pages/s on a shared
2-core VM swing by 30% between runs; these counts repeat within ~2% (libxml2 seeds its
dictionaries' hashes at random: run each tree twice).
"""

from __future__ import annotations

import argparse
import gc
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FEW, MANY = 5, 45
_KIT = Path("/tmp/benchsite-10000")


def _pages(site: Path, n: int, offset: int = 0) -> list[tuple[str, bytes]]:
    files = sorted(site.glob("s*/*.html") if (site / "s000").is_dir() else site.glob("*.html"))
    files = files[offset::25][:n]
    return [(f"http://127.0.0.1:8080/{f.relative_to(site)}", f.read_bytes()) for f in files]


def run_worker(site: Path, n: int, mode: str, warm: int = 0) -> None:
    from litecrawl.index.analyze import AnalyzerSettings
    from litecrawl.index.work import analyze

    with tempfile.TemporaryDirectory() as out:
        settings = AnalyzerSettings(
            output_dir=Path(out) if mode == "output" else None,
            main_article=mode in ("trafilatura", "resiliparse"),
            article_engine="resiliparse" if mode == "resiliparse" else "trafilatura",
            tsvector=mode == "tsvector",
        )
        # other pages first, as a worker has seen before: its embedder's word cache filled
        for url, body in [*_pages(site, warm, offset=1), *_pages(site, FEW + n)]:
            analyze(url, body, {"content-type": "text/html"}, 200, 1, "seed", settings, 0.0)


def run_links(site: Path, n: int, mode: str) -> None:
    del mode
    from litecrawl.parse.links import extract_links
    from litecrawl.urls import UrlRules

    # every run parses the same pages, so only resolving differs between the two runs
    found = [extract_links(body, url) for url, body in _pages(site, FEW + MANY)]
    rules = UrlRules()
    for page in found[: FEW + n]:
        rules.many(page.links, page.base)


def run_text(site: Path, n: int, mode: str) -> None:
    del mode
    from litecrawl.extract.decode import decode_html
    from litecrawl.extract.dom import parse_html
    from litecrawl.extract.page import _valid_chars

    # every run parses the same pages, so only the stage differs between the two runs; no
    # cyclic collection, whose passes over 50 parsed trees fall where they will
    gc.disable()
    pages = _pages(site, FEW + MANY)
    docs = [parse_html(_valid_chars(decode_html(b, "text/html"))[1], u) for u, b in pages]
    for (url, _), doc in zip(pages[: FEW + n], docs, strict=False):
        if doc is not None:
            doc.render_sections(url, (), False)


def run_words(site: Path, n: int, mode: str) -> None:
    del mode
    from litecrawl.extract.page import extract_page
    from litecrawl.extract.vocabulary import keywords, vocabulary
    from litecrawl.index.simhash import simhash

    texts = [
        extract_page(b, u, "text/html", want_markdown=False).text
        for u, b in _pages(site, FEW + MANY)
    ]
    for text in texts[: FEW + n]:
        vocabulary.cache_clear()  # a new page's
        keywords(text, "en")
        simhash(text)


def _crawler_instructions(litecrawl: Path, pages: int, port: int) -> int:
    """Instructions of the crawler process for a crawl of ``pages`` pages (a fresh database)."""
    from run import CRAWL_FLAGS

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        python = litecrawl.parent / "python"  # the script's own interpreter
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(python),
             str(litecrawl), "crawl", f"http://127.0.0.1:{port}/index.html",
             "--db", f"{tmp}/crawl.db", "--max-pages", str(pages), *CRAWL_FLAGS],
            check=True, capture_output=True,
        )  # fmt: skip
        return _total(out.read_text(errors="replace"))


def _crawler(litecrawl: Path, site: Path | None, port: int) -> None:
    from run import Nginx, site_dir

    few, many = 200, 1000
    nginx = Nginx(site or site_dir(many), port)
    try:
        counts = [_crawler_instructions(litecrawl, n, port) for n in (few, many)]
    finally:
        nginx.stop()
    per_page = (counts[1] - counts[0]) / (many - few)
    print(f"crawler process: {per_page / 1e6:.2f} M instructions per page")


def _total(summary: str) -> int:
    match = re.search(r"^(?:summary|totals): (\d+)", summary, re.M)
    if match is None:
        raise SystemExit("no totals in callgrind's output")
    return int(match.group(1))


def _instructions(what: str, site: Path, n: int, mode: str, warm: int = 0) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                what,
                "--site",
                str(site),
                "--run",
                str(n),
                "--mode",
                mode,
                "--warm",
                str(warm),
            ],
            check=True,
            capture_output=True,
        )
        return _total(out.read_text(errors="replace"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["worker", "links", "text", "words", "crawler"])
    parser.add_argument("--site", type=Path, default=_KIT)
    parser.add_argument(
        "--mode",
        choices=["plain", "output", "trafilatura", "resiliparse", "tsvector"],
        default="plain",
    )
    parser.add_argument("--litecrawl", type=Path, default=Path(sys.executable).parent / "litecrawl")
    # crawler: another copy of the site, its links naming this port, keeps off bench/run.py's
    parser.add_argument("--port", type=int, default=8181)
    # worker: analyze this many other pages first in both runs (a warm word cache, as in a
    # crawl; the default 0 keeps the cold figures of earlier sessions comparable)
    parser.add_argument("--warm", type=int, default=0)
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)  # inside valgrind
    args = parser.parse_args()
    if args.what == "crawler":
        _crawler(args.litecrawl, args.site if args.site != _KIT else None, args.port)
        return
    if args.run is not None:
        if args.what == "worker":
            run_worker(args.site, args.run, args.mode, args.warm)
        else:
            {"links": run_links, "text": run_text, "words": run_words}[args.what](
                args.site, args.run, args.mode
            )
        return
    few = _instructions(args.what, args.site, 0, args.mode, args.warm)
    many = _instructions(args.what, args.site, MANY, args.mode, args.warm)
    print(f"{args.what} ({args.mode}): {(many - few) / MANY / 1e6:.2f} M instructions per page")


if __name__ == "__main__":
    main()
