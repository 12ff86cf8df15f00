"""litecrawl.index.analyze: the engine's analyzer (worker processes), Markdown + sidecar."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
import random
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import (
    LocalServer,
    analysis_workers_during,
    analysis_workers_of,
    html_page,
    site_app,
)

from litecrawl.cache import DiskCache
from litecrawl.config_load import load_config
from litecrawl.crawl import crawl, run_crawl
from litecrawl.fetch.base import FetchResult
from litecrawl.index.analyze import AnalysisPool, AnalyzerSettings, PageAnalyzer, analyze_page
from litecrawl.index.document import IndexDocument, PageAnalysis
from litecrawl.index.simhash import simhash
from litecrawl.parse.links import extract_links
from litecrawl.parse.resolve import LinkRules
from litecrawl.store.backends import open_index
from litecrawl.store.index import SearchHit
from litecrawl.store.sqlite.connection import connect
from litecrawl.urls import UrlRules

SIDECAR_FIELDS = [
    "url",
    "title",
    "fetched_at",
    "last_modified",
    "etag",
    "source",
    "depth",
    "status",
    "content_hash",
    "cache_path",
    "extraction_mode",
]
ARTICLE = (
    "<html lang='en'><head><title>Night trains return</title>"
    "<meta name='author' content='Jane Doe'>"
    "<meta property='article:published_time' content='2024-03-01T08:00:00Z'></head><body>"
    "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav><article><h1>Night trains return</h1>"
    + "".join(
        f"<p>Paragraph {i}: night trains connect European cities again, and travellers "
        f"choose sleeper cars over short flights for comfort and the climate.</p>"
        for i in range(8)
    )
    + "</article><footer>Copyright Rail Weekly</footer></body></html>"
).encode()
HEADERS = {
    "content-type": "text/html; charset=utf-8",
    "etag": '"v1"',
    "last-modified": "Wed, 01 May 2024 10:00:00 GMT",
}


def _search(db: str | Path, query: str) -> list[SearchHit]:
    with open_index(str(db)) as index:
        return index.keyword(query)


def result(url: str, body: bytes = ARTICLE, **headers: str) -> FetchResult:
    return FetchResult(url, url, 200, {**HEADERS, **headers}, body)


async def analyses(
    settings: AnalyzerSettings, workers: int, *pages: tuple[str, FetchResult]
) -> list[PageAnalysis]:
    async with AnalysisPool(workers) as pool:
        analyzer = PageAnalyzer(settings, pool)
        return list(await asyncio.gather(*(analyzer(u, r, 1, "link") for u, r in pages)))


async def analyze(
    settings: AnalyzerSettings, workers: int, *pages: tuple[str, FetchResult]
) -> list[IndexDocument | None]:
    return [a.document for a in await analyses(settings, workers, *pages)]


def test_inline_and_process_pool_give_the_same_document() -> None:
    pages = [
        (f"https://rail.example/news/{i}", result(f"https://rail.example/news/{i}"))
        for i in range(4)
    ]
    for settings in (
        AnalyzerSettings(),
        AnalyzerSettings(main_article=True, extra_remove=("nav",)),
    ):
        inline_analyses = asyncio.run(analyses(settings, 0, *pages))
        assert asyncio.run(analyses(settings, 2, *pages)) == inline_analyses
        # the links come with the document, as the engine's own parse would give them
        links = inline_analyses[0].links
        assert links == extract_links(ARTICLE, pages[0][0], HEADERS["content-type"])
        assert links is not None and "/news" in links.links
        inline = [a.document for a in inline_analyses]
        doc = inline[0]
        assert doc is not None
        assert doc.title == "Night trains return"
        assert doc.url == "https://rail.example/news/0" and doc.depth == 1 and doc.source == "link"
        assert doc.text_hash == hashlib.sha256(doc.text.encode()).hexdigest()
        assert doc.simhash == simhash(doc.text)
        assert "trains" in doc.keywords and doc.language == "en"
        assert doc.status == 200 and doc.content_type == HEADERS["content-type"]
        assert len(doc.text_preview) <= 500
        assert " ".join(doc.text.split()).startswith(doc.text_preview)
    article_doc = asyncio.run(analyze(AnalyzerSettings(main_article=True), 0, pages[0]))[0]
    assert article_doc is not None and article_doc.extraction_mode == "article"
    assert article_doc.author == "Jane Doe" and article_doc.published == "2024-03-01"
    plain = analyze_page(pages[0][0], pages[0][1], 1, "link", AnalyzerSettings(main_article=True))
    assert plain == article_doc


def test_markdown_tree_and_sidecar_fields(tmp_path: Path) -> None:
    out, cache_dir = tmp_path / "output", tmp_path / "cache"
    settings = AnalyzerSettings(output_dir=out, cache_dir=cache_dir, extra_remove=("nav", "footer"))
    docs = asyncio.run(
        analyze(
            settings,
            0,
            (
                "https://rail.example/news/night-trains",
                result("https://rail.example/news/night-trains"),
            ),
            ("https://rail.example/news/", result("https://rail.example/news/")),
            ("https://rail.example/", result("https://rail.example/", etag="")),
        )
    )
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [
        "rail.example/index.md",
        "rail.example/index.meta.json",
        "rail.example/news/index.md",
        "rail.example/news/index.meta.json",
        "rail.example/news/night-trains.md",
        "rail.example/news/night-trains.meta.json",
    ]
    assert docs[0] is not None
    assert docs[0].markdown_path == str(out / "rail.example/news/night-trains.md")
    md = (out / "rail.example/news/night-trains.md").read_text("utf-8")
    assert md.startswith("# Night trains return\n\n")
    assert "Paragraph 7: night trains" in md and "Home" not in md and "Copyright" not in md

    meta = json.loads((out / "rail.example/news/night-trains.meta.json").read_text("utf-8"))
    # the sidecar's fields (docs/datasets.md), then the page's language and the markup's date and
    # author (meta tags here)
    assert list(meta) == [*SIDECAR_FIELDS, "language", "date", "author"]
    assert meta["language"] == "en"
    assert meta["date"] == "2024-03-01" and meta["author"] == "Jane Doe"
    assert meta["url"] == "https://rail.example/news/night-trains"
    assert meta["title"] == "Night trains return"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["fetched_at"])
    fetched = time.mktime(time.strptime(meta["fetched_at"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert abs(fetched - time.time()) < 120
    assert meta["last_modified"] == HEADERS["last-modified"] and meta["etag"] == '"v1"'
    assert (meta["source"], meta["depth"], meta["status"]) == ("link", 1, 200)
    assert meta["content_hash"] == hashlib.sha256(ARTICLE).hexdigest()
    assert meta["cache_path"] == str(
        DiskCache(cache_dir).path_for("https://rail.example/news/night-trains")
    )
    assert meta["extraction_mode"] == "fullpage"


def test_main_article_sidecar_adds_markup_date_and_author(tmp_path: Path) -> None:
    settings = AnalyzerSettings(output_dir=tmp_path, main_article=True)
    asyncio.run(analyze(settings, 0, ("https://rail.example/a", result("https://rail.example/a"))))
    meta = json.loads((tmp_path / "rail.example/a.meta.json").read_text("utf-8"))
    assert list(meta) == [*SIDECAR_FIELDS, "language", "date", "author"]
    assert meta["extraction_mode"] == "article"
    assert meta["date"] == "2024-03-01" and meta["author"] == "Jane Doe"
    assert meta["cache_path"] is None
    md = (tmp_path / "rail.example/a.md").read_text("utf-8")
    assert md.startswith("# Night trains return\n\n")
    assert "\n\nParagraph 0: night trains" in md and "Copyright" not in md


def test_unchanged_reanalysis_writes_nothing(tmp_path: Path) -> None:
    settings = AnalyzerSettings(output_dir=tmp_path)
    url = "https://rail.example/a"
    md, meta = tmp_path / "rail.example/a.md", tmp_path / "rail.example/a.meta.json"
    asyncio.run(analyze(settings, 0, (url, result(url))))
    old = {p: p.stat().st_mtime_ns for p in (md, meta)}
    first_meta = meta.read_text()
    for p in (md, meta):  # make any rewrite visible in the mtime
        os.utime(p, ns=(old[p] - 10**9, old[p] - 10**9))
    old = {p: p.stat().st_mtime_ns for p in (md, meta)}
    time.sleep(1.1)  # a later fetch: fetched_at differs, yet nothing is rewritten
    asyncio.run(analyze(settings, 0, (url, result(url))))
    assert {p: p.stat().st_mtime_ns for p in (md, meta)} == old
    assert meta.read_text() == first_meta
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    # only the validator changed: the sidecar is rewritten, the Markdown is not
    asyncio.run(analyze(settings, 0, (url, result(url, etag='"v2"'))))
    assert md.stat().st_mtime_ns == old[md] and meta.stat().st_mtime_ns != old[meta]
    assert json.loads(meta.read_text())["etag"] == '"v2"'
    # the content changed: both are rewritten
    changed = ARTICLE.replace(b"Paragraph 3", b"Paragraph three")
    asyncio.run(analyze(settings, 0, (url, result(url, changed))))
    assert md.stat().st_mtime_ns != old[md] and "Paragraph three" in md.read_text()


GARBAGE: list[tuple[str, bytes, str]] = [
    ("random", random.Random(1).randbytes(20_000), "text/html"),
    ("empty", b"", "text/html"),
    ("nul", b"<html>\x00\x00<p>a\x00b</p>", "text/html; charset=utf-16"),
    ("nested", b"<div>" * 30_000 + b"deep" + b"</div>" * 30_000, "text/html"),
    ("links", b"".join(b'<a href="/p%d">l%d</a>' % (i, i) for i in range(20_000)), "text/html"),
    (
        "bad charset",
        "caf\u00e9 \u65e5\u672c".encode("shift_jis", "replace"),
        "text/html; charset=nope",
    ),
    ("binary", b"%PDF-1.7\n" + bytes(range(256)) * 10, "application/pdf"),
]


@pytest.mark.parametrize(("name", "body", "content_type"), GARBAGE, ids=[g[0] for g in GARBAGE])
def test_garbage_never_raises(tmp_path: Path, name: str, body: bytes, content_type: str) -> None:
    url = f"https://bad.example/{name.replace(' ', '-')}"
    page = FetchResult(url, url, 200, {"content-type": content_type}, body)
    settings = AnalyzerSettings(output_dir=tmp_path, main_article=True)
    doc = asyncio.run(analyze(settings, 0, (url, page)))[0]
    assert doc is None or isinstance(doc, IndexDocument)


def test_a_failing_page_is_logged_and_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "output"
    blocker.write_text("not a directory")  # the Markdown cannot be written under it
    url = "https://rail.example/a"
    with caplog.at_level(logging.WARNING, logger="litecrawl"):
        docs = asyncio.run(analyze(AnalyzerSettings(output_dir=blocker), 2, (url, result(url))))
        assert docs == [None]
        assert (
            analyze_page(url, result(url), 0, "seed", AnalyzerSettings(output_dir=blocker)) is None
        )
    assert sum(url in record.getMessage() for record in caplog.records) == 2


def test_a_dead_worker_is_replaced(caplog: pytest.LogCaptureFixture) -> None:
    """A worker killed mid-page (OOM killer, a crash in C code) costs that page only."""
    url = "https://rail.example/a"
    slow_body = b"<html><body>" + b'<p><a href="/x">link</a> word</p>' * 150_000 + b"</body></html>"
    slow = FetchResult(url, url, 200, HEADERS, slow_body)

    async def run() -> list[PageAnalysis]:
        async with AnalysisPool(1) as pool:
            analyzer = PageAnalyzer(AnalyzerSettings(), pool)
            first = await analyzer(url, result(url), 0, "seed")
            (pid,) = pool.pids
            busy = asyncio.create_task(analyzer(url, slow, 0, "seed"))
            await asyncio.sleep(0.5)  # the worker is parsing the big page
            os.kill(pid, signal.SIGKILL)
            lost = await busy
            again = await analyzer(url, result(url), 0, "seed")
            assert len(pool.pids) == 1 and pool.pids != [pid]
            return [first, lost, again]

    with caplog.at_level(logging.WARNING, logger="litecrawl"):
        first, lost, again = asyncio.run(run())
    assert first.document is not None and lost == PageAnalysis(None) and again == first
    assert any("worker died" in r.getMessage() and url in r.getMessage() for r in caplog.records)


def test_workers_start_with_the_first_page_not_before() -> None:
    """A run with nothing to analyze (cron's run with nothing due) starts no worker process,
    so it does not wait for their imports to end; the first page starts them."""
    url = "https://rail.example/a"

    async def run() -> tuple[set[int], set[int], PageAnalysis]:
        async with AnalysisPool(2) as pool:
            analyzer = PageAnalyzer(AnalyzerSettings(), pool)
            await asyncio.sleep(0.5)  # a worker would have been started by now
            before = analysis_workers_of(os.getpid())
            first = await analyzer(url, result(url), 0, "seed")
            return before, analysis_workers_of(os.getpid()), first

    before, during, first = asyncio.run(run())
    assert before == set() and len(during) >= 1 and first.document is not None
    assert not analysis_workers_of(os.getpid()) & during  # and they leave with the run


def test_bad_workers_and_use_outside_async_with() -> None:
    with pytest.raises(ValueError, match="workers"):
        AnalysisPool(-1)
    assert 1 <= AnalysisPool().workers <= (os.cpu_count() or 1)

    async def call() -> None:
        analyzer = PageAnalyzer(AnalyzerSettings(), AnalysisPool(1))
        await analyzer("https://x.example/", result("https://x.example/"), 0, "seed")

    with pytest.raises(RuntimeError, match="async with"):
        asyncio.run(call())


def test_crawl_with_the_analyzer_indexes_and_writes_markdown(
    tmp_path: Path, serve: Callable[[web.Application], LocalServer]
) -> None:
    """The engine's contract: analyzer(url, result, depth, source) -> document, written by
    finalize. Two URLs with the same article become one resource."""
    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        if request.path == "/":
            links = '<a href="/a">a</a> <a href="/b">b</a> <a href="/c">c</a>'
            return web.Response(
                text=f"<title>Home</title><p>Start {links}</p>", content_type="text/html"
            )
        if request.path in ("/a", "/b"):
            return web.Response(body=ARTICLE, content_type="text/html")
        if request.path == "/c":
            return web.Response(
                text="<title>Roses</title><p>Growing roses</p>", content_type="text/html"
            )
        return web.Response(status=404)

    app.router.add_get("/{tail:.*}", handler)
    site = serve(app)
    db, out = tmp_path / "c.db", tmp_path / "out"
    config = load_config(
        [],
        {},
        {
            "seeds": [site.url("/")],
            "db": str(db),
            "rate_limit.per_host_delay_ms": 0,
            "obey_robots": False,
            "cache.respect_conditional": False,
            "output.dir": str(out),
        },
    )
    crawl(config)  # the analyzer is on by default
    conn = connect(db)
    rows = dict(conn.execute("SELECT url, resource_id FROM documents").fetchall())
    conn.close()
    assert set(rows) == {site.url(p) for p in ("/", "/a", "/b", "/c")}
    assert rows[site.url("/a")] == rows[site.url("/b")] is not None
    hits = _search(db, "sleeper")
    assert len(hits) == 1 and {hits[0].url, *hits[0].other_urls} == {site.url("/a"), site.url("/b")}
    assert _search(db, "roses")[0].url == site.url("/c")
    host = site.base.removeprefix("http://").replace(":", "_")
    assert (out / host / "a.md").is_file() and (out / host / "index.meta.json").is_file()


@pytest.mark.parametrize("workers", [0, 3])
def test_extract_workers_is_how_many_analysis_processes_a_crawl_starts(
    workers: int, tmp_path: Path, serve: Callable[[web.Application], LocalServer]
) -> None:
    home = html_page('<p>Start <a href="/a">a</a></p>', "Home")
    site = serve(site_app({"/": home, "/a": ARTICLE.decode()}))
    db = tmp_path / "w.db"
    config = load_config(
        [],
        {"LITECRAWL_EXTRACT_WORKERS": str(workers)},
        {"seeds": [site.url("/")], "db": str(db), "rate_limit.per_host_delay_ms": 0},
    )
    seen = analysis_workers_during(lambda: crawl(config))
    assert len(seen) == workers
    assert {hit.url for hit in _search(db, "sleeper")} == {site.url("/a")}  # analyzed all the same


def test_one_pool_serves_crawls_of_different_settings_at_once(
    tmp_path: Path, serve: Callable[[web.Application], LocalServer]
) -> None:
    """Whoever runs the crawls owns the analysis pool (``sites run``: every site crawl of a
    pass): two crawls at once on one worker, each page analysed by its own crawl's settings."""
    home = html_page('<p>Start <a href="/a">a</a></p>', "Home")
    promo = "<p class='promo'>Subscribe to Rail Weekly today</p></article>"
    site = serve(site_app({"/": home, "/a": ARTICLE.decode().replace("</article>", promo)}))
    configs = {
        mode: load_config(
            [],
            {},
            {
                "seeds": [site.url("/")],
                "db": str(tmp_path / f"{mode}.db"),
                "rate_limit.per_host_delay_ms": 0,
                "extract.main_article": mode == "article",
                "filter.extra_remove": [".promo"] if mode == "article" else [],
                "output.dir": str(tmp_path / mode),
            },
        )
        for mode in ("article", "fullpage")
    }

    async def both() -> None:
        async with AnalysisPool(1) as pool:
            await asyncio.gather(*(run_crawl(c, asyncio.Event(), pool) for c in configs.values()))

    seen = analysis_workers_during(lambda: asyncio.run(both()))
    assert len(seen) == 1
    for mode in configs:
        conn = connect(tmp_path / f"{mode}.db")
        rows = conn.execute(
            "SELECT d.url, d.extraction_mode, r.text FROM documents d "
            "JOIN resources r ON r.id = d.resource_id"
        ).fetchall()
        conn.close()
        by_url = {url: (how, text) for url, how, text in rows}
        assert set(by_url) == {site.url("/"), site.url("/a")}
        how, text = by_url[site.url("/a")]
        assert how == mode and "night trains connect" in text
        assert ("Subscribe to Rail Weekly" in text) == (mode == "fullpage")
        markdown = next((tmp_path / mode).rglob("a.md")).read_text()
        assert ("Subscribe to Rail Weekly" in markdown) == (mode == "fullpage")


def test_settings_are_plain_data() -> None:
    settings = AnalyzerSettings(extra_remove=("nav",), output_dir=Path("o"))
    assert dataclasses.replace(settings, main_article=True).extra_remove == ("nav",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.main_article = True  # type: ignore[misc]


def test_each_task_resolves_links_by_the_rules_it_was_given() -> None:
    # a worker keeps the settings and rules it was sent once: a page sent with other rules is
    # resolved by those, in a worker as inline
    everything = LinkRules(UrlRules())
    no_news = LinkRules(UrlRules(exclude_patterns=[r"/news"]))
    url = "https://rail.example/news/0"

    async def resolved(workers: int) -> list[tuple[str, ...]]:
        async with AnalysisPool(workers) as pool:
            analyzer = PageAnalyzer(AnalyzerSettings(), pool)
            found = []
            for rules in (everything, no_news, everything):
                analysis = await analyzer(url, result(url), 1, "link", rules)
                assert analysis.resolved is not None
                found.append(analysis.resolved.links)
            return found

    in_worker = asyncio.run(resolved(1))
    assert in_worker == asyncio.run(resolved(0))
    assert "https://rail.example/news" in in_worker[0] and in_worker[2] == in_worker[0]
    assert not any("/news" in link for link in in_worker[1]) and in_worker[1]
