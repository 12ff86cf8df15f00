"""Keyword search and ``litecrawl search`` on both backends (FTS5, tsvector): ranking,
phrases, prefixes, operators, near-duplicates; every index filled by a crawl of a local site."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from aiohttp import web
from conftest import LocalServer, NewDb, db_query, html_page, site_app
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from litecrawl.cli import app as litecrawl_app
from litecrawl.cli.search import search as search_cmd
from litecrawl.errors import ConfigError
from litecrawl.store.backends import open_index
from litecrawl.store.index import IndexReader, SearchHit, best_url

Serve = Callable[[web.Application], LocalServer]

FILLER = (
    "The committee met on Tuesday to review the budget for the coming year. Members discussed "
    "the maintenance of the town library, the repair of two bridges and the schedule of the "
    "summer festival. A decision on the parking fees was postponed until the next meeting. "
)
PAGES = {  # path -> (title, text)
    "/solar": (
        "Solar panels for homes",
        "Solar panels turn sunlight into electricity. A solar panel on the roof of a house can "
        "cover much of its electricity use. Modern solar cells are made of silicon; the solar "
        "industry expects cheaper panels every year. " + FILLER,
    ),
    "/minutes": (
        "Minutes of the council",
        FILLER + "One member asked whether solar lights could be used in the park. " + FILLER,
    ),
    "/roses": (
        "Growing roses",
        "Roses need sunlight, water and good soil. Prune them in early spring and feed them "
        "in summer. Red roses and white roses grow well together in a sunny garden. " + FILLER,
    ),
    "/cpp": (
        "Learning C++",
        "C++ is a programming language. Exact words matter in a phrase search: the quick brown "
        "fox jumps over the lazy dog, while a lazy brown dog does not jump. " + FILLER,
    ),
}
# words as FTS5's unicode61 tokenizer splits and folds them: dots, slashes, underscores and
# apostrophes separate words, diacritics leave Latin letters, case goes
TRICKY = {
    "/python": (
        "Python 3.11 notes",
        "Python 3.11 is out: see www.example.com or https://docs.python.org/3/library/os.html "
        "and mail bob@example.org. Names in snake_case, C++ and don't; v1.2.3 costs 3,50 euros. "
        + FILLER,
    ),
    "/cafe": (
        "Café Zürich",
        "The café in ZÜRICH serves crème brûlée under a naïve façade. Αθήνα, Москва and 東京 "
        "are further away. " + FILLER,
    ),
    "/boundary": ("Title end", "start of the text, and the end of it. " + FILLER),
}


def site_of(pages: dict[str, tuple[str, str]]) -> web.Application:
    """The pages and a home page linking them (with words no query here looks for)."""
    links = "".join(f'<a href="{path}">page {i}</a> ' for i, path in enumerate(pages))
    served = {"/": html_page(f"<nav>{links}</nav>", "Index")}
    for path, (title, text) in pages.items():
        served[path] = html_page(f"<p>{text}</p>", title)
    return site_app(served)


def crawl(db: str, site: LocalServer) -> str:
    result = CliRunner().invoke(
        litecrawl_app,
        ["crawl", site.url("/"), "--db", db, "--delay-ms", "0", "--no-cache", "-q", "--no-embed"],
    )
    assert result.exit_code == 0, result.output
    return db


def search(db: str | Path, query: str, **options: Any) -> list[SearchHit]:
    with open_index(str(db)) as index:
        return index.keyword(query, **options)


# One crawl of the site per backend for the tests that only search it (each made its own:
# 20 crawls of the same site)
@pytest.fixture(scope="module")
def site(serve_module: Serve) -> LocalServer:
    return serve_module(site_of(PAGES | TRICKY))


@pytest.fixture(scope="module")
def db(module_db: NewDb, site: LocalServer) -> str:
    return crawl(module_db("index"), site)


def paths(hits: list[SearchHit]) -> list[str]:
    return [hit.url.split("/", 3)[3] for hit in hits]  # the local site's URL without its origin


def test_ranking_puts_the_relevant_page_first(db: str) -> None:
    hits = search(db, "solar")
    assert paths(hits) == ["solar", "minutes"]
    assert hits[0].score > hits[1].score > 0
    assert hits[0].title == "Solar panels for homes"
    assert "[solar]" in hits[0].snippet.lower()
    # all words must match; the title counts more than the text
    assert paths(search(db, "sunlight roses")) == ["roses"]
    assert paths(search(db, "council"))[0] == "minutes"  # title only


def test_title_weight_beats_a_single_text_mention(new_db: NewDb, serve: Serve) -> None:
    site = serve(
        site_of(
            {
                "/a": ("Kayak trips", FILLER + " We paddle on the river."),
                "/b": ("Town news", FILLER + " A kayak was seen. " + FILLER),
            }
        )
    )
    db = crawl(new_db("t"), site)
    assert paths(search(db, "kayak")) == ["a", "b"]


def test_phrase_query_needs_the_exact_words_in_order(db: str) -> None:
    assert paths(search(db, '"lazy dog"')) == ["cpp"]
    assert search(db, '"dog lazy"') == []
    assert paths(search(db, "lazy dog")) == ["cpp"]
    hit = search(db, '"quick brown fox"')[0]
    assert "[quick brown fox]" in hit.snippet  # a phrase is highlighted whole
    assert "[lazy] [dog]" in search(db, "lazy dog")[0].snippet  # two words: two marks
    # a phrase stays within the title or the text
    assert search(db, '"end start"') == []
    assert paths(search(db, '"title end"')) == ["boundary"]


def test_prefix_query(db: str) -> None:
    assert set(paths(search(db, "sol*"))) == {"solar", "minutes"}
    assert paths(search(db, "silic*")) == ["solar"]
    assert search(db, "zzz*") == []


def test_bad_syntax_is_retried_as_words_and_never_raises(db: str) -> None:
    assert paths(search(db, "c++ language")) == ["cpp"]
    assert paths(search(db, 'programming "language')) == ["cpp"]
    assert search(db, "sun-light roses") == []  # "sun light" is not in any page
    # a NOT with nothing before it is a word, as FTS5 retries it
    assert paths(search(db, "NOT language")) == ["cpp"]
    for query in ("AND", "((", '"', "*", "title:", "NEAR(", "-", "^solar", ":", "nosuch:x"):
        assert isinstance(search(db, query), list)
    assert search(db, "   ") == []


def test_column_filter_and_operators(db: str) -> None:
    assert paths(search(db, "title:roses")) == ["roses"]
    assert set(paths(search(db, "title:(roses OR council)"))) == {"roses", "minutes"}
    assert set(paths(search(db, "roses OR silicon"))) == {"roses", "solar"}
    assert paths(search(db, "solar NOT park")) == ["solar"]
    # FTS5's precedence: phrases side by side bind tightest, then NOT, AND, OR
    assert set(paths(search(db, "sunlight NOT roses silicon"))) == {"solar", "roses"}
    assert paths(search(db, "sunlight roses NOT silicon")) == ["roses"]
    assert set(paths(search(db, "silicon OR roses sunlight"))) == {"solar", "roses"}
    assert set(paths(search(db, "park OR roses NOT sunlight"))) == {"minutes"}


def test_words_are_split_and_folded_as_fts5_splits_them(db: str) -> None:
    for query in ("example", "www", "com", "docs", "os", "html", "bob", "snake", "case", '"3 11"'):
        assert paths(search(db, query)) == ["python"], query
    assert paths(search(db, "example.com")) == ["python"]
    assert paths(search(db, "snake_case")) == ["python"]
    assert paths(search(db, "v1 3 50 don")) == ["python"]
    for query in ("zurich", "Zürich", "cafe", "creme brulee", "naive", "FACADE", "title:cafe"):
        assert paths(search(db, query)) == ["cafe"], query
    assert paths(search(db, "москва 東京")) == ["cafe"]
    assert "[ZÜRICH]" in search(db, "zurich")[0].snippet
    assert "[www.example.com]" in search(db, '"www example com"')[0].snippet


def test_markers_limit_and_offset(db: str) -> None:
    hit = search(db, "silicon", open_mark="<b>", close_mark="</b>")[0]
    assert "<b>silicon</b>" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")  # cut at both ends
    all_hits = search(db, "committee")
    assert len(all_hits) == 7
    assert paths(search(db, "committee", limit=3)) == paths(all_hits)[:3]
    assert paths(search(db, "committee", limit=3, offset=3)) == paths(all_hits)[3:6]
    assert search(db, "committee", limit=0) == []


def test_near_duplicates_come_back_once_with_their_other_urls(new_db: NewDb, serve: Serve) -> None:
    title, text = PAGES["/solar"]
    site = serve(
        site_of(
            {
                "/solar": (title, text),
                "/mirror/solar": ("Mirror", text),
                "/solar?ref=rss": (title, text),
            }
        )
    )
    db = crawl(new_db("d"), site)
    hits = search(db, "solar")
    assert len(hits) == 1
    assert hits[0].url == site.url("/solar")  # the shortest URL without a query
    assert hits[0].title == title
    assert set(hits[0].other_urls) == {site.url("/mirror/solar"), site.url("/solar?ref=rss")}


def test_missing_database_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no database"):
        search(tmp_path / "nope.db", "x")
    assert not (tmp_path / "nope.db").exists()


# --- the same pages and the same snippets on both backends -----------------------------------

WORDS = [
    "solar", "sunlight", "roses", "the", "committee", "lazy", "dog", "quick", "brown", "fox",
    "sol", "sil", "c++", "zurich", "Zürich", "ZURICH", "cafe", "café", "example", "example.com",
    "www.example.com", "3.11", "3", "11", "python", "snake_case", "snake", "don't", "3,50",
    "αθηνα", "Αθήνα", "東京", "naive", "end", "start", "title", "x", "of", "budget", "park",
]  # fmt: skip
SYNTAX = ["AND", "OR", "NOT", "(", ")", '"', "*", "title:", "text:", "-", "+", ":", "{title}"]
QUERIES = st.lists(
    st.tuples(st.sampled_from(WORDS + SYNTAX), st.sampled_from([" ", " ", ""])),
    min_size=1,
    max_size=7,
).map(lambda parts: "".join(atom + sep for atom, sep in parts))


def test_both_backends_match_the_same_pages_with_the_same_snippets(
    tmp_path: Path, pg_url: str, site: LocalServer
) -> None:
    """One crawl into each backend, then FTS5 and the tsvector asked the same queries (both
    backends at once, so not through ``new_db``). Rankings may differ; the pages found may not.
    Snippets are compared without NOT: FTS5 marks a phrase after NOT in some trees and not in
    others. NEAR and ^ are left out: PostgreSQL reads them more widely (index/query.py)."""
    sqlite_db, pg_db = crawl(str(tmp_path / "s.db"), site), crawl(pg_url, site)

    def found(index: IndexReader, query: str) -> dict[str, tuple[str, str]]:
        return {h.url: (h.title, h.snippet) for h in index.keyword(query, limit=100)}

    with open_index(sqlite_db) as lite, open_index(pg_db) as pg:

        def same(query: str) -> None:
            on_sqlite, on_pg = found(lite, query), found(pg, query)
            assert set(on_sqlite) == set(on_pg), query
            if "NOT" not in query:
                assert on_sqlite == on_pg, query

        for query in [*WORDS, '"lazy dog"', "sol* OR title:cafe", "a NOT b c", "NOT solar"]:
            same(query)

        @settings(max_examples=300)
        @given(QUERIES)
        def any_query(query: str) -> None:
            same(query)

        any_query()


# --- CLI ------------------------------------------------------------------------------------------

app = typer.Typer()
app.command("search")(search_cmd)


@app.callback()
def _root() -> None:  # a group, so "search" is a subcommand as in litecrawl's app
    pass


runner = CliRunner()
ENV: dict[str, Any] = {"CRAWLER_DB_PATH": None, "LITECRAWL_DB": None}


def test_cli_prints_url_title_and_highlighted_snippet(db: str, site: LocalServer) -> None:
    result = runner.invoke(app, ["search", "silicon", "--db", str(db)], env=ENV)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert site.url("/solar") in out
    assert "Solar panels for homes" in out
    assert "silicon" in out and "\x02" not in out and "\x03" not in out
    assert site.url("/minutes") not in out


def test_cli_prints_each_snippet_on_one_line(new_db: NewDb, serve: Serve) -> None:
    lines = "".join(f"<li>entry {i} of the index</li>" for i in range(30))
    site = serve(site_app({"/": html_page(f"<ul>{lines}</ul><p>{FILLER}</p>", "Listing")}))
    db = crawl(new_db("lines"), site)
    result = runner.invoke(app, ["search", "entry", "--db", db], env=ENV)
    assert result.exit_code == 0, result.output
    title, url, snippet = result.stdout.strip().splitlines()  # one hit, three lines
    assert title.startswith("1. Listing") and url == f"   {site.url('/')}"
    assert snippet.startswith("   ") and "entry 1 of the index entry 2 of" in snippet


def test_cli_json(db: str, site: LocalServer) -> None:
    result = runner.invoke(app, ["search", "solar", "--db", str(db), "--json", "--limit", "1"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert [h["url"] for h in hits] == [site.url("/solar")]
    assert set(hits[0]) == {
        "url", "title", "snippet", "score", "other_urls", "resource_id", "section", "section_url",
    }  # fmt: skip
    assert "[solar]" in hits[0]["snippet"].lower()


def test_cli_no_results_and_missing_database(db: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["search", "nothingmatches", "--db", str(db)])
    assert result.exit_code == 0 and "no results" in result.output
    result = runner.invoke(app, ["search", "x", "--db", str(tmp_path / "missing.db")])
    assert result.exit_code == 2 and "no database" in result.output


def test_cli_database_that_cannot_be_searched_exits_2(tmp_path: Path, pg_url: str) -> None:
    """No SQLite file, no PostgreSQL server there, a PostgreSQL database without a crawl:
    ``search`` and ``similar`` print one line and exit 2, the password masked."""
    away = "postgresql://walter:hunter2@127.0.0.1:1/crawl"
    for command in (["search", "solar"], ["similar", "http://a.example/"]):
        missing = runner.invoke(litecrawl_app, [*command, "--db", str(tmp_path / "no.db")])
        assert missing.exit_code == 2 and "no database" in missing.output
        result = runner.invoke(litecrawl_app, [*command, "--db", away])
        assert result.exit_code == 2 and "error:" in result.output, result.output
        assert "hunter2" not in result.output and "127.0.0.1:1" in result.output
        empty = runner.invoke(litecrawl_app, [*command, "--db", pg_url])
        assert empty.exit_code == 2 and "error:" in empty.output, empty.output
        assert "Traceback" not in empty.output
    assert not (tmp_path / "no.db").exists()


def test_best_url_prefers_the_canonical_then_the_shortest_without_query() -> None:
    urls = ["https://a.example/story?id=7", "https://a.example/p", "https://a.example/night-trains"]
    canonical = [None, None, None]
    assert best_url(urls, canonical) == "https://a.example/p"
    # a rel=canonical naming one of them wins, however long
    named = ["https://a.example/night-trains", None, "https://a.example/night-trains"]
    assert best_url(urls, named) == "https://a.example/night-trains"
    # a canonical that is none of them does not count
    assert best_url(urls, ["https://elsewhere.example/", None, None]) == "https://a.example/p"
    # only URLs with a query: the shortest; equal lengths: the earliest crawled
    assert best_url(["https://a.example/x?b=22", "https://a.example/x?a=1"]) == (
        "https://a.example/x?a=1"
    )
    assert best_url(["https://a.example/b", "https://a.example/a"]) == "https://a.example/b"


def test_crawled_duplicates_are_shown_under_their_best_url(new_db: NewDb, serve: Serve) -> None:
    story = "<p>" + "Night trains are back across Europe, with sleeper cars and views. " * 8
    recipe = "<p>" + "Slow cooked beans with garlic, thyme and a long afternoon of patience. " * 8
    site = serve(
        site_app(
            {
                "/": html_page('<a href="/story?id=7">s</a> <a href="/r?ref=home">r</a>'),
                "/story?id=7": html_page(
                    story + '<a href="/print/story">print</a>',
                    "Story",
                    '<link rel="canonical" href="/stories/night-trains">',
                ),
                "/print/story": html_page(story + '<a href="/print/story">print</a>', "Story"),
                "/stories/night-trains": html_page(
                    story + '<a href="/print/story">print</a>', "Story"
                ),
                "/r?ref=home": html_page(recipe + '<a href="/recipes/beans">b</a>', "Beans"),
                "/recipes/beans": html_page(recipe + '<a href="/recipes/beans">b</a>', "Beans"),
            }
        )
    )
    db = crawl(new_db("c"), site)
    hits = {h.title: h for h in search(db, "trains OR beans")}
    assert hits["Story"].url == site.url("/stories/night-trains")  # the page's rel=canonical
    assert set(hits["Story"].other_urls) == {site.url("/story?id=7"), site.url("/print/story")}
    assert hits["Beans"].url == site.url("/recipes/beans")  # no canonical: no query string
    assert hits["Beans"].other_urls == (site.url("/r?ref=home"),)


def test_snippets_keep_text_that_looks_like_markup(new_db: NewDb, serve: Serve) -> None:
    text = "Escaping matters: &lt;script&gt;alert(1)&lt;/script&gt; and a &lt; b &gt; c stay text."
    site = serve(site_of({"/m": ("Markup", text)}))
    db = crawl(new_db("m"), site)
    [hit] = search(db, "escaping", snippet_tokens=30)
    assert "<script>alert(1)</script>" in hit.snippet and "a < b > c" in hit.snippet, hit.snippet


def _distinct_words(n: int, first: int = 0x4E00, letters: int = 400) -> str:
    """``n`` different three-letter words of CJK letters (3 bytes each in UTF-8): the costliest
    text a tsvector can be given, ~14 bytes of it for 4 characters."""
    return " ".join(
        chr(first + i // letters**2)
        + chr(first + i // letters % letters)
        + chr(first + i % letters)
        for i in range(n)
    )


def test_a_page_of_megabytes_of_different_words_is_indexed(new_db: NewDb, serve: Serve) -> None:
    """A tsvector holds 1 MB: PostgreSQL indexes a text's first 200,000 characters (the batch
    used to fail, and was tried again every 10 s for ever); SQLite all of it."""
    text = " ".join(f"w{i}x{i * 7919 % 1000003}" for i in range(200_000))  # 2.9 MB
    site = serve(site_of({"/big": ("Big", text), "/small": ("Small", "a small page " + FILLER)}))
    db = crawl(new_db("big"), site)
    assert paths(search(db, "w3x23757")) == ["big"]
    assert paths(search(db, "small")) == ["small"]
    late = paths(search(db, "w199999x787332"))
    assert late == ([] if db.startswith("postgresql://") else ["big"])


def test_a_page_the_database_cannot_index_is_kept_with_its_error(pg_url: str, serve: Serve) -> None:
    """Past the bound by its title and its text together (over 1 MB of tsvector): the batch
    is written page by page, the page kept without its document and with the error
    ``not_indexed`` (the log says why), the others indexed, the crawl ending well."""
    title, text = _distinct_words(52_000), _distinct_words(52_000, first=0x6000)
    site = serve(site_of({"/cjk": (title, text), "/plain": ("Plain", "a plain page " + FILLER)}))
    crawl(pg_url, site)
    assert paths(search(pg_url, "plain")) == ["plain"]
    rows = db_query(pg_url, "SELECT norm_url, status, error FROM pages ORDER BY norm_url")
    errors = {url.rsplit("/", 1)[1]: (status, error) for url, status, error in rows}
    assert errors[""] == (200, None) and errors["plain"] == (200, None)
    assert errors["cjk"][0] == 200
    assert errors["cjk"][1] == "not_indexed"
    documents = db_query(pg_url, "SELECT url FROM documents")
    assert site.url("/cjk") not in {url for (url,) in documents}
