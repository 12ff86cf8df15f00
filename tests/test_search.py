"""Keyword search and ``litecrawl search`` on both backends (FTS5, tsvector): ranking,
phrases, prefixes, near-duplicates."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from conftest import NewDb, db_execute
from typer.testing import CliRunner

from litecrawl.cli.search import search as search_cmd
from litecrawl.errors import ConfigError
from litecrawl.frontier import open_frontier
from litecrawl.frontier.base import PageUpdate
from litecrawl.index.document import IndexDocument
from litecrawl.index.reader import SearchHit, best_url, open_index
from litecrawl.index.simhash import simhash

FILLER = (
    "The committee met on Tuesday to review the budget for the coming year. Members discussed "
    "the maintenance of the town library, the repair of two bridges and the schedule of the "
    "summer festival. A decision on the parking fees was postponed until the next meeting. "
)
PAGES = {
    "https://energy.example/solar": (
        "Solar panels for homes",
        "Solar panels turn sunlight into electricity. A solar panel on the roof of a house can "
        "cover much of its electricity use. Modern solar cells are made of silicon; the solar "
        "industry expects cheaper panels every year. " + FILLER,
    ),
    "https://town.example/minutes": (
        "Minutes of the council",
        FILLER + "One member asked whether solar lights could be used in the park. " + FILLER,
    ),
    "https://garden.example/roses": (
        "Growing roses",
        "Roses need sunlight, water and good soil. Prune them in early spring and feed them "
        "in summer. Red roses and white roses grow well together in a sunny garden. " + FILLER,
    ),
    "https://lang.example/cpp": (
        "Learning C++",
        "C++ is a programming language. Exact words matter in a phrase search: the quick brown "
        "fox jumps over the lazy dog, while a lazy brown dog does not jump. " + FILLER,
    ),
}


def make_doc(url: str, title: str, text: str) -> IndexDocument:
    return IndexDocument(
        url=url,
        title=title,
        keywords=(),
        text_preview=text[:500],
        text=text,
        text_hash=hashlib.sha256(text.encode()).hexdigest(),
        simhash=simhash(text),
    )


def build(db: str, docs: list[IndexDocument]) -> str:
    """An index holding ``docs``, written as a crawl writes them (the frontier's finalize)."""

    async def write() -> None:
        async with open_frontier(db) as frontier:
            await frontier.finalize(
                [
                    PageUpdate(doc.url, "h", 1, 2, doc.text_hash, status=200, document=doc)
                    for doc in docs
                ]
            )

    asyncio.run(write())
    return db


def search(db: str | Path, query: str, **options: Any) -> list[SearchHit]:
    with open_index(str(db)) as index:
        return index.keyword(query, **options)


@pytest.fixture
def db(new_db: NewDb) -> str:
    return build(new_db("index"), [make_doc(u, t, x) for u, (t, x) in PAGES.items()])


def urls(hits: list[SearchHit]) -> list[str]:
    return [hit.url for hit in hits]


def test_ranking_puts_the_relevant_page_first(db: str) -> None:
    hits = search(db, "solar")
    assert urls(hits) == ["https://energy.example/solar", "https://town.example/minutes"]
    assert hits[0].score > hits[1].score > 0
    assert hits[0].title == "Solar panels for homes"
    assert "[solar]" in hits[0].snippet.lower()
    # all words must match; the title counts more than the text
    assert urls(search(db, "sunlight roses")) == ["https://garden.example/roses"]
    assert urls(search(db, "council"))[0] == "https://town.example/minutes"  # title only


def test_title_weight_beats_a_single_text_mention(new_db: NewDb) -> None:
    db = build(
        new_db("t"),
        [
            make_doc("https://a.example/", "Kayak trips", FILLER + " We paddle on the river."),
            make_doc("https://b.example/", "Town news", FILLER + " A kayak was seen. " + FILLER),
        ],
    )
    assert urls(search(db, "kayak")) == ["https://a.example/", "https://b.example/"]


def test_phrase_query_needs_the_exact_words_in_order(db: str) -> None:
    assert urls(search(db, '"lazy dog"')) == ["https://lang.example/cpp"]
    assert search(db, '"dog lazy"') == []
    assert urls(search(db, "lazy dog")) == ["https://lang.example/cpp"]
    hit = search(db, '"quick brown fox"')[0]
    assert "[quick brown fox]" in hit.snippet  # a phrase is highlighted whole


def test_prefix_query(db: str) -> None:
    assert set(urls(search(db, "sol*"))) == {
        "https://energy.example/solar",
        "https://town.example/minutes",
    }
    assert urls(search(db, "silic*")) == ["https://energy.example/solar"]
    assert search(db, "zzz*") == []


def test_bad_syntax_is_retried_as_words_and_never_raises(db: str) -> None:
    assert urls(search(db, "c++")) == ["https://lang.example/cpp"]
    assert urls(search(db, 'programming "language')) == ["https://lang.example/cpp"]
    assert urls(search(db, "sun-light roses")) == []  # "sun light" is not in any page
    for query in ("AND", "((", '"', "*", "title:", "NEAR(", "-", "^solar", ":"):
        assert isinstance(search(db, query), list)
    assert search(db, "   ") == []


def test_column_filter_and_operators(db: str) -> None:
    assert urls(search(db, "title:roses")) == ["https://garden.example/roses"]
    assert set(urls(search(db, "roses OR silicon"))) == {
        "https://garden.example/roses",
        "https://energy.example/solar",
    }
    assert urls(search(db, "solar NOT park")) == ["https://energy.example/solar"]


def test_markers_limit_and_offset(db: str) -> None:
    hit = search(db, "silicon", open_mark="<b>", close_mark="</b>")[0]
    assert "<b>silicon</b>" in hit.snippet
    all_hits = search(db, "the")
    assert len(all_hits) == 4
    assert urls(search(db, "the", limit=2)) == urls(all_hits)[:2]
    assert urls(search(db, "the", limit=2, offset=2)) == urls(all_hits)[2:]
    assert search(db, "the", limit=0) == []


def test_near_duplicates_come_back_once_with_their_other_urls(new_db: NewDb) -> None:
    title, text = PAGES["https://energy.example/solar"]
    db = build(new_db("d"), [make_doc("https://energy.example/solar", title, text)])
    db_execute(db, "UPDATE documents SET crawled_at = '2020-01-01 00:00:00'")
    build(
        db,
        [
            make_doc("https://mirror.example/solar", "Mirror", text),
            make_doc("https://energy.example/solar?ref=rss", title, text),
        ],
    )
    hits = search(db, "solar")
    assert len(hits) == 1
    assert hits[0].url == "https://energy.example/solar"  # the earliest crawled
    assert hits[0].title == title
    assert set(hits[0].other_urls) == {
        "https://mirror.example/solar",
        "https://energy.example/solar?ref=rss",
    }


def test_missing_database_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no database"):
        search(tmp_path / "nope.db", "x")
    assert not (tmp_path / "nope.db").exists()


# --- CLI ------------------------------------------------------------------------------------------

app = typer.Typer()
app.command("search")(search_cmd)


@app.callback()
def _root() -> None:  # a group, so "search" is a subcommand as in litecrawl's app
    pass


runner = CliRunner()
ENV: dict[str, Any] = {"CRAWLER_DB_PATH": None, "LITECRAWL_DB": None}


def test_cli_prints_url_title_and_highlighted_snippet(db: str) -> None:
    result = runner.invoke(app, ["search", "silicon", "--db", str(db)], env=ENV)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "https://energy.example/solar" in out
    assert "Solar panels for homes" in out
    assert "silicon" in out and "\x02" not in out and "\x03" not in out
    assert "town.example" not in out


def test_cli_json(db: str) -> None:
    result = runner.invoke(app, ["search", "solar", "--db", str(db), "--json", "--limit", "1"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert [h["url"] for h in hits] == ["https://energy.example/solar"]
    assert set(hits[0]) == {"url", "title", "snippet", "score", "other_urls", "resource_id"}
    assert "[solar]" in hits[0]["snippet"].lower()


def test_cli_no_results_and_missing_database(db: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["search", "nothingmatches", "--db", str(db)])
    assert result.exit_code == 0 and "no results" in result.output
    result = runner.invoke(app, ["search", "x", "--db", str(tmp_path / "missing.db")])
    assert result.exit_code == 2 and "no database" in result.output


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


def test_crawled_duplicates_are_shown_under_their_best_url(new_db: NewDb, serve: Any) -> None:
    from conftest import html_page, site_app

    from litecrawl.cli import app

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
    db = new_db("c")
    crawl = CliRunner().invoke(
        app, ["crawl", site.url("/"), "--db", db, "--delay-ms", "0", "--no-cache", "-q"]
    )
    assert crawl.exit_code == 0, crawl.output
    hits = {h.title: h for h in search(db, "trains OR beans")}
    assert hits["Story"].url == site.url("/stories/night-trains")  # the page's rel=canonical
    assert set(hits["Story"].other_urls) == {site.url("/story?id=7"), site.url("/print/story")}
    assert hits["Beans"].url == site.url("/recipes/beans")  # no canonical: no query string
    assert hits["Beans"].other_urls == (site.url("/r?ref=home"),)


def test_snippets_keep_text_that_looks_like_markup(new_db: NewDb) -> None:
    text = 'Escaping matters: <script>alert("x")</script> and a < b > c stay text in the snippet.'
    db = build(new_db("m"), [make_doc("https://m.example/", "Markup", text)])
    [hit] = search(db, "escaping", snippet_tokens=30)
    assert "<script>" in hit.snippet and "a < b > c" in hit.snippet, hit.snippet
